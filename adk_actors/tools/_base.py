"""The tool protocol and the context a tool runs with."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._types import FunctionDeclaration
from ..agents.callback_context import CallbackContext
from .tool_confirmation import ToolConfirmation

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


class ToolContext(CallbackContext):
    """What a tool may touch during one call: everything a :class:`CallbackContext`
    has (state, artifacts, memory, awaitable on the run's loop as in google-adk), and
    the call's own actions.

    ``actions`` (``escalate``, ``skip_summarization``, ``transfer_to_agent``,
    ``state_delta``, ``artifact_delta``, google-adk's place for them) become the
    tool-response event's actions; ``tool_context.escalate`` and the others are the
    same fields, read and set directly.
    """

    def __init__(self, ctx: InvocationContext, function_call_id: str | None, tool_name: str = "") -> None:
        super().__init__(ctx)
        self.function_call_id = function_call_id
        self.tool_name = tool_name
        #: the human's answer when this call runs again after a confirmation (google-adk's)
        self.tool_confirmation: ToolConfirmation | None = None
        self.shown_text: str | None = None  # the call's answer shown as text too (an AgentTool's, skipping summary)
        #: the live run's input fed to this call (a streaming tool's ``input_stream``, ``engine._live_tools``)
        self._input_stream: Any = None
        self._loop: Any = None
        try:
            self._loop = asyncio.get_running_loop()  # the run's loop, for requests made from tool threads
        except RuntimeError:
            pass

    @property
    def state_delta(self) -> dict[str, Any]:
        return self.actions.state_delta

    @property
    def artifact_delta(self) -> dict[str, int]:
        return self.actions.artifact_delta

    @property
    def requested_auth(self) -> dict[str, Any]:
        return self.actions.requested_auth_configs

    @property
    def escalate(self) -> bool:
        return bool(self.actions.escalate)

    @escalate.setter
    def escalate(self, value: bool) -> None:
        self.actions.escalate = value

    @property
    def skip_summarization(self) -> bool:
        return bool(self.actions.skip_summarization)

    @skip_summarization.setter
    def skip_summarization(self, value: bool) -> None:
        self.actions.skip_summarization = value

    @property
    def transfer_to_agent(self) -> str | None:
        return self.actions.transfer_to_agent

    @transfer_to_agent.setter
    def transfer_to_agent(self, value: str | None) -> None:
        self.actions.transfer_to_agent = value

    def get_credential(self, key: str) -> Any:
        """The user's credential ``key``, ready to use (the credential service refreshes
        an OAuth2 token close to expiry first), or None: then return
        :meth:`request_credential` from the tool."""
        service = self.invocation.credentials
        if service is None:
            return None
        app, user, _ = self._where()
        return service.get(app, user, key)

    def request_confirmation(self, hint: str | None = None, *, payload: Any | None = None,
                             timeout: float | None = None) -> bool | None:
        """Ask a human to confirm this call, in one of two ways.

        google-adk's (no ``timeout``): a :class:`ToolConfirmation` with ``hint`` and
        ``payload`` is put on this call's actions (``requested_tool_confirmations``) and
        None is returned; the tool returns what it has, the run emits an
        ``adk_request_confirmation`` call, and when the user answers it the tool runs
        again with ``tool_context.tool_confirmation`` set. A ``ValueError`` when this
        context belongs to no function call.

        Ours (with ``timeout``, the seeds' blocking approval): the run's approval service
        is asked and this waits for the decision (at most ``timeout`` seconds; no
        decision, or no service, is a no) and returns it. Call it from a sync tool
        (tools run on their own thread); the run's actor stays responsive meanwhile."""
        if timeout is None:
            if not self.function_call_id:
                raise ValueError("request_confirmation needs a function call id: it can only be used in a tool "
                                 "context")
            self.actions.requested_tool_confirmations[self.function_call_id] = ToolConfirmation(
                hint=hint or "", payload=payload)
            return None
        service = self.invocation.approvals
        if service is None or self._loop is None:
            return False
        future = asyncio.run_coroutine_threadsafe(
            service.request(self.invocation, self.tool_name or "tool", {"hint": hint}, hint or "", timeout),
            self._loop)
        decision = future.result(timeout + 30.0)
        return bool(decision.approved)

    def request_credential(self, auth_config: Any, legacy_config: dict[str, Any] | None = None) -> Any:
        """Ask the client for a credential, in one of two ways.

        google-adk's (``request_credential(auth_config)``, an ``adk_actors.auth.AuthConfig``):
        the auth request made from it (an OAuth2 client's authorization URL and state,
        no configured secret) is put on this call's actions (``requested_auth_configs``)
        and None is returned; the tool returns what it has, the run emits an
        ``adk_request_credential`` call and ends, and when the client answers it this
        call runs again, :meth:`get_auth_response` giving the credential. A
        ``ValueError`` when this context belongs to no function call (google-adk's
        text) or the config cannot make a request (google-adk's); a ``TypeError`` for
        anything but an ``AuthConfig``.

        Ours (``request_credential(key, auth_config_dict)``): the turn ends with an auth
        request event of its own, and ``{"status": "auth_required", ...}`` is returned."""
        if legacy_config is not None:
            key = str(auth_config)
            self.requested_auth[self.function_call_id or key] = {"credential_key": key, **legacy_config}
            return {"status": "auth_required", "credential_key": key}
        if not self.function_call_id:
            raise ValueError("request_credential requires function_call_id. This method can only be used in a tool "
                             "context, not a callback context. Consider using save_credential/load_credential "
                             "instead.")
        make = getattr(auth_config, "_client_request", None)
        if not callable(make):
            raise TypeError(f"request_credential takes an AuthConfig (adk_actors.auth), not "
                            f"{type(auth_config).__name__}")
        self.requested_auth[self.function_call_id] = make()
        return None

    def get_auth_response(self, auth_config: Any) -> Any:
        """The credential the client answered for ``auth_config`` (an
        ``adk_actors.auth.AuthConfig``), or None (google-adk's): read from the session
        state (``temp:<credential key>``, then ``<credential key>``); an OAuth2 answer
        still holding an authorization code has it exchanged at the token endpoint with
        the config's own client first (this blocks: call it from a sync tool, as
        google-adk's does), the token kept under ``temp:<credential key>`` for this
        invocation only (never in an event). Raises ``OpenApiAuthError`` for a redirect
        that cannot be used (an error, no code, a state not the request's) and
        ``OAuth2TokenError`` when the token endpoint refuses; ``TypeError`` for anything
        but an ``AuthConfig``."""
        read = getattr(auth_config, "_auth_response", None)
        if not callable(read):
            raise TypeError(f"get_auth_response takes an AuthConfig (adk_actors.auth), not "
                            f"{type(auth_config).__name__}")
        return read(self.invocation.session.state)
