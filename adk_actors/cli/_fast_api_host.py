"""google-adk's ``get_fast_api_app`` on an adk-actors host (:mod:`adk_actors.cli.fast_api`).

What a call does, in order, before any process starts: every parameter that this
host cannot honour is refused at once (:class:`UnsupportedParameterError`, naming
each; see :data:`IGNORED` for those accepted and not used); the storage the URIs name
is worked out (:func:`storage`); the settings are read from the environment
(``ADK_ACTORS_*``, as ``adk-actors web``), with the agents folder, the data folder and
the store put in; the HTTP API is built as the host's own HTTP server builds it
(``http.http_args`` and ``http.create_app``). The app returned is a FastAPI app whose
lifespan starts the host (:func:`host_config`, ``Host.start``) before it serves, runs
the user's ``lifespan`` inside, and stops the host (and so every process it started)
when the server stops.

Routes the user adds to the returned app (``@app.get``) are matched first; every other
request goes to the host's API (google-adk's routes, the console, adk-web).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from .._exceptions import ConfigError, HostError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ..config import Settings
    from ..runtime import Host, HostConfig
    from .service_registry import ServiceKind

__all__ = ["FOLDER_LOADERS", "IGNORED", "ServedStorage", "UnsupportedParameterError", "agents_folder", "build_app",
           "host_config", "loader_problem", "refuse_unsupported", "storage", "unsupported"]

#: The parameters of google-adk's ``get_fast_api_app`` that are accepted and not used
#: here, and why (a value given for any other that cannot be honoured is refused).
IGNORED: dict[str, str] = {
    "session_db_kwargs": "SQLAlchemy's engine options: the host opens its stores itself",
    "host": "unused by the returned app in google-adk too (bind_host guards it)",
    "port": "the port is the ASGI server's (uvicorn's), not the app's",
    "logo_text": "adk-web's logo: the UI is served as installed",
    "logo_image_url": "adk-web's logo: the UI is served as installed",
    "a2a": "every app is served as an A2A agent at /a2a/{app} either way (when a2a-sdk is installed)",
    "reload_agents": "an edited agent always reloads here; True also prints each reload",
}

#: How often the keeper thread looks whether the root supervisor's process still runs (seconds).
ALIVE_CHECK = 2.0


class UnsupportedParameterError(ConfigError):
    """A ``get_fast_api_app`` parameter (or URI) this host cannot honour. ``parameters``
    names each one refused."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.parameters = tuple(problems)
        super().__init__("get_fast_api_app: not supported by adk-actors: "
                         + "; ".join(f"{name}: {why}" for name, why in problems.items()))


@dataclass(frozen=True)
class ServedStorage:
    """Where the host keeps its data: ``data_dir`` (its own files; removed when the app
    stops if ``temporary``), the session store (``store_url``: a SQLite file or a
    PostgreSQL URL; empty: ``data_dir/sessions.db``), the artifacts (``artifacts_dir``;
    empty: ``data_dir/artifacts``) and the A2A tasks (``a2a_tasks``; None: in
    ``data_dir``)."""

    data_dir: str
    store_url: str = ""
    artifacts_dir: str = ""
    a2a_tasks: str | None = None
    temporary: bool = False


#: The agent loaders whose rule is the host's own (the agents of one folder, in
#: google-adk's shapes), by (module, class name): ours and google-adk's ``AgentLoader``.
FOLDER_LOADERS = frozenset({("adk_actors.cli.utils.agent_loader", "AgentLoader"),
                            ("google.adk.cli.utils.agent_loader", "AgentLoader")})


