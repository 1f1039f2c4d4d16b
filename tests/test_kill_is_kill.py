"""A kill is a kill (issue 53, item 1): no caller hears that a run ended while its work
goes on. On a real host, real processes: a tool that appends a line to a file every
100 ms and cannot be stopped at a step boundary (it blocks on its thread) is killed
(``Runner.kill_run`` and ``chaos kill``), cancelled, or cut by its session's crash.
Its caller's terminal message comes, and the file does not grow after it: the run's
worker process was killed past ``run_stop_grace`` before the caller was told. The
other run on that worker (the host has one) ends ``interrupted`` (``RunWorkerKilled``)
and its app resumes it to the end. And a background job's next attempt, after kill -9
of the ``jobs`` actor, starts only once the last attempt's process is gone."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import kill_agents
import pytest
from kept_host import KeptHost, kept_hosts, tree_running

from adk_actors import RunFailedError
from adk_actors.chaos import kill_row, tree_rows
from adk_actors.jobs import Backoff, JobsConfig
from adk_actors.messages import LiveWorkers
from adk_actors.runtime import Host, HostConfig
from supervision import SupervisorClient, call
from supervision.lowlevel import process_alive
from supervision.testing import wait_until

GRACE = 1.0  # run_stop_grace: short, to keep the tests short


def settled(host: Host) -> bool:
    """The tree whole, and the partition's connected workers exactly its pool's one
    (a killed worker replaced, a retired one gone)."""
    assert host.root is not None
    try:
        pool = SupervisorClient(host.system, host.root.child("run_pools").address, timeout=2.0).child("pool-0")
        connected = call(host.system, host.partitions(refresh=True)[0], LiveWorkers(), timeout=2)
        started = call(host.system, pool.address, LiveWorkers(), timeout=2)
    except Exception:  # a supervisor restarting
        return False
    return tree_running(host) and len(connected) == 1 and sorted(connected) == sorted(started)


kept = kept_hosts("kill-is-kill", whole=settled)


@pytest.fixture
def host(kept: KeptHost) -> Iterator[Host]:
    """One partition with one run worker: every run shares it. Kept from test to test
    (:class:`KeptHost`): each test's kills end with its worker replaced, and the next
    test is handed the host once :func:`settled`."""
    config = partial(HostConfig, apps=kill_agents.APPS, partitions=1, run_workers=1, run_stop_grace=GRACE)
    with kept.host("one-worker", lambda data: config(data_dir=str(data))) as running:
        yield running


@pytest.fixture
def who(kept: KeptHost) -> str:
    """A suffix of the test's own for its users and run ids on the kept host."""
    return kept.tag()


def size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


class Turn:
    """A turn run on a thread; at its end (events, or the RunFailedError it raised), the
    size of ``marks`` at that very moment."""

    def __init__(self, runner: Any, user: str, session: str, text: str, marks: Path | None = None,
                 run_id: str | None = None) -> None:
        self.events: list[Any] | None = None
        self.error: RunFailedError | None = None
        self.size_at_end = -1
        self.marks = marks
        self.thread = threading.Thread(target=self._turn, args=(runner, user, session, text, run_id))
        self.thread.start()

    def _turn(self, runner: Any, user: str, session: str, text: str, run_id: str | None) -> None:
        try:
            self.events = list(runner.run(user, session, text, run_id=run_id))
        except RunFailedError as exc:
            self.error = exc
        if self.marks is not None:
            self.size_at_end = size(self.marks)

    def join(self, timeout: float = 30.0) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the turn did not end"


def napping(patient: Any, user: str, session: str) -> bool:
    """Is the patient's nap call on record (a call is, before its tool runs)?"""
    return any(e.content is not None and e.content.function_calls
               for e in patient.get_session(user, session).events)


