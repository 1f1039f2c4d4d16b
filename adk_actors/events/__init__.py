"""google-adk's import path of ``Event`` and ``EventActions``."""

from .._types import Event, EventActions

__all__ = ["Event", "EventActions"]
