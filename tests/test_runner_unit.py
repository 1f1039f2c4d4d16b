"""The Runner's routing, retries and run stream, with no actor process started.

A fake host (:class:`FakeHost`, the ``HostView`` Protocol) lists partitions that live
in this process: its ``system.private()`` yields endpoints whose ``ask`` hands the
message to the partition's Python code and whose ``listen`` reads what it answered.
The real ``supervision.call`` runs on them, so what is tested is the Runner's own
routing: which partition is asked, how often, with which request, and what its caller
sees. A holder "on another host" is an address whose TCP port refuses connections (a
bound socket that does not listen): a call handed to it and then refused is a real
``ServerDiedAnswering``.
"""

from __future__ import annotations

import asyncio
import math
import queue
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import pytest

from adk_actors import (
    Content,
    Event,
    HostError,
    InvalidRequestError,
    Part,
    RunFailedError,
    SessionElsewhereError,
)
from adk_actors.messages import (
    AdkEvent,
    FollowRun,
    GetState,
    RunAccepted,
    RunDone,
    RunFailed,
    RunInfo,
    RunMessages,
    RunRequest,
)
from adk_actors.runtime import Runner
from adk_actors.runtime._async_line import CLOSED
from adk_actors.runtime._endpoints import EndpointPool
from adk_actors.runtime._follow import followed
from adk_actors.runtime._routing import Router
from adk_actors.runtime._run_stream import RunStream, drive, drive_async
from adk_actors.runtime._run_transport import NotTaken
from adk_actors.runtime._service_calls import ListApprovals
from supervision.protocol import Call, ErrorReply, Handed, Reply

APP = "app"


# -- the fake host ----------------------------------------------------------------------------


class FakeEndpoint:
    """A Thespian endpoint's ``ask``/``listen``/``tell`` over partitions in this process."""

    def __init__(self) -> None:
        self.inbox: queue.Queue[Any] = queue.Queue()

    def ask(self, address: Any, message: Any, timeout: float) -> Any:
        if not address.alive:
            return None  # refused at once, as Thespian's delivery to a dead address
        address.receive(message, self)
        return self.listen(timeout)

    def tell(self, address: Any, message: Any) -> None:
        if address.alive:
            address.receive(message, self)

    def listen(self, timeout: float) -> Any:
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None


class FakeSystem:
    def __init__(self) -> None:
        self.opened = 0

    def private(self) -> Any:
        system = self

        class Private:
            def __enter__(self) -> FakeEndpoint:
                system.opened += 1
                return FakeEndpoint()

            def __exit__(self, *exc: Any) -> None:
                pass

        return Private()


@dataclass(eq=False)
class Partition:
    """A partition in this process: ``answers(self, call, endpoint)`` is what it does with a call."""

    name: str
    answers: Callable[[Partition, Call, FakeEndpoint], None]
    alive: bool = True
    calls: list[Any] = field(default_factory=list)  # the requests it was asked, in order

    def receive(self, message: Any, endpoint: FakeEndpoint) -> None:
        if isinstance(message, Call) and type(message.request).__name__ == "LinePath":
            endpoint.inbox.put(Reply(message.ref, None))  # no line: runs go through the endpoint
            return
        if isinstance(message, Call):
            self.calls.append(message.request)
            self.answers(self, message, endpoint)

    def __repr__(self) -> str:
        return self.name


class FakeHost:
    """One partition listed (``listed``); listed again (``refresh``), the partition
    that restarted in its place (``restarted``) is."""

    def __init__(self, listed: Partition, restarted: Partition | None = None) -> None:
        self.system = FakeSystem()
        self.root = None
        self.listed = listed
        self.restarted = restarted

    def partitions(self, refresh: bool = False) -> list[Any]:
        if refresh and self.restarted is not None:
            self.listed = self.restarted
        return [self.listed]

    def partition_for(self, app_name: str, user_id: str, session_id: str, refresh: bool = False) -> Any:
        return self.partitions(refresh)[0]

    def listed_partition_for(self, app_name: str, user_id: str, session_id: str) -> Any:
        return self.listed

    def partition_alive(self, address: Any) -> bool | None:
        return bool(address.alive)

    def tree_process_alive(self, pid: int | None) -> bool | None:
        return None

    def session_home(self, app_name: str, user_id: str, session_id: str) -> Any | None:
        return None

    def forget_home(self, address: Any) -> None:
        pass

    def is_member_sessions(self, address: Any) -> bool:
        return False


