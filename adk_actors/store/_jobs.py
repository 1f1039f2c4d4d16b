"""The jobs, the one truth of every job's state: a SQLite file of the host's
(``jobs.db`` in its data folder, private) or, with ``[store] url`` set, the sessions'
PostgreSQL database, one queue for every host of a cluster (Oban's shape). The clock
is passed in (a ``supervision.Clock`` in epoch seconds: ``WallClock``, or a
``ManualClock`` in tests), so schedules, backoff, leases and uniqueness are tested
exactly, without sleeping; hosts sharing a queue read their own clocks, so they keep
them in step (NTP), as Oban's nodes do.

Each change is one transaction. Changes to an executing job name the attempt they
are about (``complete``, ``fail``, ``snooze``): one about an attempt that is no longer
the current one changes nothing, so a late answer of an attempt given up on cannot
overwrite the next.

Several hosts on one queue: a claim takes due rows ``FOR UPDATE SKIP LOCKED`` (two
hosts never claim one job) and marks them with the claiming host (``node``); a host
that starts fails only its own executing jobs (its attempts died with it); the jobs
another host was executing when it died are given up (``rescue``) once their lease
ran out, and retried like any failed attempt. A unique key is checked under an
advisory lock on it, so hosts enqueueing the same cron occurrence store it once.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervision import Clock

from .._exceptions import InvalidRequestError, NotFoundError
from ..jobs import FINISHED, Backoff, Job, JobSpec, backoff_delay
from ._database import Database, Statements
from ._pg_names import connection_name

__all__ = ["JobStore"]

_COLUMNS = ("id", "queue", "kind", "user_id", "state", "attempt", "max_attempts", "priority", "scheduled_at",
            "inserted_at", "payload", "timeout", "attempted_at", "finished_at", "lease_until", "errors", "result",
            "unique_key", "meta", "backoff", "node")
_SELECT = ", ".join(_COLUMNS)
_DUE = ("available", "scheduled", "retryable")

_MIGRATIONS = [
    # The table as the first jobs.db files have it (IF NOT EXISTS: such a file takes
    # this version as it is), then the claiming host's column.
    (1, f"""
        CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, queue TEXT NOT NULL, kind TEXT NOT NULL,
            user_id TEXT NOT NULL, state TEXT NOT NULL, attempt INTEGER NOT NULL, max_attempts INTEGER NOT NULL,
            priority INTEGER NOT NULL, scheduled_at REAL NOT NULL, inserted_at REAL NOT NULL, payload TEXT NOT NULL,
            timeout REAL NOT NULL, attempted_at REAL, finished_at REAL, lease_until REAL, errors TEXT NOT NULL,
            result TEXT, unique_key TEXT, meta TEXT NOT NULL, backoff TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS jobs_claim ON jobs (queue, priority, scheduled_at, inserted_at)
            WHERE state IN {_DUE};
        CREATE INDEX IF NOT EXISTS jobs_next ON jobs (scheduled_at) WHERE state IN {_DUE};
        CREATE INDEX IF NOT EXISTS jobs_unique ON jobs (unique_key, inserted_at)
    """),
    (2, """
        ALTER TABLE jobs ADD COLUMN node TEXT;
        CREATE INDEX IF NOT EXISTS jobs_executing ON jobs (node) WHERE state = 'executing'
    """),
]


class JobStore:
    """See the module. ``location``: a SQLite file or a ``postgresql://`` URL;
    ``clock``: where now is read from (``clock.current_time()``, epoch seconds);
    ``rng``: the backoff's jitter; ``node``: this host's name among those sharing the
    queue."""

    def __init__(self, location: str | Path, clock: Clock, rng: random.Random | None = None,
                 *, node: str = "local") -> None:
        self._db = Database(str(location), application_name=connection_name(node, "jobs"))
        self._db.migrate("jobs", _MIGRATIONS)
        self.clock = clock
        self.rng = rng or random.Random()
        self.node = node

    @property
    def shared(self) -> bool:
        """Is the queue in a database other hosts share (PostgreSQL)?"""
        return self._db.postgres

    def close(self) -> None:
        self._db.close()

    def _row(self, db: Statements, job_id: str) -> dict[str, Any] | None:
        rows = db.run(f"SELECT {_SELECT} FROM jobs WHERE id=?", (job_id,)).rows
        return _fields(rows[0]) if rows else None

    # -- enqueue ------------------------------------------------------------------------------

    def insert(self, spec: JobSpec, *, default_backoff: Backoff) -> tuple[Job, bool]:
        """Store a new job for ``spec`` (already validated): (the job, True); or, when
        ``spec.unique_key`` names a job inserted within ``unique_period`` that is not
        discarded or cancelled, (that job, False)."""
        with self._db.transaction() as db:
            return self._insert(db, spec, default_backoff)

    def insert_many(self, specs: list[JobSpec], *, backoff_of: Callable[[str], Backoff]) -> list[Job]:
        """:meth:`insert` for each of ``specs`` (a job with no backoff of its own gets
        ``backoff_of(its queue)``), in one transaction: the jobs (new or found)."""
        with self._db.transaction() as db:
            return [self._insert(db, spec, backoff_of(spec.queue))[0] for spec in specs]

    def _insert(self, db: Statements, spec: JobSpec, default_backoff: Backoff) -> tuple[Job, bool]:
        now = self.clock.current_time()
        due = spec.scheduled_at if spec.scheduled_at is not None else now + (spec.schedule_in or 0.0)
        payload = {"app_name": spec.app_name, "message": spec.message, "session_id": spec.session_id,
                   "state_delta": spec.state_delta, "function": spec.function, "args": spec.args}
        backoff = spec.backoff or default_backoff
        if spec.unique_key is not None:
            db.lock(f"adk-actors:job:{spec.unique_key}")  # hosts enqueueing the same key: one at a time
            rows = db.run(f"SELECT {_SELECT} FROM jobs WHERE unique_key=? AND inserted_at>=? AND state NOT IN "
                          "('discarded', 'cancelled') ORDER BY inserted_at DESC LIMIT 1",
                          (spec.unique_key, now - spec.unique_period)).rows
            if rows:
                return _job(_fields(rows[0])), False
        job_id = f"job-{uuid.uuid4().hex[:16]}"
        values = (job_id, spec.queue, spec.kind, spec.user_id, "scheduled" if due > now else "available", 0,
                  spec.max_attempts, spec.priority, due, now, json.dumps(payload), spec.timeout, None, None,
                  None, "[]", None, spec.unique_key, json.dumps(spec.meta),
                  json.dumps([backoff.base, backoff.max_delay, backoff.jitter]), None)
        db.run(f"INSERT INTO jobs ({_SELECT}) VALUES ({', '.join('?' * len(_COLUMNS))})", values)
        return _job(_fields(values)), True

    # -- the queue's side ---------------------------------------------------------------------

    def claim(self, queue: str, limit: int) -> list[Job]:
        """Up to ``limit`` due jobs of ``queue`` (priority, then due time, then age),
        now ``executing`` on this node: attempt + 1, leased until now + their timeout.
        Rows another host is claiming at this moment are skipped, never waited for."""
        if limit <= 0:
            return []
        now = self.clock.current_time()
        skip_locked = " FOR UPDATE SKIP LOCKED" if self.shared else ""
        with self._db.transaction() as db:
            rows = db.run(f"UPDATE jobs SET state='executing', attempt=attempt+1, attempted_at=?, "
                          f"lease_until=?+timeout, node=? WHERE id IN (SELECT id FROM jobs WHERE queue=? AND state IN "
                          f"{_DUE} AND scheduled_at<=? ORDER BY priority, scheduled_at, inserted_at LIMIT ?"
                          f"{skip_locked}) RETURNING {_SELECT}", (now, now, self.node, queue, now, limit)).rows
        jobs = [_job(_fields(row)) for row in rows]
        return sorted(jobs, key=lambda job: (job.priority, job.scheduled_at, job.inserted_at))

    def complete(self, job_id: str, attempt: int, result: Any = None) -> bool:
        """The attempt succeeded: ``completed`` with its result (False: not the current attempt)."""
        changed = self._db.run("UPDATE jobs SET state='completed', finished_at=?, lease_until=NULL, result=? "
                               "WHERE id=? AND attempt=? AND state='executing'",
                               (self.clock.current_time(), json.dumps(result, default=str), job_id, attempt)).rowcount
        return bool(changed)

    def fail(self, job_id: str, attempt: int, error: str, *, discard: bool = False) -> bool:
        """The attempt failed: ``retryable`` (due after the job's backoff) or, at its last
        attempt or with ``discard``, ``discarded``; the error is kept."""
        now = self.clock.current_time()
        with self._db.transaction() as db:
            row = self._row(db, job_id)
            if row is None or row["attempt"] != attempt or row["state"] != "executing":
                return False
            job = _job(row)
            errors = [*job.errors, {"attempt": attempt, "at": now, "error": error[:2000]}]
            if discard or attempt >= job.max_attempts:
                db.run("UPDATE jobs SET state='discarded', finished_at=?, lease_until=NULL, errors=? WHERE id=?",
                       (now, json.dumps(errors), job_id))
            else:
                base, max_delay, jitter = json.loads(row["backoff"])
                due = now + backoff_delay(attempt, Backoff(base, max_delay, jitter), self.rng)
                db.run("UPDATE jobs SET state='retryable', scheduled_at=?, lease_until=NULL, errors=? WHERE id=?",
                       (due, json.dumps(errors), job_id))
        return True

    def snooze(self, job_id: str, attempt: int, seconds: float) -> bool:
        """The attempt asked to be tried again in ``seconds``: ``scheduled``, and one more
        attempt allowed (a snooze is not a failure)."""
        now = self.clock.current_time()
        changed = self._db.run("UPDATE jobs SET state='scheduled', scheduled_at=?, lease_until=NULL, "
                               "max_attempts=max_attempts+1 WHERE id=? AND attempt=? AND state='executing'",
                               (now + max(seconds, 0.0), job_id, attempt)).rowcount
        return bool(changed)

    def executing(self) -> list[Job]:
        """The jobs executing on this node (all of them, in a queue no other host shares)."""
        if self.shared:
            rows = self._db.run(f"SELECT {_SELECT} FROM jobs WHERE state='executing' AND node=?", (self.node,)).rows
        else:
            rows = self._db.run(f"SELECT {_SELECT} FROM jobs WHERE state='executing'").rows
        return [_job(_fields(row)) for row in rows]

    def abandoned(self, grace: float) -> list[Job]:
        """The jobs other hosts were executing whose lease ran out over ``grace`` seconds
        ago: their host died (or lost the database) during the attempt. The caller
        fails each (``fail`` names its attempt, so one that ends meanwhile is left alone)."""
        if not self.shared:
            return []
        rows = self._db.run(f"SELECT {_SELECT} FROM jobs WHERE state='executing' AND node<>? AND lease_until<?",
                            (self.node, self.clock.current_time() - grace)).rows
        return [_job(_fields(row)) for row in rows]

    def next_due(self, after: float) -> float | None:
        """When the earliest job waiting for a claim that is due after ``after`` is due
        (None: none is)."""
        rows = self._db.run(f"SELECT MIN(scheduled_at) FROM jobs WHERE state IN {_DUE} AND scheduled_at>?",
                            (after,)).rows
        return float(rows[0][0]) if rows and rows[0][0] is not None else None

    def prune(self, older_than: float) -> int:
        """Delete completed, discarded and cancelled jobs finished over ``older_than`` s ago."""
        return int(self._db.run("DELETE FROM jobs WHERE state IN ('completed', 'discarded', 'cancelled') "
                                "AND finished_at<?", (self.clock.current_time() - older_than,)).rowcount)

    # -- a caller's side ------------------------------------------------------------------------

    def get(self, job_id: str, user_id: str | None = None) -> Job:
        """The job (``user_id``: only if it is theirs); :class:`NotFoundError` otherwise."""
        rows = self._db.run(f"SELECT {_SELECT} FROM jobs WHERE id=?", (job_id,)).rows
        row = _fields(rows[0]) if rows else None
        if row is None or (user_id is not None and row["user_id"] != user_id):
            raise NotFoundError(f"no job {job_id!r}")
        return _job(row)

    def list(self, *, user_id: str | None = None, queue: str | None = None, state: str | None = None,
             limit: int = 100) -> list[Job]:
        """Jobs, newest first, of a user, a queue and a state (None: any)."""
        where, values = [], []
        for column, value in (("user_id", user_id), ("queue", queue), ("state", state)):
            if value is not None:
                where.append(f"{column}=?")
                values.append(value)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._db.run(f"SELECT {_SELECT} FROM jobs {clause} ORDER BY inserted_at DESC LIMIT ?",
                            (*values, max(1, min(limit, 1000)))).rows
        return [_job(_fields(row)) for row in rows]

    def cancel(self, job_id: str, user_id: str | None = None) -> Job:
        """``cancelled`` (an executing job too: its attempt's answer then changes nothing);
        a finished job is left as it is. The job as it is now."""
        self.get(job_id, user_id)
        self._db.run("UPDATE jobs SET state='cancelled', finished_at=?, lease_until=NULL WHERE id=? AND state "
                     "NOT IN ('completed', 'discarded', 'cancelled')", (self.clock.current_time(), job_id))
        return self.get(job_id)

    def retry(self, job_id: str, user_id: str | None = None) -> Job:
        """Due now again: a job that is not executing becomes ``available`` (with one more
        attempt if it had used them all)."""
        job = self.get(job_id, user_id)
        if job.state == "executing":
            raise InvalidRequestError(f"job {job_id!r} is executing")
        self._db.run("UPDATE jobs SET state='available', scheduled_at=?, finished_at=NULL, max_attempts=? "
                     "WHERE id=? AND state<>'executing'",
                     (self.clock.current_time(), max(job.max_attempts, job.attempt + 1), job_id))
        return self.get(job_id)

    def discard(self, job_id: str, user_id: str | None = None) -> Job:
        """``discarded`` unless finished or executing."""
        job = self.get(job_id, user_id)
        if job.state == "executing":
            raise InvalidRequestError(f"job {job_id!r} is executing: cancel it")
        if job.state not in FINISHED:
            self._db.run("UPDATE jobs SET state='discarded', finished_at=? WHERE id=? AND state<>'executing'",
                         (self.clock.current_time(), job_id))
        return self.get(job_id)


def _fields(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of ``_SELECT`` (or an insert's values) by column name."""
    return dict(zip(_COLUMNS, row, strict=True))


def _job(data: dict[str, Any]) -> Job:
    return Job(id=data["id"], queue=data["queue"], kind=data["kind"], user_id=data["user_id"], state=data["state"],
               attempt=data["attempt"], max_attempts=data["max_attempts"], priority=data["priority"],
               scheduled_at=data["scheduled_at"], inserted_at=data["inserted_at"], payload=json.loads(data["payload"]),
               timeout=data["timeout"], attempted_at=data["attempted_at"], finished_at=data["finished_at"],
               lease_until=data["lease_until"], errors=tuple(json.loads(data["errors"])),
               result=json.loads(data["result"]) if data["result"] is not None else None,
               unique_key=data["unique_key"], meta=json.loads(data["meta"]), node=data.get("node"))
