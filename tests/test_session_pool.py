"""Session activation off the first turn's path: pooled session actors (each with a
blank run actor), refilled in the background, and a burst of new sessions started at
once rather than one after another."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_actors import Content, Event
from adk_actors.messages import session_key
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._session import BLANK_RUN_MAX_EVENTS
from adk_actors.store import SQLiteSessionStore
from supervision import SupervisorClient, call
from supervision.testing import children_of, pid_alive, wait_until


@pytest.fixture
def pooled_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    import runtime_agents

    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, session_pool=2)
    with Host(config, system=actor_system) as running:
        yield running


def pool_pids(host: Host) -> list[int]:
    pids: list[int] = call(host.system, host.partitions()[0], "pool", timeout=5)
    return pids


def full_pool(host: Host, size: int = 2) -> list[int]:
    return wait_until(lambda: pids if len(pids := pool_pids(host)) == size else None, timeout=20)


def session_pid(host: Host, app: str, user: str, sid: str) -> int:
    info = next(i for i in SupervisorClient(host.system, host.partitions()[0]).which_children()
                if i.id == session_key(app, user, sid))
    assert info.pid is not None
    return info.pid


def partition_pid(host: Host) -> int:
    """The pid of the host's (only) session partition."""
    assert host.root is not None
    pid = SupervisorClient(host.system, host.root.child("sessions").address).which_children()[0].pid
    assert pid is not None
    return pid


def last_text(events: list[Any]) -> str:
    return [e.content.text for e in events if e.content is not None and e.content.text][-1]


def test_a_new_sessions_first_turn_runs_on_processes_started_ahead_of_time(pooled_host: Host) -> None:
    pooled = full_pool(pooled_host)
    blank_runs = {pid: children_of(pid) for pid in pooled}
    assert all(len(runs) == 1 for runs in blank_runs.values())  # each has its blank run actor
    runner = pooled_host.runner("echo")
    runner.create_session("ann", "s1")

    assert last_text(list(runner.run("ann", "s1", "hello"))) == "echo: hello (turn 1)"
    actor = session_pid(pooled_host, "echo", "ann", "s1")
    assert actor in pooled
    assert children_of(actor) == blank_runs[actor]  # the blank run actor ran the turn: no fork
    assert last_text(list(runner.run("ann", "s1", "again"))) == "echo: again (turn 2)"
    refilled = full_pool(pooled_host)
    assert actor not in refilled


def test_a_new_sessions_first_turn_goes_straight_to_the_actor_activated_for_it(pooled_host: Host) -> None:
    """CreateSession's answer names the pooled actor the session is being activated on,
    and the first turn goes there without its partition: it is answered with the
    partition stopped (SIGSTOP)."""
    pooled = full_pool(pooled_host)
    runner = pooled_host.runner("echo", call_timeout=3.0)
    info = runner.create_session("ann", "direct")
    assert info.session_actor is not None and info.session_actor[1] in pooled
    key, actor_pid = session_key("echo", "ann", "direct"), info.session_actor[1]
    wait_until(lambda: any(i.id == key and i.status == "running" and i.pid == actor_pid
                           for i in SupervisorClient(pooled_host.system, pooled_host.partitions()[0]).which_children()),
               timeout=10)
    partition = partition_pid(pooled_host)
    os.kill(partition, signal.SIGSTOP)
    try:
        assert last_text(list(runner.run("ann", "direct", "hello"))) == "echo: hello (turn 1)"
    finally:
        os.kill(partition, signal.SIGCONT)
    assert last_text(list(runner.run("ann", "direct", "again"))) == "echo: again (turn 2)"


def test_the_actor_named_at_creation_killed_before_the_first_turn_costs_no_turn(pooled_host: Host) -> None:
    """kill -9 of the pooled actor a new session is being activated on, right after
    CreateSession named it: the first turn still gets its answer (through the
    partition, on a restarted session actor), and so does the next."""
    full_pool(pooled_host)
    runner = pooled_host.runner("echo")
    info = runner.create_session("ann", "doomed")
    assert info.session_actor is not None
    os.kill(info.session_actor[1], signal.SIGKILL)
    assert last_text(list(runner.run("ann", "doomed", "hello"))) == "echo: hello (turn 1)"
    assert session_pid(pooled_host, "echo", "ann", "doomed") != info.session_actor[1]
    assert last_text(list(runner.run("ann", "doomed", "again"))) == "echo: again (turn 2)"


