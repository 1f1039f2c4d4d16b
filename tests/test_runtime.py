"""The actor runtime with real processes: conversations, scopes, kill -9, concurrency, passivation."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import runtime_agents
from conftest import SharedHost, session_workers, wait_workers_gone

from adk_actors import RunConfig
from adk_actors._exceptions import (
    InvalidRequestError,
    RunFailedError,
    SessionBusyError,
    SessionExistsError,
    SessionNotFoundError,
    UnknownAppError,
)
from adk_actors.messages import GetState, HeldKeys, LiveWorkers, WorkerRuns, session_key
from adk_actors.runtime import Host, HostConfig
from supervision import CallError, SupervisorClient, call
from supervision.lowlevel import load_scaled
from supervision.protocol import OsPid, UnknownRequest
from supervision.testing import pid_alive, wait_until


@pytest.fixture(scope="module")
def shared_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedHost]:
    hosts = SharedHost(tmp_path_factory.mktemp("runtime"),
                       lambda data: HostConfig(apps=runtime_agents.APPS, data_dir=str(data)))
    yield hosts
    hosts.close()


@pytest.fixture
def shared(shared_hosts: SharedHost) -> Host:
    """The module's default host, for tests that neither kill, stop nor reconfigure it,
    each on users of its own (the ``counter`` app's ``app:`` state is the one test's)."""
    return shared_hosts.get()


def at_once(tool_seconds: float) -> float:
    """How soon a caller whose run's process was killed must be told: a second, stretched
    by the machine's load, and always before the killed run's tool would have ended by
    itself (a caller told only then was not told by the kill)."""
    return min(load_scaled(1.0), tool_seconds - 0.5)


def texts(events: list[Any]) -> list[str]:
    return [e.content.text for e in events if e.content is not None and e.content.text]


def session_pid(host: Host, app: str, user: str, sid: str) -> int | None:
    """The pid of the process holding the session in memory (its partition), or None
    while no process holds it (not loaded yet, or passivated)."""
    try:
        partition = host.partition_for(app, user, sid, refresh=True)
        if session_key(app, user, sid) in call(host.system, partition, HeldKeys(), timeout=2):
            pid: int = call(host.system, partition, OsPid(), timeout=2)
            return pid
    except Exception:  # the partition is restarting
        pass
    return None


def in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except Exception as exc:
            box["error"] = exc
        box["at"] = time.monotonic()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def test_conversation_keeps_history_and_persists_every_event(shared: Host) -> None:
    runner = shared.runner("echo")
    runner.create_session("conv", "s1")
    assert texts(list(runner.run("conv", "s1", "hello"))) == ["hello", "echo: hello (turn 1)"]
    assert texts(list(runner.run("conv", "s1", "again"))) == ["again", "echo: again (turn 2)"]
    session = runner.get_session("conv", "s1")
    assert texts(session.events) == ["hello", "echo: hello (turn 1)", "again", "echo: again (turn 2)"]
    assert [s.id for s in runner.list_sessions("conv")] == ["s1"]


def test_state_scopes_across_users_and_sessions(shared: Host) -> None:
    runner = shared.runner("counter")
    for user, sid in (("ann", "a1"), ("ann", "a2"), ("bob", "b1")):
        runner.create_session(user, sid)
    assert texts(list(runner.run("ann", "a1", "go")))[-1] == "count is 1"
    assert texts(list(runner.run("ann", "a1", "go")))[-1] == "count is 2"
    assert texts(list(runner.run("ann", "a2", "go")))[-1] == "count is 1"
    assert texts(list(runner.run("bob", "b1", "go")))[-1] == "count is 1"
    assert runner.get_state("ann", "a1") == {"count": 2, "user:visits": 3, "app:total": 4}
    assert runner.get_state("bob", "b1") == {"count": 1, "user:visits": 1, "app:total": 4}
    stored = runner.get_session("ann", "a2").events
    assert all("temp:scratch" not in e.actions.state_delta for e in stored)


def test_typed_errors_for_bad_requests(shared: Host) -> None:
    runner = shared.runner("echo")
    with pytest.raises(SessionNotFoundError):
        list(runner.run("typed", "nope", "hi"))
    runner.create_session("typed", "s1")
    with pytest.raises(SessionExistsError):
        runner.create_session("typed", "s1")
    with pytest.raises(UnknownAppError):
        shared.runner("no_such_app").create_session("typed")
    partition = shared.partitions()[0]
    with pytest.raises(UnknownRequest):
        call(shared.system, partition, runtime_agents.__name__)  # not a request at all: answered, no crash
    with pytest.raises(CallError) as malformed:
        call(shared.system, partition, GetState("echo", "", "s1"))  # malformed: answered, no crash
    assert malformed.value.code == "invalid_request" and "user id" in malformed.value.detail
    assert texts(list(runner.run("typed", "s1", "still fine")))[-1] == "echo: still fine (turn 1)"
    runner.delete_session("typed", "s1")
    with pytest.raises(SessionNotFoundError):
        runner.get_session("typed", "s1")


def test_session_process_killed_between_turns_comes_back_with_its_history(host: Host) -> None:
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    list(runner.run("ann", "s1", "one"))
    pid = session_pid(host, "echo", "ann", "s1")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: (runner.get_state("ann", "s1") is not None
                        and (p := session_pid(host, "echo", "ann", "s1")) is not None and p != pid))
    assert texts(list(runner.run("ann", "s1", "two")))[-1] == "echo: two (turn 2)"


def test_session_process_killed_during_a_turn_fails_the_run_cleanly(host: Host) -> None:
    runner = host.runner("sleepy")
    runner.create_session("ann", "s1")
    seen: list[Any] = []
    thread, box = in_thread(lambda: [seen.append(e) for e in runner.run("ann", "s1", "sleep 3")])
    wait_until(lambda: len(seen) >= 2)  # the user event and the tool call are committed and streamed
    pid = session_pid(host, "sleepy", "ann", "s1")
    assert pid is not None
    killed_at = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    thread.join(5)
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "interrupted"
    assert box["at"] - killed_at < at_once(3)
    session = runner.get_session("ann", "s1")
    assert texts(session.events)[0] == "sleep 3" and session.events[1].content.function_calls
    # the interrupted tool call is repaired by the compiler: the conversation goes on
    assert texts(list(runner.run("ann", "s1", "hello")))[-1] == "awake: hello"


def test_run_worker_killed_mid_run_fails_within_a_second(host: Host) -> None:
    runner = host.runner("sleepy")
    runner.create_session("ann", "s1")
    seen: list[Any] = []
    thread, box = in_thread(lambda: [seen.append(e) for e in runner.run("ann", "s1", "sleep 5")])
    wait_until(lambda: len(seen) >= 2)
    pid = session_pid(host, "sleepy", "ann", "s1")
    assert pid is not None
    runs = session_workers(host, "sleepy", "ann", "s1")
    assert runs
    killed_at = time.monotonic()
    for child in runs:
        os.kill(child, signal.SIGKILL)
    thread.join(5)
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason in ("killed",)
    assert box["at"] - killed_at < at_once(5)
    wait_workers_gone(host, "sleepy", "ann", "s1", runs)  # (another killed one may still be dying)
    assert session_pid(host, "sleepy", "ann", "s1") == pid  # the session's process was not disturbed
    assert texts(list(runner.run("ann", "s1", "hello")))[-1] == "awake: hello"


def test_concurrent_runs_on_one_session_are_serialized(shared: Host, tmp_path: Path) -> None:
    runner = shared.runner("sleepy")
    runner.create_session("serial", "s1")
    in_tool = tmp_path / "in-tool"
    first, first_box = in_thread(lambda: list(runner.run("serial", "s1", f"sleep 2 {in_tool}")))
    wait_until(in_tool.exists)
    with pytest.raises(SessionBusyError):
        list(runner.run("serial", "s1", "now or never", reject_if_busy=True))
    second, second_box = in_thread(lambda: list(runner.run("serial", "s1", "after you")))
    first.join(10)
    second.join(10)
    assert texts(first_box["result"])[-1] == "woke up" and texts(second_box["result"])[-1] == "awake: after you"
    stored = texts(runner.get_session("serial", "s1").events)
    assert stored == [f"sleep 2 {in_tool}", "woke up", "after you", "awake: after you"]  # no interleaving


def test_fifty_sessions_in_parallel(shared: Host) -> None:
    runner = shared.runner("echo")
    for i in range(50):
        runner.create_session("crowd", f"s{i}")
    results: dict[int, list[str]] = {}

    def one(i: int) -> None:
        results[i] = texts(list(runner.run("crowd", f"s{i}", f"msg {i}")))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(results[i] == [f"msg {i}", f"echo: msg {i} (turn 1)"] for i in range(50))


def test_a_run_output_from_any_actor_but_the_runs_own_is_ignored(shared: Host) -> None:
    """A partition takes a run's events and outcome only from the worker running it: a
    forged RunOutput with the run's id, sent mid-run by another endpoint, neither
    reaches the history nor ends the run."""
    from adk_actors import Content, Event
    from adk_actors.runtime._run_protocol import RunOutcome, RunOutput

    runner = shared.runner("sleepy")
    runner.create_session("u", "forge")
    assert texts(list(runner.run("u", "forge", "hello"))) == ["hello", "awake: hello"]
    partition = shared.partition_for("sleepy", "u", "forge")
    thread, box = in_thread(lambda: texts(list(runner.run("u", "forge", "sleep 1", run_id="run-forge"))))
    wait_until(lambda: len(runner.get_session("u", "forge").events) >= 4, timeout=10)  # the tool call is stored
    forged = Event(author="sleepy", invocation_id="run-forge", content=Content.model("forged"))
    shared.system.tell(partition, RunOutput("run-forge", [forged], RunOutcome("run-forge", True)))
    thread.join(15)
    assert box.get("result") == ["sleep 1", "woke up"], box
    history = texts(runner.get_session("u", "forge").events)
    assert "forged" not in history and history[-1] == "woke up"


def test_one_runner_used_from_many_threads_at_once(shared: Host) -> None:
    """Session CRUD, turns and service calls from 30 threads sharing one Runner (a
    Thespian endpoint serves one thread at a time: each call needs its own)."""
    runner = shared.runner("echo")
    errors: list[BaseException] = []
    seen: dict[int, tuple[dict[str, Any], list[str], int]] = {}

    def one(i: int) -> None:
        try:
            runner.create_session("many", f"t{i}", state={"n": i})
            state = runner.get_state("many", f"t{i}")
            said = texts(list(runner.run("many", f"t{i}", f"hi {i}")))
            listed = len(runner.list_sessions("many"))
            runner.search_memory("many", "nothing")
            seen[i] = (state, said, listed)
            runner.delete_session("many", f"t{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors[:3]
    assert all(seen[i][0]["n"] == i and seen[i][1] == [f"hi {i}", f"echo: hi {i} (turn 1)"] for i in range(30))
    assert all(1 <= seen[i][2] <= 30 for i in range(30))
    assert runner.list_sessions("many") == []


def test_a_run_that_never_ends_meets_the_hosts_deadline_and_frees_its_session(tmp_path: Path, actor_system: Any) -> None:
    """No RunConfig timeout: the host's run_timeout ends a run whose tool blocks far
    longer, with one RunFailed(timeout); the turn queued behind it then runs, and so do
    later turns (before, such a session was held, with its queue, forever)."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), run_timeout=0.5,
                        run_stop_grace=0.5)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy")
        runner.create_session("ann", "s1")
        began = time.monotonic()
        stuck, stuck_box = in_thread(lambda: list(runner.run("ann", "s1", "sleep 3600")))
        wait_until(lambda: runner._runs)
        queued, queued_box = in_thread(lambda: texts(list(runner.run("ann", "s1", "after"))))
        stuck.join(10)
        error = stuck_box.get("error")
        assert isinstance(error, RunFailedError) and error.reason == "timeout", stuck_box
        # told once its worker was killed: the deadline, then run_stop_grace (0.5 s here)
        assert "0.5 s deadline" in error.detail and stuck_box["at"] - began < 5.0
        queued.join(10)
        assert queued_box.get("result", [None])[-1] == "awake: after", queued_box
        assert texts(list(runner.run("ann", "s1", "hello")))[-1] == "awake: hello"