def loader_problem(loader: Any, agents_dir: str | None) -> str | None:
    """Why ``get_fast_api_app`` cannot take ``loader`` with ``agents_dir``, or None when
    it can: an ``AgentLoader`` (:data:`FOLDER_LOADERS`, the class itself, not a
    subclass) of that same folder, not in single-agent mode. The host never calls the
    loader: its own processes load the same folder by the same rule."""
    kind = type(loader)
    if (kind.__module__, kind.__qualname__) not in FOLDER_LOADERS:
        return (f"a {kind.__name__} would load agents in this process by its own rule, and a host's processes "
                "load them from agents_dir themselves (an AgentLoader of agents_dir is accepted)")
    if getattr(loader, "_is_single_agent", False):
        return (f"it loads the one agent {getattr(loader, '_single_agent_name', None)!r} (single-agent mode); a host "
                "serves every agent of agents_dir")
    where = getattr(loader, "agents_dir", None)
    if agents_dir is None or where is None or Path(str(where)).resolve() != Path(agents_dir).resolve():
        return f"it loads the agents of {where}, not those of agents_dir {agents_dir}"
    return None


def refuse_unsupported(values: Mapping[str, Any], agents_dir: str | None = None) -> None:
    """Raise :class:`UnsupportedParameterError` naming every parameter of ``values``
    (google-adk's names) whose value this host cannot honour (:func:`unsupported`);
    nothing for defaults."""
    problems = unsupported(values, agents_dir)
    if problems:
        raise UnsupportedParameterError(problems)


def unsupported(values: Mapping[str, Any], agents_dir: str | None = None) -> dict[str, str]:
    """Each parameter of ``values`` (google-adk's names) whose value this host cannot
    honour, and why; empty for defaults. An ``agent_loader`` is judged with
    ``agents_dir`` (:func:`loader_problem`)."""
    problems: dict[str, str] = {}
    if values.get("agent_loader") is not None:
        loader_refused = loader_problem(values["agent_loader"], agents_dir)
        if loader_refused is not None:
            problems["agent_loader"] = loader_refused
    for name in ("trace_to_cloud", "otel_to_cloud", "express_mode"):
        if values.get(name):
            problems[name] = "Google Cloud export and Agent Engine are not available here"
    for name, why in (("eval_storage_uri", "eval sets are kept in the host's data folder"),
                      ("url_prefix", "the API is served at the root of the app"),
                      ("extra_plugins", "plugins are given by each agent's App (app.py), not by name here"),
                      ("trigger_sources", "the /trigger/* routes are not served"),
                      ("trigger_oidc_audience", "the /trigger/* routes are not served"),
                      ("trigger_oidc_service_accounts", "the /trigger/* routes are not served"),
                      ("trigger_auth_verifier", "the /trigger/* routes are not served"),
                      ("default_llm_model", "each agent names its model"),
                      ("gemini_enterprise_app_name", "Agent Engine's /api/reasoning_engine is not served"),
                      ("avatar_config", "live video avatars are not supported"),
                      ("max_llm_calls", "set RunConfig.max_llm_calls in the run request")):
        if values.get(name):
            problems[name] = why
    return problems


def _sqlite_path(uri: str) -> str | None:
    """The file a ``sqlite://`` URI names (google-adk's reading: ``sqlite:///x.db`` is
    ``x.db`` from the working folder, ``sqlite:////abs.db`` is ``/abs.db``), made
    absolute; None for a URI naming no file (``sqlite://``, ``:memory:``)."""
    from ..sessions.database_session_service import store_location

    location = store_location(uri)
    return None if location == ":memory:" else str(Path(location).resolve())


def _registered_scheme(kind: ServiceKind, uri: str | None) -> str | None:
    """Why a host refuses ``uri`` when a user registered its scheme for ``kind`` in the
    service registry (in code, or a services file); None otherwise."""
    # the services' modules are loaded only when get_fast_api_app asks (not by adk-actors web)
    from .service_registry import custom_scheme

    scheme = custom_scheme(kind, uri)
    if scheme is None:
        return None
    return (f"{scheme!r} is a {kind} scheme registered in the service registry, but a host keeps its {kind}s in "
            "its own store actors, in other processes, which cannot use a service made by a factory of this "
            "process (run the agent in process with that service, e.g. adk_actors.runners.Runner, or give "
            "the host a URI it serves)")


