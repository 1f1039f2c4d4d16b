"""Callers never hang on a stopped host (issue 53): a host that has stopped (``Host.stop``,
or its whole tree gone) answers every caller :class:`HostStopped` at once, those already
waiting on it included, instead of after their ``call_timeout``; a partition that
restarts while the host runs is still waited for, as before.

Each call here has a ``call_timeout`` of :data:`CALL_TIMEOUT`; "at once" is asserted as
well before it (:data:`LONG_BEFORE`), the margin being the hang this file is about."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import runtime_agents
from test_runtime import session_pid

from adk_actors import HostError, HostStopped, RunFailedError
from adk_actors.runtime import Host, HostConfig
from supervision.lowlevel import free_port, proc_stat
from supervision.testing import pid_alive, wait_until

#: Every Runner's ``call_timeout`` in this file: how long a caller of a stopped host waited before.
CALL_TIMEOUT = 20.0
#: How long after the host stopped a caller may end and still be "at once": a quarter of its deadline.
LONG_BEFORE = CALL_TIMEOUT / 4


def config(tmp_path: Path, **more: Any) -> HostConfig:
    return HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), **more)


def ended_by(caller: threading.Thread, box: dict[str, Any], since: float) -> tuple[Any, float]:
    """What the caller ended with (its error, or its answer) and how long after ``since``;
    it must end within its own deadline and some more."""
    caller.join(CALL_TIMEOUT + 15)
    assert not caller.is_alive(), "the caller still waits, past its call_timeout"
    return box.get("error", box.get("answer")), box["at"] - since


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["answer"] = fn()
        except Exception as exc:  # (the test looks at it)
            box["error"] = exc
        box["at"] = time.monotonic()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


@contextmanager
def frozen(pid: int) -> Iterator[None]:
    """The process ``pid`` stopped (SIGSTOP) for the block: alive, answering nothing;
    let go (SIGCONT) after it, if it still runs."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGCONT)


def timed(fn: Callable[[], Any]) -> tuple[BaseException | None, float]:
    began = time.monotonic()
    try:
        fn()
    except Exception as exc:  # (the test looks at it)
        return exc, time.monotonic() - began
    return None, time.monotonic() - began


@pytest.mark.parametrize("own_system", [False, True], ids=["given-system", "own-system"])
def test_every_call_to_a_stopped_host_raises_host_stopped_long_before_its_call_timeout(
        request: pytest.FixtureRequest, tmp_path: Path, own_system: bool) -> None:
    """Session calls, turns (blocking, async, resumed) and service calls, after ``stop``:
    each raises HostStopped (a HostError), well before its call_timeout. A host that
    started its own actor system has none left after its stop: still HostStopped."""
    host = Host(config(tmp_path, port=free_port()) if own_system else config(tmp_path),
                system=None if own_system else request.getfixturevalue("actor_system"))
    with host:
        runner = host.runner("echo", call_timeout=CALL_TIMEOUT)
        session = runner.create_session("ann")
        list(runner.run("ann", session.id, "hello"))
        last = runner.last_run("ann", session.id)
        assert last is not None
        run_id = last.run_id

    async def run_async() -> None:
        async for _ in runner.run_async("ann", session.id, "again"):
            pass

    calls: dict[str, Callable[[], Any]] = {
        "run": lambda: list(runner.run("ann", session.id, "again")),
        "run_async": lambda: asyncio.run(run_async()),
        "resume": lambda: list(runner.resume("ann", session.id, run_id)),
        "create_session": lambda: runner.create_session("ann"),
        "get_session": lambda: runner.get_session("ann", session.id),
        "list_sessions": lambda: runner.list_sessions("ann"),
        "delete_session": lambda: runner.delete_session("ann", session.id),
        "load_artifact": lambda: runner.load_artifact("ann", session.id, "notes.txt"),
        "search_memory": lambda: runner.search_memory("ann", "hello"),
    }
    for name, fn in calls.items():
        error, took = timed(fn)
        assert isinstance(error, HostStopped) and isinstance(error, HostError), (name, error)
        assert took < LONG_BEFORE, (name, took)


