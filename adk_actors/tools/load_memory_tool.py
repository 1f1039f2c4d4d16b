"""google-adk's import path of ``LoadMemoryTool``, ``load_memory_tool``,
``load_memory`` (here the same tool instance, ``adk_actors.tools.load_memory``) and
``LoadMemoryResponse``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ._builtins import LoadMemoryTool, load_memory, load_memory_tool

__all__ = ["LoadMemoryResponse", "LoadMemoryTool", "load_memory", "load_memory_tool"]


class LoadMemoryResponse(BaseModel):
    """What a memory search found, as google-adk's ``load_memory`` answers:
    ``memories``, a list of memory entries (``adk_actors.memory.MemoryEntry``, or
    google-adk's), empty by default. The entries are kept as given; the field does
    not name the class because tools may not import from ``adk_actors.memory``."""

    memories: list[Any] = Field(default_factory=list)
