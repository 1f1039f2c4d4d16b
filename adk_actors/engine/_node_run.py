"""The invocation's agent run as google-adk 2.x runs its root node: with the agent's
node settings, ``timeout``, ``retry_config`` and ``state_schema`` (every agent has
them, see ``adk_actors.agents``). A workflow applies the same settings to its agent
nodes itself (``adk_actors.workflow``).

:func:`run_as_node`, in order, for each attempt: the agent runs (``agent.run(ctx)``,
its hooks included); each event it yields that writes state is checked against the
``state_schema`` of its author (the nearest agent up the tree that declares one; keys
holding ``:`` pass; a workflow's own events are not: its nodes' writes are checked as
they are made, each with its node's schema, else its workflow's), and a write the
schema refuses fails the attempt with :class:`StateSchemaError` before that event is
delivered; with a ``timeout`` the whole attempt, delivery of its events included, must
end within that many seconds, else it is cancelled and fails with
:class:`NodeTimeoutError`. A failed attempt becomes an error event of the agent
(:func:`error_event`); then, when
``retry_config`` allows another attempt (google-adk's count, delays and exception
names), the agent runs again after the delay, seeing the session as it is now (the
failed attempt's events included); else the exception is raised to the caller. A root
``Workflow`` is not run again (its own scheduler retries its nodes); its error event
is on its node path (``<name>@1``), and none is made when the failing node of its graph
made one for that error just before. A run that is stopped or cancelled
(``RunStopped``, ``RunCancelled``, asyncio's cancellation) is never an error event nor
retried.

An agent with none of these settings anywhere in its tree runs as it is; when its run
raises (an exception of its own code, its callbacks', a plugin hook's it runs, its
model's), and the invocation's root agent is one google-adk 2.13 runs through its node
runner (an ``LlmAgent`` or a ``Workflow``; a root ``SequentialAgent``, ``LoopAgent``,
``ParallelAgent`` or custom agent makes none), the same error event is yielded, then
the exception raised to the caller unchanged.

The error event (:func:`error_event`), as google-adk's node runner makes it: of the
agent that ran (``author`` its name), ``error_code`` the exception's ``status`` when that
is a string (an API's canonical status), else its class name (a :class:`PluginError` is
google-adk's ``RuntimeError``), ``error_message`` its text, no content. None is made when
the run's last event is already the error event of that failure (a model's error event,
made by the model step before :class:`ModelRaised`; a workflow node's own), nor for
google-adk's runner's refusal of an answer to no call (a ``ValueError``, raised before its
node runs), nor for a root workflow's refusal of the run's input by its own
``input_schema`` (google-adk checks it before its node runner starts: the run fails with
no event at all).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from .._exceptions import RunStopped
from .._node_settings import check_state_delta, retry_allowed, retry_delay, retry_delays
from .._tree import find_agent
from .._types import Event, NodeInfo
from ..agents import LlmAgent
from ..workflow import NodeTimeoutError, Workflow
from ..workflow._checks import INPUT_REFUSED
from ._context import InvocationContext, RunCancelled
from ._flow_model import ModelRaised
from ._flow_step import UNMATCHED_ANSWER
from ._plugins import PluginError

__all__ = ["error_event", "run_as_node", "schema_for"]


def _declares_schema(agent: Any) -> bool:
    if getattr(agent, "state_schema", None) is not None:
        return True
    return any(_declares_schema(child) for child in getattr(agent, "sub_agents", None) or ())


def schema_for(root: Any, author: str) -> Any:
    """The state schema that governs events of ``author``: its own, else the nearest
    ancestor's (google-adk's inheritance); an author that is no agent of the tree (a
    workflow's function node writes as its workflow): the root's."""
    agent = find_agent(root, author) if author else None
    agent = agent if agent is not None else root
    while agent is not None:
        schema = getattr(agent, "state_schema", None)
        if schema is not None:
            return schema
        agent = getattr(agent, "parent_agent", None)
    return None


async def _checked(agent: Any, ctx: InvocationContext, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """``events`` each checked against its author's state schema (see the module)."""
    replay = ctx.replay
    async for event in events:
        if event.actions.state_delta and not (replay is not None and replay.was_replayed(event)) and not getattr(
                find_agent(agent, event.author) if event.author else None, "_is_workflow", False):
            # a workflow's own events (its function nodes') were checked as their nodes
            # wrote, each with its node's schema (adk_actors.workflow's Context)
            check_state_delta(schema_for(agent, event.author), event.actions.state_delta)
        yield event


async def _timed(events: AsyncIterator[Event], timeout: float, name: str) -> AsyncIterator[Event]:
    """``events`` produced on a task of their own that must end within ``timeout``
    seconds, each handed over only when the caller asks for the next (so the time the
    caller takes to deliver an event counts, as in google-adk); past the deadline the
    task is cancelled and :class:`NodeTimeoutError` raised here."""
    queue: asyncio.Queue[tuple[str, Any, asyncio.Future[None] | None]] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    async def produce() -> None:
        try:
            async with asyncio.timeout(timeout):
                async for event in events:
                    taken: asyncio.Future[None] = loop.create_future()
                    await queue.put(("event", event, taken))
                    await taken
        except TimeoutError:
            await queue.put(("error", NodeTimeoutError(node_name=name, timeout=timeout), None))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the caller, which raises it
            await queue.put(("error", exc, None))
        else:
            await queue.put(("done", None, None))

    task = asyncio.create_task(produce())
    try:
        while True:
            kind, item, taken = await queue.get()
            if kind == "done":
                return
            if kind == "error":
                raise item
            yield item
            if taken is not None and not taken.done():
                taken.set_result(None)
    finally:
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _error_code(error: BaseException) -> str:
    status = getattr(error, "status", None)
    if isinstance(status, str):
        return status
    return "RuntimeError" if isinstance(error, PluginError) else type(error).__name__


def error_event(agent: Any, ctx: InvocationContext, error: BaseException) -> Event:
    """The error event of ``agent``'s failed run (see the module); a ``Workflow``'s is on
    its node path (``<name>@1``)."""
    path = {"node_info": NodeInfo(path=f"{agent.name}@1")} if isinstance(agent, Workflow) else {}
    return ctx.event(author=agent.name, error_code=_error_code(error), error_message=str(error), **path)


def _already_made(last: Event | None, error: BaseException) -> bool:
    """Whether no error event is to be made for ``error``: ``last`` (the run's last
    event) is already its error event (a model step's before :class:`ModelRaised`, or
    one with the same code and text), or it is google-adk's runner's refusal, or a root
    workflow's refusal of its input (``INPUT_REFUSED``)."""
    if type(error) is ValueError and str(error).startswith(UNMATCHED_ANSWER):  # (ours: in the flow's first step)
        return True
    if getattr(error, INPUT_REFUSED, False):
        return True
    if last is None or not last.error_code:
        return False
    return isinstance(error, ModelRaised) or (last.error_code, last.error_message) == (_error_code(error), str(error))


async def _plain(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
    """``agent`` run as it is; when it raises, the error event (under an ``LlmAgent`` or
    ``Workflow`` root, see the module), then the exception."""
    last: Event | None = None
    try:
        async for event in agent.run(ctx):
            last = event
            yield event
    except (RunStopped, RunCancelled):
        raise
    except Exception as exc:
        if isinstance(ctx.root_agent, LlmAgent | Workflow) and not _already_made(last, exc):
            yield error_event(agent, ctx, exc)
        raise


async def run_as_node(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
    """Run ``agent`` (the invocation's agent, ``ctx`` made for it) with its node
    settings; see the module for the order of things and what fails how."""
    config = getattr(agent, "retry_config", None)
    timeout = getattr(agent, "timeout", None)
    schema = _declares_schema(ctx.root_agent) or _declares_schema(agent)
    if config is None and timeout is None and not schema:
        async for event in _plain(agent, ctx):
            yield event
        return
    attempts = 1 if isinstance(agent, Workflow) else retry_delays(config)[0]
    attempt = 1
    while True:
        events: AsyncIterator[Event] = agent.run(ctx)
        if schema:
            events = _checked(ctx.root_agent, ctx, events)
        if timeout is not None:
            events = _timed(events, timeout, agent.name)
        last: Event | None = None
        try:
            async for event in events:
                last = event
                yield event
            return
        except (RunStopped, RunCancelled, asyncio.CancelledError):
            raise
        except Exception as exc:
            error = exc
        if isinstance(agent, Workflow):
            # a node's error fails its graph after the node's own error event (not made
            # twice); the workflow's own (its timeout) is the workflow node's, on its path
            if not _already_made(last, error):
                yield error_event(agent, ctx, error)
            raise error
        if not _already_made(last, error):
            yield error_event(agent, ctx, error)
        if attempt >= attempts or not retry_allowed(config, error):
            raise error
        await asyncio.sleep(retry_delay(config, attempt))
        ctx.check_cancelled()
        attempt += 1
