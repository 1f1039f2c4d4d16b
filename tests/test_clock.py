"""The clock seam (issue 20): servers named in ``SUPERVISION_MANUAL_CLOCK`` run on a
manual clock that moves only when they are sent ``AdvanceClock``. Timers, restart
windows, passivation, run deadlines and kill grace periods are then tested exactly,
without waiting for them."""

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
from conftest import probe

from adk_actors import RunConfig, RunFailedError
from adk_actors.messages import HeldKeys, LiveWorkers, session_key
from adk_actors.runtime import Host, HostConfig
from supervision import (
    BadRequest,
    CallerRef,
    Clock,
    GenServer,
    Restart,
    SupervisorSpec,
    call,
    start_server,
    start_supervisor,
)
from supervision.lowlevel import MANUAL_CLOCK_VARIABLE, MonotonicClock, WallClock
from supervision.protocol import AdvanceClock, OsPid
from supervision.testing import ManualClock, pid_alive, running_actor_system, wait_until


class Alarm(GenServer):
    """Calls: ``("arm", seconds, name)`` sets a timer (``("arm all", [(seconds, name),
    ...])`` several at once); ``"rung"``: the names rung, each
    with the clock's reading when it rang, relative to the start."""

    def init(self, args: Any) -> None:
        self.started = self.clock()
        self.rung: list[tuple[str, float]] = []

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, tuple) and request[0] == "arm":
            self.send_after(request[1], request[2])
            return "armed"
        if isinstance(request, tuple) and request[0] == "arm all":  # several timers set in one instant
            for seconds, name in request[1]:
                self.send_after(seconds, name)
            return "armed"
        if isinstance(request, tuple) and request[0] == "arm many":
            for i in range(request[1]):
                self.send_after(request[2], f"{request[3]} {i}")
            return "armed"
        if request == "rung":
            return self.rung
        if request == "wakeups armed":  # Thespian wakeups pending for this server's timers
            return len(self._arms)
        return super().handle_call(request, caller)

    def handle_timeout(self, payload: Any) -> None:
        self.rung.append((payload, round(self.clock() - self.started, 6)))
        if payload == "chain":
            self.send_after(1.0, "chained")


@pytest.fixture
def manual_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv(MANUAL_CLOCK_VARIABLE, "Alarm,Supervisor,SessionPartition")
    with running_actor_system(tmp_path / "logs") as system:
        yield system


def test_timers_fire_exactly_when_the_manual_clock_reaches_them(manual_system: Any) -> None:
    alarm = start_server(manual_system, Alarm, None)
    for seconds, name in ((10.0, "late"), (5.0, "early"), (5.0, "early too"), (2.0, "chain")):
        call(manual_system, alarm, ("arm", seconds, name))
    assert call(manual_system, alarm, AdvanceClock(1.999)) == 0
    assert call(manual_system, alarm, "rung") == []
    assert call(manual_system, alarm, AdvanceClock(0.001)) == 1
    assert call(manual_system, alarm, AdvanceClock(3.0)) == 3  # a timer set by a timer fires in the same step
    assert call(manual_system, alarm, "rung") == [("chain", 2.0), ("chained", 3.0), ("early", 5.0), ("early too", 5.0)]
    assert call(manual_system, alarm, AdvanceClock(4.999)) == 0
    assert call(manual_system, alarm, AdvanceClock(0.001)) == 1
    assert call(manual_system, alarm, "rung")[-1] == ("late", 10.0)


def test_real_clock_timers_fire_in_order_through_one_armed_wakeup(actor_system: Any) -> None:
    """2,000 pending timers keep one Thespian wakeup armed, not 2,000 (Thespian sorts its
    list of wakeups on every add: a partition arming a deadline per run got slower with
    every run it had served); timers set later but due sooner still fire first, in order."""
    alarm = start_server(actor_system, Alarm, None)
    call(actor_system, alarm, ("arm many", 2000, 600.0, "deadline"))
    assert call(actor_system, alarm, "wakeups armed") == 1
    # Set in one handler, so that their order of due times does not hang on how fast four
    # calls get through on a loaded machine (one at a time, "third" could be due before
    # "first" was even set).
    call(actor_system, alarm, ("arm all", [(0.3, "third"), (0.1, "first"), (0.2, "second"), (0.2, "second too")]))
    assert call(actor_system, alarm, "wakeups armed") <= 3  # one per time a sooner timer was set
    wait_until(lambda: len(call(actor_system, alarm, "rung")) == 4, timeout=10)
    rung = call(actor_system, alarm, "rung")
    assert [name for name, _ in rung] == ["first", "second", "second too", "third"]
    assert all(at >= due for (_, at), due in zip(rung, (0.1, 0.2, 0.2, 0.3), strict=True))
    assert call(actor_system, alarm, "wakeups armed") == 1  # the deadlines' wakeup, still armed


def test_a_manual_clock_moves_only_forward_and_only_when_told() -> None:
    clock = ManualClock(100.0)
    assert isinstance(clock, Clock) and clock.current_time() == clock.current_time() == 100.0
    assert clock.advance(2.5) == 102.5 and clock.current_time() == 102.5
    assert clock.advance_to(50.0) == 102.5  # never back
    assert clock.advance_to(110.0) == 110.0 and clock.advance(0) == 110.0
    for bad, error in ((-1.0, ValueError), (float("nan"), ValueError), (float("inf"), ValueError), ("1", TypeError),
                       (True, TypeError)):
        with pytest.raises(error):
            clock.advance(bad)  # type: ignore[arg-type]
    assert clock.current_time() == 110.0  # a refused move leaves it where it was
    assert ManualClock().current_time() == 0.0
    assert isinstance(WallClock(), Clock) and isinstance(MonotonicClock(), Clock)
    assert abs(WallClock().current_time() - time.time()) < 60  # epoch seconds, not a monotonic count


