"""Turns queued behind a run whose session crashes (issue 55 / 53): in a real host, a
turn runs and pauses in a tool (``durable_agents``, ``pause_once_at``), more turns of
the same session are sent from other threads and queued behind it, then the session
crashes (``crash_session``, as a failing handler crashes it) or its run worker is
killed with kill -9. The queued turns, which never began, run in order on the
restarted session (their callers stream them to their end, one terminal each); the
crashed run ends ``interrupted`` (or is resumed when its app resumes crashed runs);
a crash that fails the session ends them with a typed ``SessionFailed``."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_worker
from durable_agents import counted
from engine_helpers import summary
from kept_host import KeptHost, kept_hosts
from late_turn_actors import Relay
from test_runtime import in_thread

from adk_actors import Content, Event
from adk_actors._exceptions import RunFailedError
from adk_actors.messages import RunRequest
from adk_actors.runtime import Host, HostConfig
from supervision.protocol import Call
from supervision.testing import pid_alive, wait_until

APPS = {"durable": "durable_agents:root_agent", "resuming": "durable_agents:resuming_app"}


def _host(actor_system: Any, tmp_path: Path, **config: Any) -> Host:
    return Host(HostConfig(apps=APPS, data_dir=str(tmp_path / "data"), **config), system=actor_system)


kept = kept_hosts("queued")


@pytest.fixture
def host(kept: KeptHost) -> Iterator[Host]:
    """A host of ``APPS`` with the default settings, kept from test to test
    (:class:`KeptHost`: the sessions crashed and the workers killed here are restarted;
    the next test is handed the host once its tree is whole again)."""
    with kept.host("default", lambda data: HostConfig(apps=APPS, data_dir=str(data))) as running:
        yield running


@pytest.fixture
def user(kept: KeptHost) -> str:
    """A user of the test's own on the kept host (its run ids end with it too)."""
    return kept.tag("ann-")


def _turn(events: list[Event], invocation_id: str) -> list[tuple[str, str]]:
    return summary([e for e in events if e.invocation_id == invocation_id and not e.partial])


def _same_turn(got: list[tuple[str, str]], expected: list[tuple[str, str]]) -> bool:
    """The same turn of ``durable_agents``' app: the same events, each author's in the
    same order (its ``fan`` runs ``left`` and ``right`` in parallel: their events
    interleave as they come)."""
    authors = {author for author, _ in expected}
    return sorted(got) == sorted(expected) and all(
        [e for e in got if e[0] == author] == [e for e in expected if e[0] == author] for author in authors)


def _reference(runner: Any, tmp_path: Path, user: str) -> list[tuple[str, str]]:
    """A turn of the app run alone, never crashed: what a queued turn must look like."""
    runner.create_session(user, "reference", state={"counts_file": str(tmp_path / "reference.txt")})
    streamed = [e for e in runner.run(user, "reference", "go") if not e.partial]
    return summary(streamed)


def _queue_behind_a_paused_run(runner: Any, counts: Path, n: int, user: str = "ann",
                               step: str = "right") -> tuple[Any, dict[str, Any], list[Any]]:
    """Session s1's first turn (of ``user``; its run id ``run-first-<user>``), paused in
    ``step``'s tool, then ``n`` turns queued behind it one after another (each recorded
    by the host before the next is sent; run ids ``run-q<i>-<user>``)."""
    runner.create_session(user, "s1", state={"counts_file": str(counts), "pause_once_at": [step]})
    first = in_thread(lambda: list(runner.run(user, "s1", "go", run_id=f"run-first-{user}")))
    wait_until(lambda: any(key.endswith(f":{step}") for key in counted(counts)), timeout=20)
    queued = []
    for i in range(n):
        run_id = f"run-q{i}-{user}"
        queued.append((run_id, *in_thread(lambda run_id=run_id: list(runner.run(user, "s1", "go",
                                                                               run_id=run_id)))))
        wait_until(lambda run_id=run_id: (last := runner.last_run(user, "s1")) is not None
                   and last.run_id == run_id, timeout=20)
    return first[0], first[1], queued


@pytest.mark.parametrize("crash", ["crash_session", "kill_worker"])
def test_turns_queued_behind_a_crashed_run_run_in_order_on_the_restarted_session(
        host: Host, user: str, tmp_path: Path, crash: str) -> None:
    runner = host.runner("durable")
    expected = _reference(runner, tmp_path, user)
    counts = tmp_path / "counts.txt"
    thread, box, queued = _queue_behind_a_paused_run(runner, counts, 3, user)
    if crash == "crash_session":
        runner.crash_session(user, "s1", "crashed by the test")
    else:
        # the worker running the paused turn only: a worker killed after the partition
        # gave it a queued turn kills that turn too
        os.kill(run_worker(host, "durable", user, "s1", f"run-first-{user}"), signal.SIGKILL)
    thread.join(30)
    for _, waiter, _ in queued:
        waiter.join(60)
    assert not thread.is_alive() and all(not waiter.is_alive() for _, waiter, _ in queued)
    failed = box.get("error")
    assert isinstance(failed, RunFailedError)
    assert failed.reason == ("interrupted" if crash == "crash_session" else "killed")
    stored = runner.get_session(user, "s1").events
    invocations = list(dict.fromkeys(e.invocation_id for e in stored if not e.invocation_id.startswith("p-")))
    streamed_invocations = []
    for run_id, _, result in queued:
        assert "error" not in result, (run_id, result.get("error"))
        events = [e for e in result["result"] if not e.partial]
        assert _same_turn(summary(events), expected), summary(events)  # a normal turn, as if nothing had crashed
        (invocation,) = {e.invocation_id for e in events}
        streamed_invocations.append(invocation)
        # each event once, as stored, in order
        assert [e.id for e in events] == [e.id for e in stored if e.invocation_id == invocation]
        assert _same_turn(_turn(stored, invocation), expected), _turn(stored, invocation)
    assert invocations[1:] == streamed_invocations  # after the crashed one, in the order sent
    assert len(stored) == len({e.id for e in stored})
    last = runner.last_run(user, "s1")
    assert last is not None and (last.run_id, last.status) == (f"run-q2-{user}", "done")
    # the crashed turn's first tool ran once, each queued turn's once
    assert counted(counts)["send:first"] == 4