@pytest.fixture
def dead_holder() -> Iterator[Any]:
    """The address of a holder on another host that died: its port refuses connections."""
    refusing = socket.socket()
    refusing.bind(("127.0.0.1", 0))  # bound, not listening: a connection is refused
    try:
        yield SimpleNamespace(addressDetails=SimpleNamespace(sockname=refusing.getsockname()))
    finally:
        refusing.close()


def hands_to(holder: Any) -> Callable[[Partition, Call, FakeEndpoint], None]:
    """A partition that forwards every call to ``holder`` (which then never answers);
    a direct run (no RunAccepted asked for) it refuses ``not_running``."""

    def answers(partition: Partition, call: Call, endpoint: FakeEndpoint) -> None:
        if isinstance(call.request, RunRequest) and not call.request.reply_accepted:
            endpoint.inbox.put(ErrorReply(call.ref, "not_running", "the session is held elsewhere"))
        else:
            endpoint.inbox.put(Handed(call.ref, holder))

    return answers


def event(text: str) -> Event:
    return Event(author="agent", content=Content.model(text))


def text_of(e: Event) -> str | None:
    return e.content.parts[0].text if e.content is not None else None


def runs(events: list[Event], elsewhere: int) -> Callable[[Partition, Call, FakeEndpoint], None]:
    """The session's next holder: ``session_elsewhere`` while the dead holder's lease
    lasts (the first ``elsewhere`` asks), then the run: accepted, its events, its end."""

    def answers(partition: Partition, call: Call, endpoint: FakeEndpoint) -> None:
        request = call.request
        if len([c for c in partition.calls if c.run_id == request.run_id]) <= elsewhere:
            endpoint.inbox.put(ErrorReply(call.ref, "session_elsewhere", "the session is held by a host that died"))
            return
        endpoint.inbox.put(Reply(call.ref, RunAccepted(request.run_id, 0, 0, None)))
        endpoint.inbox.put(RunMessages(request.run_id, (
            *(AdkEvent(request.run_id, e, seq) for seq, e in enumerate(events)),
            RunDone(request.run_id, events[-1].id, len(events)))))

    return answers


def refuses_elsewhere(partition: Partition, call: Call, endpoint: FakeEndpoint) -> None:
    """A partition whose session is held by a host that died, its lease not run out."""
    endpoint.inbox.put(ErrorReply(call.ref, "session_elsewhere", "held by a host that died"))


# -- routing and retries ----------------------------------------------------------------------


def test_a_turn_handed_to_a_holder_that_died_is_asked_again_with_its_run_id_until_the_next_holder_runs_it(
        dead_holder: Any) -> None:
    told = [event("one"), event("two")]
    first, second = Partition("first", hands_to(dead_holder)), Partition("restarted", runs(told, elsewhere=2))
    runner = Runner(FakeHost(first, second), APP)

    got = list(runner.run("u", "s", "hi", run_id="run-1"))

    assert [e.id for e in got] == [e.id for e in told]
    # The direct send was refused (not_running), the host's partition handed the turn
    # to the holder that died, then the next holder was asked, the same turn each time,
    # until its lease ran out: one run, never a second one.
    assert [(type(r).__name__, r.run_id) for r in first.calls] == [("RunRequest", "run-1")] * 2
    assert [(type(r).__name__, r.run_id, r.new_message) for r in second.calls] == \
        [("RunRequest", "run-1", first.calls[0].new_message)] * 3
    assert runner._runs == {}


