"""google-adk's ``ToolExecutionError`` and ``ToolErrorType``: a tool's failure with an
error type (OpenTelemetry's ``error.type`` words for HTTP failures, or any string)."""

from __future__ import annotations

import enum

__all__ = ["ToolErrorType", "ToolExecutionError"]


class ToolErrorType(str, enum.Enum):  # noqa: UP042 -- str() gives the member's name, as google-adk's
    """The error types a tool failure may name (HTTP failures, OpenTelemetry's words)."""

    BAD_REQUEST = "BAD_REQUEST"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"
    BAD_GATEWAY = "BAD_GATEWAY"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    GATEWAY_TIMEOUT = "GATEWAY_TIMEOUT"


class ToolExecutionError(Exception):
    """A tool failed. ``message`` says how; ``error_type`` is the type's string (a
    :class:`ToolErrorType` is kept as its value, any other string or None as given).
    Raised from a tool, it fails the call as any other exception does."""

    message: str
    error_type: str | None

    def __init__(self, message: str, error_type: ToolErrorType | str | None = None) -> None:
        self.message = message
        self.error_type = error_type.value if isinstance(error_type, ToolErrorType) else error_type
        super().__init__(message)
