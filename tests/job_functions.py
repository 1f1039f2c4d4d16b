"""Functions run as background jobs in the tests. Each appends a line to the file its
args name, outside the host, so that a test counts how often (and how) it ran."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from adk_actors.jobs import Discard, JobInfo, Snooze


def record(log: str, value: Any = None, job: JobInfo | None = None) -> dict[str, Any]:
    """Log ``start <job> <attempt>`` and ``end ...`` around nothing; answer the value."""
    assert job is not None
    with open(log, "a") as out:
        out.write(f"start {job.id} {job.attempt}\nend {job.id} {job.attempt}\n")
    return {"value": value, "attempt": job.attempt}


def slow(log: str, seconds: float, job: JobInfo | None = None) -> str:
    """Log its start, sleep, log its end (a kill -9 in between leaves a start alone)."""
    assert job is not None
    with open(log, "a") as out:
        out.write(f"start {job.id} {job.attempt}\n")
    time.sleep(seconds)
    with open(log, "a") as out:
        out.write(f"end {job.id} {job.attempt}\n")
    return "slept"


def flaky(log: str, fail_times: int, job: JobInfo | None = None) -> str:
    """Fail its first ``fail_times`` attempts."""
    assert job is not None
    with open(log, "a") as out:
        out.write(f"start {job.id} {job.attempt}\n")
    if job.attempt <= fail_times:
        raise RuntimeError(f"attempt {job.attempt} failed on purpose")
    return "finally"


def snoozing(log: str, job: JobInfo | None = None) -> str:
    assert job is not None
    lines = Path(log).read_text().splitlines() if Path(log).exists() else []
    with open(log, "a") as out:
        out.write(f"start {job.id} {job.attempt}\n")
    if not lines:
        raise Snooze(0.2)
    return "awake"


def hopeless() -> None:
    raise Discard("nothing to do")


def noop() -> None:
    return None