def storage(agents_dir: Path, settings: Settings, *, session_service_uri: str | None,
            artifact_service_uri: str | None, memory_service_uri: str | None, use_local_storage: bool,
            task_store_uri: str | None) -> ServedStorage:
    """Where the host keeps what the URIs name. In order, each refusal collected and
    raised together (:class:`UnsupportedParameterError`):

    * sessions: ``sqlite:///PATH`` (also ``sqlite+aiosqlite``): that file (the host's
      other tables, memory and approvals among them, go in it too); ``postgresql://``:
      that database (also ``postgresql+asyncpg://``, ``postgres://``); ``memory://``,
      ``sqlite://`` without a file, or no URI with ``use_local_storage=False``: a
      temporary data folder, removed when the app stops (nothing outlives the
      process, as google-adk's in-memory services); no URI: the host's own store in
      the data folder. Anything else (``agentengine://``, ``mysql://``) is refused.
    * artifacts: ``file:///PATH``: that folder (the host's layout of files, not
      google-adk's); ``memory://``: the data folder (temporary only if the sessions'
      is); ``gs://`` and anything else refused.
    * memory: none or ``memory://``: the host's memory service (kept in its store, so it
      outlives a restart unless the store is temporary); anything else refused.
    * A2A tasks: none: a SQLite file in the data folder; ``sqlite:///PATH``: that
      file; anything else refused.
    * whatever those rules say, a session, artifact or memory URI whose scheme a user
      registered in the service registry (:mod:`adk_actors.cli.service_registry`) is
      refused, the message naming the scheme and why.

    The data folder is ``ADK_ACTORS_HOST__DATA_DIR`` when set, else
    ``AGENTS_DIR/.adk-actors`` (as ``adk-actors web``)."""
    problems: dict[str, str] = {}
    store_url, temporary = "", False
    uri = session_service_uri
    registered = {name: why for name, why in (
        ("session_service_uri", _registered_scheme("session", session_service_uri)),
        ("artifact_service_uri", _registered_scheme("artifact", artifact_service_uri)),
        ("memory_service_uri", _registered_scheme("memory", memory_service_uri))) if why is not None}
    if uri is None:
        temporary = not use_local_storage
    elif uri == "memory://" or (urlsplit(uri).scheme.split("+")[0] == "sqlite" and _sqlite_path(uri) is None):
        temporary = True
    else:
        scheme = urlsplit(uri).scheme.split("+")[0].lower()
        if scheme == "sqlite":
            store_url = str(_sqlite_path(uri))
        elif scheme in ("postgresql", "postgres"):
            from ..sessions.database_session_service import store_location

            store_url = store_location(uri)
        else:
            problems["session_service_uri"] = (f"{scheme or uri!r} sessions are not supported "
                                               "(sqlite:///PATH, postgresql://..., memory:// are)")
    artifacts_dir = ""
    if artifact_service_uri is not None and artifact_service_uri != "memory://":
        parts = urlsplit(artifact_service_uri)
        if parts.scheme == "file" and parts.netloc in ("", "localhost") and parts.path:
            artifacts_dir = str(Path(unquote(parts.path)).resolve())
        else:
            problems["artifact_service_uri"] = (f"{parts.scheme or artifact_service_uri!r} artifacts are not "
                                                "supported (file:///PATH and memory:// are)")
    if memory_service_uri not in (None, "memory://"):
        problems["memory_service_uri"] = "the host's own memory service is used (memory:// or none)"
    a2a_tasks = None
    if task_store_uri is not None:
        if urlsplit(task_store_uri).scheme.split("+")[0] == "sqlite" and _sqlite_path(task_store_uri):
            a2a_tasks = _sqlite_path(task_store_uri)
        else:
            problems["task_store_uri"] = "A2A tasks are kept in a SQLite file (sqlite:///PATH, or none)"
    problems.update(registered)  # a registered scheme's refusal says why, over the generic one
    if problems:
        raise UnsupportedParameterError(problems)
    if temporary:
        data_dir = str(Path(tempfile.gettempdir()) / f"adk-actors-app-{uuid.uuid4().hex}")  # made by Host.start
    elif "ADK_ACTORS_HOST__DATA_DIR" in os.environ:
        data_dir = str(Path(settings.host.data_dir).resolve())
    else:
        data_dir = str(agents_dir / ".adk-actors")
    return ServedStorage(data_dir=data_dir, store_url=store_url, artifacts_dir=artifacts_dir, a2a_tasks=a2a_tasks,
                         temporary=temporary)


