"""PostgreSQL session store (psycopg 3, a connection pool): the store several hosts share.

The same contract as :class:`~adk_actors.store.SQLiteSessionStore`, row for row (the
same tables, the same JSON in TEXT columns, read back by the same rules in
``_rows``), so the contract tests run against both. ``[store] url =
"postgresql://..."`` makes a host use it.

Writes, in order:

- ``append_events`` is one transaction: the session's row is locked (``FOR UPDATE``,
  so two writers of one session queue, never interleave), the writer's lease is
  checked when it names one (LeaseLost, nothing written, when another holder took the
  session since), the events are inserted (a duplicate id ignored), and the app and
  user state rows the batch changes are locked in that fixed order, updated once,
  and committed with the events: an acknowledged event survives kill -9 of any host.
- ``create_session`` counts the user's sessions under a transaction-scoped advisory
  lock on (app, user), so concurrent creators on several hosts cannot pass the limit
  together.
- Leases (``acquire_lease``, ``renew_leases``, ``release_lease``) are rows read and
  written under the same row locks, timed by the database's clock
  (``clock_timestamp()``), so the hosts' clocks need not agree; a store opened with a
  ``clock`` (a ``ManualClock`` in tests) times them by that clock instead.

The schema is created and migrated on open, versioned (``schema_migrations``), under
a transaction-scoped advisory lock: hosts that start together migrate once.

A connection error is a :class:`StoreError` whose message never holds the URL's
password (:func:`redacted_url`); the pool replaces a broken connection on its next
use, so the store works again once the server is back.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from supervision import Clock
from supervision.lowlevel import WallClock

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
    Unstorable,
    run_info_of,
    split_delta,
)
from ._pg_names import connection_name, is_postgres_url, reason_without_password, redacted_url
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

__all__ = ["POSTGRES_MIGRATIONS", "PostgresSessionStore", "connection_name", "is_postgres_url", "open_pool",
           "reason_without_password", "redacted_url"]

POSTGRES_MIGRATIONS: list[tuple[int, str]] = [
    (1, """
        CREATE TABLE sessions (
            app_name TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT '{}', create_time DOUBLE PRECISION NOT NULL,
            update_time DOUBLE PRECISION NOT NULL, PRIMARY KEY (app_name, user_id, id));
        CREATE TABLE events (
            id TEXT NOT NULL, app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            seq BIGINT NOT NULL, invocation_id TEXT, author TEXT, timestamp DOUBLE PRECISION NOT NULL,
            event TEXT NOT NULL, PRIMARY KEY (app_name, user_id, session_id, id));
        CREATE INDEX events_by_session ON events (app_name, user_id, session_id, seq);
        CREATE TABLE app_states (app_name TEXT PRIMARY KEY, state TEXT NOT NULL,
            update_time DOUBLE PRECISION NOT NULL);
        CREATE TABLE user_states (
            app_name TEXT NOT NULL, user_id TEXT NOT NULL, state TEXT NOT NULL,
            update_time DOUBLE PRECISION NOT NULL, PRIMARY KEY (app_name, user_id));
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            caller BYTEA, status TEXT NOT NULL, started DOUBLE PRECISION NOT NULL, ended DOUBLE PRECISION);
        CREATE INDEX runs_by_session ON runs (app_name, user_id, session_id, status);
        CREATE INDEX runs_running ON runs (status) WHERE status = 'running';
        CREATE TABLE traces (
            app_name TEXT NOT NULL, session_id TEXT NOT NULL, user_id TEXT NOT NULL, turn INTEGER NOT NULL,
            invocation_id TEXT NOT NULL, spans BYTEA NOT NULL,
            PRIMARY KEY (app_name, session_id, user_id, turn));
        CREATE TABLE trace_events (
            app_name TEXT NOT NULL, event_id TEXT NOT NULL, session_id TEXT NOT NULL, user_id TEXT NOT NULL,
            turn INTEGER NOT NULL, PRIMARY KEY (app_name, event_id));
        CREATE INDEX trace_events_by_session ON trace_events (app_name, session_id, user_id, turn);
        CREATE TABLE session_leases (
            app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
            holder TEXT NOT NULL, epoch BIGINT NOT NULL, expires DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_name, user_id, session_id));
        CREATE INDEX session_leases_by_holder ON session_leases (holder);
    """),
    (2, """
        ALTER TABLE session_leases ADD COLUMN address BYTEA;
    """),
    (3, """
        ALTER TABLE runs ADD COLUMN invocation_id TEXT;
        ALTER TABLE runs ADD COLUMN resumes TEXT;
        ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE runs ADD COLUMN request TEXT;
    """),
]

#: The advisory lock key the migrations run under (any constant of this program).
_MIGRATION_LOCK = 0x6164_6B61_6374_6F72  # "adkactor"
_NOW = "extract(epoch from clock_timestamp())::double precision"






def cut_off_within(seconds: int) -> dict[str, int]:
    """libpq's settings that end a connection whose server stopped answering (a network
    cut drops packets silently: without them a call waits out TCP's retransmissions,
    about 15 minutes) within about ``seconds``: data unacknowledged that long fails the
    call (``tcp_user_timeout``), and an idle connection is probed every 2 s after 5 s."""
    return {"tcp_user_timeout": seconds * 1000, "keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
            "keepalives_count": max(seconds // 2, 1)}


def server_limits(seconds: int, idle_transaction: float) -> str:
    """The settings each connection asks its server for, the other end of
    :func:`cut_off_within`: the server ends this connection's session when its client
    stopped answering (the same TCP limits), and when a transaction of it stays idle,
    waiting for its client's next statement, longer than ``idle_transaction`` seconds.
    A client cut off or stopped in the middle of a transaction would otherwise keep it
    open, and its row locks held, until the server noticed it gone: never, by
    default; every writer of those rows (another host taking a lease the stalled one
    held) would wait as long. The server rolls the transaction back: nothing of it is
    committed, and its client's next statement fails (a StoreError)."""
    milliseconds = max(int(idle_transaction * 1000), 1)
    return (f"SET idle_in_transaction_session_timeout = {milliseconds}; SET tcp_user_timeout = {seconds * 1000}; "
            f"SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; "
            f"SET tcp_keepalives_count = {max(seconds // 2, 1)}")


