"""google-adk's session service methods over one of our session stores (SQLite or
PostgreSQL, :mod:`adk_actors.store`): the base of ``DatabaseSessionService`` and
``SqliteSessionService``, and what ``adk-actors run`` keeps its sessions in.

Stale copies (google-adk's optimistic check): each session this service hands out
remembers how many events the stored session held when it was read; an
``append_event`` to it is written only while the store still holds that many (checked
in the write's own transaction), else it raises :class:`StaleSessionError` and writes
nothing. A session object not read from this service (built by hand, say) counts as
holding its own events.

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
from ..errors._stale_session_error import StaleSessionError
from ..errors.already_exists_error import AlreadyExistsError
from ..errors.session_not_found_error import SessionNotFoundError
from ..store import SessionData, SessionExists, SessionNotFound, SessionStores, StaleSession
from .base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    events_wanted,
)
from .session import Session
from .state import State

__all__ = ["StoreSessionService", "session_of"]


def session_of(data: SessionData, events: list[Event] | None = None, *, stored_events: int | None = None
               ) -> Session:
    """The store's session as google-adk's :class:`Session` (``events`` instead of its
    own when given); ``stored_events``: how many the store held as it was read."""
    session = Session(id=data.id, app_name=data.app_name, user_id=data.user_id, state=dict(data.state),
                      events=list(data.events if events is None else events), last_update_time=data.last_update_time)
    session._stored_events = stored_events
    return session


class StoreSessionService(BaseSessionService):
    """google-adk's session service API over ``store`` (see the module); ``store`` is
    the store itself, for code that reads it directly."""

    #: what :class:`StaleSessionError` says (google-adk's DatabaseSessionService's words)
    _stale_message = ("The session has been modified in storage since it was loaded. "
                      "Please reload the session before appending more events.")

    def __init__(self, store: SessionStores) -> None:
        self.store = store

    async def create_session(self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
                             session_id: str | None = None) -> Session:
        """A new session (a random UUID unless ``session_id`` is given, spaces around
        it removed): AlreadyExistsError when the id is taken; the store's Unstorable
        for a state it could not read back (nothing written then)."""
        sid = (session_id.strip() if session_id else "") or str(uuid.uuid4())
        try:
            return session_of(self.store.create_session(app_name, user_id, sid, state), stored_events=0)
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
        return session_of(data, events_wanted(data.events, config), stored_events=len(data.events))

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The sessions of ``user_id`` in the app, or every user's when it is None
        (google-adk's default), without events, each with the current ``app:`` state
        and its own user's ``user:`` state; the least recently updated first, then by
        user, then by id."""
        listed = (self.store.list_app_sessions(app_name) if user_id is None
                  else self.store.list_sessions(app_name, user_id))
        scoped: dict[str, dict[str, Any]] = {}
        found = []
        for data in listed:
            if data.user_id not in scoped:
                scoped[data.user_id] = self.store.scoped_state(app_name, data.user_id)
            session = session_of(data, [])
            session.state.update(scoped[data.user_id])
            found.append(session)
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
        written with its delta in one transaction, only while the store holds as many
        events as ``session`` was read with (see the module): SessionNotFoundError
        when the store has no such session, :class:`StaleSessionError` when someone
        appended since, the store's Unstorable when it could not be read back
        (nothing written, the caller's session untouched, each time); an event whose
        id the store holds already is returned without being applied again; else the
        ``temp:`` keys go to ``session.state`` only, the rest of the delta and the
        event are applied to ``session`` as the base does, its ``last_update_time``
        becomes the event's time, and it counts the event as stored."""
        if event.partial:
            return event
        trimmed = self._trim_temp_delta_state(event)
        expected = session._stored_events if session._stored_events is not None else len(session.events)
        try:
            stored = self.store.append_events(session.app_name, session.user_id, session.id, [trimmed],
                                              expected_events=expected)[0]
        except SessionNotFound as exc:
            raise SessionNotFoundError(f"Session {session.id} not found.") from exc
        except StaleSession as exc:
            raise StaleSessionError(self._stale_message) from exc
        if stored is None:
            return trimmed
        session._stored_events = expected + 1
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
