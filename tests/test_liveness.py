"""Liveness (issue 30): an actor that is alive but no longer answers (kill -STOP, or stuck
in a handler) is found by its parent's health check, killed, restarted and logged, and
``status`` says why it was restarted. Real processes, real signals, a real SQLite lock.

The hosts here check every 0.5 s with a 2 s timeout (the default is 1 s and 5 s), so a
stopped actor is found within about 2.5 s; the tests wait on what the tree reports,
never on a wall-clock budget, and their deadlines for work (a restart) are stretched by
the machine's load (``load_scaled``), as the health checks' no-CPU windows are.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import runtime_agents
from conftest import turn_in_background
from kept_host import KeptHost, kept_hosts

from adk_actors import RunFailedError
from adk_actors.chaos import tree_rows
from adk_actors.messages import WorkerRuns
from adk_actors.runtime import Host, HostConfig
from adk_actors.store._wal import BUSY_SECONDS
from supervision import call
from supervision.lowlevel import (
    HealthCheck,
    HealthMonitor,
    ProcessProgress,
    load_scaled,
    process_alive,
)
from supervision.protocol import OsPid
from supervision.testing import wait_until

FAST = HealthCheck(interval=0.5, timeout=2.0)
#: For the partition stuck in SQLite's busy handler: that handler wakes every 100 ms to
#: try the lock again, a CPU tick every 20-30 s, which a no-CPU window of FAST's, 20 s
#: under load (x10), often sees (and takes the partition for busy); a 5 s window seldom
#: does, and finds it stuck well inside the store's busy wait (``BUSY_SECONDS``), while
#: it is still stuck, whatever the load.
TIGHT = HealthCheck(interval=0.25, timeout=0.5)


def host_config(tmp_path: Path, health: HealthCheck) -> HostConfig:
    return HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), health=health, partitions=2)


kept = kept_hosts("liveness")


@pytest.fixture
def checked_host(kept: KeptHost) -> Iterator[Host]:
    """A host checked every 0.5 s (``FAST``), kept from test to test (:class:`KeptHost`:
    the actors stopped or killed here are restarted, and the next test is handed the
    host once its tree is whole again); each test talks as a user of its own."""
    with kept.host("fast", lambda folder: host_config(folder, FAST)) as running:
        yield running


@pytest.fixture
def fresh_checked_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    """A host checked every 0.5 s (``FAST``) of the test's own: its pools as they start."""
    with Host(host_config(tmp_path, FAST), system=actor_system) as running:
        yield running


@pytest.fixture
def tightly_checked_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    with Host(host_config(tmp_path, TIGHT), system=actor_system) as running:
        yield running


