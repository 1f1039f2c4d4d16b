"""One invocation, end to end, in process: the engine's entry point.

In order: the input policy (a rejection ends the invocation with an error event; no
agent sees the message); ``on_user_message`` plugins; the user event is committed;
``before_run`` plugins (content ends the run early with that reply); the agent to
answer is chosen (google-adk's routing rule); its events flow through the output
policy and ``on_event`` plugins, are committed to the run's session view (so later
steps see them) and yielded. ``after_run`` plugins always run, also after an error
or cancellation.
"""

from __future__ import annotations

import uuid
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager
from typing import Any

from .._tree import find_agent
from .._types import Content, Event, EventActions, RunConfig
from ..agents import LlmAgent
from ..compiler import live_events
from ._agents import run_agent
from ._context import CancelToken, InvocationContext, SessionView
from ._flow import run_llm_flow
from ._node_run import run_as_node
from ._plugins import ChainEnded, Plugin, PluginManager
from ._policy import Policy, PolicySet, Reject, StreamFilter
from ._resume import CallDecision, NothingToResume, Replay
from ._services import (
    ArtifactService,
    InMemoryArtifactService,
    InMemoryMemoryService,
    MemoryService,
)

__all__ = ["after_run", "answered_invocation", "checked_message", "deliver", "early_reply", "new_invocation_context",
           "own_user_event", "resume_invocation", "run_invocation", "select_agent"]