def open_pool(url: str, size: int, connect_timeout: float, name: str, application_name: str = "",
              idle_transaction: float | None = None) -> ConnectionPool:
    """An open pool of ``1`` to ``size`` autocommit connections to ``url``, each replaced
    when found broken, each called ``application_name`` in PostgreSQL when one is given
    (:func:`connection_name`; else what the URL or ``PGAPPNAME`` says), each with
    :func:`server_limits` set as it is made (a transaction idle longer than
    ``idle_transaction`` seconds, ``connect_timeout`` by default, is ended). One connection is
    made first, on its own: its error says why (refused, a wrong password ...), where the
    pool's says only that it is not ready. Raises psycopg.Error or PoolTimeout (the pool
    closed) when the server cannot be reached within ``connect_timeout`` seconds."""
    seconds = max(int(connect_timeout), 1)
    named: dict[str, Any] = {"application_name": application_name} if application_name else {}
    psycopg.connect(url, connect_timeout=seconds, **named).close()
    limits = server_limits(seconds, connect_timeout if idle_transaction is None else idle_transaction)

    def configure(conn: psycopg.Connection[Any]) -> None:
        conn.execute(limits.encode())

    pool = ConnectionPool(url, min_size=1, max_size=max(size, 1), open=False, timeout=30.0,
                          kwargs={"autocommit": True, "connect_timeout": seconds, **cut_off_within(seconds), **named},
                          configure=configure, check=ConnectionPool.check_connection, name=name)
    try:
        pool.open(wait=True, timeout=connect_timeout)
    except PoolTimeout:
        pool.close()
        raise
    return pool


