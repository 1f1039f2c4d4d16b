"""The node side of a workflow graph run (see ``_run``, whose scheduler starts each
node run and takes its outcome): how one node run goes, and the events it makes.

A node run is a series of attempts (``attempts``), in order: each within the node's
``timeout``; a function node's inside its span (``_node_span``), its events stamped
(author, invocation, branch, ``node_info``) and committed one by one
(``run_function_node``), an agent's through the engine (``_agent_nodes``); a failed
attempt makes an error event, then waits as ``retry_config`` says and tries again;
past its attempts the error is raised, marked ``REPORTED``. A node's ``ctx.run_node``
runs a child node run the same way (``run_child``), on a path under its parent's.
An input a node refuses (``node_input``) is the workflow's error event, then the
error.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .._exceptions import RunStopped
from .._node_settings import retry_allowed, retry_delay, retry_delays
from .._types import Event, NodeInfo
from ._agent_nodes import AgentNodes
from ._checks import checked_input, error_event
from ._errors import NodeTimeoutError, WorkflowConfigurationError, WorkflowDataError
from ._graph_record import Outcome, recorded_output
from ._input import interrupt_ids
from ._node_span import node_span, note_event
from ._nodes import BaseNode, Context, node_event
from ._parallel_worker import REPORTED
from ._processes import ProcessPool

__all__ = ["NodeRuns"]


class _Failed(Exception):
    """A function node's error, with the state it had written and not yet sent."""

    def __init__(self, error: Exception, delta: dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error = error
        self.delta = delta


def _storable(name: str, output: Any) -> None:
    """An output is stored with its event (as JSON): one that cannot be is the node's
    :class:`WorkflowDataError`, raised in the run, never in the store."""
    try:
        to_jsonable_python(output)
    except PydanticSerializationError as exc:
        raise WorkflowDataError(f"node {name!r} gave an output that cannot be stored as JSON: {exc}") from None


class NodeRuns(AgentNodes):
    """The runs of a graph's nodes (see the module): it reads the graph run's
    ``workflow``, ``ctx`` and ``frame``, checks state writes with its ``schema`` (and
    keeps each node run's in ``schemas``), gives its nodes its process ``pool``, and
    hands each event to the scheduler through its ``queue``."""

    workflow: Any
    ctx: Any
    queue: asyncio.Queue[tuple[str, Any, Any]]
    pool: ProcessPool
    schema: Any
    schemas: dict[str, Any]

    # -- events ---------------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        """Hand ``event`` to the invocation; return once it is committed."""
        committed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self.queue.put(("event", event, committed))
        await committed
        note_event(event)

    def output_for(self, path: str, terminal: bool) -> list[str]:
        return [path, *self.frame.output_for] if terminal else [path]

    def stamp(self, event: Event, ctx: Any, path: str, terminal: bool) -> Event:
        """A function node's event as it is committed: its author, invocation, branch
        and node info filled in."""
        info = event.node_info
        output_for = self.output_for(path, terminal) if event.output is not None and (
            info is None or info.output_for is None) else None
        if info is None:
            info = NodeInfo(path=path, output_for=output_for)
        elif not info.path or output_for is not None:
            info = info.model_copy(update={"path": info.path or path, "output_for": output_for or info.output_for})
        return event.model_copy(update={
            "author": event.author or self.workflow.name,
            "invocation_id": event.invocation_id or ctx.invocation_id,
            "branch": event.branch if event.branch is not None else ctx.branch,
            "node_info": info})

    # -- one node -------------------------------------------------------------------

    async def run_function_node(self, node: BaseNode, ctx: Any, path: str, run: int, node_input: Any,
                                terminal: bool, resume_inputs: dict[str, Any] | None = None,
                                recorded: list[Event] | None = None) -> Outcome:
        """A BaseNode's run: its events stamped and committed one by one; a second output
        is an error (a node gives at most one); the state it wrote last and the route it
        chose with ``ctx.route`` go out in one more event; a node that asked for input
        (a :class:`RequestInput`) waits (its outcome ``waiting``); the state it wrote
        before an event it made goes with that event. Failing, it raises
        :class:`_Failed` with the state it had written and not yet sent. Its ``ctx``
        runs child nodes (``run_node``, see ``run_child``; ``recorded``: this run's
        committed events, on resume) and holds the run's process pool."""
        outcome = Outcome()
        children: dict[str, int] = {}

        async def run_child(child: Any, child_input: Any, use_sub_branch: bool) -> Any:
            return await self.run_child(ctx, path, children, recorded or [], child, child_input, use_sub_branch)

        # its state writes checked with its own schema, else its parent's (a child run's
        # parent is the node run that ran it; a node's, its workflow)
        schema = node.state_schema or self.schemas.get(path.rsplit("/", 1)[0], self.schema)
        self.schemas[path] = schema
        node_ctx = Context(ctx, node_path=path, run_id=str(run), resume_inputs=resume_inputs, processes=self.pool,
                           child_runner=run_child, state_schema=schema, rerun_on_resume=node.rerun_on_resume)
        try:
            async for event in node.run(ctx=node_ctx, node_input=node_input):
                pending = node_ctx.take_state_delta() if not event.partial else {}
                if pending:  # the state it wrote goes with the event it made next (as google-adk's)
                    event = event.model_copy(update={"actions": event.actions.model_copy(
                        update={"state_delta": {**event.actions.state_delta, **pending}})})
                event = self.stamp(event, ctx, path, terminal)
                if event.output is not None:
                    _storable(node.name, event.output)
                    if outcome.has_output:
                        raise _Failed(ValueError(f"node {node.name!r} gave a second output: a node gives at most one"),
                                      dict(event.actions.state_delta))
                    outcome.output, outcome.has_output = event.output, True
                if event.actions.route is not None:
                    outcome.route = event.actions.route
                if interrupt_ids(event):
                    outcome.waiting = True
                await self.emit(event)
        except (_Failed, asyncio.CancelledError):
            raise
        except Exception as exc:
            if getattr(exc, REPORTED, False):
                raise  # a child node run's error, its event committed already
            raise _Failed(exc, node_ctx.take_state_delta()) from exc
        delta = node_ctx.take_state_delta()
        chosen = node_ctx.route if outcome.route is None else None
        if delta or chosen is not None:
            await self.emit(self.stamp(node_event(state=delta, route=chosen), ctx, path, terminal))
        if outcome.route is None:
            outcome.route = node_ctx.route
        return outcome

    async def node_input(self, node: Any, node_input: Any) -> Any:
        """``node_input`` as ``node`` takes it (``_checks.checked_input``); refused: the
        workflow's error event is committed and the error raised, marked ``REPORTED``."""
        try:
            return checked_input(node, node_input)
        except ValidationError as exc:
            await self.emit(self.stamp(error_event(exc), self.ctx, self.frame.path, False))
            setattr(exc, REPORTED, True)
            raise

    async def attempts(self, node: Any, ctx: Any, path: str, run: int, node_input: Any, terminal: bool, *,
                       first: int = 1, record: Any = None, answers: dict[str, Any] | None = None,
                       recorded: list[Event] | None = None) -> Outcome:
        """A node run's attempts, from attempt ``first`` (on resume, the failed ones on
        record counted), each within the node's ``timeout``: its outcome once one
        succeeds; a function node's attempt inside its span (``_node_span``). Each
        failed attempt makes an error event (``error_code`` the class
        name, ``error_message`` the text, with the state it wrote), unless a child node
        run made it already (``REPORTED``); the next waits as ``retry_config`` says;
        past its attempts, or on an exception it does not retry, the error is raised,
        marked ``REPORTED``: a graph it fails (a nested workflow's node run in a parent
        graph) makes no error event of its own for it, as in google-adk."""
        config = getattr(node, "retry_config", None)
        attempts = retry_delays(config)[0]
        timeout = getattr(node, "timeout", None)
        attempt = min(first, attempts)
        while True:
            delta: dict[str, Any] = {}
            try:
                with node_span(node, ctx, path):
                    async with asyncio.timeout(timeout):
                        if isinstance(node, BaseNode):
                            return await self.run_function_node(node, ctx, path, run, node_input, terminal,
                                                                answers, recorded)
                        return await self.run_agent_node(node, ctx, path, node_input, terminal, record)
            except TimeoutError:
                error: Exception = NodeTimeoutError(node_name=node.name, timeout=timeout or 0.0)
            except RunStopped:
                raise  # a decision is needed, or was made to end the run: no node error
            except _Failed as failed:
                error, delta = failed.error, failed.delta
            except Exception as exc:
                error = exc
            record = None  # a retry runs live
            if not getattr(error, REPORTED, False):
                await self.emit(self.stamp(error_event(error, delta), ctx, path, terminal))
            if attempt >= attempts or not retry_allowed(config, error):
                with contextlib.suppress(AttributeError):
                    setattr(error, REPORTED, True)  # its event is made: a graph it fails makes none of its own
                raise error
            await asyncio.sleep(retry_delay(config, attempt))
            attempt += 1

    async def run_child(self, ctx: Any, parent: str, counters: dict[str, int], recorded: list[Event], node: Any,
                        node_input: Any, use_sub_branch: bool) -> Any:
        """``node`` (a BaseNode or an agent) run as a child of node run ``parent``
        (``ctx.run_node``), in order:
        its run number is the next of its name under ``parent`` (path
        ``<parent>/<name>@<n>``); with ``use_sub_branch`` it runs on branch
        ``<branch>.<name>@<n>``; its input is checked as it takes it
        (``_checks.checked_input``: refused, the error is raised to the caller, with no
        event of the child's); on resume, a child run whose output is on record
        (``recorded``: the parent run's committed events) gives that output and does
        not run again; else it runs as a node does (``attempts``), not terminal, and
        its output is returned. Failing, its error is raised marked ``REPORTED`` (its
        error event is committed); asking for input: :class:`WorkflowConfigurationError`
        (not supported for a child here yet)."""
        run = counters[node.name] = counters.get(node.name, 0) + 1
        path = f"{parent}/{node.name}@{run}"
        branch = ctx.branch or ""
        if use_sub_branch:
            branch = f"{branch}.{node.name}@{run}" if branch else f"{node.name}@{run}"
        node_input = checked_input(node, node_input)
        for event in recorded:
            if event.node_info is not None and event.node_info.path == path and path in (
                    event.node_info.output_for or []):
                return recorded_output(event)
        try:
            outcome = await self.attempts(node, dataclasses.replace(ctx, branch=branch or None), path, run,
                                          node_input, False)
        except RunStopped:
            raise
        except Exception as exc:
            try:
                setattr(exc, REPORTED, True)
            except AttributeError:
                pass
            raise
        if outcome.waiting:
            raise WorkflowConfigurationError(
                f"node run {path} asked for input: a node run by ctx.run_node (a parallel worker's item) cannot "
                f"wait for input here yet")
        return outcome.output
