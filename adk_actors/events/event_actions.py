"""google-adk's import path of ``EventActions`` and of ``EventCompaction``."""

from __future__ import annotations

from pydantic import Field

from .._types import Compaction, Content, EventActions

__all__ = ["EventActions", "EventCompaction"]


class EventCompaction(Compaction):
    """google-adk's compaction (``actions.compaction`` of a summary event): the events
    whose timestamps lie from ``start_timestamp`` to ``end_timestamp`` (seconds) are
    replaced in later model requests by ``compacted_content``, placed where the range
    ends. It is a :class:`Compaction` so that ``EventActions`` holds it as it is; our
    own fields (``message_count``, ``summary``) are unused here and left out of its
    dump. (A store that keeps events as JSON keeps only ``Compaction``'s fields.)"""

    start_timestamp: float
    end_timestamp: float
    compacted_content: Content
    message_count: int = Field(default=0, ge=0, exclude=True)
    summary: str = Field(default="", exclude=True)