def test_a_long_session_gets_a_run_actor_forked_with_its_history(pooled_host: Host, tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "data" / "sessions.db")
    store.create_session("echo", "ann", "long")
    turns = BLANK_RUN_MAX_EVENTS // 2 + 5
    for i in range(turns):
        store.append_event("echo", "ann", "long", Event(author="user", invocation_id=f"e-{i}",
                                                        content=Content.user(f"old {i}")))
        store.append_event("echo", "ann", "long", Event(author="echo", invocation_id=f"e-{i}",
                                                        content=Content(role="model", parts=Content.user("ok").parts)))
    store.close()
    pooled = full_pool(pooled_host)
    blank_runs = {pid: children_of(pid) for pid in pooled}

    runner = pooled_host.runner("echo")
    assert last_text(list(runner.run("ann", "long", "next"))) == f"echo: next (turn {turns + 1})"
    actor = session_pid(pooled_host, "echo", "ann", "long")
    assert actor in pooled  # the session actor came from the pool ...
    wait_until(lambda: children_of(actor) and not set(children_of(actor)) & set(blank_runs[actor]))
    # ... its blank run actor did not serve (the history would have travelled in a message)


def test_a_pooled_process_killed_while_waiting_is_replaced(pooled_host: Host) -> None:
    victim = full_pool(pooled_host)[0]
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: victim not in (pids := pool_pids(pooled_host)) and len(pids) == 2, timeout=20)
    runner = pooled_host.runner("echo")
    for sid in ("a", "b", "c"):  # more sessions than the pool holds: the rest are forked
        runner.create_session("ann", sid)
        assert last_text(list(runner.run("ann", sid, sid))) == f"echo: {sid} (turn 1)"


