"""The tool step of a flow: the model's calls run, and the events that answer them.

:class:`ToolStep`, in order: the run's cancellation checked; when a called tool must
not run twice (not idempotent), the calls are put on record first
(``ctx.committed``, a host's run; embedded runs have none); the calls run
concurrently (``_flow_tools.run_calls``), a single-turn sub-agent's own events given as
they come (``_run_calls``, google-adk's order); when a call raises (a hook's error, or a
tool's own with ``App(tool_errors="raise")``), as google-adk's flow: the calls still
running are cancelled, the event answering those that had ended given
(``_flow_tools.kept_response_event``), the error raised on. :class:`AnswerStep` gives
their events; the results are put on record before the run goes on (a crash later
must not leave a side effect done but not on record). Its outcome is :class:`StepOutcome` ``END`` when
the agent's flow ends there, else ``NEXT``.

:class:`AnswerStep` (also used by a resumed step whose calls were pending), in order:
the ONE tool-response event (none when only long-running calls were made: the turn
ends, they are answered later), preceded by google-adk's ``adk_request_confirmation``
event when a call asked for a confirmation (``_confirmation``), and before that google-adk's
``adk_request_credential`` event when a call asked for a credential (``_credential_request``);
then the structured answer's event when ``set_model_response`` accepted one (the flow
ends); a credential request ends the flow, and a request made our way
(``request_credential(key, config)``) with an auth request event of its own; a transfer
or ``skip_summarization`` ends the flow too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from .._types import Content, Event, EventActions, FunctionCall, Part
from ..compiler._tools import SET_MODEL_RESPONSE
from ..tools._single_turn import SUB_EVENTS, SingleTurnAgentTool
from ._confirmation import request_event
from ._context import InvocationContext
from ._credential_request import is_adk_request
from ._credential_request import request_event as credential_event
from ._flow_step import StepOutcome, ToolCalls, output_value
from ._flow_tools import kept_response_event, run_calls, tool_response_event
from ._resume import is_idempotent

__all__ = ["AnswerStep", "ToolStep", "structured_answer"]


def structured_answer(ctx: InvocationContext, tool_event: Event) -> Event | None:
    """The answer's event after a tool-response event in which ``set_model_response``
    accepted a structured answer (``actions.set_model_response``): the model's text, the
    answer as JSON, and the answer under the agent's ``output_key``. None otherwise (no
    such call, or the tool refused its arguments: the model is asked again)."""
    answer = tool_event.actions.set_model_response
    if answer is None or not any(r.name == SET_MODEL_RESPONSE for r in tool_event.get_function_responses()):
        return None
    agent = ctx.agent
    text = json.dumps(answer, ensure_ascii=False)
    state_delta = {agent.output_key: output_value(agent, text)} if getattr(agent, "output_key", None) else {}
    return ctx.event(content=Content(role="model", parts=(Part(text=text),)),
                     actions=EventActions(state_delta=state_delta))


class AnswerStep:
    """The events that answer a model event's ``calls`` (their ``results``); its
    ``outcome`` is ``END`` when the agent's flow ends there (only long-running calls,
    auth, a transfer, ``skip_summarization``, or a structured answer), else ``NEXT``."""

    def __init__(self, ctx: InvocationContext, calls: list[FunctionCall],
                 results: list[tuple[dict[str, Any] | None, Any]]) -> None:
        self.ctx, self.calls, self.results = ctx, calls, results
        self.outcome = StepOutcome.NEXT

    async def events(self) -> AsyncGenerator[Event, None]:
        ctx = self.ctx
        tool_event = tool_response_event(ctx, self.calls, self.results)
        if tool_event is None:
            self.outcome = StepOutcome.END  # only long-running calls, each to be answered later: the turn ends
            return
        credential = credential_event(ctx, tool_event)
        if credential is not None:  # google-adk's order: the credential requests first
            yield credential
        asked = request_event(ctx, self.calls, tool_event)
        if asked is not None:  # google-adk's order: the confirmation requests, then the responses
            yield asked
        yield tool_event
        answer = structured_answer(ctx, tool_event)
        if answer is not None:
            yield answer
            self.outcome = StepOutcome.END
            return
        if credential is not None:  # google-adk ends the invocation after a credential request
            self.outcome = StepOutcome.END
            return
        own = {k: v for k, v in tool_event.actions.requested_auth_configs.items() if not is_adk_request(v)}
        if own:
            # Auth as a return value: the turn ends with an auth request of its own (no
            # content, so the history the model sees is not polluted).
            yield ctx.event(actions=EventActions(requested_auth_configs=own), turn_complete=True)
            self.outcome = StepOutcome.END
            return
        if tool_event.actions.transfer_to_agent or tool_event.actions.skip_summarization:
            self.outcome = StepOutcome.END


async def _run_calls(agent: Any, ctx: InvocationContext, calls: list[FunctionCall], tools: dict[str, Any],
                     results: list[Any]) -> AsyncGenerator[Event, None]:
    """The calls run concurrently, their results put in ``results`` (in the calls'
    order; a tool step's failure raised). When a call goes to a single-turn sub-agent,
    the events its run shows (``tools._single_turn.SUB_EVENTS``) are given as they come;
    closed early, the calls still running are cancelled."""
    if not any(isinstance(tools.get(c.name), SingleTurnAgentTool) for c in calls):
        results.extend(await run_calls(agent, ctx, calls, tools))
        return
    queue: asyncio.Queue[Event] = asyncio.Queue()
    token = SUB_EVENTS.set(queue)
    try:  # the tasks take the queue with the context they are made in
        running: asyncio.Future[Any] = asyncio.ensure_future(run_calls(agent, ctx, calls, tools))
    finally:
        SUB_EVENTS.reset(token)
    try:
        while not running.done():
            waiting: asyncio.Future[Any] = asyncio.ensure_future(queue.get())
            await asyncio.wait({running, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if waiting.done():
                yield waiting.result()
            else:
                waiting.cancel()
        while not queue.empty():
            yield queue.get_nowait()
        results.extend(running.result())
    finally:
        if not running.done():
            running.cancel()


class ToolStep:
    """The model's ``calls`` run and answered (see the module's docstring)."""

    def __init__(self, agent: Any, ctx: InvocationContext, calls: ToolCalls) -> None:
        self.agent, self.ctx, self.calls = agent, ctx, calls
        self.outcome = StepOutcome.NEXT

    async def events(self) -> AsyncGenerator[Event, None]:
        agent, ctx = self.agent, self.ctx
        calls, tools = list(self.calls.calls), self.calls.tools
        ctx.check_cancelled()
        # Steps with a tool that must not run twice are put on record (a host's run; None: embedded)
        committed = None if all(is_idempotent(tools.get(c.name), c.name) for c in calls) else ctx.committed
        if committed is not None:
            await committed()  # the calls are on record before a tool that must not run twice runs
        results: list[Any] = []
        try:
            async with aclosing(_run_calls(agent, ctx, calls, tools, results)) as shown:
                async for event in shown:  # a single-turn sub-agent's own events, as they come
                    yield event
        except Exception as error:  # google-adk's: the calls that had ended are answered first
            kept = kept_response_event(ctx, calls, error)
            if kept is not None:
                yield kept
            raise
        answer = AnswerStep(ctx, calls, results)
        async with aclosing(answer.events()) as events:
            async for event in events:
                yield event
        if committed is not None:
            # ... and their results before the run goes on: a crash later must not leave
            # a side effect done but not on record (its resume would stop for a decision).
            await committed()
        self.outcome = answer.outcome
