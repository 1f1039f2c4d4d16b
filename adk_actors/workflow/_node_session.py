"""How an agent node sees its run (see ``_run``): its input as the user's message
(:func:`as_user_content`, google-adk's rule), and the session as a single-turn agent
node (:class:`NodeSession`) or a task agent node (:class:`TaskSession`) sees it."""

from __future__ import annotations

import json
from typing import Any

from .._types import Content, Event, Part

__all__ = ["NodeSession", "TaskSession", "as_user_content"]


def as_user_content(value: Any) -> Content:
    """A node input as the user's message to an agent node (google-adk's rule)."""
    if isinstance(value, Content):
        return value.model_copy(update={"role": "user"})
    if isinstance(value, str):
        text = value
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False)
    elif hasattr(value, "model_dump_json"):
        text = value.model_dump_json()
    else:
        text = str(value)
    return Content(role="user", parts=(Part(text=text),))


class NodeSession:
    """The session as a single-turn agent node sees it: the state as it is, and as
    events only its input (as a user message) and its own events of this node run; or,
    with ``history`` (an agent whose ``include_contents`` is set to ``"default"``, as
    google-adk's), the session's events with its input among them where it started."""

    def __init__(self, session: Any, path: str, first: Event, invocation_id: str, history: bool = False) -> None:
        self._session = session
        self._path = path
        self._first = first
        self._invocation_id = invocation_id
        self._start = len(session.events) if history else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    @property
    def id(self) -> str:
        return str(self._session.session_id)

    @property
    def state(self) -> Any:
        return self._session.state

    @property
    def events(self) -> list[Event]:
        if self._start is not None:
            events = list(self._session.events)
            return [*events[:self._start], self._first, *events[self._start:]]
        own = [e for e in self._session.events if e.invocation_id == self._invocation_id
               and e.node_info is not None and e.node_info.path == self._path]
        return [self._first, *own]

    def commit(self, event: Event) -> None:
        self._session.commit(event)


class TaskSession(NodeSession):
    """The session as a task agent node sees it (google-adk's task scope): the state as
    it is; as events, its input (as a user message) first, then its node path's events
    (of every invocation of the session) and the user's messages that came while it
    waited (after an event of its path, before the one that ended a task there)."""

    @property
    def events(self) -> list[Event]:
        seen: list[Event] = []
        waiting = False  # an event of this path came last, and it did not end the task
        for event in self._session.events:
            info = event.node_info
            if info is not None and info.path == self._path:
                seen.append(event)
                waiting = self._path not in (info.output_for or [])
            elif waiting and event.author == "user" and (info is None or not info.path):
                seen.append(event)
        return [self._first, *seen]
