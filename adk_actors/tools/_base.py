"""The tool protocol and the context a tool runs with."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._types import FunctionDeclaration, Part, State

if TYPE_CHECKING:  # tools see the engine's context only through the instance they are given
    from ..engine._context import InvocationContext

__all__ = ["Tool", "ToolContext", "Toolset"]


@runtime_checkable
class Tool(Protocol):
    name: str
    description: str
    is_long_running: bool

    def declaration(self) -> FunctionDeclaration: ...

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any: ...


@runtime_checkable
class Toolset(Protocol):
    """Tools resolved per request (for example from an MCP server)."""

    name: str

    async def get_tools(self, ctx: InvocationContext) -> list[Tool]: ...


class ToolContext:
    """What a tool may touch during one call.

    ``state`` reads the session state and records writes (they become the tool-response
    event's ``state_delta``); artifact saves are recorded in ``artifact_delta``;
    ``escalate`` / ``skip_summarization`` / ``transfer_to_agent`` set the event's actions.
    """

    def __init__(self, ctx: InvocationContext, function_call_id: str | None, tool_name: str = "") -> None:
        self.invocation = ctx
        self.function_call_id = function_call_id
        self.tool_name = tool_name
        self.state_delta: dict[str, Any] = {}
        self.artifact_delta: dict[str, int] = {}
        self.state = State(ctx.session.state, self.state_delta)
        self.escalate = False
        self.skip_summarization = False
        self.transfer_to_agent: str | None = None
        self.requested_auth: dict[str, Any] = {}
        self._loop: Any = None
        try:
            self._loop = asyncio.get_running_loop()  # the run's loop, for requests made from tool threads
        except RuntimeError:
            pass

    @property
    def agent_name(self) -> str:
        name: str = self.invocation.agent.name
        return name

    def _where(self) -> tuple[str, str, str]:
        session = self.invocation.session
        return session.app_name, session.user_id, session.session_id

    def save_artifact(self, name: str, part: Part) -> int:
        version = self.invocation.artifacts.save(*self._where(), name, part)
        self.artifact_delta[name] = version
        return version

    def load_artifact(self, name: str, version: int | None = None) -> Part | None:
        return self.invocation.artifacts.load(*self._where(), name, version)

    def list_artifacts(self) -> list[str]:
        return self.invocation.artifacts.list(*self._where())

    def get_credential(self, key: str) -> Any:
        """The user's credential ``key``, ready to use (the credential service refreshes
        an OAuth2 token close to expiry first), or None: then return
        :meth:`request_credential` from the tool."""
        service = self.invocation.credentials
        if service is None:
            return None
        app, user, _ = self._where()
        return service.get(app, user, key)

    def request_confirmation(self, hint: str, timeout: float = 60.0) -> bool:
        """Ask a human to approve what this tool is about to do, and wait (at most
        ``timeout`` seconds; no decision is a no). Call it from a sync tool (tools run
        on their own thread); the run's actor stays responsive meanwhile."""
        service = self.invocation.approvals
        if service is None or self._loop is None:
            return False
        future = asyncio.run_coroutine_threadsafe(
            service.request(self.invocation, self.tool_name or "tool", {"hint": hint}, hint, timeout),
            self._loop)
        decision = future.result(timeout + 30.0)
        return bool(decision.approved)

    def request_credential(self, key: str, auth_config: dict[str, Any]) -> dict[str, Any]:
        """Auth as a return value: the turn ends with an auth request the caller acts on."""
        self.requested_auth[self.function_call_id or key] = {"credential_key": key, **auth_config}
        return {"status": "auth_required", "credential_key": key}

    def search_memory(self, query: str, limit: int = 10) -> list[Any]:
        session = self.invocation.session
        return self.invocation.memory.search(session.app_name, session.user_id, query, limit)
