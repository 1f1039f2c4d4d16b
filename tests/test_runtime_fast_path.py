"""The turn's fast path: no process started for a session or a turn, one envelope per
batch, and what keeps it safe (a request sent twice, to the wrong partition, or with a
used run id)."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import runtime_agents
from conftest import SharedHost

from adk_actors import Content, InvalidRequestError, SessionBusyError
from adk_actors.messages import (
    AdkEvent,
    CreateSession,
    DeleteSession,
    GetState,
    HeldKeys,
    LiveWorkers,
    RunAccepted,
    RunDone,
    RunFailed,
    RunMessages,
    RunRequest,
    session_key,
)
from adk_actors.runtime import Host, HostConfig
from supervision import CallError, SupervisorClient, call
from supervision.lowlevel import load_scaled
from supervision.protocol import Call, Reply
from supervision.testing import pid_alive, wait_until


@pytest.fixture(scope="module")
def shared_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedHost]:
    hosts = SharedHost(tmp_path_factory.mktemp("fast_path"),
                       lambda data: HostConfig(apps=runtime_agents.APPS, data_dir=str(data)))
    yield hosts
    hosts.close()


@pytest.fixture
def host(shared_hosts: SharedHost) -> Host:
    """This module's ``host``: one shared by the tests that neither kill, stop nor
    reconfigure it (``SharedHost``: a fresh one after a test that broke its tree), each
    test's sessions on a user of its own (``user``)."""
    return shared_hosts.get()


_USERS = itertools.count(1)


@pytest.fixture
def user() -> str:
    """A user no other test of the module has (the shared host keeps every session)."""
    return f"ann{next(_USERS)}"


def texts(events: list[Any]) -> list[str]:
    return [e.content.text for e in events if e.content is not None and e.content.text]


def partition_pid(host: Host, app: str, user: str, sid: str) -> int:
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    owner = next(i for i in sessions.which_children() if i.address == host.partition_for(app, user, sid, refresh=True))
    assert owner.pid is not None
    return owner.pid


def until_terminal(endpoint: Any, run_id: str, timeout: float = 15.0) -> list[Any]:
    """Every message of run ``run_id`` as it arrived (envelopes kept), up to its terminal one."""
    received: list[Any] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = endpoint.listen(0.5)
        if getattr(message, "run_id", None) != run_id:
            continue
        received.append(message)
        inner = message.messages if isinstance(message, RunMessages) else (message,)
        if any(isinstance(m, (RunDone, RunFailed)) for m in inner):
            return received
    raise AssertionError(f"no terminal message for {run_id} within {timeout} s; got {received}")


def batched_turns(host: Host, user: str, app: str, turns: tuple[str, ...]) -> Iterator[tuple[str, list[Any]]]:
    """Create session ``user``/s1 of ``app``, then send it each of ``turns`` in order, as a
    RunRequest through its partition; yield (text, every envelope of that run)."""
    host.runner(app).create_session(user, "s1")
    partition = host.partition_for(app, user, "s1")
    with host.system.private() as endpoint:
        for text in turns:
            request = RunRequest(app, user, "s1", new_message=Content.user(text))
            call(endpoint, partition, request, timeout=10)
            yield text, until_terminal(endpoint, request.run_id)


def flatten(received: list[Any]) -> list[Any]:
    return [m for message in received for m in (message.messages if isinstance(message, RunMessages) else (message,))]


def test_new_sessions_and_their_turns_start_no_process(host: Host, user: str) -> None:
    """A session is an object in its partition and a turn runs on the partition's
    workers: 20 new sessions and their first two turns leave the host's processes as
    they were (before, each new session forked two). (On the shared host: the sessions
    counted are the test's user's.)"""
    runner = host.runner("echo")
    def workers() -> list[list[int]] | None:
        """Each partition's connected workers, once each has its two (run_workers)."""
        now = [sorted(call(host.system, p, LiveWorkers(), timeout=5)) for p in host.partitions()]
        return now if all(len(w) == 2 for w in now) else None

    before = wait_until(workers, timeout=10)
    for i in range(20):
        runner.create_session(user, f"s{i}")
        assert texts(list(runner.run(user, f"s{i}", "one")))[-1] == "echo: one (turn 1)"
        assert texts(list(runner.run(user, f"s{i}", "two")))[-1] == "echo: two (turn 2)"
    assert workers() == before
    mine = session_key("echo", user, "")
    held = sum(1 for p in host.partitions() for key in call(host.system, p, HeldKeys(), timeout=5)
               if key.startswith(mine))
    assert held == 20


