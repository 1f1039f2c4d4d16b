"""The background jobs of a soak (``--jobs``): the job itself (:func:`soak_job`,
run by the host's jobs actor as ``adk_actors.chaos:soak_job``), their enqueueing
while the faults go on, and the count of how they ended, into the report.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections import Counter
from pathlib import Path

from .._exceptions import AdkError
from ..jobs import FINISHED, Backoff, JobInfo, JobSpec
from ..runtime import Host
from ._report import SoakReport


def soak_job(lock_dir: str, log: str, seconds: float = 0.05, job: JobInfo | None = None) -> str:
    """A background job of the soak: holds its job's lock (``flock`` on
    ``lock_dir/<job id>``, released by the kernel when its process dies) while it works
    ``seconds``; an attempt that finds the lock taken notes ``overlap`` in ``log`` and
    fails. One that ran to its end notes ``done``."""
    assert job is not None
    descriptor = os.open(Path(lock_dir) / job.id, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _note(log, f"overlap {job.id} {job.attempt}")
            raise RuntimeError(f"another attempt of {job.id} is running") from None
        time.sleep(seconds)
        _note(log, f"done {job.id} {job.attempt}")
        return "done"
    finally:
        os.close(descriptor)


def _note(log: str, line: str) -> None:
    with open(log, "a") as out:
        out.write(line + "\n")


def _enqueue_soak_jobs(host: Host, count: int, duration: float, tag: str, folder: Path, ids: list[str]) -> None:
    """Enqueue ``count`` soak jobs in batches spread over ``duration``; an enqueue that
    fails (the jobs actor killed) is asked again, its unique keys making it safe."""
    batch = 5
    backoff = Backoff(base=0.05, max_delay=0.5, jitter=0.2)
    deadline = time.monotonic() + 3 * duration + 30.0
    for start in range(0, count, batch):
        specs = [JobSpec(kind="function", function="adk_actors.chaos:soak_job", user_id="chaos-soak",
                         args={"lock_dir": str(folder), "log": str(folder / "log"), "seconds": 0.05},
                         unique_key=f"soak-{tag}-{number}", unique_period=3600.0, max_attempts=100,
                         backoff=backoff, timeout=10.0)
                 for number in range(start, min(count, start + batch))]
        while time.monotonic() < deadline:
            try:
                ids.extend(job.id for job in host.jobs.enqueue_many(specs))
                break
            except AdkError:
                time.sleep(0.1)
        time.sleep(duration * batch / count)


def _settle_soak_jobs(host: Host, report: SoakReport, count: int, ids: list[str], folder: Path,
                      timeout: float) -> None:
    """Wait (``timeout``) for every soak job to finish; count them and their overlaps."""
    report.jobs = count
    wanted = list(dict.fromkeys(ids))
    deadline = time.monotonic() + timeout
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        try:
            states = {job_id: host.jobs.get(job_id).state for job_id in wanted}
        except AdkError:
            time.sleep(0.2)
            continue
        if len(wanted) == count and all(state in FINISHED for state in states.values()):
            break
        time.sleep(0.2)
    report.jobs_completed = sum(1 for state in states.values() if state == "completed")
    report.jobs_discarded = sum(1 for state in states.values() if state == "discarded")
    report.jobs_unfinished = count - report.jobs_completed - report.jobs_discarded
    left = Counter(state for state in states.values() if state not in FINISHED)
    left["never enqueued"] = count - len(wanted)
    report.jobs_unfinished_states = {state: n for state, n in left.items() if n}
    lines = (folder / "log").read_text().splitlines() if (folder / "log").exists() else []
    report.jobs_overlaps = sum(1 for line in lines if line.startswith("overlap"))
    report.jobs_attempts = sum(1 for line in lines if line.startswith("done"))
    shutil.rmtree(folder, ignore_errors=True)
