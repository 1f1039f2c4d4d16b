"""google-adk's ``google.adk.cli.fast_api``: :func:`get_fast_api_app`, the FastAPI app
that google-adk's deployment guides (Cloud Run, GKE) serve from a ``main.py`` with
``uvicorn.run(app, ...)``. Here the same ``main.py``, its imports rewritten
(``google.adk`` -> ``adk_actors``), serves the agent folders on an adk-actors host
started for the app's lifetime (see :mod:`adk_actors.cli._fast_api_host`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ._fast_api_host import IGNORED, UnsupportedParameterError

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from starlette.types import Lifespan

__all__ = ["IGNORED", "UnsupportedParameterError", "get_fast_api_app"]


def get_fast_api_app(
    *,
    agents_dir: str,
    agent_loader: Any | None = None,
    session_service_uri: str | None = None,
    session_db_kwargs: Mapping[str, Any] | None = None,
    artifact_service_uri: str | None = None,
    memory_service_uri: str | None = None,
    use_local_storage: bool = True,
    eval_storage_uri: str | None = None,
    allow_origins: list[str] | None = None,
    web: bool,
    a2a: bool = False,
    task_store_uri: str | None = None,
    host: str = "127.0.0.1",
    bind_host: str | None = None,
    port: int = 8000,
    url_prefix: str | None = None,
    trace_to_cloud: bool = False,
    otel_to_cloud: bool = False,
    reload_agents: bool = False,
    lifespan: Lifespan[FastAPI] | None = None,
    extra_plugins: list[str] | None = None,
    logo_text: str | None = None,
    logo_image_url: str | None = None,
    auto_create_session: bool = False,
    trigger_sources: list[Literal["pubsub", "eventarc"]] | Sequence[str] | None = None,
    trigger_oidc_audience: str | None = None,
    trigger_oidc_service_accounts: list[str] | None = None,
    trigger_auth_verifier: Callable[[Request], Awaitable[None] | None] | None = None,
    default_llm_model: str | None = None,
    gemini_enterprise_app_name: str | None = None,
    express_mode: bool = False,
    avatar_config: Any | None = None,
    max_llm_calls: int | None = None,
) -> FastAPI:
    """google-adk's HTTP API for the agent folders of ``agents_dir``, served by an
    adk-actors host that the app's lifespan starts and stops.

    In order, before anything starts: every parameter given a value this host cannot
    honour is refused together, :class:`UnsupportedParameterError` (a ``ConfigError``,
    so a ``ValueError``) naming each: ``agent_loader`` unless it is an ``AgentLoader``
    (ours or google-adk's, the class itself) of ``agents_dir`` not in single-agent
    mode, which is accepted and never called (the host's processes load that folder by
    the same rule), ``eval_storage_uri``,
    ``url_prefix``, ``trace_to_cloud``, ``otel_to_cloud``, ``extra_plugins``, the
    ``trigger_*`` parameters, ``default_llm_model``, ``gemini_enterprise_app_name``,
    ``express_mode``, ``avatar_config``, ``max_llm_calls``, and URIs of kinds not
    served (``agentengine://``, ``mysql://``, ``gs://``, ``rag://`` ...); an
    ``agents_dir`` that is no folder, or is one agent's own folder, is a ``ConfigError``
    too. The folder's ``services.yaml`` / ``services.py`` are loaded
    (:func:`adk_actors.cli.service_registry.load_services_module`, as google-adk does);
    a session, artifact or memory URI whose scheme a user registered there (or in code)
    is then refused by name (:class:`UnsupportedParameterError`, saying why: a host's
    store actors cannot use a service made in this process). The parameters in
    :data:`IGNORED` are accepted and not used. Then the settings
    are read from the environment (``ADK_ACTORS_*``: the actor system's port
    ``ADK_ACTORS_HOST__PORT``, bearer tokens ``ADK_ACTORS_HTTP__TOKENS`` ...) and the
    app is built; no process is started.

    What is honoured: ``session_service_uri`` (``sqlite:///PATH``: that SQLite file,
    which then holds the host's other tables too; ``postgresql://...``; ``memory://``:
    a temporary store removed when the app stops; none: ``AGENTS_DIR/.adk-actors``, or
    ``ADK_ACTORS_HOST__DATA_DIR``), ``use_local_storage`` (False and no URI: temporary,
    as ``memory://``), ``artifact_service_uri`` (``file:///PATH``, ``memory://``),
    ``memory_service_uri`` (none or ``memory://``: the host's memory),
    ``task_store_uri`` (none or ``sqlite:///PATH``), ``allow_origins`` (CORS and the
    origin guard), ``web`` (the console at ``/`` as ``adk-actors web``; adk-web at
    ``/dev-ui/`` whenever google-adk is installed), ``bind_host`` (a loopback address
    turns on the DNS-rebinding guard), ``auto_create_session``, ``lifespan`` (run
    inside the host's: the host serves before it starts and until it ends).

    The app's lifespan starts the host (a busy actor-system port or a store that
    cannot be opened fails the server's start) and, when the server stops (SIGTERM,
    Ctrl-C), stops it: no process of the host is left."""
    from ..config import load_settings
    from ._fast_api_host import agents_folder, build_app, refuse_unsupported, storage
    from .service_registry import load_services_module

    refuse_unsupported({
        "agent_loader": agent_loader, "eval_storage_uri": eval_storage_uri, "url_prefix": url_prefix,
        "trace_to_cloud": trace_to_cloud, "otel_to_cloud": otel_to_cloud, "extra_plugins": extra_plugins,
        "trigger_sources": trigger_sources, "trigger_oidc_audience": trigger_oidc_audience,
        "trigger_oidc_service_accounts": trigger_oidc_service_accounts,
        "trigger_auth_verifier": trigger_auth_verifier, "default_llm_model": default_llm_model,
        "gemini_enterprise_app_name": gemini_enterprise_app_name, "express_mode": express_mode,
        "avatar_config": avatar_config, "max_llm_calls": max_llm_calls}, agents_dir)
    folder = agents_folder(agents_dir)
    load_services_module(agents_dir)
    settings = load_settings(None)
    served = storage(folder, settings, session_service_uri=session_service_uri,
                     artifact_service_uri=artifact_service_uri, memory_service_uri=memory_service_uri,
                     use_local_storage=use_local_storage, task_store_uri=task_store_uri)
    return build_app(agents_dir=str(folder), settings=settings, served=served, web=web, allow_origins=allow_origins,
                     bind_host=bind_host, auto_create_session=auto_create_session, reload_agents=reload_agents,
                     lifespan=lifespan)
