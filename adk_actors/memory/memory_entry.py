"""google-adk's ``MemoryEntry`` (``google.adk.memory.memory_entry``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .._types import Content

__all__ = ["MemoryEntry"]


class MemoryEntry(BaseModel):
    """One memory: its ``content``, ``custom_metadata``, ``id``, ``author`` and
    ``timestamp`` (an ISO 8601 string: it is shown to a model as it is)."""

    content: Content
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    author: str | None = None
    timestamp: str | None = None