def row(host: Host, path: str) -> dict[str, Any]:
    return next(r for r in tree_rows(host, timeout=load_scaled(3.0)) if r["path"] == path)


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """SIGSTOP ``pid``; on the way out SIGCONT it if it still exists (never leave a
    stopped process for the teardown to wait on)."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        if process_alive(pid):
            os.kill(pid, signal.SIGCONT)


def restarted_unresponsive(host: Host, path: str, old_pid: int) -> dict[str, Any]:
    """Wait until the tree shows ``path`` running again with a new pid; return its row."""
    found: dict[str, Any] = {}

    def back() -> bool:
        try:
            current = row(host, path)
        except Exception:  # the tree is restarting
            return False
        found.update(current)
        return current["status"] == "running" and current["pid"] not in (None, old_pid)

    wait_until(back, timeout=load_scaled(30.0))
    return found


def test_a_stopped_partition_is_found_killed_and_restarted_and_its_sessions_serve_again(checked_host: Host) -> None:
    runner = checked_host.runner("echo")
    sessions = [f"s{i}" for i in range(8)]
    for session in sessions:
        runner.create_session("ann", session)
    victim_index = 0
    victim_path = f"sessions/sessions-{victim_index}"
    old_pid = row(checked_host, victim_path)["pid"]
    ours = [s for s in sessions if checked_host.partition_for("echo", "ann", s) == checked_host.partitions()[0]]
    others = [s for s in sessions if s not in ours]
    assert ours and others
    with stopped(old_pid):
        # The other partition's sessions are not held up while this one is stopped.
        for session in others:
            assert list(runner.run("ann", session, "while the other is stopped"))
        # A turn on a stopped partition's session waits for its restart, then runs.
        events = list(runner.run("ann", ours[0], "after the restart"))
        assert events[-1].content.text.startswith("echo: after the restart")
    current = restarted_unresponsive(checked_host, victim_path, old_pid)
    assert not process_alive(old_pid)
    assert current["restarts"] >= 1 and "unresponsive" in (current["last_exit"] or "")
    for session in sessions:  # every session reads, and what was said survived
        talked = session in others or session == ours[0]
        assert bool(runner.get_session("ann", session).events) == talked


def test_a_stopped_run_worker_ends_its_runs_killed_and_the_next_turn_works(checked_host: Host) -> None:
    runner = checked_host.runner("sleepy")
    runner.create_session("bob", "b1")
    partition = checked_host.partition_for("sleepy", "bob", "b1")
    caller, outcome = turn_in_background(runner, "bob", "b1", "sleep 30")

    def busy_worker() -> int | None:
        holders: dict[int, list[str]] = call(checked_host.system, partition, WorkerRuns())
        return next((pid for pid, runs in holders.items() if runs), None)

    worker = wait_until(busy_worker, timeout=10)
    with stopped(worker):
        caller.join(30)
        assert not caller.is_alive()
    failure = outcome[0]
    assert isinstance(failure, RunFailedError) and failure.reason == "killed"
    assert failure.error_type == "RunActorUnresponsive"
    assert not process_alive(worker)  # its caller heard of the end only once it was dead
    assert list(runner.run("bob", "b1", "hello"))  # another worker took its place


def test_a_stopped_service_is_restarted_and_answers_again(checked_host: Host) -> None:
    runner = checked_host.runner("notes")
    runner.create_session("cy", "c1")
    old_pid = row(checked_host, "services/artifacts")["pid"]
    with stopped(old_pid):
        current = restarted_unresponsive(checked_host, "services/artifacts", old_pid)
    assert "unresponsive" in (current["last_exit"] or "")
    from adk_actors import Part

    assert runner.save_artifact("cy", "c1", "a.txt", Part(text="kept")) == 0
    assert runner.load_artifact("cy", "c1", "a.txt").text == "kept"


def test_a_partition_stuck_in_a_handler_is_killed_and_the_call_is_served_by_its_restart(
        tightly_checked_host: Host, tmp_path: Path) -> None:
    """Another process holds SQLite's write lock: a state update waits in the store's
    busy handler (``BUSY_SECONDS``), so the partition is stuck inside that one handler.
    Its health check finds it (while it is stuck: before the busy wait ends, whatever
    the load), and it is killed and restarted (the caller's retry would get the
    restarted one stuck too, for as long as the lock is held); once the lock is let go,
    the update is served by the restarted partition (the caller never saw one die: its
    call's deadline covers the busy wait and a restart at this load)."""
    host = tightly_checked_host
    runner = host.runner("echo", call_timeout=BUSY_SECONDS + load_scaled(30.0))
    runner.create_session("dan", "d1")
    path = f"sessions/sessions-{host.partitions().index(host.partition_for('echo', 'dan', 'd1'))}"
    old_pid = row(host, path)["pid"]
    holder = sqlite3.connect(tmp_path / "data" / "sessions.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # SQLite's write lock, held by this test
    answers: list[Any] = []
    updating = threading.Thread(target=lambda: answers.append(runner.update_state("dan", "d1", {"k": "v"})))
    try:
        updating.start()
        # found stuck, and killed, while it still is (past BUSY_SECONDS its update fails instead)
        wait_until(lambda: not process_alive(old_pid), timeout=BUSY_SECONDS)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    updating.join(runner.call_timeout + 10.0)
    assert not updating.is_alive() and answers and answers[0].state["k"] == "v"
    assert runner.get_state("dan", "d1")["k"] == "v"
    current = restarted_unresponsive(host, path, old_pid)
    assert current["restarts"] >= 1 and "unresponsive" in (current["last_exit"] or "")


def test_a_child_that_works_on_after_its_ping_then_blocks_is_stuck_a_window_after_its_last_tick() -> None:
    """The health check's judgement (on its own clock, no process): a child pinged while
    it still handles a message, which uses a tick more and then blocks in that handler
    (as the partition above in SQLite's busy handler), is found stuck one no-CPU window
    (stretched x10 by the load) after the check that saw its last tick, and is never
    reported busy (that report came with a second window: 40 s at this load)."""
    cpu = [100]
    health = HealthMonitor(FAST, read=lambda pid: ProcessProgress("S", cpu[0]), scale=lambda seconds: 10 * seconds)
    assert health.ping("partition", now=0.0, pid=4242) is not None
    cpu[0] += 1  # the rest of the message it was handling when pinged; then it blocks
    now, stuck = 0.0, []
    while not stuck and now < 100.0:
        now += FAST.interval
        found = health.judge(now)
        assert [v for v in found if v.kind == "busy"] == [], found
        stuck = [v for v in found if v.kind == "stuck"]
    assert now == FAST.interval + 10 * FAST.timeout
    assert stuck[0].reason == "unresponsive: no answer to a health check and no CPU time used for 20 s"


def test_health_checks_are_cheap_and_leave_a_healthy_tree_alone(fresh_checked_host: Host) -> None:
    """Several seconds of checks every 0.5 s: nothing healthy is restarted."""
    wait_until(lambda: sum("worker-" in r["path"] for r in tree_rows(fresh_checked_host)) == 4, timeout=30)
    before = {r["path"]: r["pid"] for r in tree_rows(fresh_checked_host)}
    time.sleep(3.0)
    after = {r["path"]: r["pid"] for r in tree_rows(fresh_checked_host)}
    assert before == after


def test_the_caller_of_a_run_on_a_killed_partition_learns_it_at_once_with_the_true_reason(
        checked_host: Host) -> None:
    """kill -9 of the partition holding a run: its caller gets ``interrupted`` from the
    restarted partition (the true reason, never ``HostGone`` while the host is up) in
    about a second, not after a timeout; the session's next turn works."""
    runner = checked_host.runner("sleepy")
    runner.create_session("eve", "e1")
    partition = checked_host.partition_for("sleepy", "eve", "e1")
    caller, outcome = turn_in_background(runner, "eve", "e1", "sleep 30")
    wait_until(lambda: any(call(checked_host.system, partition, WorkerRuns()).values()), timeout=10)
    killed_at = time.monotonic()
    os.kill(call(checked_host.system, partition, OsPid()), signal.SIGKILL)
    caller.join(30)
    ended_at = time.monotonic()  # (a little after the caller learned it)
    assert not caller.is_alive()
    failure = outcome[0]
    assert isinstance(failure, RunFailedError) and failure.reason == "interrupted", failure
    assert failure.error_type == "PartitionRestarted"
    assert ended_at - killed_at < 5.0, f"the caller learned it {ended_at - killed_at:.1f} s after the kill"
    assert list(runner.run("eve", "e1", "hello"))[-1].content.text == "awake: hello"