def test_a_caller_gets_each_event_once_in_order_then_one_end(host: Host, user: str) -> None:
    """A caller that sends a RunRequest itself (no Runner) gets the run's messages in
    order, each once, envelopes or not, and exactly one terminal message, last."""
    host.runner("counter").create_session(user, "s1")
    partition = host.partition_for("counter", user, "s1")
    with host.system.private() as endpoint:
        request = RunRequest("counter", user, "s1", new_message=Content.user("go"))
        accepted = call(endpoint, partition, request, timeout=10)
        assert isinstance(accepted, RunAccepted) and accepted.run_id == request.run_id
        messages = flatten(until_terminal(endpoint, request.run_id))
    events = [m for m in messages if isinstance(m, AdkEvent)]
    assert [m.seq for m in events] == list(range(len(events)))
    assert isinstance(messages[-1], RunDone) and messages[-1].event_count == len(events)
    assert sum(isinstance(m, (RunDone, RunFailed)) for m in messages) == 1
    shape = [(e.event.author, bool(e.event.content and e.event.content.function_calls),
              bool(e.event.content and e.event.content.function_responses)) for e in events]
    assert shape == [("user", False, False), ("counter", True, False), ("counter", False, True),
                     ("counter", False, False)]  # user, call, response, answer


def test_a_request_sent_twice_starts_one_run_and_a_used_run_id_is_refused_to_another_request(host: Host, user: str) -> None:
    runner = host.runner("sleepy")
    runner.create_session(user, "s1")
    partition = host.partition_for("sleepy", user, "s1")
    with host.system.private() as endpoint:
        request = RunRequest("sleepy", user, "s1", new_message=Content.user("sleep 0.5"))
        first = call(endpoint, partition, request, timeout=10)
        again = call(endpoint, first.session, request, timeout=10)  # a retry while it runs
        assert (again.run_id, again.position) == (first.run_id, 0)
        ended = flatten(until_terminal(endpoint, request.run_id))
        # Once more, after it ended (a caller that never heard the end): its end again, not a second run.
        call(endpoint, first.session, request, timeout=10)
        assert type(flatten(until_terminal(endpoint, request.run_id))[-1]) is type(ended[-1])
        try:  # another request with that run id: refused, a run id is never reused
            call(endpoint, first.session, replace(request, new_message=Content.user("sleep 0.1")), timeout=10)
        except CallError as exc:
            assert exc.code == "invalid_request" and "used already" in exc.detail
        else:
            raise AssertionError("a used run id was accepted again")
    events = runner.get_session(user, "s1").events
    assert [e.content.text for e in events if e.author == "user"] == ["sleep 0.5"]
    assert partition_pid(host, "sleepy", user, "s1") == first.session_pid  # it did not crash


def test_a_request_asked_again_from_another_endpoint_has_its_end_sent_there(host: Host, user: str) -> None:
    """The Runner asks again from a new endpoint when it takes its first request for
    undelivered: if the partition had taken it after all, the run's messages from then on
    go to the endpoint that asked last, so its stream ends (it waited for its deadline)."""
    runner = host.runner("sleepy")
    runner.create_session(user, "s1")
    partition = host.partition_for("sleepy", user, "s1")
    request = RunRequest("sleepy", user, "s1", new_message=Content.user("sleep 0.5"))
    with host.system.private() as first, host.system.private() as second:
        call(first, partition, request, timeout=10)
        again = call(second, partition, request, timeout=10)
        assert again.run_id == request.run_id
        assert isinstance(flatten(until_terminal(second, request.run_id))[-1], RunDone)