def test_a_manual_clock_server_refuses_a_bad_advance_and_keeps_its_time(manual_system: Any) -> None:
    alarm = start_server(manual_system, Alarm, None)
    call(manual_system, alarm, ("arm", 1.0, "ring"))
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(BadRequest, match="seconds"):
            call(manual_system, alarm, AdvanceClock(bad))
    assert call(manual_system, alarm, AdvanceClock(1.0)) == 1  # alive, and its clock had not moved
    assert call(manual_system, alarm, "rung") == [("ring", 1.0)]


def test_a_server_on_the_real_clock_refuses_to_be_advanced(actor_system: Any) -> None:
    alarm = start_server(actor_system, Alarm, None)
    with pytest.raises(BadRequest, match="real clock"):
        call(actor_system, alarm, AdvanceClock(1.0))


def test_the_restart_window_slides_with_the_clock(manual_system: Any, events: Path) -> None:
    """intensity 2 in 5 s: two kills are restarted; a third within the window makes the
    supervisor give up, but not once the clock has moved past the first two."""
    sup = start_supervisor(manual_system, SupervisorSpec(children=(probe("worker", events, restart=Restart.PERMANENT),),
                                                         intensity=2, period=5.0))

    def kill_and_wait_restart() -> None:
        before = sup.which_children()[0].pid
        assert before is not None
        os.kill(before, signal.SIGKILL)
        wait_until(lambda: sup.which_children()[0].pid not in (None, before), timeout=10)

    kill_and_wait_restart()
    kill_and_wait_restart()
    # The first two leave the window. (The timers that fire are the two kills' pidfd
    # checks, due 50 ms after each: Thespian had reported both deaths, so they do nothing.)
    assert call(manual_system, sup.address, AdvanceClock(5.001)) == 2
    kill_and_wait_restart()
    kill_and_wait_restart()  # two in the new window: still within the budget
    assert sup.which_children()[0].restarts == 4


def test_passivation_happens_exactly_at_the_idle_timeout(manual_system: Any, tmp_path: Path) -> None:
    """A session idle for ``idle_timeout`` seconds of its partition's clock is dropped
    from memory, not a moment before; its partition goes on, and the session comes
    back from the store on its next request."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), idle_timeout=300.0)
    with Host(config, system=manual_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        list(runner.run("ann", "s1", "one"))
        partition = host.partition_for("echo", "ann", "s1")
        pid = call(manual_system, partition, OsPid())

        def held() -> bool:
            return session_key("echo", "ann", "s1") in call(manual_system, partition, HeldKeys())

        assert held()
        call(manual_system, partition, AdvanceClock(299.9))
        assert held()  # 0.1 s before its idle timeout
        call(manual_system, partition, AdvanceClock(0.2))
        assert not held() and call(manual_system, partition, OsPid()) == pid  # dropped; the partition goes on
        assert [e.content.text for e in runner.run("ann", "s1", "two")][-1] == "echo: two (turn 2)"


def test_a_run_deadline_and_its_kill_grace_are_kept_to_the_clock(manual_system: Any, tmp_path: Path) -> None:
    """A run with a 5 s deadline must stop exactly at 5 s of its partition's clock; the
    worker still running it (stuck in a tool) is killed exactly 2 s later (its
    ``run_stop_grace``), and only then is its caller told ``timeout``: no caller hears
    of a run's end while its work goes on."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"))
    with Host(config, system=manual_system) as host:
        runner = host.runner("sleepy")
        runner.create_session("ann", "s1")
        outcome: list[Any] = []

        def turn() -> None:
            try:
                outcome.append(list(runner.run("ann", "s1", "sleep 30", run_config=RunConfig(timeout=5))))
            except RunFailedError as exc:
                outcome.append(exc)

        partition = host.partition_for("sleepy", "ann", "s1")
        workers = wait_until(lambda: found if len(found := call(manual_system, partition, LiveWorkers())) == 2
                             else None, timeout=10)  # its pool's two workers, connected
        thread = threading.Thread(target=turn, daemon=True)
        thread.start()
        thread.join(0.5)  # the tool is sleeping by now
        call(manual_system, partition, AdvanceClock(4.9))
        thread.join(0.5)
        assert outcome == [] and thread.is_alive()  # 0.1 s before the deadline
        call(manual_system, partition, AdvanceClock(0.2))  # past the deadline: it must stop
        thread.join(0.5)
        call(manual_system, partition, AdvanceClock(1.8))
        thread.join(0.5)
        assert outcome == [] and all(pid_alive(worker) for worker in workers)  # its grace is 2 s
        call(manual_system, partition, AdvanceClock(0.2))
        wait_until(lambda: any(not pid_alive(worker) for worker in workers), timeout=10)
        assert sum(pid_alive(worker) for worker in workers) == 1  # only the one that ran it
        thread.join(10)
        assert isinstance(outcome[0], RunFailedError) and outcome[0].reason == "timeout"  # told once it is dead
        assert [e.content.text for e in runner.run("ann", "s1", "hello")][-1] == "awake: hello"
