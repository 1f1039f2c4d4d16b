"""The host's apps as MCP tools over streamable HTTP, at ``/mcp`` (when the ``mcp``
SDK is installed): :func:`adk_actors.mcp.apps_server`, stateless, JSON answers.

The same port and the same guard as the rest of the API (the guard's host and origin
checks stand for the SDK's own DNS-rebinding check): a token's user is the user of
the sessions its calls make; an operator's (or, on loopback with no tokens,
anyone's) are user ``mcp``. The agent builder's assistant is not offered, nor an app
whose definition does not load. The SDK's app is made on the first request and again
on a request that finds the apps changed (an agents folder's app added, removed, or
loading again, with its description): each app's session manager runs until the
process ends (calls in flight on an earlier one finish there).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from ..engine import BUILDER_ASSISTANT
from ..mcp import apps_server
from ._deps import HostApi
from ._guard import acts_for_anyone

__all__ = ["MCP_USER", "PATH", "McpMount"]

#: Where the host serves it.
PATH = "/mcp"
#: The user of an operator's MCP calls.
MCP_USER = "mcp"


class McpMount:
    """The ASGI app mounted at ``/mcp``."""

    def __init__(self, api: HostApi) -> None:
        self._api = api
        self._app: Any = None
        self._served_for: dict[str, str] | None = None  # the apps (name -> description) _app offers
        self._starting: asyncio.Lock | None = None
        self._manager_tasks: list[asyncio.Task[None]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``/mcp`` and ``/mcp/`` are the SDK's endpoint (its route ``/``)."""
        app = await self._served()
        path: str = scope["path"]
        base = path[:path.rindex(PATH) + len(PATH)] if PATH in path else path
        rest = path[len(base):] or "/"
        await app({**scope, "root_path": base, "path": base + rest}, receive, send)

    async def _served(self) -> Any:
        """The SDK's app for the apps as they are now: the one made before while they
        are the same; otherwise a new one, its session manager started first."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            described = self._descriptions()
            if self._app is None or described != self._served_for:
                server = apps_server(self._api.runner, described, _user_of)
                app = server.streamable_http_app(
                    streamable_http_path="/", stateless_http=True, json_response=True,
                    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
                running = asyncio.Event()

                async def manage() -> None:
                    async with server.session_manager.run():
                        running.set()
                        await asyncio.Event().wait()

                self._manager_tasks.append(asyncio.get_running_loop().create_task(manage(),
                                                                                  name="mcp-session-manager"))
                await running.wait()
                self._app, self._served_for = app, described
        return self._app

    def _descriptions(self) -> dict[str, str]:
        """Each app that loads (the builder's assistant aside): its root agent's description."""
        described: dict[str, str] = {}
        for name in self._api.apps.names():
            if name == BUILDER_ASSISTANT:
                continue
            root = self._api.root_agent_of(name)
            if root is not None:
                described[name] = str(getattr(root, "description", "") or "")
        return described


def _user_of(ctx: Context) -> str:
    request = ctx.request_context.request
    principal = getattr(getattr(request, "state", None), "principal", None)
    return MCP_USER if principal is None or acts_for_anyone(principal) else str(principal)