def start_victim_and_bystander(host: Host, tmp_path: Path, who: str) -> tuple[Path, Turn, Turn, Any]:
    """A marker run (30 s of marks; user ``ann-<who>``, run ``run-victim-<who>``), then,
    once its marks flow, a patient run (user ``bob-<who>``: a 6 s nap, and its resumed
    run's nap again: it still naps when the victim's grace ends, even on a loaded
    machine) on the one worker, both in their tools."""
    marks = tmp_path / "marks"
    marker, patient = host.runner("marker"), host.runner("patient", follow_resumes=False)
    marker.create_session(f"ann-{who}", "m")
    patient.create_session(f"bob-{who}", "p")
    victim = Turn(marker, f"ann-{who}", "m", f"mark {marks} 30", marks=marks, run_id=f"run-victim-{who}")
    wait_until(lambda: size(marks) > 0, timeout=15, message="the marker's first mark")
    bystander = Turn(patient, f"bob-{who}", "p", "nap 6")
    wait_until(lambda: napping(patient, f"bob-{who}", "p"), timeout=15, message="the patient's nap begun")
    assert len(call(host.system, host.partitions()[0], LiveWorkers())) == 1  # one worker holds both
    return marks, victim, bystander, patient


def check_stopped_and_resumed(marks: Path, victim: Turn, bystander: Turn, patient: Any, reason: str,
                              who: str) -> None:
    """(a) the victim's caller got its end; (b) no mark after it; (c) the bystander ended
    interrupted, was resumed, and the resuming run completes."""
    victim.join()
    assert victim.error is not None and victim.error.reason == reason, victim.error
    writers = {int(line.split()[0]) for line in marks.read_text().splitlines()}
    wait_until(lambda: not any(process_alive(pid) for pid in writers), timeout=5,
               message="the marks' writer gone")  # (the caller was told once it was dead)
    assert size(marks) == victim.size_at_end > 0  # nothing written after the caller was told
    bystander.join()
    failed = bystander.error
    assert failed is not None and (failed.reason, failed.error_type) == ("interrupted", "RunWorkerKilled"), failed
    assert failed.resumed_as
    resumed = list(patient.follow(f"bob-{who}", "p", failed.resumed_as))
    assert resumed[-1].content.text == "rested well"


@pytest.mark.parametrize("how", ["runner", "chaos"])
def test_a_killed_run_ends_only_once_its_tool_stopped_and_its_bystander_is_resumed(
        host: Host, tmp_path: Path, how: str, who: str) -> None:
    marks, victim, bystander, patient = start_victim_and_bystander(host, tmp_path, who)
    if how == "runner":
        host.runner("marker").kill_run(f"ann-{who}", "m", f"run-victim-{who}")
    else:
        row = next(r for r in tree_rows(host, timeout=3.0) if r["type"] == "run" and r["user"] == f"ann-{who}")
        kill_row(host, row)
    check_stopped_and_resumed(marks, victim, bystander, patient, "killed", who)
    assert victim.error is not None and victim.error.error_type == "RunKilled"


def test_a_cancelled_run_that_does_not_stop_ends_once_its_worker_is_dead(host: Host, tmp_path: Path,
                                                                          who: str) -> None:
    marks, victim, bystander, patient = start_victim_and_bystander(host, tmp_path, who)
    host.runner("marker").cancel(f"run-victim-{who}", user_id=f"ann-{who}", session_id="m")
    check_stopped_and_resumed(marks, victim, bystander, patient, "cancelled", who)


def test_a_run_cut_by_its_sessions_crash_ends_once_its_worker_is_dead(host: Host, tmp_path: Path, who: str) -> None:
    marks, victim, bystander, patient = start_victim_and_bystander(host, tmp_path, who)
    host.runner("marker").crash_session(f"ann-{who}", "m", "crashed by the test")
    check_stopped_and_resumed(marks, victim, bystander, patient, "interrupted", who)