def host_config(settings: Settings, *, clients: tuple[Any, ...] = (), cluster_join: str = "") -> HostConfig:
    """The host ``settings`` describe (its ``[host]``, ``[store]``, ``[cluster]``,
    ``[models]``, ``[breaker]``, ``[retry]``, ``[artifacts]``, ``[limits]``, ``[jobs]``),
    its root findable by name (``adk-actors status``), with ``clients`` as the root's
    last children and ``cluster_join`` (the leader to join; empty: none)."""
    import logging

    from supervision.lowlevel import HealthCheck

    from ..messages import Limits
    from ..models import BreakerConfig, RetryPolicy
    from ..runtime import HostConfig

    host = settings.host
    return HostConfig(
        apps=dict(settings.apps), data_dir=host.data_dir, agents_dir=host.agents_folder,
        store_url=settings.store.url, lease_seconds=settings.store.lease_seconds, cluster_join=cluster_join,
        cluster_checkin=settings.cluster.checkin_seconds, cluster_refresh=settings.cluster.refresh_seconds,
        cluster_allow_public=settings.cluster.allow_public, port=host.port, address=host.address,
        log_file=settings.log_file, log_level=getattr(logging, settings.logging.level),
        conformance_dir=host.conformance_dir or None, partitions=host.partitions, idle_timeout=host.idle_timeout,
        run_timeout=host.run_timeout or None, run_stop_grace=host.run_stop_grace,
        max_queued_runs=host.max_queued_runs, run_workers=host.run_workers, runs_per_worker=host.runs_per_worker,
        max_run_workers=host.max_run_workers, trace_turns=host.trace_turns, models=dict(settings.models),
        root_intensity=host.restart_intensity, breaker=BreakerConfig(**settings.breaker.model_dump()),
        max_artifact_bytes=settings.artifacts.max_bytes, artifacts_dir=settings.artifacts.dir,
        limits=Limits(**settings.limits.model_dump()),
        model_options={"retry": RetryPolicy(max_attempts=settings.retry.max_attempts,
                                            base_delay=settings.retry.base_delay,
                                            max_delay=settings.retry.max_delay),
                       "timeout": settings.retry.timeout},
        root_period=host.restart_period, extra={"global_root": True},
        health=HealthCheck(host.health_interval, host.health_timeout) if host.health_interval else None,
        session_intensity=host.session_intensity, session_period=host.session_period,
        worker_intensity=host.worker_intensity, worker_period=host.worker_period,
        jobs=settings.jobs.jobs_config(), clients=clients)


