"""google-adk's ``google.adk.errors.already_exists_error`` path: a session (or other
thing) created with an id that is taken."""

from __future__ import annotations

from .._exceptions import SessionExistsError

__all__ = ["AlreadyExistsError"]


class AlreadyExistsError(SessionExistsError):
    """The thing to create exists already (google-adk's name); also our
    :class:`~adk_actors._exceptions.SessionExistsError`. ``message`` is its text."""

    def __init__(self, message: str = "The resource already exists.") -> None:
        super().__init__(message)
        self.message = message