def test_a_burst_of_new_sessions_is_started_at_once_and_every_turn_is_answered(pooled_host: Host) -> None:
    runner = pooled_host.runner("echo")
    sids = [f"burst-{i}" for i in range(12)]
    for sid in sids:
        runner.create_session("ann", sid)
    full_pool(pooled_host)
    answers: dict[str, str] = {}
    errors: list[BaseException] = []

    def first_turn(sid: str) -> None:
        try:
            answers[sid] = last_text(list(runner.run("ann", sid, sid)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=first_turn, args=(sid,)) for sid in sids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert answers == {sid: f"echo: {sid} (turn 1)" for sid in sids}
    running = {i.id for i in SupervisorClient(pooled_host.system, pooled_host.partitions()[0]).which_children()
               if i.status == "running"}
    assert {session_key("echo", "ann", sid) for sid in sids} <= running


def test_a_session_that_cannot_start_does_not_hold_back_the_others(pooled_host: Host, tmp_path: Path) -> None:
    runner = pooled_host.runner("echo", call_timeout=3.0)
    store = SQLiteSessionStore(tmp_path / "data" / "sessions.db")  # stored, never active
    for sid in ("good-1", "bad", "good-2"):
        store.create_session("echo", "ann", sid)
    store._db.execute("UPDATE sessions SET state='{not json' WHERE id='bad'")  # a corrupt row
    store.close()
    full_pool(pooled_host)
    outcomes: dict[str, Any] = {}

    def first_turn(sid: str) -> None:
        try:
            outcomes[sid] = last_text(list(runner.run("ann", sid, sid)))
        except Exception as exc:
            outcomes[sid] = exc

    threads = [threading.Thread(target=first_turn, args=(sid,)) for sid in ("good-1", "bad", "good-2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert outcomes["good-1"] == "echo: good-1 (turn 1)"
    assert outcomes["good-2"] == "echo: good-2 (turn 1)"
    assert isinstance(outcomes["bad"], Exception) and "could not start" in str(outcomes["bad"])
    assert last_text(list(runner.run("ann", "good-1", "more"))) == "echo: more (turn 2)"


def test_no_pool_means_no_processes_ahead_of_time(actor_system: Any, tmp_path: Path) -> None:
    import runtime_agents

    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, session_pool=0)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        assert last_text(list(runner.run("ann", "s1", "hi"))) == "echo: hi (turn 1)"
        assert pool_pids(host) == []
        assert children_of(partition_pid(host)) == [session_pid(host, "echo", "ann", "s1")]


def test_a_session_created_while_the_pool_has_a_process_is_active_before_its_first_turn(pooled_host: Host) -> None:
    pooled = full_pool(pooled_host)
    runner = pooled_host.runner("echo")
    runner.create_session("ann", "early")
    key = session_key("echo", "ann", "early")
    info = wait_until(lambda: next((i for i in SupervisorClient(pooled_host.system, pooled_host.partitions()[0])
                                    .which_children() if i.id == key and i.status == "running"), None))
    assert info.pid in pooled  # started at creation, on a pooled process
    assert last_text(list(runner.run("ann", "early", "hi"))) == "echo: hi (turn 1)"
    assert session_pid(pooled_host, "echo", "ann", "early") == info.pid


def test_a_pooled_sessions_blank_run_actor_killed_before_use_costs_no_turn(pooled_host: Host) -> None:
    runner = pooled_host.runner("echo")
    for trial in range(2):
        killed = [run_actor for pid in full_pool(pooled_host) for run_actor in children_of(pid)]
        for run_actor in killed:
            os.kill(run_actor, signal.SIGKILL)
        # "Before use": gone before the turn begins (a SIGKILL lands a moment later on a
        # loaded machine, and a run handed to a process still dying is killed during it).
        wait_until(lambda: not any(pid_alive(p) for p in killed), timeout=5)
        sid = f"after-kill-{trial}"
        runner.create_session("ann", sid)
        assert last_text(list(runner.run("ann", sid, "hi"))) == "echo: hi (turn 1)"
        assert last_text(list(runner.run("ann", sid, "again"))) == "echo: again (turn 2)"


def test_a_run_actor_that_never_reports_in_is_replaced_and_its_late_output_ignored(pooled_host: Host) -> None:
    """A pooled session's blank run actor is alive but silent (stopped: it never answers
    Init, and no ChildActorExited comes). After RUN_ACTOR_INIT_WAIT the session runs the
    turn on a new run actor instead of waiting forever. When the silent one wakes and
    runs the StartRun it was sent, its output is ignored: the history holds each turn
    once."""
    import time

    from adk_actors.runtime._session import RUN_ACTOR_INIT_WAIT

    runner = pooled_host.runner("echo")
    stopped = [run_actor for pid in full_pool(pooled_host) for run_actor in children_of(pid)]
    assert stopped
    try:
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        runner.create_session("ann", "silent")
        began = time.monotonic()
        assert last_text(list(runner.run("ann", "silent", "hi"))) == "echo: hi (turn 1)"
        assert time.monotonic() - began >= RUN_ACTOR_INIT_WAIT - 1
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        time.sleep(1.0)  # the woken actor runs its StartRun; the session must ignore what it sends
        assert last_text(list(runner.run("ann", "silent", "again"))) == "echo: again (turn 2)"
        texts = [e.content.text for e in runner.get_session("ann", "silent").events if e.content]
        assert texts == ["hi", "echo: hi (turn 1)", "again", "echo: again (turn 2)"]
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_host_stopped_while_pooled_actors_are_reserved_leaves_no_process(actor_system: Any, tmp_path: Path) -> None:
    """Sessions created just before the host stops: their pooled actors are reserved
    and not yet activated; every pooled process still goes with the host."""
    import runtime_agents

    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, session_pool=3)
    host = Host(config, system=actor_system).start()
    try:
        pooled = full_pool(host, 3)
        blank_runs = [run for pid in pooled for run in children_of(pid)]
        runner = host.runner("echo")
        assert all(runner.create_session("ann", f"s{i}").session_actor is not None for i in range(3))
    finally:
        host.stop()
    wait_until(lambda: not any(pid_alive(pid) for pid in pooled + blank_runs), timeout=10,
               message="every pooled process stopped with the host")


def test_the_pool_fills_on_a_machine_kept_busy_by_something_else(actor_system: Any, tmp_path: Path) -> None:
    """The pool refills only on idle CPUs, so as not to slow the burst that emptied it;
    but a machine kept busy by other work still gets one pair every
    POOL_REFILL_MAX_WAIT seconds (here: one CPU-bound process per core, the whole time)."""
    import subprocess
    import sys

    import runtime_agents

    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, session_pool=1)
        with Host(config, system=actor_system) as host:
            full_pool(host, size=1)  # within 20 s (the wait is 5 s)
            runner = host.runner("echo")
            runner.create_session("ann", "s1")
            assert last_text(list(runner.run("ann", "s1", "hi"))) == "echo: hi (turn 1)"
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