def test_a_killed_run_that_stops_in_its_grace_spares_the_runs_beside_it(host: Host, tmp_path: Path, who: str) -> None:
    """A run that stops within its grace (its tool returns) ends ``killed`` once it has,
    and the run beside it goes on to its end on the same worker. That worker, still
    running the killed turn ``STOP_NOTICE`` after it was told, may have been retired
    (no new turn for it, a replacement started): it is stopped only once its turns end."""
    marks = tmp_path / "marks"
    marker, patient = host.runner("marker"), host.runner("patient", follow_resumes=False)
    marker.create_session(f"ann-{who}", "m")
    patient.create_session(f"bob-{who}", "p")
    workers = call(host.system, host.partitions()[0], LiveWorkers())
    bystander = Turn(patient, f"bob-{who}", "p", "nap 3")
    victim = Turn(marker, f"ann-{who}", "m", f"mark {marks} 0.5", marks=marks, run_id=f"run-short-{who}")
    wait_until(lambda: size(marks) > 0, timeout=15, message="the marker's first mark")
    marker.kill_run(f"ann-{who}", "m", f"run-short-{who}")
    victim.join()
    assert victim.error is not None and victim.error.reason == "killed"
    time.sleep(0.5)
    assert size(marks) == victim.size_at_end
    bystander.join()
    assert bystander.error is None and bystander.events is not None
    assert bystander.events[-1].content.text == "rested well"
    now = call(host.system, host.partitions()[0], LiveWorkers())
    assert len(now) == len(workers)  # kept, or replaced one for one
    if now != workers:  # retired: stopped once the bystander's turn had ended (above), not killed under it
        wait_until(lambda: not any(process_alive(pid) for pid in workers), timeout=30,
                   message="the retired worker stopped")


def test_a_jobs_next_attempt_starts_only_after_the_last_ones_process_is_gone(actor_system: Any,
                                                                             tmp_path: Path) -> None:
    """kill -9 of the ``jobs`` actor mid-run: the agent job's first attempt is stopped
    (its run cancelled; its worker killed past the grace) before the second starts: the
    second attempt's first mark comes after the first attempt's last."""
    marks = tmp_path / "marks"
    jobs = JobsConfig(queues={"default": 2}, backoff=Backoff(base=0.05, max_delay=0.2, jitter=0.0), tick=0.2)
    config = HostConfig(apps=kill_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        run_stop_grace=GRACE, jobs=jobs)
    with Host(config, system=actor_system) as host:
        job = host.jobs.enqueue_run("marker", f"mark {marks} 8", user_id="ann")
        wait_until(lambda: size(marks) > 0, timeout=15, message="the first attempt's first mark")
        actor = host.root.pids()["jobs"]  # type: ignore[union-attr]
        assert actor is not None
        os.kill(actor, signal.SIGKILL)
        wait_until(lambda: not process_alive(actor), timeout=5)
        wait_until(lambda: host.jobs.get(job.id).state in ("completed", "discarded"), timeout=60,
                   message="the job finished")
        done = host.jobs.get(job.id)
    assert (done.state, done.attempt) == ("completed", 2), done
    assert done.errors[0]["error"].startswith("interrupted")
    attempts: dict[tuple[str, str], list[float]] = {}
    for line in marks.read_text().splitlines():
        pid, thread, at = line.split()
        attempts.setdefault((pid, thread), []).append(float(at))
    spans = sorted((min(times), max(times)) for times in attempts.values())
    assert len(spans) == 2, spans
    (_, first_last), (second_first, _) = spans
    assert second_first > first_last, f"the attempts overlapped by {first_last - second_first:.3f} s"
    # the first attempt was given up (so that a next one could start) only once its work had stopped
    assert done.errors[0]["at"] > first_last, f"given up {first_last - done.errors[0]['at']:.3f} s before it stopped"


def test_a_bad_run_stop_grace_is_refused_from_python_and_from_toml(tmp_path: Path) -> None:
    from adk_actors import HostError
    from adk_actors.config import ConfigError, load_settings

    for bad in (0, -1.0, 601, "2", True):
        with pytest.raises(HostError, match="run_stop_grace"):
            HostConfig(apps=kill_agents.APPS, run_stop_grace=bad)  # type: ignore[arg-type]
    toml = tmp_path / "host.toml"
    toml.write_text("[host]\nrun_stop_grace = 0\n")
    with pytest.raises(ConfigError, match="run_stop_grace"):
        load_settings(toml)
    toml.write_text("[host]\nrun_stop_grace = 0.5\n")
    assert load_settings(toml).host.run_stop_grace == 0.5
