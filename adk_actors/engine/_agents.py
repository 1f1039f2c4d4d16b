"""What the engine does around every agent's own work.

:func:`run_agent`, in order: a copy of the context for the agent; a cancelled run
stops here (:class:`RunCancelled`); a telemetry span for the agent opens; the
before-agent hooks run (the agent's callbacks first, then the plugins'): one that
replies ends the agent with that reply, and state they write becomes an event of its
own; the agent's ``_run_impl`` yields its events (a custom agent's ``_run_async_impl``,
or ``_run_live_impl`` for ``run_live``; an event that names no invocation is put in
this one); unless the agent set ``ctx.end_invocation``, the after-agent hooks run the
same way, their reply one more event. A hook that returns anything but Content, a string
or None is an :class:`AgentDefinitionError`. An exception (not a cancellation of the run)
that leaves the agent, from its hooks or its own work, is told to the plugins'
``on_agent_error`` (google-adk's ``on_agent_error_callback``) with a callback context of
the agent, then raised on: an agent around it tells them again as it leaves that one.

Agent definitions do not import the engine: ``AgentBase.run(ctx)`` asks the context
(``ctx.run_agent``), and ``LlmAgent`` asks it for the model loop (``ctx.run_llm_flow``);
``run_invocation`` puts the engine in every context it makes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

from pydantic import BaseModel

from .. import telemetry
from .._exceptions import AgentDefinitionError
from .._types import Content, Event, Part
from ..agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from ..types import ours
from ..workflow import Workflow
from ._callbacks import call_chain
from ._context import CallbackContext, InvocationContext, RunCancelled

__all__ = ["run_agent"]

WORKFLOW_AGENTS = (SequentialAgent, ParallelAgent, LoopAgent)


def _as_content(value: Any) -> Content:
    if isinstance(value, str):
        return Content(role="model", parts=(Part(text=value),))
    if isinstance(value, BaseModel):
        return ours(value, Content)  # google.genai's Content too
    raise AgentDefinitionError(f"an agent callback must return Content, a string or None, got {value!r}")


async def _agent_hook(ctx: InvocationContext, slot: Any, plugin_hook: str) -> tuple[Event | None, bool]:
    """Agent callbacks first, then plugins: (the event to emit, whether they replied)."""
    callback_ctx = CallbackContext(ctx)
    reply = await call_chain(slot, "agent", callback_ctx)
    if reply is None and ctx.plugins is not None:
        reply = await ctx.plugins.first(plugin_hook, callback_ctx)
    if reply is not None:
        return ctx.event(content=_as_content(reply), actions=callback_ctx.actions.event_actions()), True
    if callback_ctx.actions.state_delta:
        return ctx.event(actions=callback_ctx.actions.event_actions()), False
    return None, False


def _own(ctx: InvocationContext, event: Event) -> Event:
    """An event a custom agent made itself (google-adk's ``Event(author=..., content=...)``)
    as the invocation stores it: in this invocation when it names none."""
    if event.invocation_id:
        return event
    return event.model_copy(update={"invocation_id": ctx.invocation_id})


async def run_agent(agent: Any, ctx: InvocationContext, *, live: bool = False) -> AsyncIterator[Event]:
    """Run ``agent`` with its hooks around its ``_run_impl`` (see the module's docstring;
    ``live``: around its ``_run_live_impl``). Its telemetry span ``[adk, agent]`` names
    the invocation's root agent (``root``) unless the invocation is a live
    conversation's: the OpenTelemetry bridge wraps an invocation's outermost agent span
    in the root's ``invoke_workflow`` span, as google-adk's runner does."""
    ctx = ctx.for_agent(agent)
    ctx.check_cancelled()
    session = ctx.session
    root = None if ctx.live else getattr(ctx.root_agent, "name", None)
    with telemetry.span(("adk", "agent"), {"agent": agent.name, "invocation_id": ctx.invocation_id,
                                           "branch": ctx.branch, "app": session.app_name,
                                           "user": session.user_id, "session": session.session_id,
                                           "root": root}):
        try:
            async with aclosing(_hooked_agent(agent, ctx, live)) as events:
                async for event in events:
                    yield event
        except RunCancelled:
            raise
        except Exception as error:
            if ctx.plugins is not None:
                await ctx.plugins.agent_error(CallbackContext(ctx), error)
            raise


async def _hooked_agent(agent: Any, ctx: InvocationContext, live: bool) -> AsyncGenerator[Event, None]:
    """The agent's work between its hooks, or its resumption (see :func:`run_agent`)."""
    replay = ctx.replay
    # A Workflow resumes inside its scheduler, node run by node run (workflow._run).
    if replay is not None and replay.has(agent.name, ctx.branch) and not isinstance(agent, Workflow):
        async for resumed in _resumed_agent(agent, ctx, replay):
            yield resumed
        return
    event, replied = await _agent_hook(ctx, getattr(agent, "before_agent_callback", None), "before_agent")
    if event is not None:
        yield event
    if replied:
        return
    async for event in (agent._run_live_impl(ctx) if live else agent._run_impl(ctx)):
        yield _own(ctx, event)
    if ctx.end_invocation:
        return
    event, _ = await _agent_hook(ctx, getattr(agent, "after_agent_callback", None), "after_agent")
    if event is not None:
        yield event


async def _resumed_agent(agent: Any, ctx: InvocationContext, replay: Any) -> AsyncIterator[Event]:
    """An agent of a resumed invocation that had started (see ``_resume``): its
    before-agent hooks do not run again. A workflow or custom agent's own events are its
    hooks': a reply ends it, as it did; a custom agent's are all replayed, and it runs
    again from its start only if it spoke last. After ``_run_impl``, a hook's committed
    event is replayed; the hooks run live only when the agent's replay ran out before them."""
    name, branch = agent.name, ctx.branch
    if not isinstance(agent, LlmAgent):
        if not isinstance(agent, WORKFLOW_AGENTS):
            last = replay.spoke_last(name, branch)
            while replay.has(name, branch):
                yield replay.take(name, branch)
            if not last:
                return
        else:
            head = replay.head(name, branch)
            if head is not None and _hook_event(head):
                yield replay.take(name, branch)
                if head.content is not None:
                    return
    async for event in agent._run_impl(ctx):
        yield event
    head = replay.head(name, branch)
    if head is not None and _hook_event(head) and head.content is None:
        yield replay.take(name, branch)
    elif head is None:
        event, _ = await _agent_hook(ctx, getattr(agent, "after_agent_callback", None), "after_agent")
        if event is not None:
            yield event


def _hook_event(event: Event) -> bool:
    """Could ``event`` be an agent hook's (a reply, or state only)?"""
    if event.error_code or event.actions.compaction is not None:
        return False
    return event.content is None or not event.content.function_calls
