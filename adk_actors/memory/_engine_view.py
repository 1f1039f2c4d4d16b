"""A google-adk memory service (any :class:`BaseMemoryService`) as the engine's
memory service (``add_session`` / ``search``, sync): what lets the in-process Runner's
agents use a user's own service."""

from __future__ import annotations

import datetime
from typing import Any

from .. import _service_loop
from .._types import Event
from .._types import MemoryEntry as EngineMemoryEntry
from ..sessions import Session
from .base_memory_service import BaseMemoryService
from .memory_entry import MemoryEntry

__all__ = ["EngineMemory", "engine_memory"]


def _seconds(timestamp: str | None) -> float:
    """An entry's ISO 8601 time in seconds since the epoch; 0.0 when absent or unreadable."""
    if not timestamp:
        return 0.0
    try:
        return datetime.datetime.fromisoformat(timestamp).timestamp()
    except ValueError:
        return 0.0


def engine_entry(entry: MemoryEntry) -> EngineMemoryEntry:
    """google-adk's memory entry as the engine's: its parts' texts joined by newlines."""
    text = "\n".join(part.text for part in entry.content.parts if part.text)
    return EngineMemoryEntry(text=text, author=entry.author or "", timestamp=_seconds(entry.timestamp), id=entry.id)


class EngineMemory:
    """The engine's memory calls made on ``service`` (on the service loop, see
    :mod:`adk_actors._service_loop`); ``service`` is the user's object."""

    def __init__(self, service: BaseMemoryService) -> None:
        self.service = service

    def add_session(self, app: str, user: str, session: str, events: list[Event]) -> None:
        """``add_session_to_memory`` with the session as it is now (its non-partial events)."""
        whole = Session(id=session, app_name=app, user_id=user, events=[e for e in events if not e.partial])
        _service_loop.call(lambda: self.service.add_session_to_memory(whole),
                           f"{type(self.service).__name__}.add_session_to_memory")

    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[EngineMemoryEntry]:
        """``search_memory``'s memories as the engine's entries, at most ``limit``, in its order."""
        found = _service_loop.call(lambda: self.service.search_memory(app_name=app, user_id=user, query=query),
                                   f"{type(self.service).__name__}.search_memory")
        return [engine_entry(entry) for entry in list(found.memories)[:max(0, limit)]]


def engine_memory(service: Any) -> Any:
    """What the engine is given for ``service``: a :class:`BaseMemoryService` behind
    :class:`EngineMemory`; anything else (the engine's own services) as it is."""
    return EngineMemory(service) if isinstance(service, BaseMemoryService) else service
