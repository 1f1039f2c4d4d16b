"""google-adk's ``InMemorySessionService`` (``google.adk.sessions.in_memory_session_service``).

Sessions live in this object, in google-adk's three maps: ``sessions`` (app -> user ->
session id -> :class:`Session`), ``user_state`` (app -> user -> key -> value, keys
without ``user:``) and ``app_state`` (app -> key -> value, keys without ``app:``).
Every session handed out is a copy (its events and state deep-copied) with the
app's and the user's state merged in under their prefixes; a caller's writes to it
reach the service only through ``append_event``. State values may be any Python
object (nothing is serialized). A None in a state delta removes the key.
"""

from __future__ import annotations

import copy
import logging
import time
import uuid
from typing import Any

from .._exceptions import InvalidRequestError
from .._types import Event, apply_state_delta
from .._validate import MAX_JSON_DEPTH, value_problem
from ..errors.already_exists_error import AlreadyExistsError
from ..errors.session_not_found_error import SessionNotFoundError
from ..store import split_delta
from .base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    events_wanted,
)
from .session import Session
from .state import State

__all__ = ["InMemorySessionService"]

logger = logging.getLogger(__name__)


class InMemorySessionService(BaseSessionService):
    """Sessions in memory, for tests and development (see the module)."""

    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, dict[str, Session]]] = {}
        self.user_state: dict[str, dict[str, dict[str, Any]]] = {}
        self.app_state: dict[str, dict[str, Any]] = {}

    # -- the copies handed out -------------------------------------------------------------

    def _merged(self, app_name: str, user_id: str, stored: Session, events: list[Event]) -> Session:
        state = copy.deepcopy(stored.state)
        state.update({State.APP_PREFIX + k: v for k, v in copy.deepcopy(self.app_state.get(app_name, {})).items()})
        user = self.user_state.get(app_name, {}).get(user_id, {})
        state.update({State.USER_PREFIX + k: v for k, v in copy.deepcopy(user).items()})
        return Session(id=stored.id, app_name=stored.app_name, user_id=stored.user_id, state=state,
                       events=[event.model_copy(deep=True) for event in events],  # a caller's edit stays its own
                       last_update_time=stored.last_update_time)

    def _apply_scoped(self, app_name: str, user_id: str, delta: dict[str, Any]) -> dict[str, Any]:
        """Apply the ``app:`` and ``user:`` parts of ``delta``; the session's part back."""
        app_part, user_part, session_part = split_delta(delta)
        if app_part:
            apply_state_delta(self.app_state.setdefault(app_name, {}), app_part)
        if user_part:
            apply_state_delta(self.user_state.setdefault(app_name, {}).setdefault(user_id, {}), user_part)
        return session_part

    # -- google-adk's methods ------------------------------------------------------------------

    async def create_session(self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
                             session_id: str | None = None) -> Session:
        """A new session (see :meth:`BaseSessionService.create_session`): the id
        given (spaces around it removed) or a random UUID; AlreadyExistsError when
        the user has a session of that id in the app; InvalidRequestError (a
        ValueError) for a state no store could keep (nested deeper than
        ``MAX_JSON_DEPTH``, a lone surrogate), nothing made."""
        return self._create(app_name, user_id, state, session_id)

    def create_session_sync(self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
                            session_id: str | None = None) -> Session:
        """:meth:`create_session`, from sync code (deprecated in google-adk: it warns)."""
        logger.warning("Deprecated. Please migrate to the async method.")
        return self._create(app_name, user_id, state, session_id)

    def _create(self, app_name: str, user_id: str, state: dict[str, Any] | None, session_id: str | None) -> Session:
        session_id = session_id.strip() if session_id else None
        if session_id and session_id in self.sessions.get(app_name, {}).get(user_id, {}):
            raise AlreadyExistsError(f"Session with id {session_id} already exists.")
        problem = value_problem(state, MAX_JSON_DEPTH, "state")
        if problem is not None:  # a state no later turn could copy: refused, nothing made
            raise InvalidRequestError(problem)
        own = self._apply_scoped(app_name, user_id, dict(state or {}))
        stored = Session(id=session_id or str(uuid.uuid4()), app_name=app_name, user_id=user_id,
                         state=copy.deepcopy(own), last_update_time=time.time())
        self.sessions.setdefault(app_name, {}).setdefault(user_id, {})[stored.id] = stored
        return self._merged(app_name, user_id, stored, [])

    async def get_session(self, *, app_name: str, user_id: str, session_id: str,
                          config: GetSessionConfig | None = None) -> Session | None:
        """A copy of the session (its events filtered by ``config``), or None."""
        return self._get(app_name, user_id, session_id, config)

    def get_session_sync(self, *, app_name: str, user_id: str, session_id: str,
                         config: GetSessionConfig | None = None) -> Session | None:
        """:meth:`get_session`, from sync code (deprecated in google-adk: it warns)."""
        logger.warning("Deprecated. Please migrate to the async method.")
        return self._get(app_name, user_id, session_id, config)

    def _get(self, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None) -> Session | None:
        stored = self.sessions.get(app_name, {}).get(user_id, {}).get(session_id.strip() if session_id else session_id)
        if stored is None:
            return None
        return self._merged(app_name, user_id, stored, events_wanted(stored.events, config))

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """Copies of the sessions of ``user_id`` (every user's when None) without
        events, ordered by last update, then user, then id."""
        return self._list(app_name, user_id)

    def list_sessions_sync(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """:meth:`list_sessions`, from sync code (deprecated in google-adk: it warns)."""
        logger.warning("Deprecated. Please migrate to the async method.")
        return self._list(app_name, user_id)

    def _list(self, app_name: str, user_id: str | None) -> ListSessionsResponse:
        users = self.sessions.get(app_name, {})
        chosen = list(users) if user_id is None else [user_id] if user_id in users else []
        found = [self._merged(app_name, user, stored, []) for user in chosen for stored in users[user].values()]
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session; nothing happens when there is none."""
        self._delete(app_name, user_id, session_id)

    def delete_session_sync(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """:meth:`delete_session`, from sync code (deprecated in google-adk: it warns)."""
        logger.warning("Deprecated. Please migrate to the async method.")
        self._delete(app_name, user_id, session_id)

    def _delete(self, app_name: str, user_id: str, session_id: str) -> None:
        self.sessions.get(app_name, {}).get(user_id, {}).pop(session_id.strip() if session_id else session_id, None)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """A copy of the user's ``user:`` state, keys without the prefix."""
        return copy.deepcopy(self.user_state.get(app_name, {}).get(user_id, {}))

    async def append_event(self, session: Session, event: Event) -> Event:
        """Keep ``event`` in ``session``'s stored session and apply it to the
        caller's ``session`` object too. In order: a partial event is returned as it
        is; SessionNotFoundError when the service has no such session; an event equal
        to one it holds under the same id is returned without being applied twice;
        the base's ``append_event`` applies it to ``session`` (``temp:`` keys there
        only); the stored session gets the event (when the caller's object is a copy)
        and the delta's session keys; the ``app:`` and ``user:`` keys go to the
        shared state."""
        if event.partial:
            return event
        stored = self.sessions.get(session.app_name, {}).get(session.user_id, {}).get(session.id)
        if stored is None:
            raise SessionNotFoundError(f"Session {session.id} not found.")
        if any(kept == event for kept in stored.events if kept.id == event.id):
            return event
        event = await super().append_event(session, event)
        session.last_update_time = event.timestamp
        if stored is not session:
            stored.events.append(event)
            stored.last_update_time = event.timestamp
        own = self._apply_scoped(session.app_name, session.user_id, event.actions.state_delta)
        if stored is not session:
            apply_state_delta(stored.state, own)
        return event