def test_a_read_handed_to_a_holder_that_died_is_refused_at_once(dead_holder: Any) -> None:
    first = Partition("first", hands_to(dead_holder))
    second = Partition("restarted", refuses_elsewhere)
    runner = Runner(FakeHost(first, second), APP)

    with pytest.raises(SessionElsewhereError):
        runner.get_state("u", "s")

    assert [type(r) for r in first.calls] == [GetState]
    assert [type(r) for r in second.calls] == [GetState]  # asked once: a read wrote nothing either way


class HomeHost(FakeHost):
    """A host of a cluster whose session lives on another member: ``home`` (that
    member's ``sessions`` supervisor, forgotten once told so); ``forgotten`` lists the
    homes forgotten."""

    def __init__(self, listed: Partition, home: Partition) -> None:
        super().__init__(listed)
        self.home: Partition | None = home
        self.forgotten: list[Partition] = []

    def session_home(self, app_name: str, user_id: str, session_id: str) -> Any | None:
        return self.home

    def forget_home(self, address: Any) -> None:
        self.forgotten.append(address)
        self.home = None


def test_a_turn_another_members_home_handed_on_and_then_seemed_gone_is_asked_there_again_never_refused(
        dead_holder: Any) -> None:
    # The home's sessions supervisor hands the turn to its partition, which then takes no
    # connection (a busy host can look so): the turn may have been taken. This host's own
    # partition would refuse the session (held by the home) with a 503 that says "try
    # again", and the caller's retry would be a second turn. The home is asked again with
    # the same run id instead, and answers it.
    told = [event("one"), event("two")]
    handed_then_runs = runs(told, elsewhere=0)

    def home_answers(partition: Partition, call: Call, endpoint: FakeEndpoint) -> None:
        if len(partition.calls) == 1:
            endpoint.inbox.put(Handed(call.ref, dead_holder))
        else:
            handed_then_runs(partition, call, endpoint)

    home, own = Partition("home", home_answers), Partition("own", refuses_elsewhere)
    host = HomeHost(own, home)
    clock = FakeClock()
    router = Router(host, APP, 30.0, EndpointPool(lambda: host.system), clock=clock, sleep=clock.sleep)
    request = RunRequest(APP, "u", "s", new_message=Content.user("hi"))

    with host.system.private() as endpoint:
        accepted = router.request(endpoint, request, "s", "u")

    assert accepted.run_id == request.run_id
    assert [r.run_id for r in home.calls] == [request.run_id] * 2 and own.calls == [] and host.forgotten == []


def test_a_home_that_refuses_the_call_itself_is_forgotten_and_the_hosts_own_partition_asked() -> None:
    gone = Partition("home", refuses_elsewhere, alive=False)
    own = Partition("own", runs([event("one")], elsewhere=0))
    host = HomeHost(own, gone)
    router = Router(host, APP, 30.0, EndpointPool(lambda: host.system))
    request = RunRequest(APP, "u", "s", new_message=Content.user("hi"))

    with host.system.private() as endpoint:
        assert router.request(endpoint, request, "s", "u").run_id == request.run_id

    assert host.forgotten == [gone] and [r.run_id for r in own.calls] == [request.run_id]


def test_a_turn_its_home_did_not_take_is_asked_again_while_the_home_holds_it_never_refused() -> None:
    # Thespian gave up sending the turn to its home (CI: a home too busy to acknowledge
    # in time had taken it and written it, and the caller was answered 503 "held by"
    # that home, a refusal that says nothing was written). The turn may have been taken:
    # this host's partition, which finds the session held by the home, is asked again
    # with the same run id until the session's holder answers it, never refused.
    gone = Partition("home", refuses_elsewhere, alive=False)
    own = Partition("own", runs([event("one")], elsewhere=2))
    host = HomeHost(own, gone)
    clock = FakeClock()
    router = Router(host, APP, 30.0, EndpointPool(lambda: host.system), clock=clock, sleep=clock.sleep)
    request = RunRequest(APP, "u", "s", new_message=Content.user("hi"))

    with host.system.private() as endpoint:
        assert router.request(endpoint, request, "s", "u").run_id == request.run_id

    assert host.forgotten == [gone] and [r.run_id for r in own.calls] == [request.run_id] * 3


