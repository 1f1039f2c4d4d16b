"""What a session rewind (``Runner.rewind_async``, google-adk's) undoes: the state and
artifact changes made from an invocation on, as one event's deltas.

In order: the invocation's first event is found (none: :class:`InvocationNotFoundError`);
the session-scoped state the events before it had built (``app:``, ``user:`` and
``temp:`` keys are not rewound) is compared with the session's state now, giving a
delta that sets each changed key back and removes (None) each key added since; each
artifact of the session whose version has moved since (``user:`` artifacts are not
rewound) is saved again as a new version: a copy of the version it had then, or, for
one that did not exist then, the tombstone part an artifact service loads as absent
(a version that can no longer be loaded is replaced by the tombstone too). The rewind
event is a user event of a new invocation carrying both deltas and the invocation id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._exceptions import InvocationNotFoundError
from ._types import Blob, Event, EventActions, Part, new_invocation_id

__all__ = ["REWIND_TOMBSTONE", "is_tombstone", "rewind_event"]

#: The part saved as the version of an artifact a rewind removes (google-adk's marker:
#: empty octet-stream data); an artifact service loads it as absent.
REWIND_TOMBSTONE = Part(inline_data=Blob(mime_type="application/octet-stream", data=b""))

_NOT_REWOUND = ("app:", "user:", "temp:")


def is_tombstone(part: Part | None) -> bool:
    return part == REWIND_TOMBSTONE


def _first_index(events: Sequence[Event], invocation_id: str) -> int:
    for index, event in enumerate(events):
        if event.invocation_id == invocation_id:
            return index
    raise InvocationNotFoundError(f"Invocation ID not found: {invocation_id}")


def _state_delta(events: Sequence[Event], state: dict[str, Any], until: int) -> dict[str, Any]:
    then: dict[str, Any] = {}
    for event in events[:until]:
        for key, value in event.actions.state_delta.items():
            if key.startswith(_NOT_REWOUND):
                continue
            if value is None:
                then.pop(key, None)
            else:
                then[key] = value
    delta = {key: value for key, value in then.items() if state.get(key, object()) != value}
    delta.update({key: None for key in state if not key.startswith(_NOT_REWOUND) and key not in then})
    return delta


def _artifact_delta(events: Sequence[Event], until: int, artifacts: Any, where: tuple[str, str, str]) -> dict[str, int]:
    then: dict[str, int] = {}
    now: dict[str, int] = {}
    for index, event in enumerate(events):
        now.update(event.actions.artifact_delta)
        if index < until:
            then.update(event.actions.artifact_delta)
    delta: dict[str, int] = {}
    for name, version in now.items():
        if name.startswith("user:") or then.get(name) == version:
            continue
        earlier = then.get(name)
        part = None if earlier is None else artifacts.load(*where, name, earlier)
        delta[name] = artifacts.save(*where, name, REWIND_TOMBSTONE if part is None else part)
    return delta


def rewind_event(events: Sequence[Event], state: dict[str, Any], invocation_id: str, artifacts: Any,
                 where: tuple[str, str, str]) -> Event:
    """The event that rewinds a session (``events``, ``state``, at ``where`` = (app,
    user, session)) to before ``invocation_id``, its artifacts saved back through
    ``artifacts`` (``save`` / ``load``) on the way (see the module)."""
    until = _first_index(events, invocation_id)
    actions = EventActions(rewind_before_invocation_id=invocation_id, state_delta=_state_delta(events, state, until),
                           artifact_delta=_artifact_delta(events, until, artifacts, where))
    return Event(invocation_id=new_invocation_id(), author="user", actions=actions)
