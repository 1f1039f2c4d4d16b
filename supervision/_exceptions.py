"""Every error the supervision package raises, in one shallow hierarchy."""

from __future__ import annotations

__all__ = [
    "ActorSystemError",
    "BadRequest",
    "CallError",
    "CallTimeout",
    "ChildAlreadyPresent",
    "ChildAlreadyStarted",
    "ChildError",
    "ChildNotFound",
    "ChildRestarting",
    "ChildRunning",
    "MaxChildren",
    "NameNotFound",
    "PortInUse",
    "ServerCrashed",
    "ServerNotRunning",
    "SpecError",
    "StartFailed",
    "SupervisionError",
    "UnknownRequest",
    "error_for_code",
]


class SupervisionError(Exception):
    """Base class of every error raised by :mod:`supervision`."""


class SpecError(SupervisionError, ValueError):
    """A child spec or supervisor spec is invalid (raised at construction)."""


class CallTimeout(SupervisionError, TimeoutError):
    """No reply arrived within the call's timeout."""


# -- errors carried back in a reply ---------------------------------------------------


class CallError(SupervisionError):
    """The server answered a call with an error; ``code`` names which."""

    code = "error"

    def __init__(self, detail: str = "", *, code: str | None = None) -> None:
        super().__init__(detail or self.code)
        self.detail = detail
        if code is not None:
            self.code = code


class BadRequest(CallError):
    """The request was malformed; raise it in a handler to reject input without crashing."""

    code = "bad_request"


class UnknownRequest(CallError):
    """The server does not handle this kind of request."""

    code = "unknown_request"


class ServerCrashed(CallError):
    """The server crashed while (or before) handling the call."""

    code = "crashed"


class ServerNotRunning(CallError):
    """The server is stopping or has stopped."""

    code = "not_running"


class ServerDiedAnswering(ServerNotRunning):
    """The call was delivered and handed on (``Handed``), and the server it went to
    died before answering: unlike a refused delivery, it may have acted on the call."""


class ChildError(CallError):
    """A supervisor refused a child operation (OTP's ``{error, Reason}``)."""


class ChildRunning(ChildError):
    code = "running"


class ChildRestarting(ChildError):
    code = "restarting"


class ChildNotFound(ChildError):
    code = "not_found"


class ChildAlreadyPresent(ChildError):
    code = "already_present"


class ChildAlreadyStarted(ChildError):
    code = "already_started"


class MaxChildren(ChildError):
    code = "max_children"


class StartFailed(ChildError):
    """A child (or a whole supervisor) failed to start; ``detail`` says why."""

    code = "start_failed"


class NameNotFound(SupervisionError, LookupError):
    """No process is registered under that name (within the wait allowed)."""


# -- the actor system itself ------------------------------------------------------------


class ActorSystemError(SupervisionError):
    """The actor system could not be started, reached or stopped."""


class PortInUse(ActorSystemError):
    """Something already listens on the admin port (often a stale actor system)."""


_BY_CODE: dict[str, type[CallError]] = {
    cls.code: cls
    for cls in (
        BadRequest,
        UnknownRequest,
        ServerCrashed,
        ServerNotRunning,
        ChildRunning,
        ChildRestarting,
        ChildNotFound,
        ChildAlreadyPresent,
        ChildAlreadyStarted,
        MaxChildren,
        StartFailed,
    )
}


def error_for_code(code: str, detail: str) -> CallError:
    """Build the typed exception for an error code carried in a reply."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return CallError(detail, code=code)
    return cls(detail)