def test_a_caller_waiting_on_its_partition_when_the_host_stops_gets_host_stopped(
        actor_system: Any, tmp_path: Path) -> None:
    """A call waits on a partition that answers nothing (stopped with SIGSTOP; no health
    checks here, so it is not restarted meanwhile); the host stops. The caller gets
    HostStopped at once, not its HostError at its call_timeout (the stopped partition is
    killed by the stop after ``session_shutdown``; before, the call then asked again
    until its deadline)."""
    host = Host(config(tmp_path, health=None, session_shutdown=2.0), system=actor_system).start()
    try:
        runner = host.runner("echo", call_timeout=CALL_TIMEOUT)
        runner.create_session("ann", "s1")
        list(runner.run("ann", "s1", "hello"))
        pid = session_pid(host, "echo", "ann", "s1")
        assert pid is not None
        with frozen(pid):
            caller, box = in_thread(lambda: runner.get_session("ann", "s1"))
            caller.join(1.0)
            assert caller.is_alive(), box  # waiting on its partition
            stopping = time.monotonic()
            stopper = threading.Thread(target=host.stop, daemon=True)
            stopper.start()
            outcome, took = ended_by(caller, box, stopping)
        assert isinstance(outcome, HostStopped), outcome
        assert took < LONG_BEFORE, took
        stopper.join(60)
    finally:
        host.stop()


def test_a_turn_whose_partition_hangs_when_the_host_stops_ends_typed_long_before_the_call_timeout(
        actor_system: Any, tmp_path: Path) -> None:
    """A turn in its tool, its partition stopped (SIGSTOP) so it can tell its caller
    nothing; the host stops. The caller's turn ends, typed (HostStopped, or the turn's
    RunFailedError), well before its call_timeout: before, once the stop killed the
    partition, the turn was asked again until that deadline."""
    host = Host(config(tmp_path, health=None, session_shutdown=2.0), system=actor_system).start()
    try:
        runner = host.runner("sleepy", call_timeout=CALL_TIMEOUT)
        runner.create_session("ann", "s1")
        in_tool = tmp_path / "in-tool"
        caller, box = in_thread(lambda: list(runner.run("ann", "s1", f"sleep 60 {in_tool}")))
        wait_until(in_tool.exists, timeout=30, message="the turn is in its tool")
        pid = session_pid(host, "sleepy", "ann", "s1")
        assert pid is not None
        with frozen(pid):
            stopping = time.monotonic()
            stopper = threading.Thread(target=host.stop, daemon=True)
            stopper.start()
            outcome, took = ended_by(caller, box, stopping)
        assert isinstance(outcome, (HostStopped, RunFailedError)), outcome
        assert took < LONG_BEFORE, (took, outcome)
        stopper.join(60)
    finally:
        host.stop()


def test_a_turn_in_flight_when_the_hosts_tree_dies_raises_host_stopped(actor_system: Any, tmp_path: Path) -> None:
    """The host's root supervisor is killed (kill -9: every process of its tree dies with
    it, as when the host's actor system goes away) while a turn is in its tool, and
    nobody called ``stop``: the turn's caller gets HostStopped, and so does a new call,
    each well before its call_timeout (before: asked again until that deadline, as for a
    partition restarting)."""
    host = Host(config(tmp_path), system=actor_system).start()
    try:
        runner = host.runner("sleepy", call_timeout=CALL_TIMEOUT)
        runner.create_session("ann", "s1")
        in_tool = tmp_path / "in-tool"
        caller, box = in_thread(lambda: list(runner.run("ann", "s1", f"sleep 60 {in_tool}")))
        wait_until(in_tool.exists, timeout=30, message="the turn is in its tool")
        assert host.root is not None
        registry = host.root.pids()["registry"]
        stat = proc_stat(registry) if registry else None
        assert stat is not None
        root_pid = stat[1]  # the registry's parent: the root supervisor
        killed = time.monotonic()
        os.kill(root_pid, signal.SIGKILL)
        outcome, took = ended_by(caller, box, killed)
        assert isinstance(outcome, HostStopped), outcome
        assert took < LONG_BEFORE, took
        error, took = timed(lambda: runner.get_session("ann", "s1"))
        assert isinstance(error, HostStopped), error
        assert took < LONG_BEFORE, took
    finally:
        host.stop()