class PostgresSessionStore:
    def __init__(self, url: str, *, pool_size: int = 4, connect_timeout: float = 10.0,
                 application_name: str = "", clock: Clock | None = None, lease_seconds: float | None = None) -> None:
        """Open a pool of up to ``pool_size`` connections to ``url`` (called
        ``application_name`` in PostgreSQL, when given; a transaction of theirs left idle
        for a third of ``lease_seconds``, the leases' renewal period, or else for
        ``connect_timeout``, is ended by the server: ``server_limits``, so that a holder
        stalled mid-write keeps no row locked past its lease) and migrate the schema;
        StoreError (its message without the password) when the server cannot be
        reached within ``connect_timeout`` seconds or the schema cannot be made.
        ``clock``: unless given, the times the store writes (run and update times) are
        this host's wall clock and leases are timed by the database's clock; given (a
        ``ManualClock`` in tests), both are read from it."""
        self.url = url
        self.clock: Clock = WallClock() if clock is None else clock
        self._lease_clock = clock  # None: the database's clock (see _lease_now)
        self.path = redacted_url(url)  # how the store is named in messages (never the password)
        try:
            self._pool = open_pool(url, pool_size, connect_timeout, "adk-actors-sessions", application_name,
                                   None if lease_seconds is None else lease_seconds / 3)
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreError(f"cannot open the session store {self.path}: {reason_without_password(exc, url)}") from None
        try:
            self._migrate()
        except StoreError as exc:
            self._pool.close()
            raise StoreError(f"cannot open the session store {self.path}: {reason_without_password(exc, url)}") from None

    # -- connections -------------------------------------------------------------------------

    def _lease_now(self) -> tuple[str, tuple[float, ...]]:
        """How a lease statement reads now: SQL and its parameters (the database's clock,
        or the clock the store was opened with)."""
        if self._lease_clock is None:
            return _NOW, ()
        return "%s::double precision", (self._lease_clock.current_time(),)

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Cursor[Any]]:
        """A cursor inside one transaction (committed when the block ends, rolled back
        when it raises); psycopg's errors become StoreError, a value PostgreSQL cannot
        hold (a NUL character) Unstorable."""
        try:
            with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                yield cur
        except pg_errors.DataError as exc:
            raise Unstorable(f"session store {self.path}: a value cannot be stored: {reason_without_password(exc, self.url)}") from None
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreError(f"session store {self.path}: {reason_without_password(exc, self.url)}") from None

    def _migrate(self) -> None:
        """Apply the migrations the database lacks, in order, in one transaction, under
        an advisory lock (hosts starting together: one migrates, the others wait)."""
        with self._tx() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            cur.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                        "applied DOUBLE PRECISION)")
            done = {row[0] for row in cur.execute("SELECT version FROM schema_migrations")}
            for version, script in POSTGRES_MIGRATIONS:
                if version in done:
                    continue
                for statement in script.split(";"):
                    if statement.strip():
                        cur.execute(statement)  # the migrations' own text
                cur.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (version, self.clock.current_time()))

    def schema_version(self) -> int:
        with self._tx() as cur:
            row = cur.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0) if row else 0

    def _scoped(self, cur: psycopg.Cursor[Any], app: str, user: str) -> tuple[dict[str, Any], dict[str, Any]]:
        row = cur.execute("SELECT state FROM app_states WHERE app_name=%s", (app,)).fetchone()
        app_state = read_state(row[0], f"the app: state of {app}") if row else {}
        row = cur.execute("SELECT state FROM user_states WHERE app_name=%s AND user_id=%s", (app, user)).fetchone()
        user_state = read_state(row[0], f"the user: state of {app}/{user}") if row else {}
        return app_state, user_state

    # -- sessions ------------------------------------------------------------------------------

    def create_session(self, app: str, user: str, session_id: str, state: dict[str, Any] | None = None,
                       *, max_per_user: int | None = None) -> SessionData:
        """Create a session; SessionExists if it does, SessionLimitReached if the user
        already has ``max_per_user`` sessions of the app (counted under an advisory
        lock on (app, user), in the transaction of the insert); Unstorable, before
        anything is written, for a state it could not read back."""
        app_delta, user_delta, session_state = split_delta(checked_state(state))
        now = self.clock.current_time()
        with self._tx() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(app, user),))
            if cur.execute("SELECT 1 FROM sessions WHERE app_name=%s AND user_id=%s AND id=%s",
                           (app, user, session_id)).fetchone():
                raise SessionExists(f"session {session_id!r} already exists for {app}/{user}")
            if max_per_user is not None:
                row = cur.execute("SELECT COUNT(*) FROM sessions WHERE app_name=%s AND user_id=%s",
                                  (app, user)).fetchone()
                count = int(row[0]) if row else 0
                if count >= max_per_user:
                    raise SessionLimitReached(f"{app}/{user} has {count} sessions; the limit is {max_per_user}")
            cur.execute("INSERT INTO sessions VALUES (%s, %s, %s, %s, %s, %s)",
                        (app, user, session_id, json.dumps(session_state), now, now))
            self._apply_scoped(cur, app, user, [(app_delta, user_delta)], now)
            app_state, user_state = self._scoped(cur, app, user)
        return SessionData(app, user, session_id, merged_state(session_state, app_state, user_state), [], now)

    def get_session(self, app: str, user: str, session_id: str) -> SessionData:
        """The session with its events and merged state (one snapshot); SessionNotFound,
        or Unreadable when a row of it cannot be read back (that session only)."""
        where = f"session {session_id!r} of {app}/{user}"
        with self._tx() as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            row = cur.execute("SELECT state, update_time FROM sessions WHERE app_name=%s AND user_id=%s AND id=%s",
                              (app, user, session_id)).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {session_id!r} for {app}/{user}")
            texts = [text for (text,) in cur.execute(
                "SELECT event FROM events WHERE app_name=%s AND user_id=%s AND session_id=%s ORDER BY seq",
                (app, user, session_id))]
            app_state, user_state = self._scoped(cur, app, user)
        events = read_events(texts, where)
        state = read_state(row[0], where)
        return SessionData(app, user, session_id, merged_state(state, app_state, user_state), events, row[1])

    def session_exists(self, app: str, user: str, session_id: str) -> bool:
        with self._tx() as cur:
            return cur.execute("SELECT 1 FROM sessions WHERE app_name=%s AND user_id=%s AND id=%s",
                               (app, user, session_id)).fetchone() is not None

    def list_sessions(self, app: str, user: str) -> list[SessionData]:
        with self._tx() as cur:
            rows = cur.execute("SELECT id, state, update_time FROM sessions WHERE app_name=%s AND user_id=%s "
                               "ORDER BY update_time DESC", (app, user)).fetchall()
        return listed_sessions(app, user, rows)

    def list_app_sessions(self, app: str) -> list[SessionData]:
        """Every user's sessions of ``app``, without events, the least recently updated
        first (then by user, then by id)."""
        with self._tx() as cur:
            rows = cur.execute("SELECT user_id, id, state, update_time FROM sessions WHERE app_name=%s "
                               "ORDER BY update_time, user_id, id", (app,)).fetchall()
        return listed_app_sessions(app, rows)

    def delete_session(self, app: str, user: str, session_id: str) -> None:
        """Delete a session, its events, runs and traces; its lease is ended but its
        epoch kept (a writer that held it can never write to a new session of that id)."""
        key = (app, user, session_id)
        with self._tx() as cur:
            deleted = cur.execute("DELETE FROM sessions WHERE app_name=%s AND user_id=%s AND id=%s", key).rowcount
            cur.execute("DELETE FROM events WHERE app_name=%s AND user_id=%s AND session_id=%s", key)
            cur.execute("DELETE FROM runs WHERE app_name=%s AND user_id=%s AND session_id=%s", key)
            for table in ("traces", "trace_events"):
                cur.execute(f"DELETE FROM {table} WHERE app_name=%s AND session_id=%s AND user_id=%s",
                            (app, session_id, user))
            if deleted:
                cur.execute("UPDATE session_leases SET expires=0 WHERE app_name=%s AND user_id=%s AND session_id=%s",
                            key)
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
        (with ``end_run=(run_id, status)`` the end of that run, with ``trace`` one
        turn's spans, keeping the last ``keep_turns``): all of them or, on any error,
        none. With ``lease``, only while the session's lease is still that one
        (LeaseLost otherwise); with ``expected_events``, only while the session holds
        that many events (StaleSession otherwise; its row is locked first, so two
        writers of one copy cannot both pass). Returns each event as stored, or None
        for a partial event or one whose id was already stored."""
        prepared = [prepared_event(event) for event in events]
        stored_events: list[Event | None] = []
        now = self.clock.current_time()
        with self._tx() as cur:
            row = cur.execute("SELECT state FROM sessions WHERE app_name=%s AND user_id=%s AND id=%s FOR UPDATE",
                              (app, user, session_id)).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {session_id!r} for {app}/{user}")
            if lease is not None:
                check_fence(self._lease_row(cur, app, user, session_id), lease)
            state = json.loads(row[0])
            seq_row = cur.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE app_name=%s AND user_id=%s "
                                  "AND session_id=%s", (app, user, session_id)).fetchone()
            seq = int(seq_row[0]) if seq_row else 0
            if expected_events is not None and seq != expected_events:
                raise StaleSession(f"session {session_id!r} of {app}/{user} holds {seq} events, "
                                   f"not the {expected_events} its writer read")
            scoped: list[tuple[dict[str, Any], dict[str, Any]]] = []
            for event, ready in zip(events, prepared, strict=True):
                if ready is None:
                    stored_events.append(None)
                    continue
                stored, text = ready
                inserted = cur.execute(
                    "INSERT INTO events VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (event.id, app, user, session_id, seq + 1, event.invocation_id, event.author, event.timestamp,
                     text)).rowcount
                if not inserted:
                    stored_events.append(None)
                    continue
                seq += 1
                stored_events.append(stored)
                app_delta, user_delta, session_delta = split_delta(event.actions.state_delta)
                state = apply_state_delta(state, session_delta)
                scoped.append((app_delta, user_delta))
            if scoped:
                self._apply_scoped(cur, app, user, scoped, now)
                cur.execute("UPDATE sessions SET state=%s, update_time=%s WHERE app_name=%s AND user_id=%s AND id=%s",
                            (json.dumps(state), now, app, user, session_id))
            if end_run is not None:
                cur.execute("UPDATE runs SET status=%s, ended=%s WHERE run_id=%s AND status<>'resumed'", (end_run[1], now, end_run[0]))
            if trace is not None:
                self._insert_trace(cur, app, user, session_id, trace, keep_turns)
        return stored_events

    @staticmethod
    def _apply_scoped(cur: psycopg.Cursor[Any], app: str, user: str,
                      deltas: list[tuple[dict[str, Any], dict[str, Any]]], now: float) -> None:
        """Apply the (app, user) deltas of a batch, in order: the app's row is locked
        first, then the user's (one order for every writer: no deadlock), each written
        once."""
        if any(app_delta for app_delta, _ in deltas):
            cur.execute("INSERT INTO app_states VALUES (%s, '{}', %s) ON CONFLICT DO NOTHING", (app, now))
            row = cur.execute("SELECT state FROM app_states WHERE app_name=%s FOR UPDATE", (app,)).fetchone()
            state = json.loads(row[0]) if row else {}
            for app_delta, _ in deltas:
                state = apply_state_delta(state, app_delta)
            cur.execute("UPDATE app_states SET state=%s, update_time=%s WHERE app_name=%s",
                        (json.dumps(state), now, app))
        if any(user_delta for _, user_delta in deltas):
            cur.execute("INSERT INTO user_states VALUES (%s, %s, '{}', %s) ON CONFLICT DO NOTHING", (app, user, now))
            row = cur.execute("SELECT state FROM user_states WHERE app_name=%s AND user_id=%s FOR UPDATE",
                              (app, user)).fetchone()
            state = json.loads(row[0]) if row else {}
            for _, user_delta in deltas:
                state = apply_state_delta(state, user_delta)
            cur.execute("UPDATE user_states SET state=%s, update_time=%s WHERE app_name=%s AND user_id=%s",
                        (json.dumps(state), now, app, user))

    def scoped_state(self, app: str, user: str) -> dict[str, Any]:
        """The current ``app:`` and ``user:`` state, prefixed (other sessions may have changed it)."""
        with self._tx() as cur:
            app_state, user_state = self._scoped(cur, app, user)
        return merged_state({}, app_state, user_state)

    # -- runs -------------------------------------------------------------------------------------

    def start_run(self, app: str, user: str, session_id: str, run_id: str, caller: Any,
                  lease: Lease | None = None, resumes: str | None = None, request: str | None = None,
                  invocation_id: str | None = None) -> RunInfo:
        """As ``SQLiteSessionStore.start_run``; the run to resume is read ``FOR UPDATE``,
        so two hosts resuming it at once resume it once."""
        with self._tx() as cur:
            if lease is not None:
                check_fence(self._lease_row(cur, app, user, session_id), lease)
            return recorded_run(cur.execute, True, (app, user, session_id), run_id, caller,
                                resumes, request, self.clock.current_time(), invocation_id)

    def last_run(self, app: str, user: str, session_id: str) -> RunInfo | None:
        """The session's latest run, or None if it never had one."""
        with self._tx() as cur:
            row = cur.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE app_name=%s AND user_id=%s AND session_id=%s "
                                   "ORDER BY started DESC LIMIT 1", (app, user, session_id)).fetchone()
        return None if row is None else run_info_of(row)

    def run_info(self, run_id: str) -> RunInfo | None:
        """Run ``run_id`` as recorded, or None if no run of that id was ever recorded."""
        with self._tx() as cur:
            row = cur.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id=%s", (run_id,)).fetchone()
        return None if row is None else run_info_of(row)

    def end_run(self, run_id: str, status: str) -> None:
        with self._tx() as cur:
            cur.execute("UPDATE runs SET status=%s, ended=%s WHERE run_id=%s AND status<>'resumed'",
                        (status, self.clock.current_time(), run_id))

    def all_running_runs(self) -> list[tuple[str, str, str, RunRecord]]:
        """Every run marked running: (app, user, session, record)."""
        with self._tx() as cur:
            rows = cur.execute("SELECT app_name, user_id, session_id, run_id, caller FROM runs "
                               "WHERE status='running'").fetchall()
        return [(app, user, sid, RunRecord(run_id, caller_address(caller), "running"))
                for app, user, sid, run_id, caller in rows]

    def orphaned_runs(self, holder: str) -> list[tuple[str, str, str, RunRecord]]:
        """The runs marked running that no live writer holds: in a session whose lease
        ``holder`` had (its earlier self, which died with them), whose lease ran out on
        the database's clock (its holder died or was cut off), or that has none. A run
        of a session another holder leases now is left to it."""
        now, at = self._lease_now()
        with self._tx() as cur:
            rows = cur.execute(
                "SELECT r.app_name, r.user_id, r.session_id, r.run_id, r.caller FROM runs r LEFT JOIN session_leases l "
                "ON l.app_name=r.app_name AND l.user_id=r.user_id AND l.session_id=r.session_id "
                f"WHERE r.status='running' AND (l.holder IS NULL OR l.holder=%s OR l.expires<{now})",
                (holder, *at)).fetchall()
        return [(app, user, sid, RunRecord(run_id, caller_address(caller), "running"))
                for app, user, sid, run_id, caller in rows]

    def run_status(self, run_id: str) -> str | None:
        """How run ``run_id`` ended, "running", or None if no run of that id was recorded."""
        with self._tx() as cur:
            row = cur.execute("SELECT status FROM runs WHERE run_id=%s", (run_id,)).fetchone()
        return None if row is None else str(row[0])

    def running_runs(self, app: str, user: str, session_id: str) -> list[RunRecord]:
        with self._tx() as cur:
            rows = cur.execute("SELECT run_id, caller, status FROM runs WHERE app_name=%s AND user_id=%s "
                               "AND session_id=%s AND status='running'", (app, user, session_id)).fetchall()
        return [RunRecord(run_id, caller_address(caller), status) for run_id, caller, status in rows]

    # -- leases (see ._base.Lease) ----------------------------------------------------------------

    @staticmethod
    def _lease_row(cur: psycopg.Cursor[Any], app: str, user: str, session_id: str) -> tuple[str, int] | None:
        row = cur.execute("SELECT holder, epoch FROM session_leases WHERE app_name=%s AND user_id=%s "
                          "AND session_id=%s FOR SHARE", (app, user, session_id)).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def acquire_lease(self, app: str, user: str, session_id: str, holder: str, ttl: float,
                      address: Any = None) -> Lease:
        """Take the session's lease for ``ttl`` seconds of the database's clock (see
        ``_rows.granted_epoch``); SessionLeased, with its holder, when another has it;
        SessionNotFound for a session that does not exist (no lease is made for one)."""
        key = (app, user, session_id)
        now_sql, at = self._lease_now()
        with self._tx() as cur:
            if cur.execute("SELECT 1 FROM sessions WHERE app_name=%s AND user_id=%s AND id=%s", key).fetchone() is None:
                raise SessionNotFound(f"no session {session_id!r} for {app}/{user}")
            cur.execute("INSERT INTO session_leases VALUES (%s, %s, %s, '', 0, 0, NULL) ON CONFLICT DO NOTHING", key)
            row = cur.execute(f"SELECT holder, epoch, expires, address, {now_sql} FROM session_leases "
                              "WHERE app_name=%s AND user_id=%s AND session_id=%s FOR UPDATE", (*at, *key)).fetchone()
            assert row is not None  # inserted above if it was not there (as expired, epoch 0)
            holder_now, epoch_now, expires, address_now, now = row
            epoch = granted_epoch((holder_now, epoch_now, expires, bytes(address_now) if address_now else None),
                                  key, holder, now)
            cur.execute("UPDATE session_leases SET holder=%s, epoch=%s, expires=%s, address=%s WHERE app_name=%s "
                        "AND user_id=%s AND session_id=%s", (holder, epoch, now + ttl, pickle.dumps(address), *key))
        return Lease(app, user, session_id, holder, epoch, now + ttl)

    def renew_leases(self, holder: str, ttl: float) -> set[tuple[str, str, str]]:
        """Extend every lease ``holder`` still has by ``ttl`` seconds from now; the
        sessions (app, user, id) it still has (one missing was taken by another)."""
        now, at = self._lease_now()
        with self._tx() as cur:
            rows = cur.execute(f"UPDATE session_leases SET expires={now} + %s WHERE holder=%s AND expires>0 "
                               "RETURNING app_name, user_id, session_id", (*at, ttl, holder)).fetchall()
        return {(str(a), str(u), str(s)) for a, u, s in rows}

    def release_lease(self, lease: Lease) -> None:
        """Give the lease up: anyone may take it at once. One another holder took since
        is left alone."""
        with self._tx() as cur:
            cur.execute("UPDATE session_leases SET expires=0 WHERE app_name=%s AND user_id=%s AND session_id=%s "
                        "AND holder=%s AND epoch=%s",
                        (lease.app_name, lease.user_id, lease.session_id, lease.holder, lease.epoch))

    # -- traces (see ..tracing) ------------------------------------------------------------------

    @staticmethod
    def _insert_trace(cur: psycopg.Cursor[Any], app: str, user: str, session_id: str, trace: PackedTrace,
                      keep_turns: int) -> None:
        key = (app, session_id, user)
        row = cur.execute("SELECT COALESCE(MAX(turn), 0) + 1 FROM traces WHERE app_name=%s AND session_id=%s "
                          "AND user_id=%s", key).fetchone()
        turn = int(row[0]) if row else 1
        cur.execute("INSERT INTO traces VALUES (%s, %s, %s, %s, %s, %s)", (*key, turn, trace.invocation_id, trace.data))
        cur.executemany("INSERT INTO trace_events VALUES (%s, %s, %s, %s, %s) ON CONFLICT (app_name, event_id) "
                        "DO UPDATE SET session_id=excluded.session_id, user_id=excluded.user_id, turn=excluded.turn",
                        [(app, event_id, session_id, user, turn) for event_id in trace.event_ids])
        for table in ("traces", "trace_events"):
            cur.execute(f"DELETE FROM {table} WHERE app_name=%s AND session_id=%s AND user_id=%s "
                        "AND turn<=%s", (*key, turn - max(keep_turns, 1)))

    def session_trace(self, app: str, session_id: str, user: str | None = None) -> list[TraceSpan]:
        """The spans of the session's kept turns, oldest turn first (``user``'s only, when given)."""
        query, args = session_trace_query(app, session_id, user)
        with self._tx() as cur:
            return spans_of(cur.execute(query.replace("?", "%s"), args).fetchall())

    def event_trace(self, app: str, event_id: str, user: str | None = None) -> TraceSpan | None:
        """The span of the model call that made event ``event_id`` (``user``'s only, when given), or None."""
        query, args = event_trace_query(app, event_id, user)
        with self._tx() as cur:
            row = cur.execute(query.replace("?", "%s"), args).fetchone()
        return event_span(row[0], event_id) if row else None

    def quick_check(self) -> list[str]:
        """The problems found at start: none when the server answers (PostgreSQL
        checks its own pages; a dead server is a StoreError here)."""
        with self._tx() as cur:
            cur.execute("SELECT 1")
        return []

    def close(self) -> None:
        self._pool.close()


def _lock_key(app: str, user: str) -> int:
    """A signed 64-bit advisory lock key for (app, user)."""
    digest = hashlib.blake2b(f"{app}\x1f{user}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)

