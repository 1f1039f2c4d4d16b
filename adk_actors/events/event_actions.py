"""google-adk's import path of ``EventActions`` and of ``EventCompaction``."""

from .._types import EventActions, EventCompaction

__all__ = ["EventActions", "EventCompaction"]
