"""google-adk's ``BaseMemoryService`` (``google.adk.memory.base_memory_service``) and
``SearchMemoryResponse``.

A subclass writes ``add_session_to_memory(session)`` and ``search_memory(app_name=,
user_id=, query=)``; ``add_events_to_memory``, ``add_memory`` and ``delete_memory``
raise ``NotImplementedError`` unless it writes them too. The in-process Runner uses
any subclass: its agents' memory tools and ``tool_context.search_memory`` reach it.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from .._types import Event
from .memory_entry import MemoryEntry

if TYPE_CHECKING:
    from ..sessions import Session

__all__ = ["BaseMemoryService", "SearchMemoryResponse"]


class SearchMemoryResponse(BaseModel):
    """What ``search_memory`` found: ``memories``, best first."""

    memories: list[MemoryEntry] = Field(default_factory=list)


class BaseMemoryService(abc.ABC):
    """What every memory service does (see the module)."""

    @abc.abstractmethod
    async def add_session_to_memory(self, session: Session) -> None:
        """Remember ``session`` as it is now (a session may be added again later)."""

    async def add_events_to_memory(self, *, app_name: str, user_id: str, events: Sequence[Event],
                                   session_id: str | None = None,
                                   custom_metadata: Mapping[str, object] | None = None) -> None:
        """Remember ``events`` as well (added to what is kept, not replacing it); the
        base raises ``NotImplementedError``."""
        raise NotImplementedError("This memory service does not support adding event deltas. "
                                  "Call add_session_to_memory(session) to ingest the full session.")

    async def add_memory(self, *, app_name: str, user_id: str, memories: Sequence[MemoryEntry],
                         custom_metadata: Mapping[str, object] | None = None) -> None:
        """Remember ``memories`` as they are; the base raises ``NotImplementedError``."""
        raise NotImplementedError("This memory service does not support direct memory writes. "
                                  "Call add_events_to_memory(...) or add_session_to_memory(session) instead.")

    @abc.abstractmethod
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        """The memories of ``user_id`` in ``app_name`` that match ``query``, best first."""

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        """Forget the memory whose id is ``memory_id``; the base raises ``NotImplementedError``."""
        raise NotImplementedError("This memory service does not support deleting individual memories.")