def test_a_partition_refuses_a_request_for_a_session_of_another_partition(host: Host, user: str) -> None:
    """One writer per session: a request sent to a partition the session does not hash
    to is refused (``not_running``: the caller asks the right one), never served."""
    runner = host.runner("echo")
    sid = next(f"s{i}" for i in range(100)
               if host.partition_for("echo", user, f"s{i}") != host.partition_for("echo", user, "s0"))
    runner.create_session(user, sid)
    wrong = host.partition_for("echo", user, "s0")
    with host.system.private() as endpoint:
        for request in (RunRequest("echo", user, sid, new_message=Content.user("misdirected")),
                        GetState("echo", user, sid), CreateSession("echo", user, "another", {}),
                        DeleteSession("echo", user, sid)):
            key = session_key("echo", user, request.session_id)
            if host.partition_for("echo", user, request.session_id) == wrong:
                continue
            try:
                call(endpoint, wrong, request, timeout=10)
            except CallError as exc:
                assert exc.code == "not_running", (request, exc)
            else:
                raise AssertionError(f"a partition served {type(request).__name__} of a session of another ({key})")
    assert runner.get_session(user, sid).events == []
    assert texts(list(runner.run(user, sid, "hello")))[-1] == "echo: hello (turn 1)"


def test_concurrent_async_runs_on_one_runner_each_get_their_own_messages(host: Host, user: str) -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    runner = host.runner("sleepy", timeout=10.0)
    for i in range(8):
        runner.create_session(user, f"s{i}")

    async def conversation(i: int) -> list[str]:
        said = []
        for _ in (1, 2):
            said += [e.content.text async for e in runner.run_async(user, f"s{i}", "sleep 0.2")
                     if e.content and e.content.text and e.author != "user"]
        return said

    async def everyone() -> list[list[str]]:
        # Fewer threads than conversations: each run's waiting hops between threads
        # while other runs start on them.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=3))
        return await asyncio.gather(*(conversation(i) for i in range(8)))

    answers = asyncio.run(everyone())
    assert len(answers) == 8 and all(len(said) == 2 for said in answers), answers


def test_an_abandoned_run_never_leaks_into_the_next_one(host: Host, user: str) -> None:
    runner = host.runner("sleepy", timeout=10.0)
    runner.create_session(user, "s1")
    runner.create_session(user, "s2")
    abandoned = runner.run(user, "s1", "sleep 0.3")
    next(abandoned)  # the user's event; the run goes on without a reader
    abandoned.close()
    for _ in range(3):  # while the abandoned run still sends its events somewhere
        assert texts(list(runner.run(user, "s2", "hello")))[-1] == "awake: hello"
    wait_until(lambda: len(runner.get_session(user, "s1").events) == 4, timeout=5)  # it finished


def test_cancelling_an_async_consumer_raises_cancelled_error(host: Host, user: str) -> None:
    import asyncio

    runner = host.runner("sleepy", timeout=10.0)
    runner.create_session(user, "s1")

    async def consume(in_flight: asyncio.Event) -> None:
        async for event in runner.run_async(user, "s1", "sleep 1.5"):
            if event.content is not None and event.content.function_calls:
                in_flight.set()  # the tool runs: the run is surely not over

    async def cancel_in_flight() -> str:
        in_flight = asyncio.Event()
        task = asyncio.create_task(consume(in_flight))
        await asyncio.wait_for(in_flight.wait(), 10)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "finished"

    assert asyncio.run(cancel_in_flight()) == "cancelled"
    wait_until(lambda: len(runner.get_session(user, "s1").events) == 4, timeout=load_scaled(10))
    assert texts(list(runner.run(user, "s1", "hi")))[-1] == "awake: hi"


def test_a_runner_forgets_runs_that_ended(host: Host, user: str) -> None:
    runner = host.runner("echo")
    runner.create_session(user, "s1")
    for text in ("one", "two", "three"):
        list(runner.run(user, "s1", text, run_id=f"run-{text}"))
    assert runner._runs == {}
    with pytest.raises(InvalidRequestError, match="no run 'run-two' in progress"):  # the kit's error, not supervision's
        runner.cancel("run-two")