def test_a_read_its_home_did_not_take_forgets_the_home_and_is_answered_by_the_hosts_partition_at_once() -> None:
    # The other half of the rule for a home that did not answer (Router.home_did_not_answer):
    # a read wrote nothing either way, so the host's own partition's refusal is its answer.
    gone = Partition("home", refuses_elsewhere, alive=False)
    own = Partition("own", refuses_elsewhere)
    host = HomeHost(own, gone)
    clock = FakeClock()
    router = Router(host, APP, 30.0, EndpointPool(lambda: host.system), clock=clock, sleep=clock.sleep)

    with host.system.private() as endpoint, pytest.raises(SessionElsewhereError):
        router.request(endpoint, GetState(APP, "u", "s"), "s", "u")

    assert host.forgotten == [gone] and [type(r) for r in own.calls] == [GetState]


def test_a_direct_turn_its_home_refused_is_asked_again_with_its_run_id_never_refused() -> None:
    # The Runner's direct send to the session's home (another member) is refused at once:
    # the same rule as a call's (the home forgotten, the turn may have been taken), so
    # this host's partition, which finds the session held by that home, is asked again
    # with the same run id until the session's holder runs it, never refused.
    gone = Partition("home", refuses_elsewhere, alive=False)
    told = [event("one")]
    own = Partition("own", runs(told, elsewhere=2))
    host = HomeHost(own, gone)
    runner = Runner(host, APP)

    got = list(runner.run("u", "s", "hi", run_id="run-1"))

    assert [e.id for e in got] == [e.id for e in told]
    assert host.forgotten == [gone] and [r.run_id for r in own.calls] == ["run-1"] * 3


class SlowHomeHost(HomeHost):
    """A host of a cluster whose session's home (another member) takes the direct turn
    but answers nothing within the direct send's first wait, and then takes no
    connection (the home's address refuses: ``dead_holder``), as a home on a loaded
    machine may look."""

    def __init__(self, listed: Partition, home: Partition) -> None:
        super().__init__(listed, home)
        self.remote = home

    def partition_alive(self, address: Any) -> bool | None:
        return None if address is self.remote else super().partition_alive(address)

    def is_member_sessions(self, address: Any) -> bool:
        return address is self.remote


def test_a_direct_turn_its_home_took_but_did_not_answer_is_asked_again_never_refused(dead_holder: Any) -> None:
    # A suite run at load: the Runner's direct send to the session's home (another
    # member) got no answer in its first wait and the home then took no connection in
    # time; the Runner took the turn for not taken and asked this host's partition,
    # which found the session held by that home: 503 "held by", and the home had
    # written the turn. It may have been taken, so it is asked again with its run id.
    home = Partition("home", lambda partition, call, endpoint: None)  # takes it, answers nothing yet
    home.addressDetails = dead_holder.addressDetails  # type: ignore[attr-defined]
    told = [event("one")]
    own = Partition("own", runs(told, elsewhere=2))
    runner = Runner(SlowHomeHost(own, home), APP)

    got = list(runner.run("u", "s", "hi", run_id="run-1"))

    assert [e.id for e in got] == [e.id for e in told]
    assert [r.run_id for r in home.calls] == ["run-1"] and [r.run_id for r in own.calls] == ["run-1"] * 3


def holder_gone_first(then: Callable[[Partition, Call, FakeEndpoint], None]
                      ) -> Callable[[Partition, Call, FakeEndpoint], None]:
    """A partition that handed the first call on to the session's holder and then found
    that holder's host stopped (``holder_gone``: the holder may have taken it); ``then``
    answers the calls after it."""

    def answers(partition: Partition, call: Call, endpoint: FakeEndpoint) -> None:
        if len(partition.calls) == 1:
            endpoint.inbox.put(ErrorReply(call.ref, "holder_gone", "held by a host that stopped before it answered"))
        else:
            then(partition, call, endpoint)

    return answers