def test_a_call_waiting_on_a_partition_killed_while_the_host_runs_is_answered_by_its_restart(
        actor_system: Any, tmp_path: Path) -> None:
    """What is not a stopped host: a call waits on a partition that answers nothing
    (SIGSTOP), which is then killed (kill -9) while the host runs. The caller waits for
    the restarted partition and gets its answer (no HostStopped); the next turn runs."""
    host = Host(config(tmp_path, health=None), system=actor_system).start()
    try:
        runner = host.runner("echo", call_timeout=CALL_TIMEOUT)
        runner.create_session("ann", "s1")
        list(runner.run("ann", "s1", "one"))
        pid = session_pid(host, "echo", "ann", "s1")
        assert pid is not None
        with frozen(pid):
            caller, box = in_thread(lambda: runner.get_session("ann", "s1"))
            caller.join(1.0)
            assert caller.is_alive(), box  # waiting on its partition
            os.kill(pid, signal.SIGKILL)
            outcome, _ = ended_by(caller, box, time.monotonic())
        assert not isinstance(outcome, Exception), outcome
        assert outcome.id == "s1" and [e.content.text for e in outcome.events if e.content] == [
            "one", "echo: one (turn 1)"]
        assert [e.content.text for e in runner.run("ann", "s1", "two") if e.content][-1] == "echo: two (turn 2)"
    finally:
        host.stop()


def test_the_http_api_of_a_stopped_host_answers_503_saying_so(actor_system: Any, tmp_path: Path) -> None:
    """google-adk's HTTP API on a host of this process, the host stopped (the API lives
    on): each request is answered 503, its body saying the host has stopped (not that a
    part of it restarts), well before a Runner's call_timeout (the API's are 30 s)."""
    from fastapi.testclient import TestClient

    from adk_actors.config import HttpSection
    from adk_actors.engine import AppCatalog
    from adk_actors.http._app import create_app
    from adk_actors.http._errors import HOST_STOPPED

    host = Host(config(tmp_path), system=actor_system).start()
    try:
        app = create_app(host, AppCatalog(runtime_agents.APPS, None), HttpSection())
        message = {"app_name": "echo", "user_id": "ann", "session_id": "s1",
                   "new_message": {"role": "user", "parts": [{"text": "hi"}]}}
        with TestClient(app, base_url="http://127.0.0.1") as client:
            assert client.post("/apps/echo/users/ann/sessions/s1", json={}).status_code == 200
            assert client.post("/run", json=message).status_code == 200
            host.stop()
            asks: dict[str, Callable[[], Any]] = {
                "get": lambda: client.get("/apps/echo/users/ann/sessions/s1"),
                "list": lambda: client.get("/apps/echo/users/ann/sessions"),
                "run": lambda: client.post("/run", json=message),
                "run_sse": lambda: client.post("/run_sse", json=message),
            }
            for name, ask in asks.items():
                began = time.monotonic()
                answer = ask()
                took = time.monotonic() - began
                assert answer.status_code == 503 and answer.json() == {"detail": HOST_STOPPED}, (name, answer.text)
                assert took < LONG_BEFORE, (name, took)
    finally:
        host.stop()


def test_a_root_still_starting_is_not_taken_for_a_stopped_host() -> None:
    """The root answers ``not_running`` while it starts its children (``Host.start``,
    or a client attached meanwhile): a caller asks again (HostError, not HostStopped);
    a root that stops, or refuses the call (its process gone), is a stopped host."""
    from adk_actors.runtime._routing import root_not_running
    from supervision import ServerNotRunning

    for starting in ("server starting", "server not initialised"):
        answer = root_not_running(ServerNotRunning(starting))
        assert isinstance(answer, HostError) and not isinstance(answer, HostStopped), starting
    for gone in ("server is stopping", "server shut down",
                 "WhichChildren could not be delivered: the server is not running"):
        assert isinstance(root_not_running(ServerNotRunning(gone)), HostStopped), gone


def test_a_host_never_started_answers_host_stopped_at_once(tmp_path: Path) -> None:
    """A Runner given a Host that was never started (no actor system, no tree) is told so
    by a typed error at its first call, never an AttributeError of the missing system."""
    from adk_actors.runtime import Runner

    runner = Runner(Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"))), "echo",
                    call_timeout=20.0)
    calls: list[Callable[[], Any]] = [lambda: runner.create_session("u", "s"), lambda: list(runner.run("u", "s", "hi")),
                                      lambda: runner.list_sessions("u"), lambda: runner.get_session("u", "s")]
    for call in calls:
        with pytest.raises(HostStopped, match="not running"):
            call()