def _http_section(settings: Settings, *, web: bool, allow_origins: list[str] | None, bind_host: str | None,
                  auto_create_session: bool) -> Any:
    """The ``[http]`` settings the API is built with: the console only with ``web``,
    google-adk's CORS origins, auto-created sessions as asked. The host guard (DNS
    rebinding) is on for a loopback ``bind_host`` only; with none, or another address,
    requests for any host name are served (as google-adk's app: behind Cloud Run, a
    load balancer, a proxy), authenticated only when ``ADK_ACTORS_HTTP__TOKENS`` gives
    tokens: a non-loopback ``bind_host`` without them is warned about."""
    section = settings.http.model_copy(update={
        "console": web, "auto_create_session": auto_create_session,
        "allow_origins": [*settings.http.allow_origins, *(allow_origins or [])]})
    address = "127.0.0.1" if bind_host == "localhost" else bind_host
    if address is not None and _loopback(address):
        return section.model_copy(update={"address": address})
    if bind_host is not None and not section.tokens:
        warnings.warn(f"the app is bound to {bind_host}, not loopback, and has no authentication: anyone who "
                      "reaches it can read and change every user's sessions (give tokens with "
                      "ADK_ACTORS_HTTP__TOKENS, or put an authenticating proxy in front)", stacklevel=3)
    # Validated for a loopback address, then moved: the guard checks no Host name, and
    # tokens stay optional, as google-adk's app served by the caller on any address.
    return section.model_copy(update={"address": "0.0.0.0"})


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:  # a name other than localhost
        return False


def _root_process(host: Host) -> int | None:
    """The pid of the host's root supervisor (the parent of its ``registry`` child), asked
    once, right after the start, before any request can use the host's actor system
    handle from another thread; None when it cannot be told."""
    from supervision.lowlevel import proc_stat

    registry = host.root.pids().get("registry") if host.root is not None else None
    stat = proc_stat(registry) if registry else None
    return stat[1] if stat is not None else None


def _keep(root_pid: int | None, watcher: Any, stopping: threading.Event) -> None:
    """Until ``stopping`` is set: every 0.1 s, report the agent folders' changes
    (``watcher``, when there is one); every ``ALIVE_CHECK`` s, look whether the root
    supervisor's process (``root_pid``) still runs, from the process table (no message:
    the actor system's handle is the requests'). A root that gave up (its restart
    budget spent) or was killed is said on stderr, and this process is sent SIGTERM:
    the ASGI server stops, and the app's lifespan stops what is left of the host.
    Never half-alive."""
    from supervision.lowlevel import process_alive

    checked = time.monotonic()
    while not stopping.wait(0.1):
        if watcher is not None:
            watcher.poll()
        if root_pid is None or time.monotonic() - checked < ALIVE_CHECK:
            continue
        checked = time.monotonic()
        if not stopping.is_set() and not process_alive(root_pid):
            print("error: the supervision tree gave up (its restart budget was spent, or its root was killed; "
                  "see the log): the app stops", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGTERM)
            return