def test_a_turn_whose_holder_stopped_before_answering_is_asked_again_with_its_run_id_never_refused() -> None:
    # Sent straight to the session's partition, which handed it to the holder on another
    # host; that host then took no connection (dead, or too busy to take one): the turn
    # may have been taken, so the caller is never answered with the refusal that says
    # nothing was written (a 503 whose retry would be a second turn). It is asked again,
    # the same turn, while the holder's lease lasts, until the next holder runs it.
    told = [event("one"), event("two")]
    partition = Partition("own", holder_gone_first(runs(told, elsewhere=3)))
    runner = Runner(FakeHost(partition), APP)

    got = list(runner.run("u", "s", "hi", run_id="run-1"))

    assert [e.id for e in got] == [e.id for e in told]
    assert [r.run_id for r in partition.calls] == ["run-1"] * 4  # the direct send, two refusals, the run


def test_a_read_whose_holder_stopped_before_answering_is_refused_at_once() -> None:
    partition = Partition("own", holder_gone_first(refuses_elsewhere))
    runner = Runner(FakeHost(partition), APP)

    with pytest.raises(SessionElsewhereError, match="stopped before it answered"):
        runner.get_state("u", "s")

    assert [type(r) for r in partition.calls] == [GetState]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_turn_no_next_holder_takes_within_the_call_timeout_is_a_host_error_never_a_refusal(
        dead_holder: Any) -> None:
    first = Partition("first", hands_to(dead_holder))
    second = Partition("restarted", refuses_elsewhere)
    host = FakeHost(first, second)
    clock = FakeClock()
    router = Router(host, APP, 5.0, EndpointPool(lambda: host.system), clock=clock, sleep=clock.sleep)
    request = RunRequest(APP, "u", "s", new_message=Content.user("hi"))

    with host.system.private() as endpoint, pytest.raises(HostError, match="may have acted on"):
        router.request(endpoint, request, "s", "u")

    assert len(second.calls) > 5 and {r.run_id for r in second.calls} == {request.run_id}
    assert clock.now >= 5.0 and clock.now < 5.5  # it waited out the call timeout, on the clock it was given


def test_a_direct_run_is_streamed_from_the_first_answer_and_its_endpoint_kept_for_the_next() -> None:
    def answers(partition: Partition, call: Call, endpoint: FakeEndpoint) -> None:
        request = call.request
        told = [event(f"{request.run_id}:{n}") for n in range(3)]
        endpoint.inbox.put(RunMessages(request.run_id, (
            *(AdkEvent(request.run_id, e, seq) for seq, e in enumerate(told)), RunDone(request.run_id, None, 3))))

    only = Partition("only", answers)
    host = FakeHost(only)
    runner = Runner(host, APP)

    texts = [[text_of(e) for e in runner.run("u", "s", "hi", run_id=run_id)] for run_id in ("a", "b")]

    assert texts == [["a:0", "a:1", "a:2"], ["b:0", "b:1", "b:2"]]
    assert [r.reply_accepted for r in only.calls] == [False, False]  # sent direct: no RunAccepted asked
    assert host.system.opened == 2  # one endpoint for both runs, one asking where the partition's line is


# -- the stream ---------------------------------------------------------------------------------


def test_a_silent_run_probes_its_partition_and_fails_killed_an_orphan_grace_after_it_is_gone() -> None:
    stream = RunStream("r", None, 60.0, 0.0, orphan_grace=3.0)
    assert stream.silent(0.5) is False
    assert stream.silent(1.0) is True  # look at the partition
    assert stream.silent(1.5) is False
    stream.gone(1.5)
    assert stream.silent(2.5) is False and stream.silent(4.4) is False  # no more probes: waiting for its report
    with pytest.raises(RunFailedError) as failed:
        stream.silent(4.5)
    assert failed.value.reason == "killed"


