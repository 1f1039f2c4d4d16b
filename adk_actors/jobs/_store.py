"""The jobs of a host in SQLite (``jobs.db`` in its data folder, private), the one
truth of every job's state. The clock is passed in (epoch seconds), so schedules,
backoff, leases and uniqueness are tested exactly, without sleeping.

Each change is one transaction (``BEGIN IMMEDIATE``). Changes to an executing job
name the attempt they are about (``complete``, ``fail``, ``snooze``): one about an
attempt that is no longer the current one changes nothing, so a late answer of an
attempt given up on cannot overwrite the next.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._exceptions import InvalidRequestError, NotFoundError
from .._files import private_file
from ._model import FINISHED, Backoff, Job, JobSpec, backoff_delay

__all__ = ["JobStore"]

_COLUMNS = ("id", "queue", "kind", "user_id", "state", "attempt", "max_attempts", "priority", "scheduled_at",
            "inserted_at", "payload", "timeout", "attempted_at", "finished_at", "lease_until", "errors", "result",
            "unique_key", "meta", "backoff")
_DUE = ("available", "scheduled", "retryable")


class JobStore:
    """See the module. ``clock()``: now, in epoch seconds; ``rng``: the backoff's jitter."""

    def __init__(self, path: str | Path, clock: Callable[[], float], rng: random.Random | None = None) -> None:
        private_file(path)
        self._db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, queue TEXT NOT NULL, kind TEXT NOT NULL, "
            "user_id TEXT NOT NULL, state TEXT NOT NULL, attempt INTEGER NOT NULL, max_attempts INTEGER NOT NULL, "
            "priority INTEGER NOT NULL, scheduled_at REAL NOT NULL, inserted_at REAL NOT NULL, payload TEXT NOT NULL, "
            "timeout REAL NOT NULL, attempted_at REAL, finished_at REAL, lease_until REAL, errors TEXT NOT NULL, "
            "result TEXT, unique_key TEXT, meta TEXT NOT NULL, backoff TEXT NOT NULL)")
        # Partial indexes over the jobs waiting for a claim (the query says the same
        # WHERE): a claim and the next due time read a few rows, never sort them all.
        self._db.execute(f"CREATE INDEX IF NOT EXISTS jobs_claim ON jobs (queue, priority, scheduled_at, inserted_at) "
                         f"WHERE state IN {_DUE}")
        self._db.execute(f"CREATE INDEX IF NOT EXISTS jobs_next ON jobs (scheduled_at) WHERE state IN {_DUE}")
        self._db.execute("CREATE INDEX IF NOT EXISTS jobs_unique ON jobs (unique_key, inserted_at)")
        self._lock = threading.Lock()
        self.clock = clock
        self.rng = rng or random.Random()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- enqueue ------------------------------------------------------------------------------

    def insert(self, spec: JobSpec, *, default_backoff: Backoff) -> tuple[Job, bool]:
        """Store a new job for ``spec`` (already validated): (the job, True); or, when
        ``spec.unique_key`` names a job inserted within ``unique_period`` that is not
        discarded or cancelled, (that job, False)."""
        with self._write() as db:
            return self._insert(db, spec, default_backoff)

    def insert_many(self, specs: list[JobSpec], *, backoff_of: Callable[[str], Backoff]) -> list[Job]:
        """:meth:`insert` for each of ``specs`` (a job with no backoff of its own gets
        ``backoff_of(its queue)``), in one transaction: the jobs (new or found)."""
        with self._write() as db:
            return [self._insert(db, spec, backoff_of(spec.queue))[0] for spec in specs]

    def _insert(self, db: sqlite3.Connection, spec: JobSpec, default_backoff: Backoff) -> tuple[Job, bool]:
        now = self.clock()
        due = spec.scheduled_at if spec.scheduled_at is not None else now + (spec.schedule_in or 0.0)
        payload = {"app_name": spec.app_name, "message": spec.message, "session_id": spec.session_id,
                   "state_delta": spec.state_delta, "function": spec.function, "args": spec.args}
        backoff = spec.backoff or default_backoff
        if spec.unique_key is not None:
            row = db.execute("SELECT * FROM jobs WHERE unique_key=? AND inserted_at>=? AND state NOT IN "
                             "('discarded', 'cancelled') ORDER BY inserted_at DESC LIMIT 1",
                             (spec.unique_key, now - spec.unique_period)).fetchone()
            if row is not None:
                return _job(row), False
        job_id = f"job-{uuid.uuid4().hex[:16]}"
        row = db.execute(f"INSERT INTO jobs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
                         "RETURNING *",
                         (job_id, spec.queue, spec.kind, spec.user_id, "scheduled" if due > now else "available", 0,
                          spec.max_attempts, spec.priority, due, now, json.dumps(payload), spec.timeout, None, None,
                          None, "[]", None, spec.unique_key, json.dumps(spec.meta),
                          json.dumps([backoff.base, backoff.max_delay, backoff.jitter]))).fetchone()
        return _job(row), True

    # -- the queue's side ---------------------------------------------------------------------

    def claim(self, queue: str, limit: int) -> list[Job]:
        """Up to ``limit`` due jobs of ``queue`` (priority, then due time, then age),
        now ``executing``: attempt + 1, leased until now + their timeout."""
        if limit <= 0:
            return []
        now = self.clock()
        with self._write() as db:
            rows = db.execute(f"SELECT id FROM jobs WHERE queue=? AND state IN {_DUE} AND scheduled_at<=? "
                              "ORDER BY priority, scheduled_at, inserted_at LIMIT ?", (queue, now, limit)).fetchall()
            ids = [r[0] for r in rows]
            for job_id in ids:
                db.execute("UPDATE jobs SET state='executing', attempt=attempt+1, attempted_at=?, "
                           "lease_until=?+timeout WHERE id=?", (now, now, job_id))
            claimed = [db.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone() for job_id in ids]
        return [_job(row) for row in claimed]

    def complete(self, job_id: str, attempt: int, result: Any = None) -> bool:
        """The attempt succeeded: ``completed`` with its result (False: not the current attempt)."""
        with self._write() as db:
            changed = db.execute("UPDATE jobs SET state='completed', finished_at=?, lease_until=NULL, result=? "
                                 "WHERE id=? AND attempt=? AND state='executing'",
                                 (self.clock(), json.dumps(result, default=str), job_id, attempt)).rowcount
        return bool(changed)

    def fail(self, job_id: str, attempt: int, error: str, *, discard: bool = False) -> bool:
        """The attempt failed: ``retryable`` (due after the job's backoff) or, at its last
        attempt or with ``discard``, ``discarded``; the error is kept."""
        now = self.clock()
        with self._write() as db:
            row = db.execute("SELECT * FROM jobs WHERE id=? AND attempt=? AND state='executing'",
                             (job_id, attempt)).fetchone()
            if row is None:
                return False
            job = _job(row)
            errors = [*job.errors, {"attempt": attempt, "at": now, "error": error[:2000]}]
            if discard or attempt >= job.max_attempts:
                db.execute("UPDATE jobs SET state='discarded', finished_at=?, lease_until=NULL, errors=? WHERE id=?",
                           (now, json.dumps(errors), job_id))
            else:
                base, max_delay, jitter = json.loads(row["backoff"])
                due = now + backoff_delay(attempt, Backoff(base, max_delay, jitter), self.rng)
                db.execute("UPDATE jobs SET state='retryable', scheduled_at=?, lease_until=NULL, errors=? "
                           "WHERE id=?", (due, json.dumps(errors), job_id))
        return True

    def snooze(self, job_id: str, attempt: int, seconds: float) -> bool:
        """The attempt asked to be tried again in ``seconds``: ``scheduled``, and one more
        attempt allowed (a snooze is not a failure)."""
        now = self.clock()
        with self._write() as db:
            changed = db.execute("UPDATE jobs SET state='scheduled', scheduled_at=?, lease_until=NULL, "
                                 "max_attempts=max_attempts+1 WHERE id=? AND attempt=? AND state='executing'",
                                 (now + max(seconds, 0.0), job_id, attempt)).rowcount
        return bool(changed)

    def executing(self) -> list[Job]:
        return [_job(r) for r in self._db.execute("SELECT * FROM jobs WHERE state='executing'").fetchall()]

    def next_due(self, after: float) -> float | None:
        """When the earliest job waiting for a claim that is due after ``after`` is due
        (None: none is)."""
        row = self._db.execute(f"SELECT MIN(scheduled_at) FROM jobs WHERE state IN {_DUE} AND scheduled_at>?",
                               (after,)).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def prune(self, older_than: float) -> int:
        """Delete completed, discarded and cancelled jobs finished over ``older_than`` s ago."""
        with self._write() as db:
            return int(db.execute("DELETE FROM jobs WHERE state IN ('completed', 'discarded', 'cancelled') "
                                  "AND finished_at<?", (self.clock() - older_than,)).rowcount)

    # -- a caller's side ------------------------------------------------------------------------

    def get(self, job_id: str, user_id: str | None = None) -> Job:
        """The job (``user_id``: only if it is theirs); :class:`NotFoundError` otherwise."""
        row = self._db.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone()
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
        rows = self._db.execute(f"SELECT * FROM jobs {clause} ORDER BY inserted_at DESC LIMIT ?",
                                (*values, max(1, min(limit, 1000)))).fetchall()
        return [_job(r) for r in rows]

    def cancel(self, job_id: str, user_id: str | None = None) -> Job:
        """``cancelled`` (an executing job too: its attempt's answer then changes nothing);
        a finished job is left as it is. The job as it is now."""
        self.get(job_id, user_id)
        with self._write() as db:
            db.execute("UPDATE jobs SET state='cancelled', finished_at=?, lease_until=NULL WHERE id=? AND state "
                       "NOT IN ('completed', 'discarded', 'cancelled')", (self.clock(), job_id))
        return self.get(job_id)

    def retry(self, job_id: str, user_id: str | None = None) -> Job:
        """Due now again: a job that is not executing becomes ``available`` (with one more
        attempt if it had used them all)."""
        job = self.get(job_id, user_id)
        if job.state == "executing":
            raise InvalidRequestError(f"job {job_id!r} is executing")
        with self._write() as db:
            db.execute("UPDATE jobs SET state='available', scheduled_at=?, finished_at=NULL, "
                       "max_attempts=MAX(max_attempts, attempt+1) WHERE id=?", (self.clock(), job_id))
        return self.get(job_id)

    def discard(self, job_id: str, user_id: str | None = None) -> Job:
        """``discarded`` unless finished or executing."""
        job = self.get(job_id, user_id)
        if job.state == "executing":
            raise InvalidRequestError(f"job {job_id!r} is executing: cancel it")
        if job.state not in FINISHED:
            with self._write() as db:
                db.execute("UPDATE jobs SET state='discarded', finished_at=? WHERE id=?", (self.clock(), job_id))
        return self.get(job_id)


def _job(row: sqlite3.Row) -> Job:
    data = dict(row)
    return Job(id=data["id"], queue=data["queue"], kind=data["kind"], user_id=data["user_id"], state=data["state"],
               attempt=data["attempt"], max_attempts=data["max_attempts"], priority=data["priority"],
               scheduled_at=data["scheduled_at"], inserted_at=data["inserted_at"], payload=json.loads(data["payload"]),
               timeout=data["timeout"], attempted_at=data["attempted_at"], finished_at=data["finished_at"],
               lease_until=data["lease_until"], errors=tuple(json.loads(data["errors"])),
               result=json.loads(data["result"]) if data["result"] is not None else None,
               unique_key=data["unique_key"], meta=json.loads(data["meta"]))
