"""A session's turns against a fake owner: no actor process, no worker, no sleep.

``Session`` needs only what its ``SessionOwner`` Protocol names; ``LocalOwner`` below
is that owner in this process: a real SQLite store (``:memory:``) on a ManualClock,
timers that are recorded (a test fires them by hand), a worker pool that records what
it was given, and every message sent recorded with what the store held when it went.
What a caller relies on is checked here: an event is durable before its caller hears
of it, runs wait their turn up to the queue's limit, refusals record nothing, one
terminal message per run (after its worker let go, when it had to be stopped), and
the store's end of each run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from adk_actors import Content, Event
from adk_actors._types import RunConfig
from adk_actors.messages import (
    AdkEvent,
    Limits,
    RunAccepted,
    RunDone,
    RunFailed,
    RunMessages,
    RunRequest,
)
from adk_actors.runtime._partition_timers import CancelGraceOver, CatchUp, RunDeadline
from adk_actors.runtime._run_protocol import RunOutcome, RunOutput
from adk_actors.runtime._session import Session, SessionRun
from adk_actors.runtime._turns import NewTurn
from adk_actors.store import SessionStores, SQLiteSessionStore
from supervision import BadRequest, CallError
from supervision.testing import ManualClock

ADDRESS = "partition-address"


class LocalOwner:
    """A ``SessionOwner`` in this process (see the module)."""

    def __init__(self, clock: ManualClock, *, limits: Limits | None = None, max_queued_runs: int = 4,
                 run_timeout: float | None = 600.0) -> None:
        self.store: SessionStores = SQLiteSessionStore(":memory:", clock=clock)
        self.address = ADDRESS
        self.limits = limits or Limits()
        self.max_queued_runs = max_queued_runs
        self.run_timeout = run_timeout
        self.run_stop_grace = 2.0
        self.trace_turns = 5
        self.now = clock
        #: (to, message, how many events of the session the store held when it was sent)
        self.sent: list[tuple[Any, Any, int]] = []
        self.timers: list[tuple[float, Any]] = []
        self.dispatched: list[str] = []
        self.cancelled: list[tuple[str, str]] = []
        self.abandoned: list[tuple[str, bool, Callable[[], None]]] = []
        self.ended: list[tuple[str, str]] = []

    def clock(self) -> float:
        return self.now.current_time()

    def send(self, address: Any, message: Any) -> None:
        self.sent.append((address, message, len(self.store.get_session("app", "ann", "s1").events)))

    def durable_address(self, caller: Any) -> Any:
        return caller

    def send_after(self, seconds: float, payload: Any) -> None:
        self.timers.append((seconds, payload))

    def dispatch(self, session: Session, run: SessionRun) -> None:
        run.worker = f"worker-for-{run.run_id}"
        self.dispatched.append(run.run_id)

    def cancel_on_worker(self, run: SessionRun, reason: str) -> None:
        self.cancelled.append((run.run_id, reason))

    def live_on_worker(self, run: SessionRun, request: Any) -> None:
        raise AssertionError("no live run here")

    def abandon(self, run: SessionRun, *, waited: bool, then: Callable[[], None]) -> None:
        self.abandoned.append((run.run_id, waited, then))

    def run_ended(self, session: Session, run: SessionRun, status: str) -> None:
        self.ended.append((run.run_id, status))

    def follow_stopping(self, run_id: str, caller: Any) -> bool:
        return False  # no crashed session's run is stopping here

    def auto_resume(self, session: Session, run: SessionRun, failed: RunFailed) -> RunRequest | str | None:
        return None

    def to(self, caller: str) -> list[Any]:
        """The messages ``caller`` got, in order."""
        return [message for to, message, _ in self.sent if to == caller]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1_800_000_000.0)


@pytest.fixture
def owner(clock: ManualClock) -> Iterator[LocalOwner]:
    made = LocalOwner(clock)
    made.store.create_session("app", "ann", "s1")
    yield made
    made.store.close()


def session_of(owner: LocalOwner) -> Session:
    data = owner.store.get_session("app", "ann", "s1")
    return Session(owner, data.app_name, data.user_id, data.id, data.state, data.events, data.last_update_time)


def request(run_id: str, text: str = "hi", **fields: Any) -> RunRequest:
    return RunRequest("app", "ann", "s1", new_message=Content.user(text), run_id=run_id, **fields)


def unpacked(messages: list[Any]) -> list[Any]:
    """A caller's messages, each envelope's in its place."""
    return [m for message in messages for m in (message.messages if isinstance(message, RunMessages) else (message,))]


def reply(run_id: str, text: str, **fields: Any) -> Event:
    return Event(author="bot", invocation_id=f"e-{run_id.removeprefix('run-')}", content=Content.model(text),
                 **fields)


def test_a_turn_commits_each_event_before_its_caller_hears_of_it_and_ends_once(owner: LocalOwner,
                                                                               clock: ManualClock) -> None:
    session = session_of(owner)
    assert session.take(request("run-1"), "caller-a") == RunAccepted("run-1", 0, os.getpid(), ADDRESS)
    assert owner.dispatched == ["run-1"] and owner.store.run_status("run-1") == "running"
    assert owner.timers == [(600.0, RunDeadline(session.key, "run-1"))]  # the host's run_timeout
    assert session.active is not None and session.active.started == session.active.queued_at == clock.current_time()
    clock.advance(3.0)
    typing = reply("run-1", "thin", partial=True)
    first, last = reply("run-1", "thinking"), reply("run-1", "done", turn_complete=True)
    session.on_output(session.active, RunOutput("run-1", [typing, first]))
    session.on_output(session.active, RunOutput("run-1", [last], RunOutcome("run-1", True)))
    got = [(message, held) for to, message, held in owner.sent if to == "caller-a"]
    assert [m for m, _ in got] == [  # what one output made, in one envelope
        RunMessages("run-1", (AdkEvent("run-1", typing, 0), AdkEvent("run-1", first, 1))),
        RunMessages("run-1", (AdkEvent("run-1", last, 2), RunDone("run-1", last.id, 3)))]
    assert [held for _, held in got] == [1, 2]  # each final event was in the store before it went out
    stored = owner.store.get_session("app", "ann", "s1")
    assert [e.id for e in stored.events] == [first.id, last.id] == [e.id for e in session.events]
    assert session.last_update == stored.last_update_time == clock.current_time()  # the store's clock
    assert owner.store.run_status("run-1") == "done" and owner.ended == [("run-1", "done")]
    assert session.active is None
    late = SessionRun(request("run-1"), "caller-a", NewTurn(Content.user("hi")))
    session.on_output(late, RunOutput("run-1", [reply("run-1", "late")]))
    assert len(owner.to("caller-a")) == 2 and len(owner.store.get_session("app", "ann", "s1").events) == 2


def test_runs_wait_their_turn_up_to_the_queue_limit_and_the_same_run_again_changes_its_caller(
        clock: ManualClock) -> None:
    owner = LocalOwner(clock, max_queued_runs=1)
    owner.store.create_session("app", "ann", "s1")
    session = session_of(owner)
    assert session.take(request("run-1"), "caller-a").position == 0
    assert session.take(request("run-2"), "caller-b").position == 1
    for refused in (request("run-3"), request("run-4", reject_if_busy=True)):
        with pytest.raises(CallError) as busy:
            session.take(refused, "caller-c")
        assert busy.value.code == "busy" and owner.store.run_status(refused.run_id) is None
    assert session.take(request("run-2"), "caller-b2").position == 1  # a caller retrying: not run twice
    assert owner.dispatched == ["run-1"]
    assert session.active is not None
    session.on_output(session.active, RunOutput("run-1", [], RunOutcome("run-1", True)))
    assert owner.dispatched == ["run-1", "run-2"]  # its turn came
    assert session.active is not None
    session.on_output(session.active, RunOutput("run-2", [reply("run-2", "yes")], RunOutcome("run-2", True)))
    assert owner.to("caller-b") == [] and [type(m) for m in unpacked(owner.to("caller-b2"))] == [AdkEvent, RunDone]
    owner.store.close()


def test_a_request_that_cannot_run_is_refused_and_records_nothing(clock: ManualClock) -> None:
    owner = LocalOwner(clock, limits=Limits(max_message_bytes=200))
    owner.store.create_session("app", "ann", "s1")
    session = session_of(owner)
    with pytest.raises(BadRequest, match="non-empty"):
        session.take(RunRequest("app", "ann", "s1", new_message=Content(role="user", parts=()), run_id="run-empty"),
                     "caller-a")
    with pytest.raises(CallError) as too_large:
        session.take(request("run-big", "x" * 500), "caller-a")
    assert too_large.value.code == "limit_exceeded"
    session.take(request("run-1"), "caller-a")
    assert session.active is not None
    session.on_output(session.active, RunOutput("run-1", [], RunOutcome("run-1", True)))
    with pytest.raises(CallError) as reused:  # a run id is never used again for another message
        session.take(request("run-1", "something else"), "caller-b")
    assert reused.value.code == "invalid_request"
    assert [owner.store.run_status(r) for r in ("run-empty", "run-big", "run-1")] == [None, None, "done"]
    assert owner.dispatched == ["run-1"] and owner.to("caller-b") == []
    owner.store.close()


def test_a_run_past_its_deadline_ends_timeout_once_its_worker_let_go(owner: LocalOwner) -> None:
    session = session_of(owner)
    session.take(request("run-1", run_config=RunConfig(timeout=5.0)), "caller-a")
    session.take(request("run-2"), "caller-b")
    (seconds, deadline), = owner.timers
    assert (seconds, deadline) == (5.0, RunDeadline(session.key, "run-1"))
    run = session.active
    assert run is not None
    session.on_timer(deadline)
    assert owner.cancelled == [("run-1", "run deadline reached")]
    [(run_id, waited, then)] = owner.abandoned
    assert (run_id, waited) == ("run-1", False)
    assert owner.to("caller-a") == [] and owner.dispatched == ["run-1"]  # its worker may still be running it
    session.on_output(run, RunOutput("run-1", [reply("run-1", "too late")], RunOutcome("run-1", True)))
    assert owner.to("caller-a") == [] and owner.store.get_session("app", "ann", "s1").events == []
    then()
    [failed] = owner.to("caller-a")
    assert isinstance(failed, RunFailed) and (failed.reason, failed.error_type) == ("timeout", "RunTimeout")
    assert owner.store.run_status("run-1") == "timeout" and owner.dispatched == ["run-1", "run-2"]
    session.on_timer(deadline)  # a deadline that comes after the run ended does nothing
    assert owner.to("caller-a") == [failed]


def test_a_cancel_ends_a_waiting_run_now_and_a_running_one_after_its_grace(owner: LocalOwner) -> None:
    session = session_of(owner)
    session.take(request("run-1"), "caller-a")
    session.take(request("run-2"), "caller-b")
    assert session.cancel("run-2") == "cancelled"
    [waiting_end] = owner.to("caller-b")
    assert isinstance(waiting_end, RunFailed) and waiting_end.reason == "cancelled"
    assert owner.store.run_status("run-2") == "cancelled"
    assert session.cancel("run-1") == "cancelling"
    assert owner.cancelled == [("run-1", "cancelled by request")]
    assert owner.timers[-1] == (owner.run_stop_grace, CancelGraceOver(session.key, "run-1"))
    session.on_timer(CancelGraceOver(session.key, "run-1"))
    [(run_id, waited, then)] = owner.abandoned
    assert (run_id, waited) == ("run-1", True) and owner.to("caller-a") == []
    then()
    [running_end] = owner.to("caller-a")
    assert isinstance(running_end, RunFailed) and (running_end.reason, running_end.error_type) == (
        "cancelled", "RunCancelled")
    assert owner.store.run_status("run-1") == "cancelled"
    with pytest.raises(CallError) as unknown:
        session.cancel("run-unknown")
    assert unknown.value.code == "invalid_request"


def test_a_turn_over_its_event_limit_stores_up_to_the_limit_and_fails(clock: ManualClock) -> None:
    owner = LocalOwner(clock, limits=Limits(max_events_per_turn=2))
    owner.store.create_session("app", "ann", "s1")
    session = session_of(owner)
    session.take(request("run-1"), "caller-a")
    assert session.active is not None
    events = [reply("run-1", f"step {n}") for n in range(3)]
    session.on_output(session.active, RunOutput("run-1", events))
    assert [e.id for e in owner.store.get_session("app", "ann", "s1").events] == [e.id for e in events[:2]]
    assert owner.cancelled == [("run-1", "the turn went over its limit of 2 events")]
    [envelope] = owner.to("caller-a")  # one envelope for what was ready together
    assert envelope == RunMessages("run-1", (AdkEvent("run-1", events[0], 0), AdkEvent("run-1", events[1], 1)))
    [(_, _, then)] = owner.abandoned
    then()
    failed = owner.to("caller-a")[-1]
    assert isinstance(failed, RunFailed) and (failed.reason, failed.error_type) == ("error", "TooManyEvents")
    assert owner.store.run_status("run-1") == "error"
    owner.store.close()


def test_a_dead_worker_ends_its_run_killed_and_a_let_go_session_interrupts_the_rest(owner: LocalOwner) -> None:
    session = session_of(owner)
    session.take(request("run-1"), "caller-a")
    session.take(request("run-2"), "caller-b")
    session.take(request("run-3"), "caller-c")
    assert session.active is not None
    session.worker_died(session.active)
    [killed] = owner.to("caller-a")
    assert isinstance(killed, RunFailed) and (killed.reason, killed.error_type) == ("killed", "RunActorDied")
    assert owner.dispatched == ["run-1", "run-2"] and owner.store.run_status("run-1") == "killed"
    session.interrupt("the partition stops")
    for caller, run_id in (("caller-b", "run-2"), ("caller-c", "run-3")):
        [end] = owner.to(caller)
        assert isinstance(end, RunFailed) and (end.reason, end.detail) == ("interrupted", "the partition stops")
        assert owner.store.run_status(run_id) == "interrupted"
    assert session.active is None and not session.waiting


def test_the_same_request_again_after_its_run_ended_gets_what_was_committed_and_the_end(owner: LocalOwner) -> None:
    """A caller that never heard a run's end (its partition died after the commit) sends
    the request again: it is answered as a follower, not run twice."""
    session = session_of(owner)
    first = request("run-1", "book it")
    session.take(first, "caller-a")
    assert session.active is not None
    done = reply("run-1", "booked")
    session.on_output(session.active, RunOutput("run-1", [done], RunOutcome("run-1", True)))
    owner.timers.clear()
    assert session.take(first, "caller-a2") == RunAccepted("run-1", 0, os.getpid(), ADDRESS)
    assert owner.dispatched == ["run-1"] and owner.to("caller-a2") == []  # nothing before the answer
    assert owner.timers == [(0, CatchUp(session.key, "run-1"))]
    session.caught_up("run-1")
    assert owner.to("caller-a2") == [RunMessages("run-1", (AdkEvent("run-1", done, 0), RunDone("run-1", done.id, 1)))]
    assert len(owner.store.get_session("app", "ann", "s1").events) == 1


def test_a_request_both_live_and_a_resume_is_refused_and_records_nothing(owner: LocalOwner) -> None:
    session = session_of(owner)
    session.take(request("run-1"), "caller-a")
    assert session.active is not None
    session.on_output(session.active, RunOutput("run-1", [reply("run-1", "done")], RunOutcome("run-1", True)))
    with pytest.raises(BadRequest, match="live or resumes a run, not both"):
        session.take(request("run-2", live=True, resume="run-1"), "caller-b")
    assert owner.store.run_status("run-2") is None and owner.store.run_status("run-1") == "done"
    assert owner.dispatched == ["run-1"] and owner.to("caller-b") == []
