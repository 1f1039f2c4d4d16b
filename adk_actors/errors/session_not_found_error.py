"""google-adk's ``google.adk.errors.session_not_found_error`` path."""

from __future__ import annotations

from .. import _exceptions

__all__ = ["SessionNotFoundError"]


class SessionNotFoundError(_exceptions.SessionNotFoundError, ValueError):
    """No such session: our typed error, and the ``ValueError`` google-adk's is."""

    def __init__(self, message: str = "Session not found.") -> None:
        super().__init__(message)
