"""The session store interface and the state-scope rules shared by every backend.

State scopes (google-adk's): ``app:x`` is shared by every user of an app, ``user:x``
by all sessions of a user, ``temp:x`` lives only for the invocation and is never
persisted, anything else belongs to the session. Reads merge the scopes back with
their prefixes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._exceptions import AdkError
from .._types import Content, Event
from ..messages import RunInfo

__all__ = [
    "RESUMABLE",
    "RUN_COLUMNS",
    "Lease",
    "LeaseLost",
    "RunExists",
    "RunInfo",
    "RunNotResumable",
    "RunRecord",
    "SessionData",
    "SessionExists",
    "SessionLeased",
    "SessionNotFound",
    "SessionStore",
    "StoreError",
    "Unreadable",
    "Unstorable",
    "invocation_of",
    "request_of",
    "request_text",
    "resumed_run",
    "run_info_of",
    "split_delta",
]


class StoreError(AdkError):
    """The store failed (I/O, corruption, schema)."""


class SessionNotFound(StoreError, LookupError):
    pass


class Unstorable(StoreError, ValueError):
    """The store refused to write a value it could not read back (text that cannot be
    encoded, nesting beyond ``STORABLE_DEPTH``); nothing of that write was stored."""


class Unreadable(StoreError):
    """A stored session could not be read back (written by an older version, or a
    corrupted row); the message names the session. Its other reads, and every other
    session, are unharmed."""


#: The deepest nesting the store writes (an event's own structure included): pydantic's
#: JSON reader reads events back up to 200 levels; the host's input limit
#: (``_validate.MAX_JSON_DEPTH``) leaves room below this for an event's structure.
STORABLE_DEPTH = 150


class SessionExists(StoreError):
    pass


class StaleSession(StoreError):
    """An append that expected the session to hold a number of events (the writer's
    copy of it) found another number stored: someone appended since that copy was
    read. Nothing was written."""


class SessionLimitReached(StoreError):
    """The user has as many sessions of the app as the limit allows; none was created."""


class RunExists(StoreError):
    """A run id that this store has seen already (run ids are never reused)."""


class RunNotResumable(StoreError):
    """A run asked to be resumed that cannot be: unknown, of another session, still
    running, ended well or cancelled, or resumed already."""


#: The columns of a run's row that make a :class:`RunInfo` (``run_info_of``).
RUN_COLUMNS = "run_id, app_name, user_id, session_id, status, invocation_id, resumes, attempt, request"

#: How a run may have ended for it to be resumed (``start_run(resumes=...)``).
RESUMABLE = frozenset({"interrupted", "killed", "needs_decision", "timeout", "model_error", "error"})


def request_text(message: Content, state_delta: dict[str, Any] | None) -> str:
    """A run's message and state delta as the runs table keeps them."""
    return json.dumps({"message": message.model_dump(mode="json", exclude_none=True), "state_delta": state_delta},
                      default=str)


def request_of(text: str | None) -> tuple[Content, dict[str, Any] | None] | None:
    """The message and state delta ``request_text`` kept (None: none kept, or unreadable)."""
    if not text:
        return None
    try:
        kept = json.loads(text)
        return Content.model_validate(kept["message"]), kept.get("state_delta")
    except (ValueError, KeyError, TypeError):
        return None


def invocation_of(run_id: str) -> str:
    """The invocation id of a run that resumes nothing (the session does the same)."""
    return f"e-{run_id.removeprefix('run-')}"


def resumed_run(row: tuple[Any, ...] | None, run_id: str, session: tuple[str, str, str]) -> RunInfo:
    """The run to resume, from its row (``RUN_COLUMNS``); RunNotResumable unless it is of ``session`` and
    ended in a way that can be resumed."""
    if row is None or tuple(row[1:4]) != session:
        raise RunNotResumable(f"session {session[2]!r} has no run {run_id!r}")
    info = run_info_of(row)
    if info.status not in RESUMABLE:
        why = "resumed already" if info.status == "resumed" else f"its status is {info.status!r}"
        raise RunNotResumable(f"run {run_id!r} cannot be resumed: {why}")
    return info


