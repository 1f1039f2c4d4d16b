"""One run of a workflow graph inside an invocation: what ``Workflow._run_async_impl``
does.

In order: the nodes after START are triggered with the workflow's input (the user's
message for a root workflow; the predecessor's output for a nested one). Then, while
any node is triggered or running: each triggered node that is not already running
starts (as an asyncio task, up to ``max_concurrency`` at once; a node triggered again
while it runs waits and then runs again, with the next run number); each event a node
makes is yielded to the invocation, which commits it, before that node goes on; when
a node finishes, the invocation's store is asked to confirm every event so far
(``ctx.committed``, on a host), and only then are the nodes after it triggered: those
of its edges that its route takes, each with its output as input (a fan-out to
several nodes gives each a branch of its own, ``<name>@<run>``), a join once all its
predecessors have finished, with their outputs by name.

Every event of a node carries ``node_info.path`` (``wf@1/node@2``); an event with an
output names in ``node_info.output_for`` the node paths it is the output of (a
terminal node's: its workflow's too). A function node's events are authored by the
workflow; an agent's by the agent. An agent node sees its input as the user's message
and its own events of this node run only (google-adk's single-turn agent node); its
output is its final answer's text (``message_as_output``), or with an
``output_schema`` the parsed answer, set as that event's ``output``.

A node that raises (or outlives its ``timeout``: :class:`NodeTimeoutError`, or gives a
second output: ValueError) makes an error event (``error_code`` the exception's class
name, ``error_message`` its text, with the state the node wrote); its ``retry_config``
tries it again (each failed attempt one such event); past its attempts the error is
raised and fails the workflow, and the other running nodes are cancelled. Two
terminal nodes that both give an output: :class:`WorkflowConfigurationError`, as in
google-adk. Not yet: resuming a killed run at the node it was in (the events to do it
are committed: see docs/design.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import json
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from .._types import Content, Event, NodeInfo, Part
from ._errors import NodeTimeoutError, WorkflowConfigurationError, WorkflowDataError
from ._graph import Graph
from ._nodes import START, BaseNode, Context, node_event

__all__ = ["Frame", "run_graph", "take_frame"]


@dataclass
class Frame:
    """How a workflow is run as a node: its input, its node path, the node paths its
    output also stands for; its output, once it has one."""

    workflow: Any
    node_input: Any
    path: str
    output_for: list[str]
    output: Any = None
    outputs: int = 0


_FRAME: contextvars.ContextVar[Frame | None] = contextvars.ContextVar("adk_workflow_frame", default=None)


def take_frame(workflow: Any, ctx: Any) -> Frame:
    """The frame a parent workflow set for ``workflow``; a root workflow's own (its
    input the user's message, its path ``<name>@1``) when none did."""
    frame = _FRAME.get()
    if frame is not None and frame.workflow is workflow:
        _FRAME.set(None)
        return frame
    path = f"{workflow.name}@1"
    return Frame(workflow=workflow, node_input=ctx.user_content, path=path, output_for=[path])


def as_user_content(value: Any) -> Content:
    """A node input as the user's message to an agent node (google-adk's rule)."""
    if isinstance(value, Content):
        return value.model_copy(update={"role": "user"})
    if isinstance(value, str):
        text = value
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False)
    elif hasattr(value, "model_dump_json"):
        text = value.model_dump_json()
    else:
        text = str(value)
    return Content(role="user", parts=(Part(text=text),))


class _NodeSession:
    """The session as an agent node sees it: the state as it is, and as events only its
    input (as a user message) and its own events of this node run."""

    def __init__(self, session: Any, path: str, first: Event) -> None:
        self._session = session
        self._path = path
        self._first = first
        self._start = len(session.events)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    @property
    def id(self) -> str:
        return str(self._session.session_id)

    @property
    def state(self) -> Any:
        return self._session.state

    @property
    def events(self) -> list[Event]:
        own = [e for e in self._session.events[self._start:] if e.node_info is not None and e.node_info.path == self._path]
        return [self._first, *own]

    def commit(self, event: Event) -> None:
        self._session.commit(event)


