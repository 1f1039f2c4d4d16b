"""google-adk's ``StaleSessionError`` (``google.adk.errors``)."""

from __future__ import annotations

from .._exceptions import AdkError

__all__ = ["StaleSessionError"]


class StaleSessionError(AdkError, ValueError):
    """An ``append_event`` to a session object older than the stored session: someone
    appended to the stored session since this object was read (or last appended to).
    Nothing is written; read the session again. A ``ValueError``, as google-adk's."""
