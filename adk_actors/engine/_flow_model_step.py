"""The model step of a flow: the request built, the model asked, its answer as events.

:class:`ModelStep`, in order:

1. the step's tools (a toolset's error event given first), a compaction event when
   the history is due one (our ``Summarize`` compressor's, then google-adk's token
   threshold of ``App.events_compaction_config``: ``_compaction_adk``), then the
   request (``_flow_request``);
2. before-model hooks (agent's, then plugins'): an answer skips the model, and then
   no after-model hook runs (as in google-adk); the request the hooks may have
   changed in place is settled (one the model cannot be sent raises
   ``CallbackError``);
3. the model, inside an LLM span (``_flow_model.call_model``): partial events streamed
   when the RunConfig asks, all sharing the final event's id; a failure its error
   hooks let through gives an error event, then raises ``ModelRaised``;
4. after-model hooks may replace the answer; grounding an AgentTool left is added;
   the agent's planner rewrites the answer's parts (a before-model hook's answer's too;
   each streamed piece's as well), after an event of the state it wrote, if any
   (``planners._apply``, where google-adk's NL-planning response processor runs);
5. the answer as events: an error answer's event ends the flow; code in the answer is
   run and the model asked again (outcome ``NEXT``); a built-in code executor's images
   are saved first; an answer without calls is the final event (``END``; ``NEXT``
   when it ends in a code run's result), its text under the agent's ``output_key``;
   an answer with calls is the model event (long-running ids marked), and the outcome
   is :class:`ToolCalls`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from .. import telemetry
from .._tree import inherited_model
from .._types import Event, EventActions, LlmRequest, LlmResponse, StreamingMode
from ..models._base import model_name
from ..planners._apply import answer_planner, planned_content
from ._callbacks import CallbackError, call_chain
from ._code_execution import code_step
from ._compaction_adk import compact_before_request
from ._context import CallbackContext, InvocationContext
from ._flow_model import (
    ModelRaised,
    ModelStepError,
    call_model,
    error_type,
    partial_event,
    propagated_grounding,
    with_call_ids,
)
from ._flow_request import resolve_tools, step_request, summarize_if_due
from ._flow_step import StepOutcome, ToolCalls, output_value, span_meta
from ._flow_tools import long_running_ids
from ._model_code import model_code_step

__all__ = ["ModelStep"]


def _runs_in_model(agent: Any) -> bool:
    executor = getattr(agent, "code_executor", None)
    return executor is not None and bool(getattr(executor, "runs_in_model", False))  # BuiltInCodeExecutor


class ModelStep:
    """One live step of ``agent``'s flow (see the module's docstring); ``outcome`` is
    read once its events are relayed."""

    def __init__(self, agent: Any, ctx: InvocationContext) -> None:
        self.agent, self.ctx = agent, ctx
        self.outcome: StepOutcome | ToolCalls = StepOutcome.END
        self.event_id = str(uuid.uuid4())
        self._answer: LlmResponse | None = None

    async def events(self) -> AsyncGenerator[Event, None]:
        agent, ctx = self.agent, self.ctx
        tools, extra_tools, problems = await resolve_tools(agent, ctx)
        for problem in problems:
            yield problem
        compaction = await summarize_if_due(agent, ctx)
        if compaction is not None:
            yield compaction  # committed before the request is built, which then reads it
        summary = await compact_before_request(agent, ctx.events_compaction_config, ctx.root_agent,
                                               ctx.session.events)
        if summary is not None:
            yield summary  # google-adk's token-threshold summary, likewise (the in-process Runner stores it, unyielded)
        request = await step_request(agent, ctx, tools, extra_tools)
        cb = CallbackContext(ctx)
        response = await self._before_model(cb, request)
        tools = request.tools_dict  # as google-adk's flow: the calls go to the tools the request has now
        if response is None:
            async with aclosing(self._ask(request, cb)) as asked:
                async for event in asked:
                    yield event
            response = await self._after_model(cb, self._answer)
            assert isinstance(response, LlmResponse)
            response = propagated_grounding(response, tools, ctx)
        assert isinstance(response, LlmResponse)
        response, planned = self._planned(response)
        if planned is not None:
            yield planned
        async with aclosing(self._answered(response, dict(cb.actions.state_delta), tools)) as answered:
            async for event in answered:
                yield event

    async def _before_model(self, cb: CallbackContext, request: LlmRequest) -> Any:
        """The before-model hooks' answer (None: the model is asked), the request settled."""
        agent, ctx = self.agent, self.ctx
        response: Any = await call_chain(agent.before_model_callback, "before_model", cb, request)
        if response is None and ctx.plugins is not None:
            response = await ctx.plugins.first("before_model", cb, request)
        try:
            request.settle()  # the callbacks may have changed it in place, as google-adk's do
        except (ValueError, TypeError) as exc:
            raise CallbackError(f"agent {agent.name!r}: a before_model callback left a request the model "
                                f"cannot be sent: {exc}") from exc
        return response

    async def _ask(self, request: LlmRequest, cb: CallbackContext) -> AsyncGenerator[Event, None]:
        """The model asked inside its span: partial events, the final answer kept in
        ``_answer``; a failure gives its error event, then raises ``ModelRaised``."""
        agent, ctx = self.agent, self.ctx
        ctx.counters["llm_calls"] += 1
        failure: ModelStepError | None = None
        meta = span_meta(agent, ctx, model=model_name(inherited_model(agent, ctx.root_agent)))
        with telemetry.span(("adk", "llm"), meta) as llm_meta:
            llm_meta["event_id"] = self.event_id
            llm_meta["request"] = request
            try:
                async for part in call_model(agent, ctx, request, cb):
                    if part.partial:
                        part, planned = self._planned(part)
                        if planned is not None:
                            yield planned
                        yield partial_event(ctx, self.event_id, part)
                    else:
                        self._answer = part
                        llm_meta["response"] = part
                        usage = part.usage_metadata
                        llm_meta["usage"] = usage.counts() if usage is not None else None
                        llm_meta["model_version"] = part.model_version
            except ModelStepError as error:
                failure = error
                llm_meta["error"] = error_type(error.error)
        if failure is not None:
            kind, message = error_type(failure.error), str(failure.error) or type(failure.error).__name__
            yield ctx.event(id=self.event_id, error_code=kind, error_message=message)
            raise ModelRaised(kind, message) from failure.error

    def _planned(self, response: LlmResponse) -> tuple[LlmResponse, Event | None]:
        """``response`` with its parts as the agent's planner keeps them
        (``planners._apply``; as it is without a planner that rewrites answers), and
        the event of what the planner did through its context (its actions) when it
        wrote state (else None), which comes before the answer's, as google-adk's does."""
        planner = answer_planner(self.agent)
        if planner is None or response.content is None or not response.content.parts:
            return response, None
        cb = CallbackContext(self.ctx)
        response = response.model_copy(update={"content": planned_content(planner, cb, response.content)})
        return response, (self.ctx.event(actions=cb.actions.event_actions()) if cb.actions.state_delta else None)

    async def _after_model(self, cb: CallbackContext, response: Any) -> Any:
        """The model's answer, or the after-model hooks' (agent's, then plugins')."""
        agent, ctx = self.agent, self.ctx
        replaced = await call_chain(agent.after_model_callback, "after_model", cb, response)
        if replaced is None and ctx.plugins is not None:
            replaced = await ctx.plugins.first("after_model", cb, response)
        return response if replaced is None else replaced

    async def _answered(self, response: LlmResponse, state_delta: dict[str, Any],
                        tools: dict[str, Any]) -> AsyncGenerator[Event, None]:
        """Step 5 of the module's docstring: the answer's events, and the outcome."""
        agent, ctx, event_id = self.agent, self.ctx, self.event_id
        if response.error_code:
            yield ctx.event(id=event_id, error_code=response.error_code, error_message=response.error_message,
                            actions=EventActions(state_delta=state_delta))
            self.outcome = StepOutcome.END
            return
        ran_code = False
        async for event in code_step(agent, ctx, response, state_delta):  # code in the answer: run, ask again
            ran_code = True
            yield event
        if ran_code:
            self.outcome = StepOutcome.NEXT
            return
        if _runs_in_model(agent) and response.content is not None:
            step, response = await model_code_step(ctx, response)  # the model's images saved as artifacts
            yield step  # google-adk's code-execution step gives this event before the answer's
        content = with_call_ids(response.content)
        # A set_model_response call runs as a tool: its call and response are events,
        # then the answer's own event (AnswerStep), as google-adk gives them.
        calls = content.function_calls if content is not None else []
        # A streamed answer's final event says it is final (partial: false), as google-adk's do.
        final = False if ctx.run_config.streaming_mode is StreamingMode.SSE else None
        common = {"id": event_id, "finish_reason": response.finish_reason, "usage_metadata": response.usage_metadata,
                  "model_version": response.model_version, "partial": final,
                  "grounding_metadata": response.grounding_metadata, "cache_metadata": response.cache_metadata}
        if not calls:
            if agent.output_key and content is not None and content.text:
                state_delta[agent.output_key] = output_value(agent, content.text)
            yield ctx.event(content=content, actions=EventActions(state_delta=state_delta), **common)
            ends_in_code = content is not None and bool(content.parts) \
                and content.parts[-1].code_execution_result is not None
            # an answer ending in a code run's result is not final: the model goes on (google-adk)
            self.outcome = StepOutcome.NEXT if ends_in_code else StepOutcome.END
            return
        yield ctx.event(content=content, actions=EventActions(state_delta=state_delta),
                        long_running_tool_ids=long_running_ids(list(calls), tools), **common)
        self.outcome = ToolCalls(tuple(calls), tools)
