"""google-adk's ``BaseSessionService`` (``google.adk.sessions.base_session_service``):
the class a session service subclasses, with ``GetSessionConfig`` and
``ListSessionsResponse``.

A subclass writes the four abstract methods (``create_session``, ``get_session``,
``list_sessions``, ``delete_session``), all async and by keyword, and usually extends
``append_event``, whose base applies an event to the caller's :class:`Session` object
only. The in-process :class:`adk_actors.runners.Runner` uses any subclass: it reads
the session with ``get_session`` (``create_session`` when it creates one) and hands
every non-partial event of a turn to ``append_event``.
"""

from __future__ import annotations

import abc
from typing import Any

from pydantic import BaseModel, Field, field_validator

from .._types import Event, apply_state_delta
from .session import Session
from .state import State

__all__ = ["BaseSessionService", "GetSessionConfig", "ListSessionsResponse", "events_wanted"]


class GetSessionConfig(BaseModel):
    """Which events ``get_session`` returns: at most the ``num_recent_events`` last
    ones (0: none; negative: a ``ValueError`` when the config is made) and only those
    from ``after_timestamp`` on; None leaves that filter off."""

    num_recent_events: int | None = None
    after_timestamp: float | None = None

    @field_validator("num_recent_events")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError("num_recent_events must be greater than or equal to 0.")
        return value


class ListSessionsResponse(BaseModel):
    """The sessions ``list_sessions`` found, without their events."""

    sessions: list[Session] = Field(default_factory=list)


def events_wanted(events: list[Event], config: GetSessionConfig | None) -> list[Event]:
    """``events`` as ``config`` filters them, in order: the last ``num_recent_events``
    first, then those after the last event older than ``after_timestamp``."""
    if config is None:
        return list(events)
    kept = list(events)
    if config.num_recent_events is not None:
        kept = kept[-config.num_recent_events:] if config.num_recent_events else []
    if config.after_timestamp is not None:
        older = [i for i, event in enumerate(kept) if event.timestamp < config.after_timestamp]
        if older:
            kept = kept[older[-1] + 1:]
    return kept


class BaseSessionService(abc.ABC):
    """What every session service does (see the module)."""

    @abc.abstractmethod
    async def create_session(self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
                             session_id: str | None = None) -> Session:
        """A new session of ``user_id`` in ``app_name``, its ``state`` split by scope
        (``app:`` and ``user:`` keys are shared, ``temp:`` ones dropped); a fresh id
        unless ``session_id`` is given."""

    @abc.abstractmethod
    async def get_session(self, *, app_name: str, user_id: str, session_id: str,
                          config: GetSessionConfig | None = None) -> Session | None:
        """The session with its events (filtered by ``config``), or None."""

    @abc.abstractmethod
    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The sessions of ``user_id`` (of every user when None), without events,
        the most recently updated last."""

    @abc.abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session, if there is one."""

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The ``user:`` state of ``user_id`` in ``app_name``, its keys without the
        prefix. The base raises ``NotImplementedError``: a service that keeps user
        state apart from sessions overrides it."""
        raise NotImplementedError(f"{type(self).__name__} does not support get_user_state: read a session's "
                                  "state (its user: keys) with get_session instead")

    async def append_event(self, session: Session, event: Event) -> Event:
        """Apply ``event`` to ``session`` (the caller's object) and return the event as
        kept. In order: a partial event is returned untouched; the ``temp:`` keys of
        its state delta are written into ``session.state`` and taken out of the
        event's delta (a new event object: ours are immutable); the rest of the delta
        is applied to ``session.state`` (a None removes the key); the event is
        appended to ``session.events``. A subclass that stores events calls this and
        stores the event it returns."""
        if event.partial:
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        return self._commit_event_to_session(session, event)

    async def flush(self) -> None:
        """Write whatever a buffering service holds back; nothing here."""
        return None

    def _apply_temp_state(self, session: Session, event: Event) -> None:
        for key, value in event.actions.state_delta.items():
            if key.startswith(State.TEMP_PREFIX):
                session.state[key] = value

    def _trim_temp_delta_state(self, event: Event) -> Event:
        delta = event.actions.state_delta
        if not any(key.startswith(State.TEMP_PREFIX) for key in delta):
            return event
        kept = {key: value for key, value in delta.items() if not key.startswith(State.TEMP_PREFIX)}
        return event.model_copy(update={"actions": event.actions.model_copy(update={"state_delta": kept})})

    def _update_session_state(self, session: Session, event: Event) -> None:
        apply_state_delta(session.state, event.actions.state_delta)

    def _commit_event_to_session(self, session: Session, event: Event) -> Event:
        self._update_session_state(session, event)
        session.events.append(event)
        return event