def test_a_request_sent_straight_to_a_known_session_is_answered_by_its_run(host: Host, user: str) -> None:
    host.runner("echo").create_session(user, "s1")
    partition = host.partition_for("echo", user, "s1")
    with host.system.private() as endpoint:
        first = RunRequest("echo", user, "s1", new_message=Content.user("one"))
        accepted = call(endpoint, partition, first, timeout=10)
        until_terminal(endpoint, first.run_id)
        quiet = RunRequest("echo", user, "s1", new_message=Content.user("two"), reply_accepted=False)
        endpoint.tell(accepted.session, Call(quiet))
        received = []
        while not any(isinstance(m, (RunDone, RunFailed)) for m in flatten(
                [r for r in received if isinstance(r, RunMessages)])):
            message = endpoint.listen(10)
            assert message is not None, f"no terminal; got {received}"
            received.append(message)
        assert not any(isinstance(m, (Reply, RunAccepted)) for m in received)  # the run's messages are the answer
        assert [m.event.content.text for m in flatten(received) if isinstance(m, AdkEvent)][-1] == "echo: two (turn 2)"


def test_a_refused_straight_request_still_gets_its_error(host: Host, user: str, tmp_path: Path) -> None:
    runner = host.runner("sleepy")
    runner.create_session(user, "s1")
    partition = host.partition_for("sleepy", user, "s1")
    with host.system.private() as endpoint:
        long = RunRequest("sleepy", user, "s1", new_message=Content.user("sleep 0.5"))
        accepted = call(endpoint, partition, long, timeout=10)
        refused = RunRequest("sleepy", user, "s1", new_message=Content.user("again"), reject_if_busy=True,
                             reply_accepted=False)
        # From an endpoint of its own: the long run's events stream to the first one, and
        # one of them could be taken for the refusal's answer.
        with host.system.private() as other:
            try:
                call(other, accepted.session, refused, timeout=10)
            except CallError as exc:
                assert exc.code == "busy"
            else:
                raise AssertionError("a second run on a busy session was taken")
        until_terminal(endpoint, long.run_id)
    # The Runner's own straight requests: a busy session is a typed error, the session carries on.
    list(runner.run(user, "s1", "sleep 0.5"))
    done = threading.Event()
    in_tool = tmp_path / "in-tool"
    threading.Thread(target=lambda: (list(runner.run(user, "s1", f"sleep 2 {in_tool}")), done.set())).start()
    wait_until(in_tool.exists)
    try:
        list(runner.run(user, "s1", "now", reject_if_busy=True))
    except SessionBusyError:
        pass
    else:
        raise AssertionError("reject_if_busy was not honoured")
    assert done.wait(15)
    assert [e.content.text for e in runner.get_session(user, "s1").events if e.author == "user"] == [
        "sleep 0.5", "sleep 0.5", f"sleep 2 {in_tool}"]


def test_a_worker_held_up_between_the_answer_and_the_end_still_sends_the_turn_as_one_message(host: Host, user: str) -> None:
    """Wall time passes on the run's worker between its answer and its end, with next to
    no CPU (a busy machine preempting it): the caller still gets the turn in one
    envelope (and the session committed it in one transaction)."""
    for text, received in batched_turns(host, user, "dawdling", ("one", "two")):
        assert len(received) == 1 and isinstance(received[0], RunMessages), received
        # The user's message, the answer, the end.
        assert [type(m) for m in received[0].messages] == [AdkEvent, AdkEvent, RunDone]
        assert received[0].messages[1].event.content.text.startswith(f"echo: {text}")


