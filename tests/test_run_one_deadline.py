"""A Runner's wait for a run has one deadline, however many partitions die meanwhile.

A long chaos soak at load 40 found a turn still waiting 84 s after it began, for a
limit of 40 s: each way the Runner tried again after the session's partition died got a
whole wait of its own (the run sent again through the host's current partition: up to
``call_timeout``; its stream: a new limit; each look at the silent partition: another
``call_timeout``). These tests run the carrier's rules on a clock of their own (no
sleeping) with stand-ins for the partition: the run sent straight to a partition that
dies 30 s in, then sent again and silent, must fail ``timeout`` at the limit (40 s) and
no later; a partition found gone must be asked for the session with only what is left.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk_actors import HostError, RunFailedError
from adk_actors.messages import RunAccepted, RunRequest
from adk_actors.runtime._async_line import CLOSED
from adk_actors.runtime._run_carrier import RunCarrier
from adk_actors.runtime._run_transport import NotTaken
from adk_actors.runtime._runner import Runner

LIMIT = 40.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Endpoint:
    """A leased endpoint whose Thespian context listens on the test's clock: silence."""

    def __init__(self, clock: Clock) -> None:
        self.clean = True
        self.context = self
        self._clock = clock

    def listen(self, timeout: float) -> Any:
        self._clock.now += timeout
        return None


class Pool:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def lease(self, peer: Any) -> Endpoint:
        return Endpoint(self.clock)

    def new(self) -> Endpoint:
        return Endpoint(self.clock)

    def give_back(self, endpoint: Endpoint) -> None:
        pass


class DyingTransport:
    """The first partition's way: silent for ``dies_after`` seconds, then it dies."""

    def __init__(self, clock: Clock, dies_after: float) -> None:
        self.clock = clock
        self.dies_at = clock.now + dies_after

    def receive(self, timeout: float) -> Any:
        self.clock.now += timeout
        if self.clock.now >= self.dies_at:
            raise NotTaken()
        return None


class Direct:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def send(self, endpoint: Endpoint, request: RunRequest, deadline: float | None = None) -> Any:
        accepted = RunAccepted(request.run_id, 0, 4242, session="partition-1")
        return accepted, None, "ref-1", DyingTransport(self.clock, dies_after=30.0)


class Router:
    """The host's current partition: takes a run again after ``restart`` seconds (the
    tree restarting), or never within the wait it is given; a session asked for while the
    tree restarts is answered never (each ask waits what it was given)."""

    app_name = "app"
    call_timeout = 30.0

    def __init__(self, clock: Clock, restart: float, partition_there: bool = True) -> None:
        self.clock = clock
        self.restart = restart
        self.there = partition_there
        self.waits: list[tuple[str, float]] = []

    def peer(self, user_id: str, session_id: str) -> int:
        return 0

    def request(self, context: Any, request: RunRequest, session_id: str, user_id: str, *,
                maybe_taken: bool = False, timeout: float | None = None) -> RunAccepted:
        waits = self.call_timeout if timeout is None else min(self.call_timeout, timeout)
        self.waits.append(("run", waits))
        if self.restart > waits:
            self.clock.now += waits
            raise HostError(f"the host did not take the request within {waits:g} s")
        self.clock.now += self.restart
        return RunAccepted(request.run_id, 0, 4242, session="partition-1")

    def call(self, request: Any, session_id: str, user_id: str, *, timeout: float | None = None) -> Any:
        waits = self.call_timeout if timeout is None else min(self.call_timeout, timeout)
        self.waits.append(("state", waits))
        self.clock.now += waits
        raise HostError(f"no answer within {waits:g} s")

    def partition_there(self, address: Any) -> bool:
        return self.there


def carrier(clock: Clock, router: Router) -> RunCarrier:
    made = RunCarrier.__new__(RunCarrier)
    made.timeout, made.orphan_grace, made.clock = LIMIT, 3.0, clock
    made._endpoints, made._direct, made._router = Pool(clock), Direct(clock), router  # type: ignore[assignment]
    return made


def request() -> RunRequest:
    return RunRequest("app", "u", "s", run_id="run-1")


def test_a_run_sent_again_after_its_partition_died_waits_only_what_is_left_of_its_limit() -> None:
    clock = Clock()
    router = Router(clock, restart=5.0)
    began = clock.now
    with pytest.raises(RunFailedError) as failed:
        list(carrier(clock, router)._run(request(), None))
    assert failed.value.reason == "timeout"
    # sent again 30 s in: the host's partition was given the 10 s left, not its own 30
    assert [kind for kind, _ in router.waits] == ["run"] and router.waits[0][1] == pytest.approx(10.0, abs=0.3)
    assert clock.now - began <= LIMIT + 0.5  # the caller was told at its limit, not 35 s + a new 40


def test_a_run_whose_partition_does_not_come_back_ends_at_its_limit() -> None:
    clock = Clock()
    router = Router(clock, restart=1000.0)  # the tree restarts for longer than any wait
    began = clock.now
    with pytest.raises(HostError):
        list(carrier(clock, router)._run(request(), None))
    assert clock.now - began <= LIMIT + 0.5


def test_a_partition_found_gone_is_asked_for_the_session_with_what_is_left() -> None:
    clock = Clock()
    router = Router(clock, restart=5.0, partition_there=False)
    began = clock.now
    with pytest.raises(RunFailedError) as failed:
        list(carrier(clock, router)._run(request(), None))
    assert failed.value.reason in ("timeout", "killed")
    asked = [waits for kind, waits in router.waits if kind == "state"]
    assert asked, "the partition found gone was not asked for the session"
    assert clock.now - began <= LIMIT + 0.5


class DyingLine:
    """``run_async``'s direct line to the partition: the partition dies 30 s in."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    def open(self, run_id: str, ref: str) -> asyncio.Queue[Any]:
        return self.queue

    def send(self, message: Any) -> bool:
        self.clock.now += 30.0
        self.queue.put_nowait(CLOSED)
        return True

    def release(self, run_id: str, ref: str) -> None:
        pass


class LineRoute:
    def __init__(self, clock: Clock) -> None:
        self.line = DyingLine(clock)

    async def async_line(self, request: RunRequest) -> DyingLine:
        return self.line


def test_an_async_run_whose_line_ended_is_sent_again_with_what_is_left_of_its_limit() -> None:
    clock = Clock()
    router = Router(clock, restart=5.0)
    runner = Runner.__new__(Runner)
    runner.timeout, runner.orphan_grace, runner.clock = LIMIT, 3.0, clock
    runner.follow_resumes, runner.auto_create_session, runner._runs = True, False, {}
    runner._endpoints, runner._router = Pool(clock), router  # type: ignore[assignment]
    runner._direct = LineRoute(clock)  # type: ignore[assignment]
    began = clock.now

    async def turn() -> None:
        async for _event in runner.run_async("u", "s", "hello"):
            pass

    with pytest.raises(RunFailedError) as failed:
        asyncio.run(turn())
    assert failed.value.reason == "timeout"
    assert [kind for kind, _ in router.waits] == ["run"] and router.waits[0][1] == pytest.approx(10.0, abs=0.3)  # sent again with the 10 s left
    assert clock.now - began <= LIMIT + 0.5
