"""google-adk's ``InMemorySessionService`` and ``Session``, for in-process runners.

The service keeps sessions in the host's own session store, in memory (one SQLite
database in this process), so the state rules are the host's: ``app:`` keys are
shared by every user of an app, ``user:`` keys by a user's sessions, ``temp:`` keys
are never kept. Its methods are google-adk's, async and by keyword. A session is a
:class:`Session` (``id``, ``app_name``, ``user_id``, ``state``, ``events``,
``last_update_time``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from .store import in_memory_store
from .store._base import SessionData, SessionNotFound

__all__ = ["InMemorySessionService", "ListSessionsResponse", "Session"]

Session = SessionData


@dataclass
class ListSessionsResponse:
    sessions: list[Session] = field(default_factory=list)


class InMemorySessionService:
    def __init__(self) -> None:
        self.store = in_memory_store()

    async def create_session(self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
                             session_id: str | None = None) -> Session:
        """A new session (a random id unless one is given); the store's
        ``SessionExists`` if the id is taken."""
        return self.store.create_session(app_name, user_id, session_id or str(uuid.uuid4()), state)

    async def get_session(self, *, app_name: str, user_id: str, session_id: str, config: Any = None) -> Session | None:
        """The session with its events, or None."""
        try:
            return self.store.get_session(app_name, user_id, session_id)
        except SessionNotFound:
            return None

    async def list_sessions(self, *, app_name: str, user_id: str) -> ListSessionsResponse:
        return ListSessionsResponse(self.store.list_sessions(app_name, user_id))

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        try:
            self.store.delete_session(app_name, user_id, session_id)
        except SessionNotFound:
            pass