def test_a_run_with_no_end_by_its_deadline_fails_timeout() -> None:
    stream = RunStream("r", None, 10.0, 100.0)
    with pytest.raises(RunFailedError) as failed:
        stream.silent(110.0)
    assert failed.value.reason == "timeout"


def test_a_stream_gives_its_events_then_its_failure_and_ignores_other_runs() -> None:
    stream = RunStream("r", "ref-1", 60.0, 0.0)
    late = event("late")
    assert stream.take(AdkEvent("earlier-run", late, 0)) == []
    assert stream.take(Reply("ref-1", None)) == [] and not stream.ended
    told = event("told")
    assert stream.take(RunMessages("r", (AdkEvent("r", told, 0), RunFailed("r", "error", "Boom", "it broke")))) \
        == [told]
    assert stream.ended and isinstance(stream.error, RunFailedError) and stream.error.reason == "error"


def test_a_direct_call_refused_not_running_ends_the_stream_as_not_taken() -> None:
    stream = RunStream("r", "ref-1", 60.0, 0.0)
    stream.take(ErrorReply("ref-1", "not_running", ""))
    assert stream.ended and isinstance(stream.error, NotTaken)


class ScriptedTransport:
    """Gives ``script``'s messages one per ``receive`` (None: silence), advancing ``clock``."""

    def __init__(self, script: list[Any], clock: FakeClock) -> None:
        self.script = script
        self.clock = clock

    def first(self, message: Call, wait: float) -> Any:
        raise AssertionError("not sent here")

    def receive(self, timeout: float) -> Any:
        self.clock.now += timeout
        return self.script.pop(0) if self.script else None


def test_a_restarted_partition_reports_the_run_before_the_orphan_grace_ends() -> None:
    clock = FakeClock()
    told = event("before the crash")
    interrupted = RunFailed("r", "interrupted", "PartitionRestarted")
    transport = ScriptedTransport([AdkEvent("r", told, 0), *[None] * 8, interrupted], clock)
    looked: list[float] = []

    def lost() -> bool:
        looked.append(clock.now)
        return True

    stream = RunStream("r", None, 60.0, clock.now, orphan_grace=3.0)
    got: list[Event] = []
    with pytest.raises(RunFailedError) as failed:
        for e in drive(stream, transport, None, clock, lost):
            got.append(e)
    assert got == [told]
    assert failed.value.reason == "interrupted"  # the true reason, not "killed"
    assert len(looked) == 1  # looked at once, then waited for the report


def test_the_async_driver_reads_the_lines_queue_and_a_closed_line_is_not_taken() -> None:
    async def scenario() -> tuple[list[Event], Exception]:
        loop = asyncio.get_running_loop()
        queue_: asyncio.Queue[Any] = asyncio.Queue()
        told = event("one")
        queue_.put_nowait(AdkEvent("r", told, 0))
        queue_.put_nowait(RunDone("r", told.id, 1))
        stream = RunStream("r", None, 60.0, loop.time(), probe_every=math.inf)
        got = [e async for e in drive_async(stream, queue_, loop.time)]
        closed: asyncio.Queue[Any] = asyncio.Queue()
        closed.put_nowait(CLOSED)
        try:
            async for _ in drive_async(RunStream("r2", None, 60.0, loop.time(), probe_every=math.inf), closed,
                                       loop.time):
                pass
        except NotTaken as exc:
            return got, exc
        raise AssertionError("a closed line ended the run quietly")

    got, error = asyncio.run(scenario())
    assert [text_of(e) for e in got] == ["one"] and isinstance(error, NotTaken)


# -- the endpoint pool --------------------------------------------------------------------------


