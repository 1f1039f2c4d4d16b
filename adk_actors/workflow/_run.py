"""One run of a workflow graph inside an invocation: what ``Workflow._run_async_impl``
does.

In order: on a host, the invocation's store is asked to confirm every event so far
(the user's message; a nested graph's parent's events: ``ctx.committed``); then the
nodes after START are triggered with the workflow's input (the user's
message for a root workflow; the predecessor's output for a nested one). Then, while
any node is triggered or running: each triggered node that is not already running
starts (as an asyncio task, up to ``max_concurrency`` at once; a node triggered again
while it runs waits and then runs again, with the next run number); each event a node
makes is yielded to the invocation, which commits it, before that node goes on; when
a node finishes, the nodes after it are triggered: those of its edges that its route
takes, each with its output as input (a fan-out to several nodes gives each a branch
of its own, ``<name>@<run>``), a join once all its predecessors have finished, with
their outputs by name. Before any triggered node starts, the invocation's store is
asked to confirm every event so far (``ctx.committed``, on a host: one round trip for
all the node runs that finished since, and for all the nodes that start together);
it is not asked when no event was yielded since it last confirmed them, nor when
nothing starts (a branch that arrives at a join still waiting for others, a terminal
node: the run's end stores its events).

Every event of a node carries ``node_info.path`` (``wf@1/node@2``); an event with an
output names in ``node_info.output_for`` the node paths it is the output of (a
terminal node's: its workflow's too). A function node's events are authored by the
workflow; an agent's by the agent. An agent node sees its input as the user's message
and its own events of this node run only (google-adk's single-turn agent node); its
output is its final answer's text (``message_as_output``), or with an
``output_schema`` the parsed answer, set as that event's ``output``; one whose
``include_contents`` is set to ``"default"`` sees the session's events too, its input
among them where its run started. An LlmAgent of ``mode="chat"`` talks over the
session's history instead and gives no output: it waits (see ``wait_for_output``
below). An LlmAgent of ``mode="task"`` (``_agent_nodes.run_task_node``) sees its input and its own
events and the user's answers since it started (across turns); it has the
``finish_task`` tool (``_task``), and the call of it that is accepted gives the
node's output and ends the agent's run; its text answers give none: it waits.

A node that asks for input (a ``RequestInput``, see ``_input``) waits: its question
is committed, nothing after it is triggered, the rest of the graph runs on, and the
run ends when nothing else runs (a nested workflow with a waiting node waits too, as
its node in the parent graph). A later message answering it continues the graph: the
root workflow takes the run's committed node events (of all its invocations) as the
replay (``CONTINUATION``) and resumes as below; a node found asking is still waiting
without an answer; answered, it finishes with the answer as its output, or with
``rerun_on_resume=True`` runs again with ``ctx.resume_inputs``.

A node's ``ctx.run_node`` (a parallel worker's items, see ``_parallel_worker``) runs a
node as a child of that node run (``run_child``): path ``<its path>/<name>@<n>``, its
events committed one by one, retried and timed as a node is; a child that fails makes
its error event, and the node that fails with its error makes none of its own. The
graph run owns a process pool (``_processes``) for its nodes that run in processes
(``processes=True``); it closes it when it ends, whichever way.

A node that raises (or outlives its ``timeout``: :class:`NodeTimeoutError`, or gives a
second output: ValueError) makes an error event (``error_code`` the exception's class
name, ``error_message`` its text, with the state the node wrote); its ``retry_config``
tries it again (each failed attempt one such event); past its attempts the error is
raised and fails the workflow, and the other running nodes are cancelled. The
workflow's output is its terminal node's latest output; two terminal nodes that both
have one at the end: :class:`WorkflowConfigurationError`, as in google-adk. A node
with ``wait_for_output`` that finishes with neither an output nor a route triggers
nothing after it and may run again when triggered again (google-adk's WAITING node).

Resume (a resumed invocation: ``ctx.replay`` holds its committed events): see
``_graph_record``, which says what the committed events of each node run are taken
to mean. How one node run goes (its attempts, its events, its child runs) is
``_node_runs``'s; this module schedules them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .._exceptions import RunStopped
from .._types import Event
from ._agent_nodes import Frame, is_chat_agent, is_task_agent, take_frame
from ._checks import INPUT_REFUSED, checked_input, checked_output, error_event
from ._errors import WorkflowConfigurationError
from ._graph import Graph
from ._graph_record import (
    CONTINUATION,
    GraphRecord,
    Lookup,
    Outcome,
)
from ._node_runs import NodeRuns
from ._nodes import START, BaseNode
from ._parallel_worker import REPORTED
from ._processes import ProcessPool

__all__ = ["CONTINUATION", "Frame", "run_graph", "take_frame"]


def _common_branch(branches: list[str]) -> str:
    parts = [b.split(".") if b else [] for b in branches]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common)


@dataclass
class _State:
    runs: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    arrivals: dict[str, set[str]] = field(default_factory=dict)
    triggers: dict[str, list[tuple[Any, bool, str, bool]]] = field(default_factory=dict)
    live_arrivals: set[str] = field(default_factory=set)  # joins a live (not recorded) run arrived at


def _inherited_schema(workflow: Any) -> Any:
    """The state schema a workflow's nodes inherit: its own, else the nearest one up
    the graphs it is nested in (google-adk's inheritance); None when none has one."""
    agent = workflow
    while agent is not None:
        schema = getattr(agent, "state_schema", None)
        if schema is not None:
            return schema
        agent = getattr(agent, "parent_agent", None)
    return None


def waits_for_output(node: Any) -> bool:
    """Does ``node`` finish only with an output or a route (google-adk's
    ``wait_for_output``)? Its own setting, a node's or an agent's; a chat or task
    agent's always (google-adk sets it on the node it builds of one)."""
    return bool(getattr(node, "wait_for_output", False)) or is_chat_agent(node) or is_task_agent(node)


class _GraphRun(NodeRuns, GraphRecord):
    """One graph run: the scheduler (see the module); how each node run goes is
    ``NodeRuns``'s (and, for an agent, ``AgentNodes``'), its resume ``GraphRecord``'s."""

    def __init__(self, workflow: Any, graph: Graph, ctx: Any, frame: Frame) -> None:
        self.workflow = workflow
        self.graph = graph
        self.ctx = ctx
        self.frame = frame
        self.state = _State()
        self.ends: dict[str, int] = {}  # on resume: node path -> where its committed run finished
        self.order = itertools.count()  # ties among finished runs: first come, first taken
        self.keys: dict[str, float] = {}  # running node -> its ``ends`` position (inf: not finished)
        self.queue: asyncio.Queue[tuple[str, Any, Any]] = asyncio.Queue()
        self.pool = ProcessPool()  # the processes of its nodes that ask for them; none until one does
        self.schema = _inherited_schema(workflow)
        self.schemas: dict[str, Any] = {}  # node run path -> the state schema its writes are checked with
        self.yielded = 0  # non-partial events yielded to the invocation
        self.confirmed = -1  # ``yielded`` when the store last confirmed them (-1: not yet)

    # -- one node, scheduled ------------------------------------------------------

    async def run_node(self, name: str, node_input: Any, use_sub: bool, branch: str, recorded: bool,
                       found: Lookup | None) -> None:
        """One node run, retried and timed as its settings say; its outcome (or its
        error) goes to the scheduler's queue. First its input is checked as the node
        takes it (``_checks.checked_input``, as google-adk's graph checks it before it
        starts the node): refused, the node does not run, the workflow makes its own
        error event (its path, ``<workflow>@<n>``, the error titled ``dynamic node
        '<name>'``) and the error fails the graph run. On resume, a ``recorded`` run was
        looked up in the committed events (``found``, see ``look_up``); any other runs
        live, with no replay (nothing of it can be on record)."""
        node = self.graph.nodes[name]
        run = self.state.runs[name]
        path = f"{self.frame.path}/{name}@{run}"
        if use_sub:
            branch = f"{branch}.{name}@{run}" if branch else f"{name}@{run}"
        ctx = dataclasses.replace(self.ctx, branch=branch or None)
        if not recorded and getattr(ctx, "replay", None) is not None:
            ctx = dataclasses.replace(ctx, replay=None)
        terminal = self.graph.is_terminal(name)
        try:
            node_input = await self.node_input(node, node_input)
            record, resumed, first = await self.resume_node(found, ctx, path, terminal)
            outcome = resumed if resumed is not None else await self.attempts(
                node, ctx, path, run, node_input, terminal, first=first, record=record,
                answers=found.resume_inputs if found is not None else None,
                recorded=found.events if found is not None else None)
            outcome.branch = branch
            await self.queue.put(("wait" if outcome.waiting else "done", name, outcome))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            await self.queue.put(("error", name, exc))

    # -- scheduling -----------------------------------------------------------------

    def trigger(self, target: str, node_input: Any, use_sub: bool, branch: str, recorded: bool) -> None:
        """Queue a run of ``target``; ``recorded``: on resume, whether what triggered it
        is on record (START, or a node run found finished), so the run may be on record
        too; a run triggered by a live one cannot have run before the crash."""
        self.state.triggers.setdefault(target, []).append((node_input, use_sub, branch, recorded))

    def arrive(self, target: str, source: str, recorded: bool) -> None:
        """``source`` finished before join ``target``: the join runs once all have."""
        arrived = self.state.arrivals.setdefault(target, set())
        arrived.add(source)
        if not recorded:
            self.state.live_arrivals.add(target)
        predecessors = self.graph.predecessors(target)
        if not all(p == START.name or p in arrived for p in predecessors):
            return
        del self.state.arrivals[target]
        inputs = {p: self.frame.node_input if p == START.name else self.state.outputs.get(p) for p in predecessors}
        branches = [self.state.branches.get(p, self.ctx.branch or "") for p in predecessors]
        recorded = target not in self.state.live_arrivals
        self.state.live_arrivals.discard(target)
        self.trigger(target, inputs, False, _common_branch(branches), recorded)

    def finished(self, name: str, outcome: Outcome) -> None:
        """A node run's outcome taken, in order: a node that waits for its output
        (``wait_for_output``, see :func:`waits_for_output`) and finished with neither
        an output nor a route has not finished: nothing after it is triggered and the
        outputs on record stay, so a later trigger runs it again (a join of one's own
        making, as google-adk's). Else its output is kept (a terminal node's stands
        for the workflow) and the nodes its route takes are triggered, or arrived at
        (a join)."""
        if not outcome.has_output and outcome.route is None and waits_for_output(self.graph.nodes[name]):
            return
        state = self.state
        if outcome.has_output:
            state.outputs[name] = outcome.output
        else:
            state.outputs.pop(name, None)
        state.branches[name] = outcome.branch
        following = self.graph.next_nodes(name, outcome.route)
        for target in following:
            if self.graph.nodes[target]._requires_all_predecessors if isinstance(
                    self.graph.nodes[target], BaseNode) else False:
                self.arrive(target, name, outcome.recorded)
            else:
                self.trigger(target, outcome.output, len(following) > 1, outcome.branch, outcome.recorded)

    def start_ready(self, running: dict[str, asyncio.Task[None]]) -> None:
        """Start each triggered node that is not running (up to ``max_concurrency``).
        On resume, in order: each run to start is looked up in the committed events
        (``look_up``); the decisions they need are made (``decide``: undecided ones stop
        the run before any of them starts); then they start."""
        limit = getattr(self.workflow, "max_concurrency", None)
        starting: list[tuple[str, tuple[Any, bool, str, bool, Lookup | None]]] = []
        for name in list(self.state.triggers):
            if name in running:
                continue
            if limit and limit > 0 and len(running) + len(starting) >= limit:
                break
            pending = self.state.triggers[name]
            node_input, use_sub, branch, recorded = pending.pop(0)
            if not pending:
                del self.state.triggers[name]
            self.ctx.check_cancelled()
            self.state.runs[name] = self.state.runs.get(name, 0) + 1
            path = f"{self.frame.path}/{name}@{self.state.runs[name]}"
            self.keys[name] = self.ends.get(path, math.inf)
            found = self.look_up(self.graph.nodes[name], path, node_input) if (
                recorded and getattr(self.ctx, "replay", None) is not None) else None
            starting.append((name, (node_input, use_sub, branch, recorded, found)))
        self.decide([args[4] for _, args in starting if args[4] is not None])
        for name, args in starting:
            running[name] = asyncio.create_task(self.run_node(name, *args))

    def would_start(self, running: dict[str, asyncio.Task[None]]) -> bool:
        """Would ``start_ready`` start a node run now (a triggered node not running, room
        under ``max_concurrency``)?"""
        limit = getattr(self.workflow, "max_concurrency", None)
        if limit and limit > 0 and len(running) >= limit:
            return False
        return any(name not in running for name in self.state.triggers)

    async def stored(self) -> None:
        """Return once the invocation's store holds every event yielded so far (on a
        host: ``ctx.committed``, one round trip); at once when there is no store, or
        when no event was yielded since it last confirmed them."""
        if self.ctx.committed is None or self.confirmed == self.yielded:
            return
        yielded = self.yielded
        await self.ctx.committed()
        self.confirmed = yielded

    async def run(self) -> AsyncIterator[Event]:
        self.read_record()
        # what came before (the user's message; a nested graph's parent's events) is
        # stored before a first node starts: a crash then never leaves a side effect
        # of a node for a run the store does not have
        await self.stored()
        starts = self.graph.successors(START.name)
        base = self.ctx.branch or ""
        recorded = getattr(self.ctx, "replay", None) is not None
        for edge in starts:
            if isinstance(edge.to_node, BaseNode) and edge.to_node._requires_all_predecessors:
                self.arrive(edge.to_node.name, START.name, recorded)
            else:
                self.trigger(edge.to_node.name, self.frame.node_input, len(starts) > 1, base, recorded)
        running: dict[str, asyncio.Task[None]] = {}
        finished: list[tuple[float, int, str, Outcome]] = []  # a heap, by where each run finished
        stopped: RunStopped | None = None  # a decision is needed: what runs finishes, nothing starts
        try:
            while True:
                if stopped is None:
                    if self.would_start(running):
                        # the events of the node runs that finished are stored before a next node starts
                        await self.stored()
                    try:
                        self.start_ready(running)
                    except RunStopped as exc:
                        stopped = exc
                if not running:
                    break
                kind, item, extra = await self.queue.get()
                if kind == "event":
                    if not item.partial:
                        self.yielded += 1
                    yield item
                    if not extra.done():
                        extra.set_result(None)
                elif kind == "error":
                    running.pop(item, None)
                    if not isinstance(extra, RunStopped):
                        raise extra
                    stopped = stopped or extra
                else:
                    running.pop(item, None)
                    key = self.keys.pop(item, math.inf)
                    if kind == "wait":  # it waits for input: nothing after it is triggered
                        self.frame.waiting = True
                    else:
                        heapq.heappush(finished, (key, next(self.order), item, extra))
                    first = min((self.keys[name] for name in running), default=math.inf)
                    while finished and finished[0][0] <= first:  # resumed: in the order they had finished
                        _, _, name, outcome = heapq.heappop(finished)
                        self.finished(name, outcome)
            if stopped is not None:
                raise stopped
        finally:
            try:
                for task in running.values():
                    task.cancel()
                await asyncio.gather(*running.values(), return_exceptions=True)
            finally:
                self.pool.close()  # its processes end with the run, whichever way it ends
        # the workflow's output: the latest output of each terminal node (a terminal
        # node run again stands once, as in google-adk; one that ran again with none has none)
        terminal = [output for name, output in self.state.outputs.items() if self.graph.is_terminal(name)]
        self.frame.outputs = len(terminal)
        if self.frame.outputs > 1:
            raise WorkflowConfigurationError(
                f"workflow {self.workflow.name!r}: {self.frame.outputs} terminal nodes gave an output; "
                f"a workflow has at most one (join the branches first)")
        if terminal and not self.frame.waiting:
            try:
                self.frame.output = checked_output(self.workflow, terminal[-1])
            except ValidationError as exc:  # the workflow's own error: its event, then the graph run fails
                yield self.stamp(error_event(exc), self.ctx, self.frame.path, False)
                setattr(exc, REPORTED, True)
                raise
        elif terminal:
            self.frame.output = terminal[-1]


async def run_graph(workflow: Any, graph: Graph, ctx: Any, frame: Frame) -> AsyncIterator[Event]:
    """Run ``graph`` of ``workflow`` in ``ctx`` as ``frame`` says (see the module): first
    its input is checked against its ``input_schema`` (``_checks.checked_input``;
    refused: pydantic's ValidationError, before any event, marked ``INPUT_REFUSED``
    when the workflow is the run's root: no error event is made for it), then the
    graph runs."""
    try:
        frame.node_input = checked_input(workflow, frame.node_input)
    except ValidationError as exc:
        if frame.root:
            setattr(exc, INPUT_REFUSED, True)
        raise
    async for event in _GraphRun(workflow, graph, ctx, frame).run():
        yield event