def _common_branch(branches: list[str]) -> str:
    parts = [b.split(".") if b else [] for b in branches]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common)


class _Failed(Exception):
    """A function node's error, with the state it had written and not yet sent."""

    def __init__(self, error: Exception, delta: dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error = error
        self.delta = delta


@dataclass
class _Outcome:
    output: Any = None
    has_output: bool = False
    route: Any = None
    branch: str = ""


@dataclass
class _State:
    runs: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    arrivals: dict[str, set[str]] = field(default_factory=dict)
    triggers: dict[str, list[tuple[Any, bool, str]]] = field(default_factory=dict)


def _storable(name: str, output: Any) -> None:
    """An output is stored with its event (as JSON): one that cannot be is the node's
    :class:`WorkflowDataError`, raised in the run, never in the store."""
    try:
        to_jsonable_python(output)
    except PydanticSerializationError as exc:
        raise WorkflowDataError(f"node {name!r} gave an output that cannot be stored as JSON: {exc}") from None


def _delays(config: Any) -> tuple[int, float, float, float, float]:
    if config is None:
        return 1, 0.0, 0.0, 0.0, 0.0
    attempts = 5 if config.max_attempts is None else max(1, config.max_attempts)
    return (attempts, 1.0 if config.initial_delay is None else config.initial_delay,
            60.0 if config.max_delay is None else config.max_delay,
            2.0 if config.backoff_factor is None else config.backoff_factor,
            1.0 if config.jitter is None else config.jitter)


def _retries(config: Any, exc: BaseException) -> bool:
    names = None if config is None else config.exceptions
    return names is None or any(cls.__name__ in names for cls in type(exc).__mro__)


class _GraphRun:
    def __init__(self, workflow: Any, graph: Graph, ctx: Any, frame: Frame) -> None:
        self.workflow = workflow
        self.graph = graph
        self.ctx = ctx
        self.frame = frame
        self.state = _State()
        self.queue: asyncio.Queue[tuple[str, Any, Any]] = asyncio.Queue()

    # -- events ---------------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        """Hand ``event`` to the invocation; return once it is committed."""
        committed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self.queue.put(("event", event, committed))
        await committed

    def output_for(self, path: str, terminal: bool) -> list[str]:
        return [path, *self.frame.output_for] if terminal else [path]

    def stamp(self, event: Event, ctx: Any, path: str, terminal: bool) -> Event:
        """A function node's event as it is committed: its author, invocation, branch
        and node info filled in."""
        info = event.node_info or NodeInfo()
        info = info.model_copy(update={"path": info.path or path})
        if event.output is not None and info.output_for is None:
            info = info.model_copy(update={"output_for": self.output_for(path, terminal)})
        return event.model_copy(update={
            "author": event.author or self.workflow.name,
            "invocation_id": event.invocation_id or ctx.invocation_id,
            "branch": event.branch if event.branch is not None else ctx.branch,
            "node_info": info})

    # -- one node -------------------------------------------------------------------

    async def run_function_node(self, node: BaseNode, ctx: Any, path: str, run: int, node_input: Any,
                                terminal: bool) -> _Outcome:
        """A BaseNode's run: its events stamped and committed one by one; a second output
        is an error (a node gives at most one); the state it wrote last and the route it
        chose with ``ctx.route`` go out in one more event. Failing, it raises
        :class:`_Failed` with the state it had written and not yet sent."""
        outcome = _Outcome()
        node_ctx = Context(ctx, node_path=path, run_id=str(run))
        try:
            async for event in node.run(ctx=node_ctx, node_input=node_input):
                event = self.stamp(event, ctx, path, terminal)
                if event.output is not None:
                    _storable(node.name, event.output)
                    if outcome.has_output:
                        raise _Failed(ValueError(f"node {node.name!r} gave a second output: a node gives at most one"),
                                      dict(event.actions.state_delta))
                    outcome.output, outcome.has_output = event.output, True
                if event.actions.route is not None:
                    outcome.route = event.actions.route
                await self.emit(event)
        except (_Failed, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise _Failed(exc, node_ctx.take_state_delta()) from exc
        delta = node_ctx.take_state_delta()
        chosen = node_ctx.route if outcome.route is None else None
        if delta or chosen is not None:
            await self.emit(self.stamp(node_event(state=delta, route=chosen), ctx, path, terminal))
        if outcome.route is None:
            outcome.route = node_ctx.route
        return outcome

    async def run_agent_node(self, agent: Any, ctx: Any, path: str, node_input: Any, terminal: bool) -> _Outcome:
        outcome = _Outcome()
        is_workflow = getattr(agent, "_is_workflow", False)
        if is_workflow:
            child = Frame(workflow=agent, node_input=node_input, path=path,
                          output_for=[path, *self.frame.output_for] if terminal else [path])
            _FRAME.set(child)
            agent_ctx = ctx
        else:
            message = as_user_content(node_input)
            first = Event(author="user", invocation_id=ctx.invocation_id, content=message, branch=ctx.branch)
            agent_ctx = dataclasses.replace(ctx, session=_NodeSession(ctx.session, path, first), user_content=message)
        try:
            async for event in agent.run(agent_ctx):
                if event.node_info is None:
                    info = NodeInfo(path=path)
                    update: dict[str, Any] = {}
                    if not is_workflow and self._answer(agent, event):
                        outcome.output, outcome.has_output = self._agent_output(agent, event), True
                        info = info.model_copy(update={"output_for": self.output_for(path, terminal)})
                        if getattr(agent, "output_schema", None) is not None:
                            update["output"] = outcome.output  # the structured answer as the event's output
                        else:
                            info = info.model_copy(update={"message_as_output": True})
                    event = event.model_copy(update={**update, "node_info": info})
                await self.emit(event)
        finally:
            if is_workflow:
                _FRAME.set(None)
        if is_workflow and child.outputs:
            outcome.output, outcome.has_output = child.output, True
        return outcome

    @staticmethod
    def _answer(agent: Any, event: Event) -> bool:
        return (event.author == agent.name and not event.partial and event.content is not None
                and any(p.text for p in event.content.parts) and event.is_final_response())

    @staticmethod
    def _agent_output(agent: Any, event: Event) -> Any:
        text = "".join(p.text or "" for p in event.content.parts if not p.thought) if event.content else ""
        if getattr(agent, "output_schema", None) is not None:
            try:
                return json.loads(text)
            except ValueError:
                return text
        return text

    async def run_node(self, name: str, node_input: Any, use_sub: bool, branch: str) -> None:
        """One node run, retried and timed as its settings say; its outcome (or its
        error) goes to the scheduler's queue."""
        node = self.graph.nodes[name]
        run = self.state.runs[name]
        path = f"{self.frame.path}/{name}@{run}"
        if use_sub:
            branch = f"{branch}.{name}@{run}" if branch else f"{name}@{run}"
        ctx = dataclasses.replace(self.ctx, branch=branch or None)
        terminal = self.graph.is_terminal(name)
        attempts, delay, max_delay, factor, jitter = _delays(getattr(node, "retry_config", None))
        timeout = getattr(node, "timeout", None)
        try:
            for attempt in range(1, attempts + 1):
                delta: dict[str, Any] = {}
                try:
                    async with asyncio.timeout(timeout):
                        if isinstance(node, BaseNode):
                            outcome = await self.run_function_node(node, ctx, path, run, node_input, terminal)
                        else:
                            outcome = await self.run_agent_node(node, ctx, path, node_input, terminal)
                    break
                except TimeoutError:
                    error: Exception = NodeTimeoutError(node_name=name, timeout=timeout or 0.0)
                except _Failed as failed:
                    error, delta = failed.error, failed.delta
                except Exception as exc:
                    error = exc
                failure = node_event(state=delta).model_copy(update={
                    "error_code": type(error).__name__, "error_message": str(error)})
                await self.emit(self.stamp(failure, ctx, path, terminal))
                if attempt == attempts or not _retries(getattr(node, "retry_config", None), error):
                    raise error
                wait = min(delay * factor ** (attempt - 1), max_delay)
                await asyncio.sleep(wait * (1 + jitter * (random.random() * 2 - 1)) if jitter else wait)
            outcome.branch = branch
            await self.queue.put(("done", name, outcome))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            await self.queue.put(("error", name, exc))

    # -- scheduling -----------------------------------------------------------------

    def trigger(self, target: str, node_input: Any, use_sub: bool, branch: str) -> None:
        self.state.triggers.setdefault(target, []).append((node_input, use_sub, branch))

    def arrive(self, target: str, source: str) -> None:
        """``source`` finished before join ``target``: the join runs once all have."""
        arrived = self.state.arrivals.setdefault(target, set())
        arrived.add(source)
        predecessors = self.graph.predecessors(target)
        if not all(p == START.name or p in arrived for p in predecessors):
            return
        del self.state.arrivals[target]
        inputs = {p: self.frame.node_input if p == START.name else self.state.outputs.get(p) for p in predecessors}
        branches = [self.state.branches.get(p, self.ctx.branch or "") for p in predecessors]
        self.trigger(target, inputs, False, _common_branch(branches))

    def finished(self, name: str, outcome: _Outcome) -> None:
        state = self.state
        if outcome.has_output:
            state.outputs[name] = outcome.output
            if self.graph.is_terminal(name):
                self.frame.outputs += 1
                self.frame.output = outcome.output
        else:
            state.outputs.pop(name, None)
        state.branches[name] = outcome.branch
        following = self.graph.next_nodes(name, outcome.route)
        for target in following:
            if self.graph.nodes[target]._requires_all_predecessors if isinstance(
                    self.graph.nodes[target], BaseNode) else False:
                self.arrive(target, name)
            else:
                self.trigger(target, outcome.output, len(following) > 1, outcome.branch)

    def start_ready(self, running: dict[str, asyncio.Task[None]]) -> None:
        limit = getattr(self.workflow, "max_concurrency", None)
        for name in list(self.state.triggers):
            if name in running:
                continue
            if limit and limit > 0 and len(running) >= limit:
                return
            pending = self.state.triggers[name]
            node_input, use_sub, branch = pending.pop(0)
            if not pending:
                del self.state.triggers[name]
            self.ctx.check_cancelled()
            self.state.runs[name] = self.state.runs.get(name, 0) + 1
            running[name] = asyncio.create_task(self.run_node(name, node_input, use_sub, branch))

    async def run(self) -> AsyncIterator[Event]:
        starts = self.graph.successors(START.name)
        base = self.ctx.branch or ""
        for edge in starts:
            if isinstance(edge.to_node, BaseNode) and edge.to_node._requires_all_predecessors:
                self.arrive(edge.to_node.name, START.name)
            else:
                self.trigger(edge.to_node.name, self.frame.node_input, len(starts) > 1, base)
        running: dict[str, asyncio.Task[None]] = {}
        try:
            while True:
                self.start_ready(running)
                if not running:
                    break
                kind, item, extra = await self.queue.get()
                if kind == "event":
                    yield item
                    if not extra.done():
                        extra.set_result(None)
                elif kind == "error":
                    running.pop(item, None)
                    raise extra
                else:
                    running.pop(item, None)
                    if self.ctx.committed is not None:
                        await self.ctx.committed()  # the node's events are stored before any next node starts
                    self.finished(item, extra)
        finally:
            for task in running.values():
                task.cancel()
            await asyncio.gather(*running.values(), return_exceptions=True)
        if self.frame.outputs > 1:
            raise WorkflowConfigurationError(
                f"workflow {self.workflow.name!r}: {self.frame.outputs} terminal nodes gave an output; "
                f"a workflow has at most one (join the branches first)")


async def run_graph(workflow: Any, graph: Graph, ctx: Any, frame: Frame) -> AsyncIterator[Event]:
    """Run ``graph`` of ``workflow`` in ``ctx`` as ``frame`` says (see the module)."""
    async for event in _GraphRun(workflow, graph, ctx, frame).run():
        yield event