def test_the_pool_keeps_answered_endpoints_prefers_the_partitions_own_and_drops_the_unanswered() -> None:
    system = FakeSystem()
    pool = EndpointPool(lambda: system, keep=2)
    to_one, to_two = pool.lease(peer=1), pool.lease(peer=2)
    to_one.clean = to_two.clean = True
    pool.give_back(to_one)
    pool.give_back(to_two)
    assert pool.lease(peer=1) is to_one  # its connection to partition 1 is open
    waiting = pool.lease(peer=3)
    assert waiting is to_two
    pool.give_back(waiting)  # no answer came: a late one may still, so it is not kept
    assert pool.idle() == 0
    fresh = pool.lease()
    fresh.clean = True
    pool.give_back(fresh)
    assert pool.idle() == 1


def test_the_pool_never_leases_an_endpoint_of_an_earlier_actor_system() -> None:
    systems = [FakeSystem()]
    pool = EndpointPool(lambda: systems[-1])
    old = pool.lease()
    old.clean = True
    pool.give_back(old)
    systems.append(FakeSystem())  # the host attached to a new system
    assert pool.lease() is not old


# -- following the host's resumes ---------------------------------------------------------------


def test_a_run_the_host_resumes_is_followed_and_each_committed_event_given_once() -> None:
    one, two, three = event("one"), event("two"), event("three")
    asked: list[Any] = []

    def run(request: RunRequest, direct: bool) -> Iterator[Event]:
        asked.append(request)
        if len(asked) == 1:
            yield one
            yield two
            raise RunFailedError(request.run_id, "interrupted", "PartitionRestarted", resumed_as="run-2")
        yield two  # the resuming run's catch-up repeats what was given
        yield three

    first = RunRequest(APP, "u", "s", new_message=Content.user("hi"))
    assert [e.id for e in followed(run, first, follows=True)] == [one.id, two.id, three.id]
    assert isinstance(asked[1], FollowRun) and (asked[1].run_id, asked[1].after) == ("run-2", two.id)


def test_a_resume_not_followed_or_refused_raises_the_failure_that_named_it() -> None:
    def run(request: RunRequest, direct: bool) -> Iterator[Event]:
        if isinstance(request, FollowRun):
            raise InvalidRequestError("no run run-2 on this session")  # not resumed after all
        raise RunFailedError(request.run_id, "interrupted", "PartitionRestarted", resumed_as="run-2")
        yield  # (a generator)

    first = RunRequest(APP, "u", "s", new_message=Content.user("hi"))
    for follows in (False, True):
        with pytest.raises(RunFailedError) as failed:
            list(followed(run, first, follows=follows))
        assert (failed.value.run_id, failed.value.resumed_as) == (first.run_id, "run-2")



# -- a resume the host made but whose report was not seen in the orphan grace -------------------


def silent_then_resumed(resumer: RunInfo | None) -> tuple[list[Any], list[Event], RunFailedError | None]:
    """Run "run-1" through a Runner's follow rule: it gives one event, then goes silent,
    its partition gone past the orphan grace (the restarted partition's report never
    seen); the session's last run is ``resumer``. The requests asked, the events given
    and the failure raised."""
    clock = FakeClock()
    before, after = event("before the crash"), event("after the resume")
    runner = Runner(FakeHost(Partition("only", refuses_elsewhere)), APP, orphan_grace=3.0)
    looked_up: list[tuple[str, str]] = []

    def last_run(user_id: str, session_id: str) -> RunInfo | None:
        looked_up.append((user_id, session_id))
        return resumer

    runner.last_run = last_run  # type: ignore[method-assign]
    asked: list[Any] = []

    def run(request: RunRequest, direct: bool) -> Iterator[Event]:
        asked.append(request)
        if isinstance(request, FollowRun):
            yield before  # the catch-up repeats what was given
            yield after
            return
        stream = RunStream(request.run_id, None, 60.0, clock.now, orphan_grace=3.0)
        yield from drive(stream, ScriptedTransport([AdkEvent(request.run_id, before, 0)], clock), None, clock,
                         lambda: True)

    first = replace(RunRequest(APP, "u", "s", new_message=Content.user("hi")), run_id="run-1")
    got: list[Event] = []
    runner._run = lambda request, run_config, direct=True, ends_at=None: run(request, direct)  # type: ignore[method-assign,misc]
    try:
        for e in runner._followed(first, None):
            got.append(e)
    except RunFailedError as error:
        assert looked_up == [("u", "s")]
        return asked, got, error
    assert looked_up == [("u", "s")]
    return asked, got, None


