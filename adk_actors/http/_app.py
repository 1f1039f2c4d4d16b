"""google-adk's HTTP API, served from a host: the same routes, shapes and casing.

``create_app(host, apps, section)`` builds a FastAPI app from one router per area
(FastAPI's "bigger applications" layout), each readable and testable alone:

* ``_info``: ``/health``, ``/version``, ``/list-apps``, ``app-info``;
* ``_sessions``, ``_memory``, ``_artifacts``: google-adk's session, memory and
  artifact routes;
* ``_runs`` (``/run``, ``/run_sse``) and ``_live`` (``/run_live``);
* ``_trace``, ``_evals``, ``_builder``, ``_dev``: the ``/dev`` routes adk-web calls;
* ``_console``: the console, approvals and credentials;
* ``_a2a``: every app as an A2A agent at ``/a2a/{app}`` (when a2a-sdk is installed);
* ``_mcp``: every app as an MCP tool at ``/mcp`` (when the mcp SDK is installed).
  Both are imported on their first request (``_lazy``), and answer 501 with the pip
  command when their extra is missing.

What every route shares (the host's apps, a Runner per app, the request's right to
act for a user) is one :class:`~adk_actors.http._deps.HostApi` injected as a
dependency. JSON is google-adk's: camelCase, None fields omitted, errors ``{"detail":
...}`` (``_errors``). Routes a request's user may not reach answer 403: a token of
user ``ann`` reaches only ``/apps/{app}/users/ann/...`` and runs whose ``userId`` is
``ann``. Every body passes the guard first (``_guard``), and no path is redirected.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Mount, Route

from .. import __version__
from ..config import HttpSection
from ..engine import AppCatalog
from ..evals import EvalFiles
from ..messages import Limits
from . import (
    _artifacts,
    _builder,
    _console,
    _dev,
    _evals,
    _info,
    _jobs,
    _live,
    _memory,
    _runs,
    _sessions,
    _trace,
)
from ._adk_web import adk_web_files, mount_adk_web
from ._deps import HostApi
from ._errors import SafeJSONResponse, add_error_handlers, check_path_names
from ._guard import Guard
from ._lazy import LazyExtra

__all__ = ["create_app"]

#: Where the MCP routes are (``_mcp.PATH``; that module is imported on their first request).
MCP_PATH = "/mcp"

#: The routers every host serves, in the order their routes are matched.
ROUTERS = (_info.router, _sessions.router, _runs.router, _live.router, _artifacts.router, _memory.router,
           _trace.router, _builder.router, _dev.router, _console.router, _jobs.router)


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
    api.state.host_api = HostApi(host, apps, EvalFiles(evals_dir) if evals_dir is not None else None,
                                 http_functions, auto_create_session=section.auto_create_session)
    add_error_handlers(api)
    for router in ROUTERS:
        if router is not _console.router or section.console:  # `adk-actors api_server`: no console
            api.include_router(router)
    if evals_dir is not None:
        api.include_router(_evals.router)
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