def test_a_turn_queued_behind_a_crashed_run_its_app_resumes_runs_after_the_resume(
        host: Host, user: str, tmp_path: Path) -> None:
    runner = host.runner("resuming")
    expected = _reference(runner, tmp_path, user)
    counts = tmp_path / "counts.txt"
    # paused in looped's tool (idempotent: its app resumes the run without asking)
    thread, box, queued = _queue_behind_a_paused_run(runner, counts, 1, user, "looped")
    runner.crash_session(user, "s1", "crashed by the test")
    thread.join(60)
    (_, waiter, result), = queued
    waiter.join(60)
    assert not thread.is_alive() and not waiter.is_alive()
    assert "error" not in box, box  # the Runner followed the run that resumed the crashed one
    assert "error" not in result, result
    stored = [e for e in runner.get_session(user, "s1").events if not e.invocation_id.startswith("p-")]
    resumed = [e for e in box["result"] if not e.partial]
    queued_events = [e for e in result["result"] if not e.partial]
    assert _same_turn(summary(queued_events), expected), summary(queued_events)
    # the crashed turn finished (resumed) before the queued one began
    assert [e.id for e in stored] == [e.id for e in resumed] + [e.id for e in queued_events]
    assert resumed[-1].author == "last"


def test_turns_queued_behind_a_crash_that_fails_the_session_end_session_failed(
        actor_system: Any, tmp_path: Path) -> None:
    with _host(actor_system, tmp_path, session_intensity=0) as host:
        runner = host.runner("durable")
        counts = tmp_path / "counts.txt"
        thread, box, queued = _queue_behind_a_paused_run(runner, counts, 2)
        runner.crash_session("ann", "s1", "crashed by the test")
        thread.join(30)
        for _, waiter, _ in queued:
            waiter.join(30)
        assert not thread.is_alive() and all(not waiter.is_alive() for _, waiter, _ in queued)
        assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "interrupted"
        for run_id, _, result in queued:
            error = result.get("error")
            assert isinstance(error, RunFailedError), (run_id, result)
            assert error.error_type == "SessionFailed" and "session_failed" in error.detail
        # nothing of theirs ran
        assert counted(counts)["send:first"] == 1


def test_a_turn_queued_behind_a_crashed_run_whose_caller_died_is_not_run(host: Host, user: str, tmp_path: Path) -> None:
    """The queued turn's caller (an actor process of its own) is killed with kill -9
    before the session crashes: its turn is not run on the restarted session (it ends
    ``interrupted``, nothing of it written); a turn queued after it by a living caller runs."""
    runner = host.runner("durable")
    counts = tmp_path / "counts.txt"
    thread, box, _ = _queue_behind_a_paused_run(runner, counts, 0, user)
    relay: Any = host.system.createActor(Relay)
    relay_pid = host.system.ask(relay, "pid", 10)
    assert isinstance(relay_pid, int) and pid_alive(relay_pid)
    sessions = host.root.child("sessions")  # type: ignore[union-attr]
    orphan = RunRequest("durable", user, "s1", new_message=Content.user("go"), run_id=f"run-orphan-{user}")
    assert host.system.ask(relay, ("send", sessions.address, Call(orphan)), 10) == "sent"
    wait_until(lambda: (last := runner.last_run(user, "s1")) is not None and last.run_id == f"run-orphan-{user}",
               timeout=20)
    living, result = in_thread(lambda: list(runner.run(user, "s1", "go", run_id=f"run-living-{user}")))
    wait_until(lambda: (last := runner.last_run(user, "s1")) is not None and last.run_id == f"run-living-{user}",
               timeout=20)
    os.kill(relay_pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(relay_pid), timeout=10)
    runner.crash_session(user, "s1", "crashed by the test")
    thread.join(30)
    living.join(60)
    assert not thread.is_alive() and not living.is_alive()
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "interrupted"
    assert "error" not in result, result
    stored = runner.get_session(user, "s1").events
    streamed = [e for e in result["result"] if not e.partial]
    invocations = list(dict.fromkeys(e.invocation_id for e in stored if not e.invocation_id.startswith("p-")))
    assert len(invocations) == 2 and invocations[1] == streamed[0].invocation_id  # the crashed one, the living one
    assert counted(counts)["send:first"] == 2  # the crashed turn's and the living one's: not the orphan's
