"""A graph run's waits on the store (``ctx.committed``: on a host, one round trip to the
session's partition, which commits every event the run made so far).

The durability rule: before a node starts, the output (and route) of every node run
before it is in the store, so that a run killed in that node resumes there. These
tests run a graph in process with a ``committed`` that records which node outputs it
confirmed, and nodes that record what was confirmed when they started. What is
checked: the rule holds at every node's start; the nodes of a fan-out start after one
wait; the waits are only those the rule needs: a branch that arrives at a join still
waiting for other branches starts nothing and does not wait, nor does a terminal node
(the run's end stores its events), nor a boundary where nothing was made since the
last wait.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from typing import Any

from adk_actors import Content
from adk_actors.engine import SessionView, run_invocation
from adk_actors.workflow import START, FunctionNode, JoinNode, Workflow

PATH = "g@1/"


class Recorder:
    """What the run yielded so far, what the store confirmed at each wait, and what
    was confirmed when each node started."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.yielded: list[str] = []  # the node paths of the output events yielded so far
        self.confirmed: set[str] = set()
        self.waits: list[set[str]] = []  # what each wait confirmed anew
        self.starts: dict[str, set[str]] = {}  # node -> what was confirmed when it started

    async def committed(self) -> None:
        with self.lock:
            fresh = set(self.yielded) - self.confirmed
            self.confirmed |= fresh
            self.waits.append(fresh)

    def started(self, name: str) -> None:
        with self.lock:
            self.starts[name] = set(self.confirmed)


def _node(recorder: Recorder, name: str, step: Any) -> FunctionNode:
    def run(node_input: Any) -> Any:
        recorder.started(name)
        return step(node_input)

    run.__name__ = name
    return FunctionNode(func=run, name=name)


def _run(graph: Workflow, recorder: Recorder) -> list[Any]:
    async def go() -> list[Any]:
        events = []
        async for event in run_invocation(graph, SessionView(), Content.user("a b c"), invocation_id="i-1",
                                          committed=recorder.committed):
            events.append(event)
            if event.node_info is not None and event.output is not None:
                recorder.yielded.append(event.node_info.path.removeprefix(PATH))
        return events

    return asyncio.run(asyncio.wait_for(go(), timeout=30))


def _ten(recorder: Recorder) -> Workflow:
    """bench/_ten_node_graph.py's shape in function nodes (its agent node left out):
    parse -> (shout, count, first) -> join -> summarize -> record -> check -> finish."""
    def n(name: str, step: Any) -> FunctionNode:
        return _node(recorder, name, step)

    def parse(value: Any) -> list[str]:
        return "".join(p.text or "" for p in value.parts).split()

    return Workflow(name="g", edges=[(
        START, n("parse", parse),
        (n("shout", lambda words: " ".join(words).upper()), n("count", len), n("first", lambda words: words[0])),
        JoinNode(name="join"), n("summarize", lambda d: f"{d['count']} {d['first']} {d['shout']}"),
        n("record", str), n("check", lambda line: {"line": line}), n("finish", lambda d: d["line"] + "!"))])


def test_every_node_starts_after_the_outputs_before_it_are_confirmed() -> None:
    recorder = Recorder()
    events = _run(_ten(recorder), recorder)
    assert [e.output for e in events if e.node_info is not None and e.node_info.path == PATH + "finish@1"] == [
        "3 a A B C!"]
    before = {"parse": set(), "shout": {"parse@1"}, "count": {"parse@1"}, "first": {"parse@1"},
              "summarize": {"parse@1", "shout@1", "count@1", "first@1", "join@1"}}
    chain = ["summarize", "record", "check", "finish"]
    for earlier, later in itertools.pairwise(chain):
        before[later] = before[earlier] | {f"{earlier}@1"}
    for name, needed in before.items():
        assert needed <= recorder.starts[name], f"{name} started before {needed - recorder.starts[name]} was stored"


def test_the_store_is_waited_on_once_per_boundary_where_a_node_starts() -> None:
    """One wait before the first node (the user's message), one after parse (its three
    branches start together), one when the last branch reaches the join (not one per
    branch), then one per boundary of the chain, none after the terminal node: 7 for
    these 9 nodes."""
    recorder = Recorder()
    _run(_ten(recorder), recorder)
    assert len(recorder.waits) == 7, recorder.waits
    assert recorder.waits[0] == set()  # the user's message only (no node output yet)
    assert recorder.waits[1] == {"parse@1"}
    assert recorder.waits[2] == {"shout@1", "count@1", "first@1"}
    assert "finish@1" not in recorder.confirmed  # the run's end stores it (on a host, with the outcome)