def test_cancel_and_deadline(actor_system: Any, tmp_path: Path) -> None:
    """A RunConfig timeout and a cancel each end a turn whose tool would run 60 s: its
    caller is told once the worker was killed, past ``run_stop_grace`` (0.5 s here; the
    default's 2 s: test_a_run_that_will_not_stop_...), not when the tool ends."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), run_stop_grace=0.5)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy")
        runner.create_session("ann", "s1")
        began = time.monotonic()
        with pytest.raises(RunFailedError) as timed_out:
            list(runner.run("ann", "s1", "sleep 60", run_config=RunConfig(timeout=0.5)))
        # told once its worker was killed (the deadline, then run_stop_grace), not when the tool ends
        assert timed_out.value.reason == "timeout" and time.monotonic() - began < 15
        in_tool = tmp_path / "in-tool"
        thread, box = in_thread(lambda: list(runner.run("ann", "s1", f"sleep 60 {in_tool}", run_id="run-to-cancel")))
        wait_until(in_tool.exists)
        cancel_at = time.monotonic()
        runner.cancel("run-to-cancel")
        thread.join(20)
        assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "cancelled"
        assert box["at"] - cancel_at < 15  # the kill after the grace period, not the tool's end
        assert texts(list(runner.run("ann", "s1", "hello")))[-1] == "awake: hello"


def test_passivation_and_transparent_reactivation(actor_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), idle_timeout=0.5)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        list(runner.run("ann", "s1", "one"))
        pid = session_pid(host, "echo", "ann", "s1")
        assert pid is not None
        wait_until(lambda: session_pid(host, "echo", "ann", "s1") is None, timeout=5)  # dropped from memory
        assert pid_alive(pid)  # ... by its partition, which goes on
        assert texts(list(runner.run("ann", "s1", "two")))[-1] == "echo: two (turn 2)"


def test_host_restart_keeps_sessions(actor_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("counter")
        runner.create_session("ann", "s1")
        list(runner.run("ann", "s1", "go"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("counter")
        assert texts(list(runner.run("ann", "s1", "go")))[-1] == "count is 2"
        assert len(runner.get_session("ann", "s1").events) == 8


def test_partition_killed_mid_run_fails_the_run_and_sessions_come_back(host: Host) -> None:
    runner = host.runner("sleepy")
    runner.create_session("ann", "s1")
    seen: list[Any] = []
    thread, box = in_thread(lambda: [seen.append(e) for e in runner.run("ann", "s1", "sleep 5")])
    wait_until(lambda: len(seen) >= 2)
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    owner = next(i for i in sessions.which_children() if i.address == host.partition_for("sleepy", "ann", "s1"))
    assert owner.pid is not None
    killed_at = time.monotonic()
    os.kill(owner.pid, signal.SIGKILL)
    thread.join(5)
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "interrupted"
    assert box["at"] - killed_at < at_once(5)
    wait_until(lambda: sessions.child(owner.id).status == "running" and sessions.child(owner.id).pid != owner.pid)
    host.partitions(refresh=True)
    assert texts(list(runner.run("ann", "s1", "hello")))[-1] == "awake: hello"


def test_registry_killed_restarts_the_tree_and_conversations_continue(host: Host) -> None:
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    list(runner.run("ann", "s1", "one"))
    root = host.root
    assert root is not None
    registry, sessions = root.child("registry"), root.child("sessions")
    assert registry.pid is not None
    os.kill(registry.pid, signal.SIGKILL)
    wait_until(lambda: root.child("sessions").pid not in (None, sessions.pid)
               and root.child("sessions").status == "running", timeout=60)  # rest_for_one: sessions restarted too
    assert root.child("registry").restarts == 1 and root.child("sessions").restarts == 1
    assert texts(list(runner.run("ann", "s1", "two")))[-1] == "echo: two (turn 2)"


def test_run_async(shared: Host) -> None:
    import asyncio

    runner = shared.runner("echo")
    runner.create_session("async", "s1")

    async def go() -> list[str]:
        return [e.content.text async for e in runner.run_async("async", "s1", "async hi") if e.content]

    assert asyncio.run(go()) == ["async hi", "echo: async hi (turn 1)"]


def test_auto_create_session_makes_a_missing_session_for_its_run_and_continues_an_existing_one(
        shared: Host) -> None:
    """google-adk's ``Runner(auto_create_session=True)``: a run on a session that does
    not exist creates it (empty state, the turn stored in it); the next turn continues
    it; a Runner without it still refuses; ``create_session=`` decides per call."""
    import asyncio

    plain, creating = shared.runner("echo"), shared.runner("echo", auto_create_session=True)
    with pytest.raises(SessionNotFoundError):
        list(plain.run("auto", "new-1", "hi"))
    assert texts(list(creating.run("auto", "new-1", "hi")))[-1] == "echo: hi (turn 1)"
    assert texts(list(creating.run("auto", "new-1", "again")))[-1] == "echo: again (turn 2)"
    made = plain.get_session("auto", "new-1")
    assert [e.content.text for e in made.events if e.content] == ["hi", "echo: hi (turn 1)", "again",
                                                                   "echo: again (turn 2)"]

    async def first_turns() -> list[list[str]]:
        async def turn(session_id: str) -> list[str]:
            return [e.content.text async for e in plain.run_async("auto-bob", session_id, "x", create_session=True)
                    if e.content]
        return await asyncio.gather(*(turn(f"c{i % 3}") for i in range(9)))

    answers = asyncio.run(first_turns())  # three new sessions, three turns each, all at once
    assert sorted(a[-1] for a in answers) == sorted(f"echo: x (turn {n})" for _ in range(3) for n in (1, 2, 3))
    with pytest.raises(SessionNotFoundError):
        list(creating.run("auto", "new-2", "no", create_session=False))


def test_the_same_request_again_for_a_run_that_ended_gets_its_events_and_end_another_is_refused(
        shared: Host) -> None:
    """A caller whose partition died after it committed the run's end, but before it
    said so, sends the same request again: it gets the run's committed events and its
    end (as a follower does), the run is not run twice. A different request with the
    same run id is refused: a run id is never reused."""
    import asyncio

    runner = shared.runner("echo")
    runner.create_session("twice", "again")
    first = list(runner.run("twice", "again", "hello", run_id="run-asked-twice"))
    again = list(runner.run("twice", "again", "hello", run_id="run-asked-twice"))
    assert [e.id for e in again if e.author != "user"] == [e.id for e in first if e.author != "user"]
    assert texts(again)[-1] == "echo: hello (turn 1)"

    async def again_async() -> list[str]:
        return [e.id async for e in runner.run_async("twice", "again", "hello", run_id="run-asked-twice")]

    assert set(asyncio.run(again_async())) >= {e.id for e in first if e.author != "user"}
    with pytest.raises(InvalidRequestError):
        list(runner.run("twice", "again", "something else", run_id="run-asked-twice"))
    assert texts(list(runner.run("twice", "again", "next")))[-1] == "echo: next (turn 2)"  # ran once: turn 2


def test_an_actor_uses_an_agent_only_by_message_passing(shared: Host) -> None:
    from examples.message_passing.asker import Asker
    from supervision import start_server
    from supervision.protocol import Cast

    shared.runner("echo").create_session("asker", "s1")
    asker = start_server(shared.system, Asker, {"app": "echo", "sessions": shared.sessions_address()})
    shared.system.tell(asker, Cast(("ask", "asker", "s1", "hello from an actor")))
    shared.system.tell(asker, Cast(("ask", "asker", "missing", "nobody home")))
    answers = wait_until(lambda: (a := call(shared.system, asker, "answers")) and len(a) == 2 and a, timeout=10)
    assert sorted(answers.values()) == ["echo: hello from an actor (turn 1)", "refused: unknown_session"]


def test_a_runner_serving_many_sessions_keeps_a_bounded_number_of_sockets_open(shared: Host) -> None:
    """An endpoint keeps a socket to every session actor it talked to, and Thespian
    watches them all at each turn of its loop: a Runner that reused one endpoint for
    every session had a turn's CPU grow with the sessions it had ever served."""
    runner = shared.runner("echo")
    runner.create_session("sockets", "s0")
    list(runner.run("sockets", "s0", "hi"))
    before = len(os.listdir("/proc/self/fd"))
    for i in range(1, 50):
        runner.create_session("sockets", f"s{i}")
        assert [e.content.text for e in runner.run("sockets", f"s{i}", "hi") if e.content][-1] == "echo: hi (turn 1)"
    grown = len(os.listdir("/proc/self/fd")) - before
    assert grown <= 25, f"{grown} more descriptors open after serving 49 more sessions"
    # The sessions served before are served still (their endpoint may be a new one).
    assert [e.content.text for e in runner.run("sockets", "s1", "again") if e.content][-1] == "echo: again (turn 2)"