class _Engine:
    """The engine as the contexts it makes see it (``InvocationContext.engine``): agent
    definitions and tools reach the engine through their context, never by import."""

    @staticmethod
    def run_agent(agent: Any, ctx: InvocationContext, *, live: bool = False) -> AsyncIterator[Event]:
        return run_agent(agent, ctx, live=live)

    @staticmethod
    def run_llm_flow(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
        return run_llm_flow(agent, ctx)

    @staticmethod
    def run_isolated(agent: Any, session: SessionView, message: Content, parent: InvocationContext, *,
                     plugins: Iterable[Plugin] | PluginManager = ()) -> AsyncIterator[Event]:
        """``agent`` as an invocation of its own over ``session``, with ``parent``'s run
        config, services, cancel token and ``tool_errors``, and ``plugins`` (none unless
        given; a manager, such as ``parent.plugins``, gives a copy of its own for the run)."""
        return run_invocation(agent, session, message, run_config=parent.run_config, artifacts=parent.artifacts,
                              memory=parent.memory, cancel=parent.cancel, resolve_model=parent.resolve_model,
                              plugins=plugins, tool_errors=parent.tool_errors)


ENGINE = _Engine()


def _transferable_to_root(agent: Any) -> bool:
    current = agent
    while current is not None:
        if not isinstance(current, LlmAgent) or (current.disallow_transfer_to_parent and current.parent_agent is not None):
            return False
        current = current.parent_agent
    return True


def select_agent(root: Any, events: list[Event], new_message: Content | None = None) -> Any:
    """Which agent answers the next user turn (google-adk's rule).

    A function response goes to the agent that made that call. Otherwise the last
    agent that spoke answers again if it could transfer back up to the root (it and
    every ancestor are LlmAgents without ``disallow_transfer_to_parent``); else the root.
    """
    if new_message is not None:
        ids = {p.function_response.id for p in new_message.parts if p.function_response is not None}
        if ids:
            for event in reversed(events):
                if event.content is not None and any(c.id in ids for c in event.content.function_calls):
                    agent = find_agent(root, event.author)
                    if agent is not None:
                        return agent
    for event in reversed(events):
        if event.author == "user":
            continue
        if event.author == root.name:
            return root
        agent = find_agent(root, event.author)
        if agent is not None and _transferable_to_root(agent):
            return agent
    return root


def answered_invocation(events: Sequence[Event], message: Content | None, *, strict: bool = False) -> str | None:
    """The invocation a turn whose message is ``message`` continues (google-adk's rule:
    a message of function responses is answered in the invocation of the calls it
    answers, so its events carry that invocation's id). In order: the ids of the
    message's function responses (none: None); the live ``events`` (rewinds applied)
    walked from the last back, each event that made one of those calls naming its
    invocation; None when a response answers no call found, or the calls belong to more
    than one invocation (the turn is then an invocation of its own); with ``strict``,
    the latter is google-adk's ``ValueError`` instead."""
    wanted = {r.id for r in (message.function_responses if message is not None else ()) if r.id}
    if not wanted:
        return None
    found: set[str] = set()
    for event in reversed(live_events(events)):
        calls = {call.id for call in event.get_function_calls()} & wanted
        if calls:
            found.add(event.invocation_id)
            wanted -= calls
            if not wanted:
                break
    if strict and not wanted and len(found) > 1:
        raise ValueError(f"Function responses resolve to multiple invocations: {found}. All function responses in "
                         "a single message must belong to the same invocation.")
    return found.pop() if not wanted and len(found) == 1 else None


def own_user_event(events: Sequence[Event], invocation_id: str, message: Content | None) -> int | None:
    """The index in ``events`` of the user event of the turn that sent ``message`` in
    invocation ``invocation_id``; None when it has none (yet). An invocation holds
    several user events when turns answered its calls (:func:`answered_invocation`):
    a message of function responses is the last user event of the invocation that
    carries those responses; any other message (or none) is the invocation's first
    user event, the turn that began it."""
    answers = {r.id for r in (message.function_responses if message is not None else ()) if r.id}
    own = [i for i, e in enumerate(events) if e.invocation_id == invocation_id and e.author == "user"]
    if not answers:
        return own[0] if own else None
    return next((i for i in reversed(own) if answers <= {r.id for r in events[i].get_function_responses()}), None)


def new_invocation_context(
    root_agent: Any,
    session: SessionView,
    *,
    run_config: RunConfig | None = None,
    plugins: Iterable[Plugin] | PluginManager = (),
    policies: Iterable[Policy] = (),
    artifacts: ArtifactService | None = None,
    memory: MemoryService | None = None,
    cancel: CancelToken | None = None,
    invocation_id: str | None = None,
    resolve_model: Callable[[str], Any] | None = None,
    breakers: dict[str, Any] | None = None,
    breaker_client: Any = None,
    approvals: Any = None,
    credentials: Any = None,
    mcp: Any = None,
    run_id: str = "",
    committed: Callable[[], Awaitable[None]] | None = None,
    context_cache_config: Any = None,
    events_compaction_config: Any = None,
    tool_errors: str = "to_model",
) -> InvocationContext:
    """The context of one invocation of ``root_agent`` on ``session`` (in-memory
    artifact and memory services when none are given; the App's context cache and
    event compaction configs and its ``tool_errors`` carried as given). ``plugins``:
    the plugins, or a :class:`PluginManager` (a runner's), whose copy for this
    invocation is used."""
    return InvocationContext(
        session=session,
        root_agent=root_agent,
        agent=root_agent,
        invocation_id=invocation_id or f"e-{uuid.uuid4()}",
        run_config=run_config or RunConfig(),
        artifacts=artifacts or InMemoryArtifactService(),
        memory=memory or InMemoryMemoryService(),
        plugins=plugins.for_invocation() if isinstance(plugins, PluginManager) else PluginManager(plugins),
        policies=PolicySet(policies),
        cancel=cancel or CancelToken(),
        resolve_model=resolve_model,
        breakers=breakers,
        breaker_client=breaker_client,
        approvals=approvals,
        credentials=credentials,
        mcp=mcp,
        run_id=run_id,
        engine=ENGINE,
        committed=committed,
        context_cache_config=context_cache_config,
        events_compaction_config=events_compaction_config,
        tool_errors=tool_errors,
    )


@asynccontextmanager
async def after_run(ctx: InvocationContext) -> AsyncIterator[None]:
    """Around an invocation: the ``after_run`` plugins run when it ends, however it
    ends (with the error, when one ended it)."""
    error: BaseException | None = None
    try:
        yield
    except BaseException as exc:
        error = exc
        raise
    finally:
        await ctx.plugins.after_run(ctx, error)


async def checked_message(ctx: InvocationContext, content: Content, *, refused_by: str) -> Content | Event:
    """The user's message as the agents will see it (role ``user``), after the input
    policy and the ``on_user_message`` plugins (one may replace it); or, when the
    policy refuses it, the error event (by ``refused_by``) that says why."""
    message = content if content.role else content.model_copy(update={"role": "user"})
    filtered = ctx.policies.filter_input(ctx, message)
    if isinstance(filtered, Reject):
        return ctx.event(author=refused_by, error_code="input_rejected", error_message=filtered.reason)
    replaced = await ctx.plugins.first("on_user_message", ctx, filtered)
    return replaced if isinstance(replaced, Content) else filtered


async def early_reply(ctx: InvocationContext) -> Event | None:
    """The ``before_run`` plugins' answer, when one ends the run before any agent runs:
    an event authored ``model`` (as google-adk's) with that reply, not yet delivered;
    None when none does, also when a google-adk plugin's answer only ended the chain
    (a :class:`ChainEnded`: not Content)."""
    early = await ctx.plugins.first("before_run", ctx)
    if early is None or isinstance(early, ChainEnded):
        return None
    reply = early if isinstance(early, Content) else Content.model(str(early))
    return ctx.event(author="model", content=reply)


async def deliver(ctx: InvocationContext, event: Event, *, filtered: bool = False) -> Event:
    """An agent's event as an invocation yields it, in order: a non-partial one through
    the output policy (unless ``filtered`` already); the ``on_event`` plugins (one may
    replace it); committed to the session (a partial one is not stored)."""
    if not event.partial and not filtered:
        event = ctx.policies.filter_output(ctx, event)
    replaced = await ctx.plugins.first("on_event", ctx, event)
    if isinstance(replaced, Event):
        event = replaced
    ctx.session.commit(event)
    return event


async def run_invocation(
    root_agent: Any,
    session: SessionView,
    new_message: Content,
    *,
    state_delta: Mapping[str, Any] | None = None,
    **context: Any,
) -> AsyncGenerator[Event, None]:
    """Run one user turn against ``root_agent``; yields every event (the user's first,
    carrying ``state_delta``: committed with the message, before any agent runs).
    ``context``: the keyword arguments of :func:`new_invocation_context`."""
    ctx = new_invocation_context(root_agent, session, **context)
    async with after_run(ctx):
        message = await checked_message(ctx, new_message, refused_by=root_agent.name)
        if isinstance(message, Event):
            yield message
            return
        ctx.user_content = message
        agent = select_agent(root_agent, session.events, message)
        user_event = ctx.event(author="user", content=message, actions=EventActions(state_delta=dict(state_delta or {})))
        session.commit(user_event)
        yield user_event
        early = await early_reply(ctx)
        if early is not None:
            yield await deliver(ctx, early)  # through the output policy and on_event, as google-adk's
            return
        async for event in _delivered(agent, ctx):
            yield event


async def _delivered(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
    """``agent``'s events in ``ctx`` (run with its node settings: ``_node_run``), each
    delivered (see :func:`deliver`); partial ones
    through the output policy's stream filter; a resumed invocation's replayed ones
    (already committed) are passed over. Then the events of background work left
    unjoined (``ctx.background.at_end``); however it ends, background work still
    running is cancelled."""
    streams = StreamFilter(ctx.policies, ctx)
    try:
        async for event in run_as_node(agent, ctx.for_agent(agent)):
            if ctx.replay is not None and ctx.replay.was_replayed(event):
                await ctx.plugins.replayed(ctx, event)
                continue
            if event.partial:
                partial = streams.partial(event)  # the stream's text filtered as a whole
                if partial is None:
                    continue
                event = partial
            yield await deliver(ctx, event)
        finish = ctx.background.at_end
        if finish is not None:  # work dispatched and never joined: joined now
            async for event in finish():
                yield await deliver(ctx, event)
    finally:
        ctx.background.cancel()


async def resume_invocation(
    root_agent: Any,
    session: SessionView,
    *,
    invocation_id: str,
    decisions: Mapping[str, CallDecision] | None = None,
    message: Content | None = None,
    state_delta: Mapping[str, Any] | None = None,
    **context: Any,
) -> AsyncGenerator[Event, None]:
    """Continue invocation ``invocation_id`` of ``session`` from its committed events
    (see ``_resume``); yields only the events made now. In order: its user event is
    found (:func:`own_user_event`: the one of the turn that sent ``message``, when an
    invocation holds several; none: the run was killed before it committed it, and it
    begins again from
    ``message`` and ``state_delta``, as the runs table kept them; without them,
    :class:`NothingToResume`); the agent that answered
    it is chosen again from the history before it; the agents run in replay from there.
    Neither the input policy nor the ``on_user_message`` and ``before_run`` plugins run
    again; ``after_run`` does. ``decisions``: call id -> :class:`CallDecision`, for calls
    left without a committed result. ``context``: as :func:`new_invocation_context`'s."""
    events = session.events
    start = own_user_event(events, invocation_id, message)
    if start is None and message is not None and message.parts:
        # Killed before its user event was committed: the run begins again, from its message.
        async for event in run_invocation(root_agent, session, message, state_delta=state_delta,
                                          invocation_id=invocation_id, **context):
            yield event
        return
    if start is None or events[start].content is None:
        raise NothingToResume(f"the session has no user event of invocation {invocation_id!r} to resume from")
    agent = select_agent(root_agent, events[:start], events[start].content)
    ctx = new_invocation_context(root_agent, session, invocation_id=invocation_id, **context)
    ctx.user_content = events[start].content
    ctx.replay = Replay([e for e in events[start + 1:] if e.invocation_id == invocation_id], decisions)
    async with after_run(ctx):
        async for event in _delivered(agent, ctx):
            yield event
