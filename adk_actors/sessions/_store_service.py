"""google-adk's session service methods over one of our session stores (SQLite or
PostgreSQL, :mod:`adk_actors.store`): the base of ``DatabaseSessionService`` and
``SqliteSessionService``, and what ``adk-actors run`` keeps its sessions in.

The store's rules hold: the ``app:`` and ``user:`` state is shared in its own tables,
``temp:`` keys are never written, an event and its state delta are written in one
transaction, a value the store could not read back is refused before anything is
written (:class:`adk_actors.store.Unstorable`, a ``ValueError``), a None in a delta
removes the key. The store's calls are quick local writes made on the caller's
event loop.
"""

from __future__ import annotations

import uuid
from typing import Any

from .._types import Event
from ..errors.already_exists_error import AlreadyExistsError
from ..errors.session_not_found_error import SessionNotFoundError
from ..store import SessionData, SessionExists, SessionNotFound, SessionStores
from .base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    events_wanted,
)
from .session import Session
from .state import State

__all__ = ["StoreSessionService", "session_of"]


def session_of(data: SessionData, events: list[Event] | None = None) -> Session:
    """The store's session as google-adk's :class:`Session` (``events`` instead of its own when given)."""
    return Session(id=data.id, app_name=data.app_name, user_id=data.user_id, state=dict(data.state),
                   events=list(data.events if events is None else events), last_update_time=data.last_update_time)


class StoreSessionService(BaseSessionService):
    """google-adk's session service API over ``store`` (see the module); ``store`` is
    the store itself, for code that reads it directly."""

    def __init__(self, store: SessionStores) -> None:
        self.store = store

    async def create_session(self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
                             session_id: str | None = None) -> Session:
        """A new session (a random UUID unless ``session_id`` is given, spaces around
        it removed): AlreadyExistsError when the id is taken; the store's Unstorable
        for a state it could not read back (nothing written then)."""
        sid = (session_id.strip() if session_id else "") or str(uuid.uuid4())
        try:
            return session_of(self.store.create_session(app_name, user_id, sid, state))
        except SessionExists as exc:
            raise AlreadyExistsError(f"Session with id {sid} already exists.") from exc

    async def get_session(self, *, app_name: str, user_id: str, session_id: str,
                          config: GetSessionConfig | None = None) -> Session | None:
        """The session (its events filtered by ``config``), or None; the store's
        Unreadable when its rows cannot be read back."""
        try:
            data = self.store.get_session(app_name, user_id, session_id.strip() if session_id else session_id)
        except SessionNotFound:
            return None
        return session_of(data, events_wanted(data.events, config))

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The user's sessions without events, each with the current ``app:`` and
        ``user:`` state, the most recently updated last. Every user's (``user_id``
        None) is not offered by our stores: ``NotImplementedError`` says so."""
        if user_id is None:
            raise NotImplementedError(f"{type(self).__name__} lists one user's sessions: give user_id")
        scoped = self.store.scoped_state(app_name, user_id)
        found = [session_of(data, []) for data in self.store.list_sessions(app_name, user_id)]
        for session in found:
            session.state.update(scoped)
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session with its events and runs; nothing happens when there is none."""
        try:
            self.store.delete_session(app_name, user_id, session_id)
        except SessionNotFound:
            pass

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's ``user:`` state, keys without the prefix."""
        return {key.removeprefix(State.USER_PREFIX): value
                for key, value in self.store.scoped_state(app_name, user_id).items()
                if key.startswith(State.USER_PREFIX)}

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store ``event`` and apply it to the caller's ``session``. In order: a
        partial event is returned as it is; the event without its ``temp:`` keys is
        written with its delta in one transaction (SessionNotFoundError when the
        store has no such session, the store's Unstorable when it could not be read
        back: nothing written, the caller's session untouched); an event whose id the
        store holds already is returned without being applied again; else the
        ``temp:`` keys go to ``session.state`` only, the rest of the delta and the
        event are applied to ``session`` as the base does, and its
        ``last_update_time`` becomes the event's time."""
        if event.partial:
            return event
        trimmed = self._trim_temp_delta_state(event)
        try:
            stored = self.store.append_event(session.app_name, session.user_id, session.id, trimmed)
        except SessionNotFound as exc:
            raise SessionNotFoundError(f"Session {session.id} not found.") from exc
        if stored is None:
            return trimmed
        self._apply_temp_state(session, event)
        self._commit_event_to_session(session, trimmed)
        session.last_update_time = trimmed.timestamp
        return trimmed

    async def close(self) -> None:
        """Close the store's connections."""
        self.store.close()

    async def __aenter__(self) -> StoreSessionService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