def test_a_run_that_will_not_stop_gets_its_worker_killed_after_the_grace_and_its_neighbour_interrupted(
        actor_system: Any, tmp_path: Path) -> None:
    """One worker runs two sessions' turns at once. One turn is cancelled but its tool
    will not stop: ``run_stop_grace`` (2 s) later its worker is killed (issue 53: no
    work outlives its end), and only then does it end ``cancelled`` for its caller. The
    other turn on that worker ends ``interrupted`` (``RunWorkerKilled``; its app does
    not resume runs); a new worker takes the next turns of both sessions."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy")
        runner.create_session("ann", "stuck")
        runner.create_session("bob", "busy")
        partition = host.partitions()[0]
        old_worker = wait_until(lambda: call(host.system, partition, LiveWorkers()))[0]
        in_tool, busy_in_tool = tmp_path / "stuck-in-tool", tmp_path / "busy-in-tool"
        stuck, stuck_box = in_thread(lambda: list(runner.run("ann", "stuck", f"sleep 60 {in_tool}",
                                                             run_id="run-stuck")))
        wait_until(in_tool.exists)  # in its tool now
        busy, busy_box = in_thread(lambda: texts(list(runner.run("bob", "busy", f"sleep 10 {busy_in_tool}"))))
        wait_until(busy_in_tool.exists)
        cancelled_at = time.monotonic()
        runner.cancel("run-stuck")
        stuck.join(10)
        error = stuck_box.get("error")
        assert isinstance(error, RunFailedError) and error.reason == "cancelled", stuck_box
        assert 1.5 < stuck_box["at"] - cancelled_at < 9  # the grace period, then the kill
        assert not pid_alive(old_worker)  # dead before its run's caller was told
        busy.join(10)
        failed = busy_box.get("error")
        assert isinstance(failed, RunFailedError) and (failed.reason, failed.error_type) == (
            "interrupted", "RunWorkerKilled"), busy_box
        assert texts(list(runner.run("ann", "stuck", "hello")))[-1] == "awake: hello"
        assert texts(list(runner.run("bob", "busy", "hello")))[-1] == "awake: hello"
        assert old_worker not in call(host.system, partition, LiveWorkers())


def test_with_one_run_per_worker_a_kill_ends_that_turn_only_and_the_pool_follows_the_load(
        actor_system: Any, tmp_path: Path) -> None:
    """``runs_per_worker=1``: two sessions' turns at once run in two processes; kill -9
    of one ends that turn only (``killed``) while the other ends well. With
    ``max_run_workers=2`` a third turn waits for a free worker, then runs; afterwards
    the pool shrinks back to ``run_workers`` idle workers."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        runs_per_worker=1, max_run_workers=2)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy")
        for sid in ("a", "b", "c"):
            runner.create_session("ann", sid)
        partition = host.partitions()[0]
        a, a_box = in_thread(lambda: list(runner.run("ann", "a", "sleep 3", run_id="run-a")))
        b, b_box = in_thread(lambda: texts(list(runner.run("ann", "b", "sleep 2", run_id="run-b"))))
        holders = wait_until(lambda: (m := call(host.system, partition, WorkerRuns())) and
                             sorted(r for runs in m.values() for r in runs) == ["run-a", "run-b"] and m)
        assert all(len(runs) == 1 for runs in holders.values())  # one turn per process
        c, c_box = in_thread(lambda: texts(list(runner.run("ann", "c", "hello"))))
        time.sleep(0.5)
        assert c.is_alive()  # both workers are taken and there may be no third: it waits
        pid_of_a = next(pid for pid, runs in holders.items() if runs == ["run-a"])
        os.kill(pid_of_a, signal.SIGKILL)
        a.join(5)
        assert isinstance(a_box.get("error"), RunFailedError) and a_box["error"].reason == "killed"
        c.join(10)
        assert c_box.get("result") == ["hello", "awake: hello"], c_box  # on the worker that replaced a's
        b.join(10)
        assert b_box.get("result") == ["sleep 2", "woke up"], b_box  # not disturbed
        wait_until(lambda: len(call(host.system, partition, LiveWorkers())) == 1, timeout=10)  # shrunk back
        assert texts(list(runner.run("ann", "a", "hello again")))[-1] == "awake: hello again"


