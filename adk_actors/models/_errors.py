"""Typed model errors. ``error_type`` is what an error event carries; ``retryable``
says whether the retry policy may try again (429, 5xx, 529, timeouts, connection
failures); ``counts_for_breaker`` whether a circuit breaker should count it."""

from __future__ import annotations

from ._base import ModelError

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ConnectionFailed",
    "ContentBlocked",
    "MalformedResponse",
    "ModelError",
    "ModelTimeout",
    "Overloaded",
    "RateLimited",
    "ServerError",
    "StreamInterrupted",
]


class _Typed(ModelError):
    error_type_name = "model_error"
    retryable = False
    counts_for_breaker = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, error_type=self.error_type_name)
        self.status = status
        self.retry_after = retry_after


class RateLimited(_Typed):
    error_type_name, retryable, counts_for_breaker = "rate_limited", True, True


class Overloaded(_Typed):
    error_type_name, retryable, counts_for_breaker = "overloaded", True, True


class ServerError(_Typed):
    error_type_name, retryable, counts_for_breaker = "server_error", True, True


class ModelTimeout(_Typed):
    error_type_name, retryable, counts_for_breaker = "timeout", True, True


class ConnectionFailed(_Typed):
    error_type_name, retryable, counts_for_breaker = "connection_error", True, True


class AuthenticationError(_Typed):
    error_type_name = "authentication"


class BadRequestError(_Typed):
    error_type_name = "bad_request"


class ContentBlocked(_Typed):
    error_type_name = "content_blocked"


class MalformedResponse(_Typed):
    error_type_name, counts_for_breaker = "malformed_response", True


class StreamInterrupted(_Typed):
    """The stream broke after output had been sent on: never retried (it would repeat it)."""

    error_type_name, counts_for_breaker = "stream_interrupted", True
