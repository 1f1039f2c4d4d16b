"""google-adk's ``google.adk.cli.api_server``: the bodies of its HTTP API's requests and
answers, :class:`ApiServer`, and its two in-memory span exporters.

The models validate and dump as google-adk's (camelCase on the wire). Where one of the
host's routes takes the same shape its own body model is the one exported here:
``UpdateMemoryRequest`` (``PATCH /apps/{app}/users/{user}/memory``) and
``UpdateSessionRequest`` (``PATCH .../sessions/{id}``). The others are in
:mod:`adk_actors.cli._server_models`: ``RunAgentRequest`` (google-adk's: its
``appName`` optional, ``newMessage`` a Content, a ``serviceTier``), ``CreateSessionRequest``
(with ``events`` and ``options``, which the host's route does not take),
``SaveArtifactRequest`` (its ``artifact`` a Part), ``AppInfo`` and
``ListAppsResponse`` (``/list-apps?detailed=true``) and
``FinalizeAgentIdentityCredentialsRequest`` (no route of the host takes it).

:class:`ApiServer` is google-adk's server object (``ApiServer(agent_loader=...,
...).get_fast_api_app()``), here backed by :func:`adk_actors.cli.fast_api.get_fast_api_app`:
the app it returns serves the agents of ``agents_dir`` on an adk-actors host that its
lifespan starts and stops. Service objects cannot be given: a host keeps sessions,
artifacts, memory and credentials in its own store actors, in other processes; name
the stores by URI instead (``session_service_uri`` ...), as ``get_fast_api_app`` takes
them.

``ApiServerSpanExporter`` and ``InMemoryExporter`` (:mod:`._span_exporters`) need the
OpenTelemetry SDK and are imported when first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..http._adk_web import adk_web_files
from ..http._memory import MemoryBody as UpdateMemoryRequest
from ..http._sessions import CreateSessionBody as CreateSessionRequest
from ..http._sessions import PatchSessionBody as UpdateSessionRequest
from . import fast_api
from ._fast_api_host import UnsupportedParameterError, unsupported
from ._server_models import (
    AppInfo,
    FinalizeAgentIdentityCredentialsRequest,
    ListAppsResponse,
    RunAgentRequest,
    SaveArtifactRequest,
)

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from starlette.types import Lifespan

__all__ = ["ApiServer", "ApiServerSpanExporter", "AppInfo", "CreateSessionRequest",  # noqa: F822 (lazy exporters)
           "FinalizeAgentIdentityCredentialsRequest", "InMemoryExporter", "ListAppsResponse", "RunAgentRequest",
           "SaveArtifactRequest", "UpdateMemoryRequest", "UpdateSessionRequest"]

_LAZY = {"ApiServerSpanExporter": "._span_exporters", "InMemoryExporter": "._span_exporters"}

_IN_PROCESS = ("a service object lives in this process, and a host keeps its {kind} in its own store actors, in "
               "other processes (name the store by URI instead: {uri}; or run the agent in process with "
               "adk_actors.runners.Runner)")
#: google-adk's service parameters, none of which a host can take (see the module), and why
_SERVICES = {
    "session_service": _IN_PROCESS.format(kind="sessions", uri="session_service_uri"),
    "memory_service": _IN_PROCESS.format(kind="memory", uri="memory_service_uri"),
    "artifact_service": _IN_PROCESS.format(kind="artifacts", uri="artifact_service_uri"),
    "credential_service": "a host keeps credentials in its own credential service, in another process",
    "eval_sets_manager": "a host keeps eval sets in its own data folder (the /dev eval routes)",
    "eval_set_results_manager": "a host keeps eval results in its own data folder (the /dev eval routes)",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _why_refused(name: str, value: Any, agents_dir: str) -> str | None:
    """Why ``get_fast_api_app`` would refuse ``value`` for its parameter ``name`` (its
    own rule, :func:`unsupported`), or None when it would take it."""
    return unsupported({name: value}, agents_dir).get(name)


def _refuse(owner: str, problems: Mapping[str, str]) -> None:
    """Raise :class:`UnsupportedParameterError` for ``problems`` (parameter -> why),
    its message naming ``owner``; nothing when there are none."""
    if problems:
        error = UnsupportedParameterError(problems)
        error.args = (f"{owner}: not supported by adk-actors: "
                      + "; ".join(f"{name}: {why}" for name, why in problems.items()),)
        raise error


class ApiServer:
    """google-adk's API server on an adk-actors host (see the module): the app of
    ``get_fast_api_app(web=False)``, google-adk's API without the console
    (:class:`DevServer` serves it). Unlike google-adk's ``ApiServer``, the host's
    ``/dev`` routes (eval sets, graphs, the agent builder) are served too, as
    ``get_fast_api_app`` serves them (the agent builder's writes and the eval routes to
    callers on this machine only).

    Constructing it checks, in order, and refuses together (one
    :class:`UnsupportedParameterError`, a ``ValueError``, naming each): every service
    object given (``session_service`` ... ``eval_set_results_manager``: see the
    module), then what :func:`~adk_actors.cli.fast_api.get_fast_api_app` refuses
    (an ``agent_loader`` that is not an ``AgentLoader`` of ``agents_dir``,
    ``extra_plugins``, ``url_prefix``, the ``trigger_*`` parameters,
    ``default_llm_model``, ``avatar_config``, ``max_llm_calls``). ``logo_text`` and
    ``logo_image_url`` are kept and not used (adk-web is served as installed). Nothing
    starts; the attributes are google-adk's (``agent_loader``, ``agents_dir``, ...)
    plus the store URIs, which are ours: ``session_service_uri``,
    ``artifact_service_uri``, ``memory_service_uri`` and ``use_local_storage``, read
    as ``get_fast_api_app`` reads them."""

    #: Whether the app serves the console and the dev routes (``web`` of get_fast_api_app)
    _web = False

    def __init__(self, *, agent_loader: Any, agents_dir: str, session_service: Any = None, memory_service: Any = None,
                 artifact_service: Any = None, credential_service: Any = None, eval_sets_manager: Any = None,
                 eval_set_results_manager: Any = None, extra_plugins: list[str] | None = None,
                 logo_text: str | None = None, logo_image_url: str | None = None, url_prefix: str | None = None,
                 auto_create_session: bool = False, trigger_sources: Sequence[str] | None = None,
                 trigger_oidc_audience: str | None = None, trigger_oidc_service_accounts: list[str] | None = None,
                 trigger_auth_verifier: Callable[[Request], Awaitable[None] | None] | None = None,
                 default_llm_model: str | None = None, avatar_config: Any = None, max_llm_calls: int | None = None,
                 session_service_uri: str | None = None, artifact_service_uri: str | None = None,
                 memory_service_uri: str | None = None, use_local_storage: bool = True) -> None:
        services = {"session_service": session_service, "memory_service": memory_service,
                    "artifact_service": artifact_service, "credential_service": credential_service,
                    "eval_sets_manager": eval_sets_manager, "eval_set_results_manager": eval_set_results_manager}
        problems = {name: why for name, why in _SERVICES.items() if services[name] is not None}
        for name, value in (("agent_loader", agent_loader), ("extra_plugins", extra_plugins),
                            ("url_prefix", url_prefix), ("trigger_sources", trigger_sources),
                            ("trigger_oidc_audience", trigger_oidc_audience),
                            ("trigger_oidc_service_accounts", trigger_oidc_service_accounts),
                            ("trigger_auth_verifier", trigger_auth_verifier),
                            ("default_llm_model", default_llm_model), ("avatar_config", avatar_config),
                            ("max_llm_calls", max_llm_calls)):
            why = _why_refused(name, value, agents_dir)
            if why is not None:
                problems[name] = why
        _refuse(type(self).__name__, problems)
        self.agent_loader = agent_loader
        self.agents_dir = agents_dir
        self.session_service, self.memory_service, self.artifact_service = None, None, None
        self.credential_service, self.eval_sets_manager, self.eval_set_results_manager = None, None, None
        self.extra_plugins: list[str] = []
        self.logo_text, self.logo_image_url = logo_text, logo_image_url
        self.url_prefix: str | None = None
        self.auto_create_session = auto_create_session
        self.session_service_uri, self.artifact_service_uri = session_service_uri, artifact_service_uri
        self.memory_service_uri, self.use_local_storage = memory_service_uri, use_local_storage

    def get_fast_api_app(self, lifespan: Lifespan[FastAPI] | None = None, allow_origins: list[str] | None = None,
                         web_assets_dir: str | Path | None = None, setup_observer: Callable[..., None] | None = None,
                         tear_down_observer: Callable[..., None] | None = None,
                         register_processors: Callable[..., None] | None = None, otel_to_cloud: bool = False,
                         with_ui: bool = False, bind_host: str | None = None) -> FastAPI:
        """The FastAPI app (:func:`adk_actors.cli.fast_api.get_fast_api_app` with this
        server's arguments; ``web`` for :class:`DevServer`). First, together
        (:class:`UnsupportedParameterError`): a ``web_assets_dir`` other than the
        installed google-adk's adk-web folder (the host serves that one at
        ``/dev-ui/`` itself), the observer and span-processor callbacks (the host
        watches the agent folders and exports spans in its own processes) and
        ``otel_to_cloud``. ``with_ui`` is not used. Then the store URIs are read
        (an unknown scheme or one registered in this process refused by name, as
        there) and the app is built; the host starts with its lifespan."""
        problems: dict[str, str] = {}
        if web_assets_dir is not None:
            installed = adk_web_files()
            if installed is None or Path(web_assets_dir).resolve() != installed.resolve():
                problems["web_assets_dir"] = ("the host serves the installed google-adk's adk-web at /dev-ui/ "
                                              "itself, and no other folder")
        for name, value in (("setup_observer", setup_observer), ("tear_down_observer", tear_down_observer)):
            if value is not None:
                problems[name] = "the host watches the agent folders itself (reload_agents of get_fast_api_app)"
        if register_processors is not None:
            problems["register_processors"] = ("the host's spans are made in its own processes: attach "
                                               "adk_actors.otel there")
        if otel_to_cloud:
            problems["otel_to_cloud"] = "Google Cloud export is not available here"
        _refuse(f"{type(self).__name__}.get_fast_api_app", problems)
        return fast_api.get_fast_api_app(
            agents_dir=self.agents_dir, agent_loader=self.agent_loader, session_service_uri=self.session_service_uri,
            artifact_service_uri=self.artifact_service_uri, memory_service_uri=self.memory_service_uri,
            use_local_storage=self.use_local_storage, allow_origins=allow_origins, web=self._web,
            bind_host=bind_host, lifespan=lifespan, auto_create_session=self.auto_create_session,
            logo_text=self.logo_text, logo_image_url=self.logo_image_url)
