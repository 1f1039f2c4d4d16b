"""google-adk's ``google.adk.errors.input_validation_error`` path."""

from __future__ import annotations

from .._exceptions import InvalidRequestError

__all__ = ["InputValidationError"]


class InputValidationError(InvalidRequestError):
    """A caller's input that a service refuses (an artifact name or id that could
    escape its place, a session-scoped artifact without a session); a ``ValueError``,
    as google-adk's, and our :class:`~adk_actors._exceptions.InvalidRequestError`."""

    def __init__(self, message: str = "Invalid input.") -> None:
        super().__init__(message)
        self.message = message