def build_app(*, agents_dir: str, settings: Settings, served: ServedStorage, web: bool,
              allow_origins: list[str] | None, bind_host: str | None, auto_create_session: bool,
              reload_agents: bool, lifespan: Any = None) -> FastAPI:
    """The FastAPI app (see the module) for the agent folders of ``agents_dir`` on
    ``settings`` with the storage ``served``. Nothing starts until its lifespan does:
    then, in order, the session store is checked and the host's tree started
    (``Host.start``; its error, such as a busy port, fails the server's start, with the
    temporary data folder removed); a thread watches the root supervisor's process
    (:func:`_keep`) and, when ``reload_agents``, the agent folders; the user's
    ``lifespan`` runs; the app serves. On the way out, in reverse: the user's lifespan
    ends, the watching stops, the host stops (runs in flight
    are told they were interrupted, every process of its tree ends, within
    ``[host] shutdown_timeout``), a temporary data folder is removed."""
    from fastapi import FastAPI

    from supervision.lowlevel import PortInUse, check_port_free

    from ..engine import AppCatalog, remember_explicit_env
    from ..http import create_app, http_args
    from ..runtime import Host
    from ..runtime._agent_folders import AgentFolderWatcher
    from ._common import say_line

    remember_explicit_env()  # before any .env is read or any process forked (google-adk's rule)
    host_section = settings.host.model_copy(update={"agents_dir": agents_dir, "data_dir": served.data_dir})
    store = settings.store.model_copy(update={"url": served.store_url}) if served.store_url else settings.store
    artifacts = settings.artifacts.model_copy(update={"dir": served.artifacts_dir or settings.artifacts.dir})
    settings = settings.model_copy(update={"host": host_section, "store": store, "artifacts": artifacts})
    section = _http_section(settings, web=web, allow_origins=allow_origins, bind_host=bind_host,
                            auto_create_session=auto_create_session)
    catalog = AppCatalog(settings.apps, host_section.agents_folder)
    config = host_config(settings, cluster_join=settings.cluster.join)
    host = Host(config)
    launch = http_args(section, admin_port=host_section.port, admin_address=host_section.address,
                       apps=dict(settings.apps), data_dir=served.data_dir, agents_dir=host_section.agents_folder,
                       max_json_depth=settings.limits.max_json_depth,
                       http_functions=tuple(settings.jobs.http_functions), cluster_join=settings.cluster.join)
    api = create_app(host, catalog, section, evals_dir=launch.evals_dir, max_json_depth=launch.max_json_depth,
                     a2a_tasks=served.a2a_tasks or launch.a2a_tasks, http_functions=frozenset(launch.http_functions))
    timeout = settings.host.shutdown_timeout

    @asynccontextmanager
    async def run_host(app: FastAPI) -> AsyncIterator[Any]:
        try:
            check_port_free(host_section.port, host_section.address)
            sys.dont_write_bytecode = True  # an agent file edited within the same second is never taken for cached
            host.start()  # before any thread of ours runs: the tree's processes are forked from this one
        except PortInUse as exc:
            _forget(served)
            raise HostError(f"{exc} (the host's actor system: set ADK_ACTORS_HOST__PORT to another port)") from None
        except BaseException:
            _forget(served)
            raise
        stopping = threading.Event()
        watcher = AgentFolderWatcher(catalog, say_line) if reload_agents else None
        keeper: threading.Thread | None = None
        watching = None  # the watcher, once started
        try:
            keeper = threading.Thread(target=_keep, args=(_root_process(host), watcher, stopping),
                                      name="adk-actors-keeper", daemon=True)
            if watcher is not None:
                watcher.start()
                watching = watcher
            keeper.start()
            if lifespan is None:
                yield None
            else:
                async with lifespan(app) as state:
                    yield state
        finally:
            stopping.set()
            if watching is not None:
                watching.stop()
            if keeper is not None and keeper.is_alive():
                keeper.join(timeout=10)
            try:
                host.stop(timeout=timeout)
            finally:
                _forget(served)

    outer = FastAPI(lifespan=run_host, docs_url=None, redoc_url=None, openapi_url=None, redirect_slashes=False,
                    title="adk-actors")
    outer.router.default = api  # every request no route of the user's takes: the host's API
    return outer


def _forget(served: ServedStorage) -> None:
    """Remove a temporary data folder (nothing of it is meant to outlive the app)."""
    if served.temporary:
        shutil.rmtree(served.data_dir, ignore_errors=True)


def agents_folder(agents_dir: str) -> Path:
    """``agents_dir`` resolved; :class:`ConfigError` when it is no folder, or is an agent's
    own folder (google-adk's single-agent mode, not supported here: pass the folder
    that holds it)."""
    from ..engine import ROOT_AGENT_FILE

    folder = Path(agents_dir).resolve()
    if not folder.is_dir():
        raise ConfigError(f"agents_dir {agents_dir}: no such folder (it holds <name>/agent.py or "
                          "<name>/root_agent.yaml)")
    if (folder / "agent.py").is_file() or (folder / ROOT_AGENT_FILE).is_file():
        raise UnsupportedParameterError({"agents_dir": f"{folder} is one agent's folder (google-adk's single-agent "
                                                       "mode): pass the folder that holds it"})
    return folder