def test_a_run_whose_partition_died_before_it_answered_ends_interrupted(actor_system: Any, tmp_path: Path) -> None:
    """The partition records a run and dies before the caller heard anything from it
    (the run waited for a worker). The Runner asks the restarted partition again with
    the same run id: it gets the run's end, ``interrupted``, not an error about a
    run id used twice (seen in a chaos soak as InvalidRequestError)."""
    from adk_actors.store import SQLiteSessionStore

    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        runs_per_worker=1, max_run_workers=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy")
        runner.create_session("ann", "busy")
        runner.create_session("bob", "waiting")
        in_thread(lambda: list(runner.run("ann", "busy", "sleep 30")))
        wait_until(lambda: "run-" in str(call(host.system, host.partitions()[0], WorkerRuns())))  # the worker is taken
        waiting, box = in_thread(lambda: list(runner.run("bob", "waiting", "hello")))
        store = SQLiteSessionStore(config.store_path)
        wait_until(lambda: store.running_runs("sleepy", "bob", "waiting"), interval=0.002)  # recorded, not answered
        # The partition's supervisor is held still while the partition dies, so the restart
        # comes after the Runner gave up waiting for a first answer and asked again.
        supervisor = host.root.child("sessions").pid  # type: ignore[union-attr]
        os.kill(supervisor, signal.SIGSTOP)
        try:
            os.kill(call(host.system, host.partitions()[0], OsPid()), signal.SIGKILL)
            time.sleep(0.5)
        finally:
            os.kill(supervisor, signal.SIGCONT)
        waiting.join(15)
        store.close()
        assert isinstance(box.get("error"), RunFailedError), box
        assert box["error"].reason == "interrupted" and box["error"].error_type == "PartitionRestarted"
        host.partitions(refresh=True)
        assert texts(list(runner.run("bob", "waiting", "again")))[-1] == "awake: again"
