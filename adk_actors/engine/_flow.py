"""The flow loop of an LlmAgent, one step at a time.

Each pass of the loop, in order: check cancellation and the LLM-call budget
(``RunConfig.max_llm_calls``: an error event ``max_llm_calls`` ends the loop); then
the steps, each a small object in its own module whose events the loop relays and
whose typed outcome (``_flow_step.StepOutcome`` or ``ToolCalls``) it matches on (a
step's events are closed with the loop, so that a run closed mid-step ends its spans
at once, as one generator would). Before the first pass, :class:`ConfirmationStep`
(``_confirmation``): the calls a user's ``adk_request_confirmation`` answers confirm or
reject run again, as google-adk's flow does; before it, :class:`CredentialStep`
(``_credential_request``): the calls a user's ``adk_request_credential`` answers name
run again with the credential kept for them; when neither ran a call, the calls a
user's answer leaves unsettled (``_resume.calls_to_rerun``, google-adk's resume: an
answer by id only to a call left open) run again as a tool step, and the flow ends
there when they end it (a long-running tool that again leaves its call open).

1. :class:`ReplayStep` (``_flow_replay``): in a resumed run, the next committed step
   given again; its outcome ends the flow, goes on to the next pass, or (``LIVE``:
   nothing of it on record, or a live run) lets the model step run now;
2. :class:`ModelStep` (``_flow_model_step``): tools resolved and the request built
   (``_flow_request``), before-model hooks, the model (``_flow_model``: partial
   events streamed when the RunConfig asks, error hooks deciding on failure: Retry,
   Fallback, Reraise, which ends the step with an error event and the run with
   ``ModelRaised``), after-model hooks, the model event. A final response ends the
   flow; code to run, or an answer ending in a code run's result, goes on;
3. :class:`ToolStep` (``_flow_tool_step``), when the answer called tools: the calls run
   concurrently (``_flow_tools.run_tool``, each: policy authorization -> approval ->
   before-tool hooks -> the tool -> on-tool-error / after-tool hooks); their results
   form ONE tool-response event; a long-running call, auth, ``skip_summarization``,
   a structured answer or ``transfer_to_agent`` ends the flow (the transfer's target
   then runs in the same invocation), else the loop goes on.

``max_iterations`` passes end the loop with an error event ``max_iterations``.

Transfers do not nest on the Python stack: the first LLM flow of a branch runs the
transfer targets one after the other in a loop (a trampoline), and a flow that runs
inside it hands its own transfer back to that loop instead of running the target
itself. A ping-pong of transfers therefore ends with the ``max_llm_calls`` error
event, however many hops it makes.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

from .._tree import find_agent
from .._types import Event
from ._confirmation import ConfirmationStep
from ._context import InvocationContext
from ._credential_request import CredentialStep
from ._flow_model import ModelRaised, ModelStepError
from ._flow_model_step import ModelStep
from ._flow_replay import ReplayStep
from ._flow_request import preload_memories, resolve_tools, template_artifacts
from ._flow_step import StepOutcome, ToolCalls
from ._flow_tool_step import AnswerStep, ToolStep
from ._flow_tools import long_running_ids, run_tool, tool_response_event
from ._resume import calls_to_rerun

__all__ = [
    "ModelRaised",
    "ModelStepError",
    "long_running_ids",
    "preload_memories",
    "resolve_tools",
    "run_llm_flow",
    "run_tool",
    "template_artifacts",
    "tool_response_event",
]


class _Transfers:
    """The trampoline of one branch: the agent it runs now, and the transfer that
    agent's flow asked for."""

    def __init__(self, branch: str | None) -> None:
        self.branch = branch
        self.current: Any = None
        self.pending: str | None = None


_trampoline: contextvars.ContextVar[_Transfers | None] = contextvars.ContextVar("adk_transfers", default=None)


