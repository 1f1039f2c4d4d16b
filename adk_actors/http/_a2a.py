"""Every app of the host as an A2A agent, at ``/a2a/{app}`` (google-adk's ``adk
api_server --a2a`` layout): its card at ``/a2a/{app}/.well-known/agent-card.json``,
JSON-RPC at ``/a2a/{app}`` (protocol 1.0 methods, and the 0.3 names a2a-sdk still
takes). The protocol is a2a-sdk's own (its request handler and routes); each task
runs as a run of the app's Runner (:class:`adk_actors.a2a.RunnerExecutor`).

The same port and the same guard as the rest of the API: a token's user is the
user of the tasks it sends, and sees only its own tasks; an operator's (or, on
loopback with no tokens, anyone's) tasks run as google-adk's ``A2A_USER_<context
id>``. A card names its JSON-RPC URL from ``[http] public_url``, or from the
request's scheme and Host header. Tasks are kept in the host's data folder
(:mod:`adk_actors.http._a2a_tasks`: they outlive this process), or in its memory when
no file is given.
"""

from __future__ import annotations

from a2a.auth.user import User
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import LegacyRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.routes.common import ServerCallContextBuilder
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from .._exceptions import UnknownAppError
from ..a2a import RunnerExecutor, agent_card
from ._a2a_tasks import TaskStores
from ._deps import HostApi
from ._guard import acts_for_anyone

__all__ = ["A2aApps"]

CARD_PATH = "/.well-known/agent-card.json"
_SECRET_HEADERS = {"authorization", "cookie", "proxy-authorization", "x-api-key"}


class A2aApps:
    """The ASGI app mounted at ``/a2a``: ``/{app}/...`` goes to that app's A2A
    routes, made on its first request (404 for an app the host does not run)."""

    def __init__(self, api: HostApi, public_url: str | None = None, tasks_file: str | None = None) -> None:
        self._api = api
        self._stores = TaskStores(tasks_file) if tasks_file else None
        self._public_url = public_url.rstrip("/") if public_url else None
        self._handlers: dict[str, LegacyRequestHandler] = {}
        self._served: dict[tuple[str, str], Starlette] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        root = scope.get("root_path", "")
        below = scope["path"][len(root):] if scope["path"].startswith(root) else scope["path"]
        app, slash, _rest = below.lstrip("/").partition("/")
        try:
            served = self._app(app, self._public_url or _base_url(Request(scope)))
        except UnknownAppError as error:
            await JSONResponse({"detail": str(error)}, status_code=404)(scope, receive, send)
            return
        path = scope["path"] if slash else scope["path"] + "/"  # /a2a/{app} is the JSON-RPC route "/"
        await served({**scope, "root_path": f"{root}/{app}", "path": path}, receive, send)

    def _app(self, app: str, base: str) -> Starlette:
        served = self._served.get((app, base))
        if served is None:
            runner = self._api.runner(app)  # UnknownAppError for an app the host does not run
            card = agent_card(app, self._api.root_agent_of(app), f"{base}/a2a/{app}")
            handler = self._handlers.get(app)
            if handler is None:
                handler = self._handlers[app] = LegacyRequestHandler(
                    agent_executor=RunnerExecutor(runner, _user_of), task_store=self._task_store(app),
                    agent_card=card)
            routes = [*create_agent_card_routes(card, card_url=CARD_PATH),
                      *create_jsonrpc_routes(handler, "/", context_builder=_Principals(), enable_v0_3_compat=True)]
            served = self._served[(app, base)] = Starlette(routes=routes)
        return served


    def _task_store(self, app: str) -> TaskStore:
        return self._stores.for_app(app) if self._stores is not None else InMemoryTaskStore()


class _Principal(User):
    """The request's principal (the guard's: a token's user, or the operator)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


class _Principals(ServerCallContextBuilder):
    """A call's context: its principal, and its headers but the ones that carry a
    secret (a2a-sdk reads the protocol version and extensions from them)."""

    def build(self, request: Request) -> ServerCallContext:
        headers = {k: v for k, v in request.headers.items() if k not in _SECRET_HEADERS}
        return ServerCallContext(user=_Principal(request.state.principal), state={"headers": headers},
                                 requested_extensions=get_requested_extensions(
                                     request.headers.getlist(HTTP_EXTENSION_HEADER)))


def _user_of(context: RequestContext) -> str:
    """The user a task runs for: its token's user; for the operator, google-adk's
    ``A2A_USER_<context id>``."""
    principal = context.call_context.user.user_name
    return f"A2A_USER_{context.context_id}" if acts_for_anyone(principal) else principal


def _base_url(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host') or request.url.netloc}"