def run_info_of(row: tuple[Any, ...]) -> RunInfo:
    run_id, app, user, session_id, status, invocation_id, resumes, attempt, request = row
    return RunInfo(str(run_id), str(app), str(user), str(session_id), str(status),
                   str(invocation_id) if invocation_id else invocation_of(str(run_id)),
                   str(resumes) if resumes else None, int(attempt or 0), str(request) if request else None)


class SessionLeased(StoreError):
    """Another holder has the session's lease (a partition of another host holds the
    session): the session was not activated here, and nothing was written.
    ``address``: where that holder said it can be reached (its partition's actor
    address), or None."""

    def __init__(self, message: str, holder: str, address: Any = None) -> None:
        super().__init__(message)
        self.holder = holder
        self.address = address


class LeaseLost(StoreError):
    """A write under a lease that another holder has taken since (this holder was cut
    off for longer than the lease, and the session moved): refused, nothing written."""


@dataclass(frozen=True)
class Lease:
    """A session's single-writer lease, as :meth:`SessionStore.acquire_lease` granted it.

    ``holder`` holds it until ``expires`` (seconds on the store's clock) unless it
    renews it; ``epoch`` grows each time the lease is taken, by anyone (the same holder
    after a restart too), so a write that names an older epoch is refused
    (:class:`LeaseLost`): a holder that lost its lease while cut off can never
    interleave its writes with those of the session's new holder.
    """

    app_name: str
    user_id: str
    session_id: str
    holder: str
    epoch: int
    expires: float


@dataclass
class SessionData:
    app_name: str
    user_id: str
    id: str
    state: dict[str, Any] = field(default_factory=dict)  # merged, with prefixes
    events: list[Event] = field(default_factory=list)
    last_update_time: float = 0.0


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    caller: Any  # the picklable address of whoever asked for the run
    status: str


def split_delta(delta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(app, user, session) parts of a state delta, prefixes removed; ``temp:`` dropped."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key, value in delta.items():
        if key.startswith("temp:"):
            continue
        if key.startswith("app:"):
            app[key[4:]] = value
        elif key.startswith("user:"):
            user[key[5:]] = value
        else:
            session[key] = value
    return app, user, session


class SessionStore(Protocol):
    def create_session(self, app: str, user: str, session_id: str, state: dict[str, Any] | None = None,
                       *, max_per_user: int | None = None) -> SessionData: ...
    def get_session(self, app: str, user: str, session_id: str) -> SessionData: ...
    def list_sessions(self, app: str, user: str) -> list[SessionData]: ...
    def list_app_sessions(self, app: str) -> list[SessionData]: ...
    def delete_session(self, app: str, user: str, session_id: str) -> None: ...
    def append_event(self, app: str, user: str, session_id: str, event: Event) -> Event | None: ...
    def acquire_lease(self, app: str, user: str, session_id: str, holder: str, ttl: float,
                      address: Any = None) -> Lease: ...
    def renew_leases(self, holder: str, ttl: float) -> set[tuple[str, str, str]]: ...
    def release_lease(self, lease: Lease) -> None: ...
    def scoped_state(self, app: str, user: str) -> dict[str, Any]: ...
    def start_run(self, app: str, user: str, session_id: str, run_id: str, caller: Any,
                  lease: Lease | None = None, resumes: str | None = None,
                  request: str | None = None, invocation_id: str | None = None) -> RunInfo: ...
    def run_info(self, run_id: str) -> RunInfo | None: ...
    def last_run(self, app: str, user: str, session_id: str) -> RunInfo | None: ...
    def end_run(self, run_id: str, status: str) -> None: ...
    def running_runs(self, app: str, user: str, session_id: str) -> list[RunRecord]: ...
    def close(self) -> None: ...