async def run_llm_flow(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
    """The agent's flow (:func:`_loop`), then the transfer it asked for: run here, one
    target after the other, by the first flow of the branch (see the module's
    docstring); handed back to that flow when this one runs inside it."""
    transfer_to: str | None = None
    async for event in _loop(agent, ctx):
        yield event
        if event.actions.transfer_to_agent:
            transfer_to = event.actions.transfer_to_agent
    if transfer_to is None:
        return
    outer = _trampoline.get()
    if outer is not None and outer.branch == ctx.branch and outer.current is agent:
        outer.pending = transfer_to  # the loop below, in the flow that ran this agent, runs it
        return
    transfers = _Transfers(ctx.branch)
    _trampoline.set(transfers)
    try:
        while transfer_to is not None:
            target = find_agent(ctx.root_agent, transfer_to)
            if target is None:
                return
            transfers.current, transfers.pending = target, None
            async for event in target.run(ctx.for_agent(target)):
                yield event
            transfer_to = transfers.pending
    finally:
        _trampoline.set(outer)


class _AnsweredCalls:
    """The calls a user answered since the last turn, run again: first those a
    credential answers (``_credential_request``), then those a confirmation answers
    (``_confirmation``); when neither ran anything and the run is not a resumed one
    (``ctx.replay``), the calls google-adk's resume runs again after a user's answer
    that does not settle them (``_resume.calls_to_rerun``: e.g. an answer by id only to
    a call its long-running tool left open), as a tool step (``_flow_tool_step``).
    ``outcome`` is END when the run ends there (the confirmations ended it, or the
    calls run again left only long-running calls open, or ended the flow).

    On a host (``ctx.committed``), a turn whose message answers calls puts that answer
    on record before any call it settles runs, and what those calls gave before the
    run goes on: a worker killed after an approved call ran must not leave the call's
    answer or its result only in the dead worker (its resume would run it again)."""

    def __init__(self, agent: Any, ctx: InvocationContext) -> None:
        self.agent, self.ctx = agent, ctx
        self.outcome: StepOutcome = StepOutcome.NEXT

    async def events(self) -> AsyncGenerator[Event, None]:
        ran = False
        committed = self.ctx.committed
        user = self.ctx.user_content
        if committed is None or user is None or not any(p.function_response for p in user.parts or ()):
            committed = None  # an embedded run (stored as it goes), or no answer in this turn
        if committed is not None:
            await committed()  # the answer is on record before a call it approves runs
        async with aclosing(self._answered()) as answered:
            async for event in answered:
                ran = True
                yield event
        if ran and committed is not None:
            await committed()  # ... and what the approved calls gave, before the run goes on

    async def _answered(self) -> AsyncGenerator[Event, None]:
        """The events of the calls the user's answers settle (see the class)."""
        ran = False
        credentials = CredentialStep(self.agent, self.ctx)
        async with aclosing(credentials.events(resolve_tools)) as rerun:
            async for event in rerun:
                ran = True
                yield event
        confirmed = ConfirmationStep(self.agent, self.ctx)
        async with aclosing(confirmed.events(run_tool, AnswerStep, resolve_tools)) as rerun:
            async for event in rerun:
                ran = True
                yield event
        self.outcome = confirmed.outcome
        if ran or self.outcome is StepOutcome.END or self.ctx.replay is not None:
            return
        async with aclosing(self._unsettled()) as rerun:
            async for event in rerun:
                yield event

    async def _unsettled(self) -> AsyncGenerator[Event, None]:
        """The calls of :func:`~._resume.calls_to_rerun`, run as a tool step; nothing
        when there are none (the tools are resolved only when the invocation's last
        event on this branch is the user's answer)."""
        agent, ctx = self.agent, self.ctx
        events = [e for e in ctx.session.events if e.invocation_id == ctx.invocation_id and e.branch == ctx.branch]
        if len(events) < 2 or events[-1].author != "user" or not events[-1].get_function_responses():
            return
        tools, _, _ = await resolve_tools(agent, ctx)
        calls = calls_to_rerun(events, agent.name, tools)
        if not calls:
            return
        step = ToolStep(agent, ctx, ToolCalls(tuple(calls), tools))
        async with aclosing(step.events()) as answered:
            async for event in answered:
                yield event
        self.outcome = step.outcome


async def _loop(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
    """The passes of the module's docstring: first the calls the user answered
    (``_AnsweredCalls``), then replay step, model step, tool step."""
    answers = _AnsweredCalls(agent, ctx)
    async with aclosing(answers.events()) as rerun:
        async for event in rerun:
            yield event
    if answers.outcome is StepOutcome.END:
        return
    for _ in range(agent.max_iterations):
        ctx.check_cancelled()
        budget = ctx.run_config.max_llm_calls
        if budget > 0 and ctx.counters["llm_calls"] >= budget:
            yield ctx.event(error_code="max_llm_calls", error_message=f"the run made {budget} LLM calls, its limit")
            return
        replay = ReplayStep(agent, ctx)
        async with aclosing(replay.events()) as replayed:  # a resumed run: this step was committed (see _resume)
            async for event in replayed:
                yield event
        match replay.outcome:
            case StepOutcome.END:
                return
            case StepOutcome.NEXT:
                continue
            case StepOutcome.LIVE:
                pass
        model = ModelStep(agent, ctx)
        async with aclosing(model.events()) as answered:
            async for event in answered:
                yield event
        match model.outcome:
            case StepOutcome.END:
                return
            case StepOutcome.NEXT | StepOutcome.LIVE:
                continue
            case ToolCalls() as calls:
                tools = ToolStep(agent, ctx, calls)
                async with aclosing(tools.events()) as responses:
                    async for event in responses:
                        yield event
                if tools.outcome is StepOutcome.END:
                    return
    yield ctx.event(error_code="max_iterations",
                    error_message=f"agent {agent.name!r} reached its limit of {agent.max_iterations} model steps")
