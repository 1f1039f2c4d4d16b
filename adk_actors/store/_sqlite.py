"""SQLite session store (stdlib ``sqlite3``, WAL): the embedded default.

One file in the host's data dir. Tables keyed like adk_ex_ecto / google-adk:
``sessions``, ``events`` (the event as JSON), ``app_states``, ``user_states``, plus
``runs`` (which runs are in flight, so a restarted partition can fail them
cleanly), ``traces`` and ``trace_events`` (each session's last turns' spans, packed,
and which turn made which event: see ``..tracing``) and
``schema_migrations`` (versioned migrations, applied in order once).

``append_event`` is one IMMEDIATE transaction: insert the event (a duplicate id is
ignored and reported as None), apply the state delta by scope, bump the update
time. It returns only after COMMIT, so an acknowledged event survives kill -9 of
any process (``synchronous=NORMAL`` in WAL mode; ``FULL`` also survives power loss).

Writers are few (one per session partition, and the services that write here),
each holding SQLite's write lock for a fraction of a millisecond: a writer that
finds it taken waits in SQLite's busy handler (``busy_timeout``, 30 s). Readers
never wait (WAL). (When every session was a process of its own, a first-come,
first-served queue of ``flock``s stood in front of SQLite's lock; with sessions in a
few partitions it showed no gain in the bench and went: docs/benchmarks.md.)
"""

from __future__ import annotations

import json
import pickle
import sqlite3
import threading
from pathlib import Path
from typing import Any

from supervision import Clock
from supervision.lowlevel import WallClock

from .._files import private_file
from .._types import Event, apply_state_delta
from ..tracing import PackedTrace, TraceSpan
from ._base import (
    RUN_COLUMNS,
    Lease,
    RunInfo,
    RunRecord,
    SessionData,
    SessionExists,
    SessionLimitReached,
    SessionNotFound,
    StaleSession,
    StoreError,
    run_info_of,
    split_delta,
)
from ._rows import (
    caller_address,
    check_fence,
    checked_state,
    event_span,
    event_trace_query,
    granted_epoch,
    listed_app_sessions,
    listed_sessions,
    merged_state,
    prepared_event,
    read_events,
    read_state,
    recorded_run,
    session_trace_query,
    spans_of,
)
from ._wal import connect_wal

__all__ = ["MIGRATIONS", "SQLiteSessionStore"]

MIGRATIONS: list[tuple[int, str]] = [
    (1, """
        CREATE TABLE sessions (
            app_name TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT '{}', create_time REAL NOT NULL, update_time REAL NOT NULL,
            PRIMARY KEY (app_name, user_id, id));
        CREATE TABLE events (
            id TEXT NOT NULL, app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            seq INTEGER NOT NULL, invocation_id TEXT, author TEXT, timestamp REAL NOT NULL, event TEXT NOT NULL,
            PRIMARY KEY (app_name, user_id, session_id, id));
        CREATE INDEX events_by_session ON events (app_name, user_id, session_id, seq);
        CREATE TABLE app_states (app_name TEXT PRIMARY KEY, state TEXT NOT NULL, update_time REAL NOT NULL);
        CREATE TABLE user_states (
            app_name TEXT NOT NULL, user_id TEXT NOT NULL, state TEXT NOT NULL, update_time REAL NOT NULL,
            PRIMARY KEY (app_name, user_id));
    """),
    (2, """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            caller BLOB, status TEXT NOT NULL, started REAL NOT NULL, ended REAL);
        CREATE INDEX runs_by_session ON runs (app_name, user_id, session_id, status);
    """),
    (3, """
        CREATE TABLE traces (
            app_name TEXT NOT NULL, session_id TEXT NOT NULL, user_id TEXT NOT NULL, turn INTEGER NOT NULL,
            invocation_id TEXT NOT NULL, spans BLOB NOT NULL,
            PRIMARY KEY (app_name, session_id, user_id, turn));
        CREATE TABLE trace_events (
            app_name TEXT NOT NULL, event_id TEXT NOT NULL, session_id TEXT NOT NULL, user_id TEXT NOT NULL,
            turn INTEGER NOT NULL, PRIMARY KEY (app_name, event_id));
        CREATE INDEX trace_events_by_session ON trace_events (app_name, session_id, user_id, turn);
    """),
    # A partition's start looks up the runs still marked running: without this (partial)
    # index, a scan of every run the host ever ran, on every restart.
    (4, """
        CREATE INDEX runs_running ON runs (status) WHERE status = 'running';
    """),
    # Single-writer leases (see ._base.Lease): one row per session ever leased, kept
    # (expired) after a release so that its epoch only grows.
    (5, """
        CREATE TABLE session_leases (
            app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            holder TEXT NOT NULL, epoch INTEGER NOT NULL, expires REAL NOT NULL,
            PRIMARY KEY (app_name, user_id, session_id));
        CREATE INDEX session_leases_by_holder ON session_leases (holder);
    """),
    # Where a lease's holder is reached (its partition's pickled actor address): a
    # host asked for a session another holds forwards the request there.
    (6, """
        ALTER TABLE session_leases ADD COLUMN address BLOB;
    """),
    # Durable runs: a run's invocation (a resumed run continues its original's), the
    # run it resumes, and how many resumes lie behind it.
    (7, """
        ALTER TABLE runs ADD COLUMN invocation_id TEXT;
        ALTER TABLE runs ADD COLUMN resumes TEXT;
        ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE runs ADD COLUMN request TEXT
    """),
]





