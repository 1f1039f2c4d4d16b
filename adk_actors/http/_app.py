"""google-adk's HTTP API, served from a host: the same routes, shapes and casing.

``create_app(host, apps, section)`` builds a FastAPI app from one router per area
(FastAPI's "bigger applications" layout), each readable and testable alone:

* ``_info``: ``/health``, ``/version``, ``/list-apps``, ``app-info``;
* ``_sessions``, ``_memory``, ``_artifacts``: google-adk's session, memory and
  artifact routes;
* ``_runs`` (``/run``, ``/run_sse``) and ``_live`` (``/run_live``);
* ``_trace``, ``_evals``, ``_builder``, ``_dev``: the ``/dev`` routes adk-web calls;
* ``_console``: the console, approvals and credentials; ``_jobs``: the job queue;
* ``_a2a``: every app as an A2A agent at ``/a2a/{app}`` (when a2a-sdk is installed);
* ``_mcp``: every app as an MCP tool at ``/mcp`` (when the mcp SDK is installed).
  Both answer 501 with the pip command when their extra is missing.

``_a2a``, ``_mcp``, ``_evals``, ``_builder``, ``_trace``, ``_dev``, ``_console`` and
``_jobs`` are imported on their first request (``_lazy``; :data:`LAZY_ROUTERS`), so that a
server starts without what most starts never use; their routes are matched in the
same order and answer the same as if imported at the start, and the OpenAPI schema
lists them. :func:`warm_up` does the rest of the first requests' one-time work ahead,
for the server process ``serve`` forks before its tree starts.

What every route shares (the host's apps, a Runner per app, the request's right to
act for a user) is one :class:`~adk_actors.http._deps.HostApi` injected as a
dependency. JSON is google-adk's: camelCase, None fields omitted, errors ``{"detail":
...}`` (``_errors``). Routes a request's user may not reach answer 403: a token of
user ``ann`` reaches only ``/apps/{app}/users/ann/...`` and runs whose ``userId`` is
``ann``. Every body passes the guard first (``_guard``), and no path is redirected.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Depends, FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Mount, Route
from starlette.types import Message, Scope

from .. import __version__
from ..config import HttpSection
from ..engine import AppCatalog
from ..messages import Limits
from . import _artifacts, _info, _live, _memory, _runs, _sessions
from ._adk_web import adk_web_files, mount_adk_web
from ._deps import HostApi
from ._errors import SafeJSONResponse, add_error_handlers, check_path_names
from ._guard import Guard
from ._lazy import LazyExtra, LazyRouter

__all__ = ["create_app", "warm_up"]

#: Where the MCP routes are (``_mcp.PATH``; that module is imported on their first request).
MCP_PATH = "/mcp"

#: The path of :func:`warm_up`'s request: one no route serves (tests/test_http_lazy_routes.py).
WARM_UP_PATH = "/.warm-up"

#: The routers imported on their first request (``_lazy.LazyRouter``): (module, the path
#: templates all its routes are at or below, what they serve: a 501's first words).
#: tests/test_http_lazy_routes.py checks the templates against the routes.
LAZY_ROUTERS: dict[str, tuple[str, Sequence[str], str]] = {
    "trace": ("adk_actors.http._trace", ("/dev/apps/{app}/debug/trace",), "The trace API"),
    "builder": ("adk_actors.http._builder", ("/dev/apps/{app}/builder",), "The agent builder"),
    "console": ("adk_actors.http._console", ("/", "/console", "/apps/{app}/users/{user}/approvals",
                                             "/apps/{app}/users/{user}/credentials"), "The console"),
    "jobs": ("adk_actors.http._jobs", ("/jobs",), "The job API"),
    "dev": ("adk_actors.http._dev", ("/dev/apps/{app}/build_graph", "/dev/apps/{app}/build_graph_image",
                                     "/dev/apps/{app}/graph",
                                     "/dev/apps/{app}/users/{user}/sessions/{session}/events/{event}/graph",
                                     "/config/telemetry"), "The agent graph API"),
    "evals": ("adk_actors.http._evals", tuple(f"/dev/apps/{{app}}/{name}" for name in (
        "eval_sets", "eval-sets", "eval_results", "eval-results", "metrics-info")), "The eval API"),
}

#: The routers every host serves (a name: one of LAZY_ROUTERS), in the order their
#: routes are matched; the eval routes come last, when the host keeps eval sets.
ROUTERS: tuple[APIRouter | str, ...] = (_info.router, _sessions.router, _runs.router, _live.router,
                                        _artifacts.router, _memory.router, "trace", "builder", "dev",
                                        "console", "jobs")


def _include(api: FastAPI, router: APIRouter | str, lazy: list[LazyRouter]) -> None:
    """``router`` in ``api``; a name of LAZY_ROUTERS: its stand-in (appended to ``lazy``)."""
    if isinstance(router, str):
        module, prefixes, what = LAZY_ROUTERS[router]
        stand_in = LazyRouter(api, module, prefixes, what=what)
        api.router.routes.append(stand_in)
        lazy.append(stand_in)
    else:
        api.include_router(router)


def create_app(host: Any, apps: AppCatalog, section: HttpSection, evals_dir: str | None = None, *,
               max_json_depth: int = Limits.max_json_depth, a2a_tasks: str | None = None,
               http_functions: frozenset[str] = frozenset()) -> Any:
    """The API for ``host``'s ``apps``, guarded as ``section`` says
    (:mod:`adk_actors.http._guard`), bodies nested no deeper than ``max_json_depth``
    (the host's ``[limits]``); eval sets live in ``evals_dir`` (None: no eval
    routes), A2A tasks in the SQLite file ``a2a_tasks`` (None: in memory); the job
    functions a request may enqueue are ``http_functions``; adk-web's UI at
    ``/dev-ui/`` when google-adk is installed."""
    api = FastAPI(title="adk-actors", version=__version__, redirect_slashes=False,
                  default_response_class=SafeJSONResponse, dependencies=[Depends(check_path_names)],
                  description="google-adk's HTTP API, served by an adk-actors host.")
    api.state.host_api = HostApi(host, apps, evals_dir, http_functions,
                                 auto_create_session=section.auto_create_session)
    add_error_handlers(api)
    lazy: list[LazyRouter] = []
    for router in ROUTERS:
        if router != "console" or section.console:  # `adk-actors api_server`: no console
            _include(api, router, lazy)
    if evals_dir is not None:
        _include(api, "evals", lazy)
    plain_openapi = api.openapi

    def openapi() -> dict[str, Any]:
        """FastAPI's schema, every lazy router loaded first (the schema names all routes)."""
        for stand_in in lazy:
            stand_in.load_now()
        return plain_openapi()

    api.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to change the schema
    # The A2A and MCP routes import their SDKs on their first request (``_lazy``: 0.5-0.7 s
    # each, most of this server's start otherwise); without the extra they answer 501
    # with the pip command, logged: not a 404 that looks like a wrong URL.
    host_api = api.state.host_api
    a2a = LazyExtra("adk_actors.http._a2a", lambda module: module.A2aApps(host_api, section.public_url, a2a_tasks),
                    extra="a2a", what="A2A")
    api.router.routes.insert(0, Mount("/a2a", a2a))  # first: an A2A request is not matched against the 30 before it
    mcp = LazyExtra("adk_actors.http._mcp", lambda module: module.McpMount(host_api), extra="mcp", what="MCP")
    api.router.routes.append(Route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"]))
    api.mount(MCP_PATH, mcp)
    adk_web = adk_web_files()
    if adk_web is not None:  # google-adk is installed: its own UI may be used too
        mount_adk_web(api, adk_web)
    guarded: Any = Guard(api, section, max_json_depth)
    if section.allow_origins:
        guarded = CORSMiddleware(guarded, allow_origins=section.allow_origins, allow_methods=["*"],
                                 allow_headers=["*"])
    return guarded


async def warm_up(app: Any) -> None:
    """Do now, in the server's event loop, the work the app's first requests would do
    on the way to their answer, for a server that has the time: the process ``serve``
    forked ahead waits for the host's tree (``_standby``), and the first ``/run`` of a
    new host then waits for this work no longer (measured: the first session and turn
    took about 30 ms of this process's CPU without it, 5-10 ms with it, as later ones do).

    In order: ``app`` (``create_app``'s, and any ASGI wrapper of it, each keeping the
    app it wraps as ``app``) is unwrapped to the FastAPI app; each of the app's routes,
    one at a time, is asked whether it serves a GET of ``WARM_UP_PATH`` (none does), so
    that FastAPI builds an included router's routes (their dependencies and parameter
    models: it builds them the first time the router is matched), and the event loop
    takes its turn after each, so that a request that came meanwhile (the first
    ``/list-apps`` most often: a starting server is polled with it) is served between
    two routers instead of after 30-60 ms of this work; then one GET of
    ``WARM_UP_PATH`` is routed through the app, so that Starlette builds its middleware
    stack; last, anyio's worker thread, on which FastAPI runs the plain (not ``async``)
    routes, is started (its first use imports anyio's asyncio backend). The 404 is
    dropped, nothing asks the host and nothing is logged; a lazy router's module is not
    imported (no lazy router claims the path). An error is raised to the caller
    (``_process`` writes it on stderr; the first requests then do the rest of the work)."""
    api = app
    while not isinstance(api, FastAPI):
        api = api.app

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        return None

    for route in list(api.router.routes):  # (a lazy router may replace itself meanwhile)
        route.matches(_warm_up_scope())
        await asyncio.sleep(0)
    await api(_warm_up_scope(), receive, send)
    await anyio.to_thread.run_sync(_nothing)


def _warm_up_scope() -> Scope:
    """A new ASGI scope of a GET of ``WARM_UP_PATH`` from the loopback (routing writes into it)."""
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": WARM_UP_PATH, "raw_path": WARM_UP_PATH.encode(), "root_path": "", "query_string": b"",
            "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 0), "server": ("127.0.0.1", 0)}


def _nothing() -> None:
    return None
