"""Every error adk_actors raises, in one shallow hierarchy."""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "AdkError",
    "AgentDefinitionError",
    "CompileError",
    "ConfigError",
    "HostError",
    "HostStopped",
    "InternalError",
    "InvalidRequestError",
    "InvocationNotFoundError",
    "LimitExceededError",
    "McpCallTimeout",
    "McpError",
    "McpUnavailable",
    "NotFoundError",
    "RunFailedError",
    "RunStopped",
    "SessionBusyError",
    "SessionElsewhereError",
    "SessionExistsError",
    "SessionFailedError",
    "SessionNotFoundError",
    "SessionUnreadableError",
    "UnknownAppError",
]


class AdkError(Exception):
    """Base class of every adk_actors error."""


class AgentDefinitionError(AdkError, ValueError):
    """An agent definition is invalid (raised when it is constructed, not at the first request)."""


class CompileError(AdkError):
    """A request could not be compiled from the definition and context."""


class ConfigError(AdkError, ValueError):
    """The configuration is invalid; the message names the file and the key."""


class HostError(AdkError):
    """The host is not running, unreachable, or did not answer in time."""


class HostStopped(HostError):
    """The host has stopped (``Host.stop``, or its whole tree is gone: its root
    supervisor gave up or was killed, its actor system shut down): raised at once to
    each caller, including one that was waiting on it, instead of after the call's
    ``call_timeout``. A part of the host restarting is waited for, as before; a
    stopped host does not come back by itself."""


class UnknownAppError(AdkError, LookupError):
    """No app of that name is configured on the host."""


class SessionNotFoundError(AdkError, LookupError):
    """No such session."""


class SessionUnreadableError(AdkError):
    """The store holds the session but cannot read it back (written by an older
    version, or a corrupted row). Only that session is affected: delete it, or mend
    its rows."""


class SessionElsewhereError(AdkError):
    """Another host's partition holds the session (its single-writer lease, in a store
    several hosts share): this host did not serve it, and wrote nothing. The message
    names the holder; the session is served here again once that lease ends."""


class SessionFailedError(AdkError):
    """The session crashed more often than its restart intensity allows and answers
    nothing until an operator resets it (``Runner.reset_session``, ``adk-actors sessions
    reset``, the console)."""


class InternalError(AdkError):
    """A request failed inside the host (a bug, logged with its traceback there). The
    host carries on: the session it touched was dropped from memory and is read from
    the store again on its next request."""


class SessionExistsError(AdkError):
    """A session with that id already exists."""


class InvalidRequestError(AdkError, ValueError):
    """The host refused a request as malformed (a wrong type, a missing field, an
    unknown kind of request)."""


class NotFoundError(AdkError, LookupError):
    """The thing a request names does not exist (an approval id, an artifact)."""


class InvocationNotFoundError(NotFoundError, ValueError):
    """No event of the session has that invocation id (``Runner.rewind_async``); a
    ``ValueError`` too, as google-adk's."""


class LimitExceededError(AdkError):
    """A request went over one of the host's limits (``Limits``); nothing was stored."""


class SessionBusyError(AdkError):
    """The session is running another turn and the request asked not to wait."""


class RunStopped(AdkError):
    """Raised inside a run to stop the whole run, not one agent of it: a workflow agent
    lets it through (a ParallelAgent's branch ends its siblings too)."""


class RunFailedError(AdkError):
    """A run ended with ``RunFailed``: ``reason`` is cancelled, timeout, killed,
    model_error, interrupted, error or needs_decision; ``error_type`` and ``detail`` say
    more. ``resumed_as``: the host resumes the run on its own, as that run."""

    def __init__(self, run_id: str, reason: str, error_type: str = "", detail: str = "",
                 resumed_as: str = "") -> None:
        super().__init__(f"run {run_id} failed ({reason}): {error_type} {detail}".strip())
        self.run_id = run_id
        self.reason = reason
        self.error_type = error_type
        self.detail = detail
        self.resumed_as = resumed_as

    @property
    def pending_calls(self) -> list[dict[str, Any]]:
        """``needs_decision``: the calls that need a decision (``call_id``, ``name``,
        ``args``, ``agent`` each); otherwise none."""
        if self.reason != "needs_decision":
            return []
        try:
            calls = json.loads(self.detail).get("pending_calls", [])
        except (ValueError, AttributeError):
            return []
        return [c for c in calls if isinstance(c, dict)]


class McpError(AdkError):
    """An MCP server could not do what was asked (a tool call gets it as its error)."""


class McpUnavailable(McpError):
    """The MCP server cannot be reached, or its connection ended."""


class McpCallTimeout(McpError):
    """An MCP tool call's deadline fired (the connection stays)."""
