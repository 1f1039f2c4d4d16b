"""How the session stores write rows and read them back: one rule for every backend.

An event is stored as its JSON (``temp:`` state dropped, a partial event never); a
state as a JSON object; a run's caller as its pickled address. Each reader names what
it could not read (:class:`Unreadable`) so that one bad row harms one session only,
and each writer refuses what it could not read back (:class:`Unstorable`) before
anything is written.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

from pydantic import ValidationError

from .._types import Event
from .._validate import value_problem
from ..tracing import TraceSpan, unpack
from ._base import (
    RUN_COLUMNS,
    STORABLE_DEPTH,
    Lease,
    LeaseLost,
    RunExists,
    RunInfo,
    SessionData,
    SessionLeased,
    Unreadable,
    Unstorable,
    invocation_of,
    resumed_run,
)

__all__ = [
    "caller_address",
    "check_fence",
    "checked_state",
    "event_span",
    "event_trace_query",
    "granted_epoch",
    "listed_sessions",
    "listed_state",
    "merged_state",
    "prepared_event",
    "read_events",
    "read_state",
    "recorded_run",
    "session_trace_query",
    "spans_of",
]


def checked_state(state: dict[str, Any] | None) -> dict[str, Any]:
    """``state`` (a new session's), or Unstorable when it could not be read back."""
    problem = value_problem(state or {}, STORABLE_DEPTH, "state")
    if problem is not None:
        raise Unstorable(problem)
    return dict(state or {})


def prepared_event(event: Event) -> tuple[Event, str] | None:
    """An event as it is stored (``temp:`` state dropped) and its JSON; None for a
    partial event (never stored). Unstorable for one that could not be read back:
    text that cannot be encoded, or nested deeper than ``STORABLE_DEPTH`` (looked for
    only in JSON with that many brackets: most events have far fewer)."""
    if event.partial:
        return None
    stored = event
    if any(k.startswith("temp:") for k in event.actions.state_delta):
        kept = {k: v for k, v in event.actions.state_delta.items() if not k.startswith("temp:")}
        stored = event.model_copy(update={"actions": event.actions.model_copy(update={"state_delta": kept})})
    try:
        text = stored.model_dump_json(by_alias=True, exclude_none=True)
    except ValueError:  # pydantic's serialization error: text that is not valid Unicode
        text = ""
    problem = None
    if not text or text.count("{") + text.count("[") > STORABLE_DEPTH:
        problem = value_problem(stored, STORABLE_DEPTH, "event")
    if problem is not None or not text:
        raise Unstorable(f"event {event.id} of {event.author!r} cannot be stored: "
                         f"{problem or 'it cannot be written as JSON'}")
    return stored, text


def read_events(rows: list[str], where: str) -> list[Event]:
    """Stored events' JSON, in order, as events; Unreadable, naming ``where``, when one
    cannot be read back."""
    try:
        return [Event.model_validate_json(text) for text in rows]
    except (ValidationError, ValueError) as exc:
        raise Unreadable(f"{where}: a stored event cannot be read back "
                         f"({_first_error(exc)}); it was written by an older version or corrupted") from None


def read_state(text: str, where: str) -> dict[str, Any]:
    """A stored state (JSON text) as a dict; Unreadable, naming ``where``, when it
    cannot be read back whole."""
    try:
        state = json.loads(text)
    except (ValueError, RecursionError):
        state = None
    problem = None
    if not isinstance(state, dict):
        problem = "it is not a JSON object"
    elif text.count("{") + text.count("[") > STORABLE_DEPTH:
        problem = value_problem(state, STORABLE_DEPTH, "state")
    if problem is not None:
        raise Unreadable(f"{where}: its stored state cannot be read back ({problem})")
    checked: dict[str, Any] = state
    return checked


def listed_state(text: str) -> dict[str, Any]:
    """A listed session's state; empty when it cannot be read back (the list still
    shows the session, so that its owner can see it and delete it; reading it gives
    the Unreadable error)."""
    try:
        return read_state(text, "")
    except Unreadable:
        return {}


def merged_state(session_state: dict[str, Any], app_state: dict[str, Any],
                 user_state: dict[str, Any]) -> dict[str, Any]:
    """A session's state as read: its own keys, then ``app:`` and ``user:`` ones."""
    merged = dict(session_state)
    merged.update({f"app:{k}": v for k, v in app_state.items()})
    merged.update({f"user:{k}": v for k, v in user_state.items()})
    return merged


def listed_sessions(app: str, user: str, rows: list[tuple[str, str, float]]) -> list[SessionData]:
    """(id, state, update time) rows as a user's listed sessions, without events."""
    return [SessionData(app, user, sid, listed_state(state), [], updated) for sid, state, updated in rows]


def listed_app_sessions(app: str, rows: list[tuple[str, str, str, float]]) -> list[SessionData]:
    """(user, id, state, update time) rows as an app's listed sessions, without events."""
    return [SessionData(app, user, sid, listed_state(state), [], updated) for user, sid, state, updated in rows]


def caller_address(blob: bytes | None) -> Any:
    """The stored (pickled) address of a run's caller; None if absent or unreadable:
    the run still ends, its caller just cannot be told."""
    try:
        return pickle.loads(blob) if blob else None
    except Exception:
        return None


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return str(exc.errors()[0].get("msg", "invalid"))
    return str(exc)[:200]


def granted_epoch(current: tuple[str, int, float, bytes | None] | None, lease_key: tuple[str, str, str],
                  holder: str, now: float) -> int:
    """The epoch of a lease on ``lease_key`` granted to ``holder`` at ``now``, given the
    session's current lease row (holder, epoch, expires, pickled address) or None. It
    is granted when the session has none, when ``holder`` had it (a restarted holder
    takes its own lease back at once), or when it expired; otherwise SessionLeased
    names its holder and where it is."""
    if current is None:
        return 1
    owner, epoch, expires, address = current
    if owner != holder and expires > now:
        app, user, session_id = lease_key
        raise SessionLeased(f"session {session_id!r} of {app}/{user} is held by {owner} "
                            f"for {expires - now:.1f} s more", owner, caller_address(address))
    return int(epoch) + 1


def check_fence(current: tuple[str, int] | None, lease: Lease | None) -> None:
    """Refuse (LeaseLost) a write under ``lease`` when the session's lease row
    (holder, epoch) is no longer that lease; a write under no lease is not checked."""
    if lease is None:
        return
    if current is None or (current[0], int(current[1])) != (lease.holder, lease.epoch):
        now_held = "no one" if current is None else f"{current[0]} (epoch {current[1]})"
        raise LeaseLost(f"session {lease.session_id!r} of {lease.app_name}/{lease.user_id}: the lease of "
                        f"{lease.holder} (epoch {lease.epoch}) was taken by {now_held}; nothing was written")


def session_trace_query(app: str, session_id: str, user: str | None) -> tuple[str, tuple[str, ...]]:
    """The query (``?`` placeholders) for a session's kept turns' spans, oldest first
    (of ``user``'s session only, when given: a session id names one session in practice)."""
    query = "SELECT spans FROM traces WHERE app_name=? AND session_id=?"
    args: tuple[str, ...] = (app, session_id)
    if user is not None:
        query, args = query + " AND user_id=?", (*args, user)
    return query + " ORDER BY turn", args


def event_trace_query(app: str, event_id: str, user: str | None) -> tuple[str, tuple[str, ...]]:
    """The query (``?`` placeholders) for the packed spans of the turn that made event ``event_id``."""
    query = ("SELECT t.spans FROM trace_events e JOIN traces t ON t.app_name=e.app_name "
             "AND t.session_id=e.session_id AND t.user_id=e.user_id AND t.turn=e.turn "
             "WHERE e.app_name=? AND e.event_id=?")
    args: tuple[str, ...] = (app, event_id)
    if user is not None:
        query, args = query + " AND e.user_id=?", (*args, user)
    return query, args


def spans_of(rows: list[tuple[Any, ...]]) -> list[TraceSpan]:
    """The spans in rows of packed spans, in order."""
    return [span for (packed,) in rows for span in unpack(bytes(packed))]


def event_span(packed: Any, event_id: str) -> TraceSpan | None:
    """The span, among a turn's packed spans, of the model call that made ``event_id``."""
    return next((span for span in unpack(bytes(packed)) if span.event_id == event_id), None)


def recorded_run(execute: Any, postgres: bool, session: tuple[str, str, str], run_id: str, caller: Any,
                 resumes: str | None, request: str | None, now: float,
                 invocation_id: str | None = None) -> RunInfo:
    """Record a run as running at ``now`` (the store's clock), inside the caller's
    transaction (``execute``: its cursor's, with ``?`` marks on SQLite, ``%s`` on
    PostgreSQL); answer it as recorded.
    With ``resumes``: RunExists first if ``run_id`` is known (a resume sent again), then
    the run to resume is read (locked on PostgreSQL: two hosts resume it once) and
    checked (``resumed_run``), the new run takes its invocation, its message and one
    more attempt, and it is marked ``resumed``. RunExists if ``run_id`` was ever used."""
    def sql(text: str) -> str:
        return text.replace("?", "%s") if postgres else text

    app, user, session_id = session
    info = RunInfo(run_id, app, user, session_id, "running", invocation_id or invocation_of(run_id), request=request)
    if resumes is not None:
        if execute(sql("SELECT 1 FROM runs WHERE run_id=?"), (run_id,)).fetchone() is not None:
            raise RunExists(f"run id {run_id!r} was used already")
        lock = " FOR UPDATE" if postgres else ""
        old = resumed_run(execute(sql(f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id=?{lock}"), (resumes,)).fetchone(),
                          resumes, session)
        info = RunInfo(run_id, app, user, session_id, "running", old.invocation_id, resumes, old.attempt + 1,
                       old.request)
    insert = "INSERT INTO runs" if postgres else "INSERT OR IGNORE INTO runs"
    conflict = " ON CONFLICT DO NOTHING" if postgres else ""
    inserted = execute(sql(f"{insert} (run_id, app_name, user_id, session_id, caller, status, started, invocation_id, "
                           f"resumes, attempt, request) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?){conflict}"),
                       (run_id, app, user, session_id, pickle.dumps(caller), now, info.invocation_id, resumes,
                        info.attempt, info.request)).rowcount
    if not inserted:
        raise RunExists(f"run id {run_id!r} was used already")
    if resumes is not None:
        execute(sql("UPDATE runs SET status='resumed', ended=? WHERE run_id=?"), (now, resumes))
    return info
