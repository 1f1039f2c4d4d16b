"""A run worker's output at a run's end (``_run.RunActor._hand``): a run that handed its
worker's main thread nothing has its held events and its outcome sent on the line by
the worker thread itself, as one message, when its loop next selects; any other run's
end goes through the main thread, after what it handed there, so a run's messages keep
their order."""

from __future__ import annotations

from typing import Any

import pytest

from adk_actors import Content, Event
from adk_actors.runtime._link import RunLink
from adk_actors.runtime._run import RunActor
from adk_actors.runtime._run_protocol import RunOutcome, RunOutput


def _event(text: str, *, partial: bool = False) -> Event:
    return Event(author="agent", invocation_id="i-1", content=Content.user(text), partial=partial or None)


def _queued(actor: RunActor) -> list[tuple[str, str, Any]]:
    items = []
    while not actor._queue.empty():
        items.append(actor._queue.get_nowait())
    return items


@pytest.fixture
def worker() -> Any:
    """A run worker's object with a line whose far end (the partition's) the test reads."""
    actor = RunActor()
    ours, theirs = RunLink.pair()
    actor._link = ours
    yield actor, theirs
    ours.close()
    theirs.close()
    actor._bell.close()


def test_a_run_that_handed_nothing_over_sends_its_events_and_outcome_as_one_message(worker: Any) -> None:
    actor, partition = worker
    first, answer = _event("hi"), _event("echo: hi")
    actor._hand("event", "r1", first)
    actor._hand("event", "r1", answer)
    actor._hand("outcome", "r1", RunOutcome("r1", True))
    assert partition.receive() == []  # the turn's own tail runs first
    actor._before_select(0)  # the worker thread's loop selects next
    (sent,) = partition.receive()
    assert isinstance(sent, RunOutput) and sent.run_id == "r1"
    assert [e.id for e in sent.events] == [first.id, answer.id]
    assert sent.outcome is not None and sent.outcome.ok
    assert _queued(actor) == []  # the main thread has nothing to do for it


def test_a_run_that_handed_a_partial_event_over_ends_through_the_main_thread_in_order(worker: Any) -> None:
    actor, partition = worker
    streamed, final = _event("ec", partial=True), _event("echo")
    actor._hand("event", "r1", streamed)
    actor._hand("event", "r1", final)
    actor._hand("outcome", "r1", RunOutcome("r1", True))
    actor._before_select(0)
    assert partition.receive() == []  # nothing of it may overtake the partial the main thread holds
    kinds = [(kind, run_id, getattr(item, "id", None)) for kind, run_id, item in _queued(actor)]
    assert kinds == [("event", "r1", streamed.id), ("event", "r1", final.id), ("outcome", "r1", None)]


def test_a_runs_end_leaves_another_runs_held_events_held(worker: Any) -> None:
    actor, partition = worker
    other = _event("still computing")
    actor._hand("event", "r2", other)
    actor._hand("event", "r1", _event("done"))
    actor._hand("outcome", "r1", RunOutcome("r1", True))
    assert _queued(actor) == []
    actor._before_select(None)  # the loop is about to wait: r1's output goes, r2's event to the main thread
    (sent,) = partition.receive()
    assert sent.run_id == "r1" and len(sent.events) == 1
    assert [(kind, run_id) for kind, run_id, _ in _queued(actor)] == [("event", "r2"), ("release", "")]


def test_a_line_that_is_gone_leaves_the_runs_end_to_the_main_thread(worker: Any) -> None:
    actor, _ = worker
    actor._link.close()
    held = _event("answer")
    actor._hand("event", "r1", held)
    actor._hand("outcome", "r1", RunOutcome("r1", True))
    actor._before_select(0)
    assert [(kind, getattr(item, "id", None)) for kind, _, item in _queued(actor)] == [("event", held.id),
                                                                                       ("outcome", None)]