def test_a_run_gone_silent_whose_session_last_run_resumes_it_is_followed_to_the_resumed_runs_end() -> None:
    asked, got, error = silent_then_resumed(RunInfo("run-2", APP, "u", "s", "running", "inv", resumes="run-1"))

    assert error is None
    assert [text_of(e) for e in got] == ["before the crash", "after the resume"]
    assert isinstance(asked[1], FollowRun) and asked[1].run_id == "run-2"


def test_a_run_gone_silent_whose_session_last_run_is_unrelated_fails_host_gone_as_before() -> None:
    for unrelated in (None, RunInfo("run-9", APP, "u", "s", "done", "inv"),
                      RunInfo("run-9", APP, "u", "s", "running", "inv", resumes="run-0")):
        asked, got, error = silent_then_resumed(unrelated)

        assert error is not None and (error.run_id, error.reason, error.error_type, error.resumed_as) \
            == ("run-1", "killed", "HostGone", "")
        assert [text_of(e) for e in got] == ["before the crash"] and len(asked) == 1


# -- the service groups -------------------------------------------------------------------------


def test_each_service_group_sends_what_its_flat_method_sends_and_approvals_still_lists_when_called() -> None:
    runner = Runner(FakeHost(Partition("only", hands_to(None))), APP)
    sent: list[tuple[str, Any]] = []

    def service(child_id: str, request: Any) -> Any:
        sent.append((child_id, request))
        return 0

    runner._router.service = service  # type: ignore[method-assign]
    note = Part(text="n")
    pairs: list[tuple[Callable[[], Any], Callable[[], Any]]] = [
        (lambda: runner.artifacts.save("u", "s", "a", note), lambda: runner.save_artifact("u", "s", "a", note)),
        (lambda: runner.artifacts.load("u", "s", "a", 2), lambda: runner.load_artifact("u", "s", "a", 2)),
        (lambda: runner.artifacts.list("u", "s"), lambda: runner.list_artifacts("u", "s")),
        (lambda: runner.artifacts.versions("u", "s", "a"), lambda: runner.artifact_versions("u", "s", "a")),
        (lambda: runner.artifacts.metadata("u", "s", "a"), lambda: runner.artifact_metadata("u", "s", "a")),
        (lambda: runner.artifacts.delete("u", "s", "a"), lambda: runner.delete_artifact("u", "s", "a")),
        (lambda: runner.memory.add_session("u", "s"), lambda: runner.add_session_to_memory("u", "s")),
        (lambda: runner.memory.search("u", "q", 3), lambda: runner.search_memory("u", "q", 3)),
        (lambda: runner.approvals.list("u", None), lambda: runner.approvals("u", None)),
        (lambda: runner.approvals.approve("a1"), lambda: runner.approve("a1")),
        (lambda: runner.approvals.deny("a1", "no"), lambda: runner.deny("a1", "no")),
        (lambda: runner.credentials.put("u", "k", {"t": 1}), lambda: runner.put_credential("u", "k", {"t": 1})),
        (lambda: runner.credentials.delete("u", "k"), lambda: runner.delete_credential("u", "k")),
        (lambda: runner.breakers.states(), lambda: runner.breaker_states()),
    ]
    for grouped, flat in pairs:
        sent.clear()
        grouped()
        flat()
        assert len(sent) == 2 and sent[0] == sent[1], sent
    sent.clear()
    runner.approvals("u")
    assert sent == [("approvals", ListApprovals(APP, "u", "pending"))]