def test_a_worker_that_computed_long_before_its_answer_still_sends_the_answer_with_the_end(host: Host, user: str) -> None:
    """5 ms of CPU between the user's message and the answer, then wall time with next
    to no CPU before the end: the user's message may go first (the worker computed
    past its hold window), but the answer and the end go together. The window is 2 ms
    of the worker's CPU time, which a garbage collection on a loaded machine can
    cross: four turns of five must show it."""
    together = 0
    for text, received in batched_turns(host, user, "thinking", ("one", "two", "three", "four", "five")):
        assert [type(m) for m in flatten(received)] == [AdkEvent, AdkEvent, RunDone]
        assert flatten(received)[1].event.content.text.startswith(f"echo: {text}")
        last = received[-1]
        together += isinstance(last, RunMessages) and [type(m) for m in last.messages][-2:] == [AdkEvent, RunDone]
    assert together >= 4


def test_an_event_is_not_held_while_its_run_waits_for_a_tool(host: Host, user: str) -> None:
    host.runner("sleepy").create_session(user, "s1")
    partition = host.partition_for("sleepy", user, "s1")
    with host.system.private() as endpoint:
        request = RunRequest("sleepy", user, "s1", new_message=Content.user("sleep 1.5"))
        call(endpoint, partition, request, timeout=10)
        first = endpoint.listen(10)
        arrived = time.monotonic()
        rest = until_terminal(endpoint, request.run_id)
        ended = time.monotonic()
    calls = [m for m in flatten([first]) if isinstance(m, AdkEvent) and m.event.content is not None
             and m.event.content.function_calls]
    assert calls and calls[0].event.content.function_calls[0].name == "sleep_for", first
    assert ended - arrived > 1.0  # it came while the tool slept, not with the run's end
    assert isinstance(flatten(rest)[-1], RunDone)


def test_large_messages_between_a_partition_and_its_worker_keep_their_order(host: Host, user: str) -> None:
    """A tool's 100 KB state change (after the run's first events were sent), an
    answer of 100 KB, and the next turn's StartRun carrying that state: the caller and
    the store get every event, in the order the run made them, and the next run sees
    the state."""
    from runtime_agents import BULK

    runner = host.runner("bulky")
    runner.create_session(user, "s1")
    first = list(runner.run(user, "s1", "grow"))
    assert [e.content.text or ("call" if e.content.function_calls else "response") for e in first] == [
        "grow", "call", "response", "grown"]
    assert first[2].actions.state_delta["blob"] == "x" * BULK

    second = list(runner.run(user, "s1", "hello"))
    assert second[-1].content.text.startswith(f"hello: turn 2, blob {BULK} ")
    assert len(second[-1].content.text) > BULK
    stored = runner.get_session(user, "s1")
    assert [e.id for e in stored.events] == [e.id for e in first + second]
    assert stored.state["blob"] == "x" * BULK


def test_a_run_worker_killed_right_after_its_last_output_ends_its_run_well_and_the_next_turn_works(
        host: Host, user: str) -> None:
    """Its output left before it died: the run ends with RunDone and every event
    stored; the next turn goes to a live worker, given the whole history."""
    runner = host.runner("short_lived")
    runner.create_session(user, "s1")
    pids, streamed = [], []
    for turn in (1, 2, 3):
        events = list(runner.run(user, "s1", f"hi {turn}"))
        streamed += events
        answer, _, pid = texts(events)[-1].rpartition(" from ")
        assert texts(events)[:-1] == [f"hi {turn}"] and answer == f"echo: hi {turn} (turn {turn})"
        pids.append(int(pid))
        wait_until(lambda: not pid_alive(pids[-1]), timeout=5)  # the worker that served it was killed
    assert len(set(pids)) == 3
    assert [e.id for e in runner.get_session(user, "s1").events] == [e.id for e in streamed]