class SQLiteSessionStore:
    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL", clock: Clock | None = None) -> None:
        """Open (creating it if need be, private to this user) the file at ``path`` and
        migrate its schema; StoreError when it cannot be. ``clock`` is what every time
        the store writes or compares is read from (lease expiries, run and update
        times): the wall clock unless given (a ``ManualClock`` in tests)."""
        self.path = str(path)
        self.clock: Clock = WallClock() if clock is None else clock
        if self.path != ":memory:":
            private_file(self.path)
        self._lock = threading.RLock()
        try:
            self._db = connect_wal(self.path, synchronous)
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the session store {self.path}: {exc}") from exc

    # -- schema -------------------------------------------------------------------------

    def _migrate(self) -> None:
        """Apply the migrations this file lacks, in order, in one write transaction. A
        file that is current is only read (a partition opens the store each time it
        starts: a write lock there would queue it behind every running turn)."""
        latest = MIGRATIONS[-1][0]
        try:
            if self.schema_version() == latest:
                return
        except sqlite3.OperationalError:
            pass  # a new file: no schema_migrations table yet
        with self._tx():
            try:
                self._db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied REAL)")
                done = {row[0] for row in self._db.execute("SELECT version FROM schema_migrations")}
                for version, script in MIGRATIONS:
                    if version in done:
                        continue
                    for statement in script.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute("INSERT INTO schema_migrations VALUES (?, ?)",
                                     (version, self.clock.current_time()))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot migrate the session store {self.path}: {exc}") from exc

    def schema_version(self) -> int:
        row = self._db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    # -- helpers --------------------------------------------------------------------------

    def _tx(self) -> _Transaction:
        return _Transaction(self)

    def _scoped(self, app: str, user: str) -> tuple[dict[str, Any], dict[str, Any]]:
        row = self._db.execute("SELECT state FROM app_states WHERE app_name=?", (app,)).fetchone()
        app_state = read_state(row[0], f"the app: state of {app}") if row else {}
        row = self._db.execute("SELECT state FROM user_states WHERE app_name=? AND user_id=?", (app, user)).fetchone()
        user_state = read_state(row[0], f"the user: state of {app}/{user}") if row else {}
        return app_state, user_state

    # -- sessions ------------------------------------------------------------------------------

    def create_session(self, app: str, user: str, session_id: str, state: dict[str, Any] | None = None,
                       *, max_per_user: int | None = None) -> SessionData:
        """Create a session; SessionExists if it does, SessionLimitReached if the user
        already has ``max_per_user`` sessions of the app (counted in the same
        transaction as the insert, so concurrent creators cannot pass it together);
        Unstorable, before anything is written, for a state it could not read back."""
        app_delta, user_delta, session_state = split_delta(checked_state(state))
        now = self.clock.current_time()
        with self._tx() as db:
            if db.execute("SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id=?",
                          (app, user, session_id)).fetchone():
                raise SessionExists(f"session {session_id!r} already exists for {app}/{user}")
            if max_per_user is not None:
                (count,) = db.execute("SELECT COUNT(*) FROM sessions WHERE app_name=? AND user_id=?",
                                      (app, user)).fetchone()
                if count >= max_per_user:
                    raise SessionLimitReached(f"{app}/{user} has {count} sessions; the limit is {max_per_user}")
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
                       (app, user, session_id, json.dumps(session_state), now, now))
            self._apply_scoped(db, app, user, app_delta, user_delta, now)
            app_state, user_state = self._scoped(app, user)
        return SessionData(app, user, session_id, merged_state(session_state, app_state, user_state), [], now)

    def get_session(self, app: str, user: str, session_id: str) -> SessionData:
        """The session with its events and merged state; SessionNotFound, or Unreadable
        when a row of it cannot be read back (that session only)."""
        where = f"session {session_id!r} of {app}/{user}"
        with self._lock:
            row = self._db.execute("SELECT state, update_time FROM sessions WHERE app_name=? AND user_id=? AND id=?",
                                   (app, user, session_id)).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {session_id!r} for {app}/{user}")
            rows = self._db.execute(
                "SELECT event FROM events WHERE app_name=? AND user_id=? AND session_id=? ORDER BY seq",
                (app, user, session_id)).fetchall()
            app_state, user_state = self._scoped(app, user)
        events = read_events([text for (text,) in rows], where)
        state = read_state(row[0], where)
        return SessionData(app, user, session_id, merged_state(state, app_state, user_state), events, row[1])

    def session_exists(self, app: str, user: str, session_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id=?",
                                    (app, user, session_id)).fetchone() is not None

    def list_sessions(self, app: str, user: str) -> list[SessionData]:
        with self._lock:
            rows = self._db.execute("SELECT id, state, update_time FROM sessions WHERE app_name=? AND user_id=? "
                                    "ORDER BY update_time DESC", (app, user)).fetchall()
        return listed_sessions(app, user, rows)

    def list_app_sessions(self, app: str) -> list[SessionData]:
        """Every user's sessions of ``app``, without events, the least recently updated
        first (then by user, then by id)."""
        with self._lock:
            rows = self._db.execute("SELECT user_id, id, state, update_time FROM sessions WHERE app_name=? "
                                    "ORDER BY update_time, user_id, id", (app,)).fetchall()
        return listed_app_sessions(app, rows)

    def delete_session(self, app: str, user: str, session_id: str) -> None:
        with self._tx() as db:
            deleted = db.execute("DELETE FROM sessions WHERE app_name=? AND user_id=? AND id=?",
                                 (app, user, session_id)).rowcount
            db.execute("DELETE FROM events WHERE app_name=? AND user_id=? AND session_id=?", (app, user, session_id))
            db.execute("DELETE FROM runs WHERE app_name=? AND user_id=? AND session_id=?", (app, user, session_id))
            for table in ("traces", "trace_events"):
                db.execute(f"DELETE FROM {table} WHERE app_name=? AND session_id=? AND user_id=?",
                           (app, session_id, user))
            if deleted:
                # The lease goes too, but its epoch is kept in a fresh row: a writer
                # that held it can never write to a new session of the same id.
                db.execute("UPDATE session_leases SET expires=0 WHERE app_name=? AND user_id=? AND session_id=?",
                           (app, user, session_id))
        if not deleted:
            raise SessionNotFound(f"no session {session_id!r} for {app}/{user}")

    def append_event(self, app: str, user: str, session_id: str, event: Event) -> Event | None:
        """Persist ``event`` and its state delta atomically; return the event as stored
        (``temp:`` keys removed from its delta), or None if its id was already stored."""
        return self.append_events(app, user, session_id, [event])[0]

    def append_events(self, app: str, user: str, session_id: str, events: list[Event],
                      end_run: tuple[str, str] | None = None, trace: PackedTrace | None = None,
                      keep_turns: int = 20, lease: Lease | None = None,
                      expected_events: int | None = None) -> list[Event | None]:
        """Persist ``events`` in order, each with its state delta, in ONE transaction
        (and, with ``end_run=(run_id, status)``, the end of that run too; with ``trace``,
        one turn's spans, the session keeping the traces of its last ``keep_turns``
        turns): all of them or, on any error, none. With ``lease``, only while the
        session's lease is still that one (LeaseLost otherwise); with
        ``expected_events``, only while the session holds that many events
        (StaleSession otherwise). Returns each event as stored, or None for a partial
        event or one whose id was already stored."""
        stored_events: list[Event | None] = []
        now = self.clock.current_time()
        # Serialized before the write lock is taken: the lock is held for SQL only.
        prepared = [prepared_event(event) for event in events]
        with self._tx() as db:
            # The session's state and its last event's seq, in one statement.
            row = db.execute("SELECT state, (SELECT COALESCE(MAX(seq), 0) FROM events WHERE app_name=?1 "
                             "AND user_id=?2 AND session_id=?3) FROM sessions WHERE app_name=?1 AND user_id=?2 "
                             "AND id=?3", (app, user, session_id)).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {session_id!r} for {app}/{user}")
            if lease is not None:
                check_fence(self._lease_row(db, app, user, session_id), lease)
            seq = row[1]
            if expected_events is not None and seq != expected_events:
                raise StaleSession(f"session {session_id!r} of {app}/{user} holds {seq} events, "
                                   f"not the {expected_events} its writer read")
            changed = False
            state: dict[str, Any] | None = None  # read from its JSON once an event changes it
            for event, ready in zip(events, prepared, strict=True):
                stored = self._insert_event(db, app, user, session_id, seq + 1, event, ready)
                stored_events.append(stored)
                if stored is not None:
                    seq += 1
                    changed = True
                    app_delta, user_delta, session_delta = split_delta(event.actions.state_delta)
                    if session_delta:
                        state = apply_state_delta(json.loads(row[0]) if state is None else state, session_delta)
                    self._apply_scoped(db, app, user, app_delta, user_delta, now)
            if changed and state is not None:
                db.execute("UPDATE sessions SET state=?, update_time=? WHERE app_name=? AND user_id=? AND id=?",
                           (json.dumps(state), now, app, user, session_id))
            elif changed:  # no event changed the session's own state: its JSON is left as stored
                db.execute("UPDATE sessions SET update_time=? WHERE app_name=? AND user_id=? AND id=?",
                           (now, app, user, session_id))
            if end_run is not None:
                _end_run(db, *end_run, now)
            if trace is not None:
                _insert_trace(db, app, user, session_id, trace, keep_turns)
        return stored_events

    @staticmethod
    def _insert_event(db: sqlite3.Connection, app: str, user: str, session_id: str, seq: int, event: Event,
                      ready: tuple[Event, str] | None) -> Event | None:
        """Insert one event (``ready``: its stored form and JSON from ``_rows.prepared_event``,
        None for a partial event, which is never stored)."""
        if ready is None:
            return None
        stored, text = ready
        inserted = db.execute(
            "INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (event.id, app, user, session_id, seq, event.invocation_id, event.author, event.timestamp,
             text)).rowcount
        return stored if inserted else None

    def _apply_scoped(self, db: sqlite3.Connection, app: str, user: str, app_delta: dict[str, Any],
                      user_delta: dict[str, Any], now: float) -> None:
        if app_delta:
            row = db.execute("SELECT state FROM app_states WHERE app_name=?", (app,)).fetchone()
            state = apply_state_delta(json.loads(row[0]) if row else {}, app_delta)
            db.execute("INSERT OR REPLACE INTO app_states VALUES (?, ?, ?)", (app, json.dumps(state), now))
        if user_delta:
            row = db.execute("SELECT state FROM user_states WHERE app_name=? AND user_id=?", (app, user)).fetchone()
            state = apply_state_delta(json.loads(row[0]) if row else {}, user_delta)
            db.execute("INSERT OR REPLACE INTO user_states VALUES (?, ?, ?, ?)", (app, user, json.dumps(state), now))

    def scoped_state(self, app: str, user: str) -> dict[str, Any]:
        """The current ``app:`` and ``user:`` state, prefixed (other sessions may have changed it)."""
        with self._lock:
            app_state, user_state = self._scoped(app, user)
        return merged_state({}, app_state, user_state)

    # -- runs -------------------------------------------------------------------------------------

    def start_run(self, app: str, user: str, session_id: str, run_id: str, caller: Any,
                  lease: Lease | None = None, resumes: str | None = None, request: str | None = None,
                  invocation_id: str | None = None) -> RunInfo:
        """Record a run as running, and answer it as recorded. RunExists if its id was
        ever used; with ``lease``, LeaseLost when the session's lease is no longer that
        one. With ``resumes``, the run continues that run of the session (its
        invocation, one more attempt), which is marked ``resumed`` in the same
        transaction; RunNotResumable when it cannot be (``_base.resumed_run``).
        ``invocation_id``: the invocation a new run continues (a turn answering calls
        of an earlier one); without it, the run's own (``_base.invocation_of``)."""
        with self._tx() as db:
            if lease is not None:
                check_fence(self._lease_row(db, app, user, session_id), lease)
            return recorded_run(db.execute, False, (app, user, session_id), run_id, caller,
                                resumes, request, self.clock.current_time(), invocation_id)

    def last_run(self, app: str, user: str, session_id: str) -> RunInfo | None:
        """The session's latest run, or None if it never had one."""
        with self._lock:
            row = self._db.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE app_name=? AND user_id=? AND session_id=? "
                                   "ORDER BY started DESC LIMIT 1", (app, user, session_id)).fetchone()
        return None if row is None else run_info_of(row)

    def run_info(self, run_id: str) -> RunInfo | None:
        """Run ``run_id`` as recorded, or None if no run of that id was ever recorded."""
        with self._lock:
            row = self._db.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return None if row is None else run_info_of(row)

    def end_run(self, run_id: str, status: str) -> None:
        with self._tx() as db:
            _end_run(db, run_id, status, self.clock.current_time())

    def all_running_runs(self) -> list[tuple[str, str, str, RunRecord]]:
        """Every run marked running: (app, user, session, record)."""
        with self._lock:
            rows = self._db.execute("SELECT app_name, user_id, session_id, run_id, caller FROM runs "
                                    "WHERE status='running'").fetchall()
        out = []
        for app, user, session_id, run_id, caller in rows:
            out.append((app, user, session_id, RunRecord(run_id, caller_address(caller), "running")))
        return out

    def orphaned_runs(self, holder: str) -> list[tuple[str, str, str, RunRecord]]:
        """The runs marked running that no live writer holds: in a session whose lease
        ``holder`` had (its earlier self, which died with them), whose lease ran out
        (its holder died or was cut off: a live holder renews it), or that has none.
        A run of a session another holder leases now is left to it."""
        with self._lock:
            rows = self._db.execute(
                "SELECT r.app_name, r.user_id, r.session_id, r.run_id, r.caller FROM runs r LEFT JOIN session_leases l "
                "ON l.app_name=r.app_name AND l.user_id=r.user_id AND l.session_id=r.session_id "
                "WHERE r.status='running' AND (l.holder IS NULL OR l.holder=? OR l.expires<?)",
                (holder, self.clock.current_time())).fetchall()
        return [(app, user, sid, RunRecord(run_id, caller_address(caller), "running"))
                for app, user, sid, run_id, caller in rows]

    def run_status(self, run_id: str) -> str | None:
        """How run ``run_id`` ended ("done", "interrupted" ...), "running", or None if no
        run of that id was ever recorded."""
        with self._lock:
            row = self._db.execute("SELECT status FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return None if row is None else str(row[0])

    def running_runs(self, app: str, user: str, session_id: str) -> list[RunRecord]:
        with self._lock:
            rows = self._db.execute("SELECT run_id, caller, status FROM runs WHERE app_name=? AND user_id=? "
                                    "AND session_id=? AND status='running'", (app, user, session_id)).fetchall()
        records = []
        for run_id, caller, status in rows:
            records.append(RunRecord(run_id, caller_address(caller), status))
        return records

    # -- leases (see ._base.Lease) --------------------------------------------------------------

    @staticmethod
    def _lease_row(db: sqlite3.Connection, app: str, user: str, session_id: str) -> tuple[str, int] | None:
        row = db.execute("SELECT holder, epoch FROM session_leases WHERE app_name=? AND user_id=? AND session_id=?",
                         (app, user, session_id)).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def acquire_lease(self, app: str, user: str, session_id: str, holder: str, ttl: float,
                      address: Any = None) -> Lease:
        """Take the session's lease for ``ttl`` seconds (see ``_rows.granted_epoch``);
        SessionLeased, with its holder, when another holder has it; SessionNotFound
        for a session that does not exist (no lease is ever made for one)."""
        with self._tx() as db:
            if db.execute("SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id=?",
                          (app, user, session_id)).fetchone() is None:
                raise SessionNotFound(f"no session {session_id!r} for {app}/{user}")
            now = self.clock.current_time()
            row = db.execute("SELECT holder, epoch, expires, address FROM session_leases WHERE app_name=? "
                             "AND user_id=? AND session_id=?", (app, user, session_id)).fetchone()
            epoch = granted_epoch(row, (app, user, session_id), holder, now)
            db.execute("INSERT OR REPLACE INTO session_leases VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (app, user, session_id, holder, epoch, now + ttl, pickle.dumps(address)))
        return Lease(app, user, session_id, holder, epoch, now + ttl)

    def renew_leases(self, holder: str, ttl: float) -> set[tuple[str, str, str]]:
        """Extend every lease ``holder`` still has by ``ttl`` seconds from now; the
        sessions (app, user, id) it still has (one missing was taken by another)."""
        with self._tx() as db:
            db.execute("UPDATE session_leases SET expires=? WHERE holder=? AND expires>0",
                       (self.clock.current_time() + ttl, holder))
            rows = db.execute("SELECT app_name, user_id, session_id FROM session_leases WHERE holder=? "
                              "AND expires>0", (holder,)).fetchall()
        return {(str(a), str(u), str(s)) for a, u, s in rows}

    def release_lease(self, lease: Lease) -> None:
        """Give the lease up (the session was passivated): anyone may take it at once.
        A lease that another holder took since is left alone."""
        with self._tx() as db:
            db.execute("UPDATE session_leases SET expires=0 WHERE app_name=? AND user_id=? AND session_id=? "
                       "AND holder=? AND epoch=?",
                       (lease.app_name, lease.user_id, lease.session_id, lease.holder, lease.epoch))

    # -- traces (see ..tracing) ------------------------------------------------------------------

    def session_trace(self, app: str, session_id: str, user: str | None = None) -> list[TraceSpan]:
        """The spans of the session's kept turns, oldest turn first (``user``'s only, when given)."""
        query, args = session_trace_query(app, session_id, user)
        with self._lock:
            return spans_of(self._db.execute(query, args).fetchall())

    def event_trace(self, app: str, event_id: str, user: str | None = None) -> TraceSpan | None:
        """The span of the model call that made event ``event_id`` (``user``'s only, when given), or None."""
        query, args = event_trace_query(app, event_id, user)
        with self._lock:
            row = self._db.execute(query, args).fetchone()
        return event_span(row[0], event_id) if row else None

    def quick_check(self) -> list[str]:
        """SQLite's ``PRAGMA quick_check``: the problems it finds (empty: the file is sound).
        A corrupted page is found here, at start, not by the first turn that reads it."""
        with self._lock:
            try:
                rows = self._db.execute("PRAGMA quick_check").fetchall()
            except sqlite3.DatabaseError as exc:
                return [str(exc)]
        problems = [str(row[0]) for row in rows]
        return [] if problems == ["ok"] else problems

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _insert_trace(db: sqlite3.Connection, app: str, user: str, session_id: str, trace: PackedTrace,
                  keep_turns: int) -> None:
    """Store one turn's packed spans as the session's next traced turn; forget its
    turns older than the last ``keep_turns``."""
    key = (app, session_id, user)
    turn = db.execute("SELECT COALESCE(MAX(turn), 0) + 1 FROM traces WHERE app_name=? AND session_id=? "
                      "AND user_id=?", key).fetchone()[0]
    db.execute("INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?)", (*key, turn, trace.invocation_id, trace.data))
    db.executemany("INSERT OR REPLACE INTO trace_events VALUES (?, ?, ?, ?, ?)",
                   [(app, event_id, session_id, user, turn) for event_id in trace.event_ids])
    for table in ("traces", "trace_events"):
        db.execute(f"DELETE FROM {table} WHERE app_name=? AND session_id=? AND user_id=? AND turn<=?",
                   (*key, turn - max(keep_turns, 1)))


def _end_run(db: sqlite3.Connection, run_id: str, status: str, now: float) -> None:
    """Record how run ``run_id`` ended; a run marked ``resumed`` keeps that (a late end,
    stored after its resume began, must not make it look unresumed)."""
    db.execute("UPDATE runs SET status=?, ended=? WHERE run_id=? AND status<>'resumed'", (status, now, run_id))


class _Transaction:
    def __init__(self, store: SQLiteSessionStore) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        """Take the thread lock, then BEGIN IMMEDIATE (SQLite's write lock); on a
        failure, release the thread lock and raise StoreError."""
        self.store._lock.acquire()
        try:
            self.store._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            self.store._lock.release()
            raise StoreError(f"session store {self.store.path}: {exc}") from exc
        return self.store._db

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        try:
            self.store._db.execute("ROLLBACK" if kind else "COMMIT")
        finally:
            self.store._lock.release()