def test_a_worker_that_forgot_a_sessions_history_is_sent_it_whole(actor_system: Any, tmp_path: Any) -> None:
    """A worker keeps at most ``worker_cached_events`` history events. With room for
    one short session only, three sessions talking in turn on one worker keep pushing
    each other out: every StartRun that counts on a forgotten prefix is answered
    NeedHistory, sent again whole, and every turn still sees its whole history."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        worker_cached_events=3)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        for sid in ("a", "b", "c"):
            runner.create_session("ann", sid)
        for turn in (1, 2, 3):
            for sid in ("a", "b", "c"):
                assert texts(list(runner.run("ann", sid, f"{sid}{turn}")))[-1] == f"echo: {sid}{turn} (turn {turn})"
        history = texts(runner.get_session("ann", "b").events)
        assert history == [t for n in (1, 2, 3) for t in (f"b{n}", f"echo: b{n} (turn {n})")]


def test_a_turn_waits_while_the_hosts_partitions_cannot_be_listed(host: Host, user: str) -> None:
    """While the partitions restart, listing them fails (HostError): a turn waits for
    them within its call timeout instead of failing at once (a soak once had thousands
    of such instant failures while the tree restarted)."""
    from adk_actors import HostError

    runner = host.runner("echo")
    runner.create_session(user, "s1")
    real = host.partitions
    lookups = {"n": 0}

    def restarting(refresh: bool = False) -> list[Any]:
        lookups["n"] += 1
        if lookups["n"] <= 5:
            raise HostError("a session partition is restarting")
        return real(refresh)

    host.partitions = restarting  # type: ignore[method-assign]
    try:
        assert texts(list(runner.run(user, "s1", "hello")))[-1] == "echo: hello (turn 1)"
    finally:
        del host.partitions
    assert lookups["n"] > 5


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def test_bad_run_input_on_the_runners_line_is_refused_typed_and_nothing_of_it_is_stored(host: Host, user: str) -> None:
    """Bad input to a run on the Runner's line (a field of the wrong type, a lone
    surrogate, a value nested deeper than the host's limit of 32 though within what any
    host accepts, 100), on both the blocking and the asyncio line: each refused with
    InvalidRequestError, nothing of it stored, the partition keeps its pid; a value
    nested as deep as the limit is taken and stored."""
    runner = host.runner("echo")
    runner.create_session(user, "s1")
    pid = partition_pid(host, "echo", user, "s1")
    assert texts(list(runner.run(user, "s1", "hello")))[-1].startswith("echo: hello")  # the line is open now
    with pytest.raises(InvalidRequestError, match=r"RunRequest\.state_delta"):
        list(runner.run(user, "s1", "x", state_delta={1: "a key that is not text"}))  # type: ignore[dict-item]
    with pytest.raises(InvalidRequestError, match=r"RunRequest\.new_message"):
        list(runner.run(user, "s1", {"role": "user", "parts": [{"text": "x"}]}))  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError, match="surrogate"):
        list(runner.run(user, "s1", "x \ud800"))
    with pytest.raises(InvalidRequestError, match="nested deeper than 32"):
        list(runner.run(user, "s1", "deep", state_delta={"x": _nested(40)}))

    async def deep_async() -> None:
        async for _ in runner.run_async(user, "s1", "deep", state_delta={"x": _nested(40)}):
            pass

    with pytest.raises(InvalidRequestError, match="nested deeper than 32"):
        asyncio.run(deep_async())
    session = runner.get_session(user, "s1")
    assert texts(session.events)[0] == "hello" and len(session.events) == 2 and "x" not in session.state
    assert partition_pid(host, "echo", user, "s1") == pid
    events = list(runner.run(user, "s1", "at the limit", state_delta={"x": _nested(31)}))
    assert texts(events)[-1].startswith("echo: at the limit")
    assert runner.get_session(user, "s1").state["x"] == _nested(31)


def test_the_runner_goes_back_to_the_partition_when_the_sessions_process_is_gone(host: Host, user: str) -> None:
    """(Last of the module's tests on the shared host: it kills a partition, after which
    ``SharedHost`` would start a fresh host for the next test.)"""
    runner = host.runner("echo")
    runner.create_session(user, "s1")
    list(runner.run(user, "s1", "one"))  # the runner now sends this session's turns straight to its partition
    before = partition_pid(host, "echo", user, "s1")
    os.kill(before, signal.SIGKILL)
    wait_until(lambda: partition_pid(host, "echo", user, "s1") != before)
    assert texts(list(runner.run(user, "s1", "two")))[-1] == "echo: two (turn 2)"
    assert texts(list(runner.run(user, "s1", "three")))[-1] == "echo: three (turn 3)"
