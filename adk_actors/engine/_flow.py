"""The flow loop of an LlmAgent, one step at a time.

Each step, in order: check cancellation and the LLM-call budget; resolve toolsets;
build the request (the pure compiler; when code other than the engine's will see it
first, the request gets copies of the session's contents, see :func:`_own_contents`);
before-model hooks (agent callbacks, then plugins; a response skips the model); the
model (partial events streamed when the RunConfig asks, all sharing the final event's
id); on a model error the error hooks decide (Retry, Fallback, Reraise: the step ends
with an error event); after-model hooks; the model event. Tool calls then run
concurrently, each: policy authorization -> before-tool hooks -> the tool ->
on-tool-error / after-tool hooks; their results form ONE tool-response event; then
the loop goes on. A final response (no calls; or skip_summarization; or a
long-running call) ends it; so does ``transfer_to_agent`` (the target then runs in
the same invocation, see ``AgentBase.run``). ``max_iterations`` and
``RunConfig.max_llm_calls`` end the loop with an error event whose code says which.

Transfers do not nest on the Python stack: the first LLM flow of a branch runs the
transfer targets one after the other in a loop (a trampoline), and a flow that runs
inside it hands its own transfer back to that loop instead of running the target
itself. A ping-pong of transfers therefore ends with the ``max_llm_calls`` error
event, however many hops it makes.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

from .. import telemetry
from .._cache_types import cache_state
from .._callables import is_plain_function
from .._exceptions import AdkError
from .._tree import find_agent, inherited_model
from .._types import (
    Compaction,
    Content,
    Event,
    EventActions,
    FunctionCall,
    FunctionResponse,
    GroundingMetadata,
    LlmRequest,
    LlmResponse,
    Part,
    StreamingMode,
)
from ..agents.callback_context import Actions
from ..compiler import (
    CompileContext,
    Summarize,
    build_request,
    history,
    referenced_artifacts,
    transfer_targets,
)
from ..compiler._tools import (
    SET_MODEL_RESPONSE,
    TRANSFER_TO_AGENT,
    canonical_tools,
    is_toolset,
    uses_response_tool,
)
from ..models._base import ModelError, model_name
from ..models._breaker import BreakerModel, CircuitBreaker, FallbackModel
from ..models._http import HttpModel
from ..models._llm_registry import BaseLlm
from ..tools._agent_tool import GROUNDING_KEY, AgentTool
from ..tools._base import ToolContext
from ..tools._classes import BaseTool, BaseToolset, process_request
from ..tools._function import FunctionTool, ToolArgumentError, in_daemon_thread
from ..tools._set_model_response import SetModelResponseTool
from ..tools._single_turn import single_turn_tools
from ._callbacks import CallbackError, Fallback, Reraise, Retry, call_chain, check_decision
from ._code_execution import code_request, code_step
from ._context import CallbackContext, InvocationContext, RunCancelled
from ._model_code import model_code_step
from ._policy import Deny
from ._resume import decided_results, is_idempotent

__all__ = [
    "ModelRaised",
    "ModelStepError",
    "preload_memories",
    "resolve_tools",
    "run_llm_flow",
    "run_tool",
    "template_artifacts",
    "tool_response_event",
]

_log = logging.getLogger("adk_actors.flow")


class ModelStepError(Exception):
    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class ModelRaised(Exception):
    """A model call raised and no ``on_model_error`` hook replaced its answer: the step
    committed its error event (``errorCode`` the error's type), then the run ends with
    this, as google-adk's run raises (its SSE stream then ends with an error line, its
    ``/run`` with a 500). ``error_type`` and ``message`` are the model error's."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(f"{error_type}: {message}")
        self.error_type = error_type
        self.message = message


def _error_type(error: BaseException) -> str:
    return getattr(error, "error_type", None) or type(error).__name__


class _Transfers:
    """The trampoline of one branch: the agent it runs now, and the transfer that
    agent's flow asked for."""

    def __init__(self, branch: str | None) -> None:
        self.branch = branch
        self.current: Any = None
        self.pending: str | None = None


_trampoline: contextvars.ContextVar[_Transfers | None] = contextvars.ContextVar("adk_transfers", default=None)


async def run_llm_flow(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
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


async def resolve_tools(agent: Any, ctx: InvocationContext) -> tuple[dict[str, Any], list[Any], list[Event]]:
    """The step's tools by name (plain functions wrapped), the tools its toolsets gave
    and a tool per ``single_turn`` sub-agent (``tools._single_turn``), and an error
    event per toolset of ours that failed to list its tools (the step goes
    on without them; a google-adk ``BaseToolset`` that fails is only logged, as
    google-adk does). An agent whose structured answer comes through
    ``set_model_response`` (an ``output_schema`` and tools) has that tool too."""
    tools: dict[str, Any] = {}
    extra: list[Any] = []
    problems: list[Event] = []
    for tool in canonical_tools(agent, ctx.root_agent):  # google_search with bypass_multi_tools_limit replaced
        if is_toolset(tool):
            try:
                if isinstance(tool, BaseToolset):  # google-adk's: a readonly context, its prefix applied
                    provided = list(await tool.get_tools_with_prefix(CallbackContext(ctx)))
                else:
                    provided = list(await tool.get_tools(ctx))
            except Exception as exc:
                _log.error("toolset %s of agent %s failed: %s", getattr(tool, "name", tool), agent.name, exc)
                if not isinstance(tool, BaseToolset):  # google-adk's are left out silently, as google-adk does
                    problems.append(ctx.event(error_code="toolset_error",
                                              error_message=f"toolset {getattr(tool, 'name', tool)!r} failed: {exc}"))
                continue
            extra.extend(provided)
            for item in provided:
                tools[item.name] = item
        else:
            if is_plain_function(tool):
                tool = FunctionTool(tool)  # cheap: the description is cached per function
            name = getattr(tool, "name", None)
            if name is not None:
                tools[name] = tool
    for delegate in single_turn_tools(agent):  # google-adk 2.x: a single_turn sub-agent is a tool, after the rest
        extra.append(delegate)
        tools[delegate.name] = delegate
    if uses_response_tool(agent, CompileContext(root_agent=ctx.root_agent, extra_tools=extra)):
        tools[SET_MODEL_RESPONSE] = SetModelResponseTool(agent.output_schema)  # declared by the compiler
    return tools, extra, problems


SUMMARY_INSTRUCTION = (
    "Summarize the conversation below for the assistant who will continue it: keep every fact, "
    "decision, name, number and open question; drop small talk. Write plain prose."
)


def _transcript(messages: Any) -> str:
    lines = []
    for message in messages:
        for part in message.parts:
            if part.text and not part.thought:
                lines.append(f"{message.role}: {part.text}")
            elif part.function_call is not None:
                lines.append(f"{message.role} called {part.function_call.name} with {part.function_call.args}")
            elif part.function_response is not None:
                lines.append(f"{part.function_response.name} returned {part.function_response.response}")
    return "\n".join(lines)


async def _summarize_if_due(agent: Any, ctx: InvocationContext) -> Event | None:
    """With a ``Summarize`` compressor: once the history is past its limit, summarize the
    older messages with the agent's own model and return the compaction event (message
    count + summary). The compiler stays pure: it only reads such events. A failed
    summary is logged and the agent answers with the full history."""

    compressor = getattr(agent, "context_compressor", None)
    if not isinstance(compressor, Summarize):
        return None
    plan = compressor.plan(history(agent, CompileContext(events=ctx.session.events, branch=ctx.branch)))
    if plan is None:
        return None
    request = LlmRequest(model=model_name(inherited_model(agent, ctx.root_agent)), system_instruction=SUMMARY_INSTRUCTION,
                         contents=[Content.user(_transcript(plan.messages))])
    ctx.counters["llm_calls"] += 1
    summary = ""
    try:
        async for response in _one_model(inherited_model(agent, ctx.root_agent), agent, ctx).generate(request):
            if not response.partial and response.content is not None:
                summary = response.content.text
    except Exception as exc:
        _log.warning("summarizing the history of %s failed: %s", agent.name, exc)
        return None
    if not summary:
        return None
    return ctx.event(actions=EventActions(compaction=Compaction(message_count=plan.message_count, summary=summary)))


async def preload_memories(agent: Any, ctx: InvocationContext) -> list[Any]:
    """Memories matching the user's latest message, for agents with ``preload_memory``."""
    if not getattr(agent, "preload_memory", False):
        return []
    query = next((e.content.text for e in reversed(ctx.session.events)
                  if e.author == "user" and e.content is not None and e.content.text), "")
    if not query:
        return []

    session = ctx.session
    try:
        found: list[Any] = await in_daemon_thread(ctx.memory.search, session.app_name, session.user_id, query, 5)
    except Exception as exc:
        _log.warning("preloading memory for %s failed: %s", agent.name, exc)
        return []
    return found


def _one_model(model: Any, agent: Any, ctx: InvocationContext) -> Any:
    if not hasattr(model, "generate"):
        if ctx.resolve_model is None:
            raise ModelError(f"agent {agent.name!r} has no model object for {model!r} and no model resolver is set",
                             error_type="no_model")
        model = ctx.resolve_model(model)
    if isinstance(model, BaseLlm):  # google-adk's model classes: Gemini / Claude give their HTTP connector
        model = model.connector()
    if ctx.breaker_client is not None:

        # The host's shared breakers guard providers reached over the network; an
        # offline model (ScriptedModel) has no outage to guard against.
        return BreakerModel(model, ctx.breaker_client) if isinstance(model, HttpModel) else model
    if ctx.breakers is not None:

        name = getattr(model, "name", str(model))
        breaker = ctx.breakers.setdefault(name, CircuitBreaker(name))
        model = BreakerModel(model, breaker)
    return model


def _model_of(agent: Any, ctx: InvocationContext) -> Any:
    """The agent's model (resolved by name, behind its breaker), with its fallbacks."""
    primary = _one_model(inherited_model(agent, ctx.root_agent), agent, ctx)
    fallbacks = getattr(agent, "fallback_models", None) or []
    if not fallbacks:
        return primary

    return FallbackModel([primary, *(_one_model(m, agent, ctx) for m in fallbacks)])


async def _call_model(agent: Any, ctx: InvocationContext, request: Any, cb: CallbackContext) -> AsyncIterator[LlmResponse]:
    """Partial responses, then exactly one final response; error hooks decide on failure."""
    attempts = 0
    stream = ctx.run_config.streaming_mode is StreamingMode.SSE
    while True:
        attempts += 1
        ctx.check_cancelled()
        try:
            model = _model_of(agent, ctx)
            final: LlmResponse | None = None
            async for response in model.generate(request, stream=stream):
                if response.partial:
                    yield response
                else:
                    final = response
            if final is None:
                raise ModelError("the model stream ended without a final response", error_type="malformed_response")
            yield final
            return
        except (RunCancelled, asyncio.CancelledError):
            raise
        except Exception as error:
            decision: Any = await call_chain(agent.on_model_error_callback, "on_model_error", cb, request, error)
            if decision is None and ctx.plugins is not None:
                decision = await ctx.plugins.first("on_model_error", cb, request, error)
            decision = Reraise() if decision is None else check_decision(decision, "on_model_error")
            if isinstance(decision, Retry) and attempts < decision.max_attempts:
                continue
            if isinstance(decision, Fallback):
                yield decision.value
                return
            raise ModelStepError(error) from error


def _partial_event(ctx: InvocationContext, event_id: str, response: LlmResponse) -> Event:
    """A streamed piece of the model's answer, as google-adk relays it: its content (text
    or a function call, whose call is made only from the final event), and what the
    chunk said of itself (finish reason, usage, model version)."""
    calls = response.content is not None and bool(response.content.function_calls)
    return ctx.event(id=event_id, content=_with_call_ids(response.content), partial=True,
                     finish_reason=response.finish_reason, usage_metadata=response.usage_metadata,
                     model_version=response.model_version, long_running_tool_ids=() if calls else None,
                     grounding_metadata=response.grounding_metadata)


def _propagated_grounding(response: LlmResponse, tools: dict[str, Any], ctx: InvocationContext) -> LlmResponse:
    """``response`` with the grounding an AgentTool with ``propagate_grounding_metadata``
    (``GoogleSearchAgentTool``) left in state this invocation, as google-adk gives it to
    the caller's answers; ``response`` as it is without either."""
    found = ctx.session.state.get(GROUNDING_KEY)
    if not found or not any(getattr(t, "propagate_grounding_metadata", False) for t in tools.values()):
        return response
    return response.model_copy(update={"grounding_metadata": GroundingMetadata.model_validate(found)})


#: ``process_llm_request`` as google-adk's base classes define it (a tool with it has no hook)
_NO_REQUEST_HOOK = (None, BaseTool.process_llm_request, BaseToolset.process_llm_request)


def _foreign_request_hook(tool: Any) -> bool:
    """Whether ``tool`` has a ``process_llm_request`` hook that is not ours (our own
    tools' hooks, Gemini's built-in tools and ``load_artifacts``, edit no content in
    place)."""
    hook = getattr(type(tool), "process_llm_request", None)
    return hook not in _NO_REQUEST_HOOK and not str(getattr(hook, "__module__", "")).startswith("adk_actors.")


def _others_see_request(agent: Any, ctx: InvocationContext, hooked: list[Any]) -> bool:
    """Whether code other than the engine's may see this step's request before the model
    has answered: an agent's before-model or model-error callback, a plugin's (see
    ``PluginManager.see_requests``), a tool's or toolset's ``process_llm_request`` hook
    not of ours, or a model object that is not ours."""
    model = inherited_model(agent, ctx.root_agent)
    return bool(getattr(agent, "before_model_callback", None) or getattr(agent, "on_model_error_callback", None)
                or (ctx.plugins is not None and ctx.plugins.see_requests())
                or any(_foreign_request_hook(tool) for tool in hooked)
                or not (isinstance(model, str) or type(model).__module__.startswith("adk_actors.")))


def _own_contents(request: LlmRequest) -> None:
    """Give ``request`` its own objects where the compiler shares the session's or the
    agent's, as google-adk's request is made of copies: each content and each of its
    parts copied (shallow, as google-adk's: assigning ``part.text`` or
    ``part.function_response`` changes the request only, the session's events keep
    theirs), the tool declarations and the config's containers copied deep (the agent's
    definition keeps its own)."""
    request.contents = [content.model_copy(update={"parts": [part.model_copy() for part in content.parts]})
                        for content in request.contents]
    request.tools = [declaration.model_copy(deep=True) for declaration in request.tools]
    for key, value in list(request.config.items()):
        if isinstance(value, dict | list):
            request.config[key] = copy.deepcopy(value)


def _with_call_ids(content: Content | None) -> Content | None:
    if content is None or all(c.id for c in content.function_calls):
        return content
    parts = tuple(
        Part(function_call=p.function_call.model_copy(update={"id": f"adk-{uuid.uuid4()}"}))
        if p.function_call is not None and not p.function_call.id else p
        for p in content.parts
    )
    return Content(role=content.role or "model", parts=parts)


def _output_value(agent: Any, text: str) -> Any:
    if agent.output_schema is None:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


async def _loop(agent: Any, ctx: InvocationContext) -> AsyncIterator[Event]:
    for _ in range(agent.max_iterations):
        ctx.check_cancelled()
        budget = ctx.run_config.max_llm_calls
        if budget > 0 and ctx.counters["llm_calls"] >= budget:
            yield ctx.event(error_code="max_llm_calls", error_message=f"the run made {budget} LLM calls, its limit")
            return
        replayed = ctx.replay.step(agent.name, ctx.branch) if ctx.replay is not None else None
        if replayed is not None:  # a resumed run: this step was committed (see _resume)
            ctx.counters["llm_calls"] += replayed.model_calls
            for event in replayed.events:
                yield event
            if replayed.verdict == "end":
                return
            if replayed.verdict == "answer":  # set_model_response's answer, its event not committed
                answer = _structured_answer(ctx, replayed.events[-1])
                if answer is not None:
                    yield answer
                return
            if replayed.verdict == "next":
                continue
            if replayed.verdict == "pending":
                tools, _, _ = await resolve_tools(agent, ctx)
                unapproved = await _never_approved(agent, ctx, replayed.calls, tools)
                results = await decided_results(run_tool, agent, ctx, replayed.calls, tools, _tool_context, unapproved)
                ended: list[bool] = []
                async for event in _answered(ctx, replayed.calls, results, ended):
                    yield event
                if ended:
                    return
                continue
        tools, extra_tools, problems = await resolve_tools(agent, ctx)
        for problem in problems:
            yield problem
        compaction = await _summarize_if_due(agent, ctx)
        if compaction is not None:
            yield compaction  # committed before the request is built, which then reads it
        memories = await preload_memories(agent, ctx)
        request = build_request(agent, CompileContext(
            state=ctx.session.state, events=ctx.session.events, run_config=ctx.run_config,
            root_agent=ctx.root_agent, branch=ctx.branch, invocation_id=ctx.invocation_id, extra_tools=extra_tools,
            memories=memories, artifacts=template_artifacts(agent, ctx)))
        if ctx.context_cache_config is not None:  # the App's context caching: the last call's cache
            request.cache_config = ctx.context_cache_config
            request.cache_metadata, request.cacheable_contents_token_count = cache_state(
                ctx.session.events, agent.name, ctx.invocation_id)
        hooked = [*(t for t in agent.tools if isinstance(t, BaseToolset)), *tools.values()]  # toolsets first
        if _others_see_request(agent, ctx, hooked):
            _own_contents(request)  # what they change in place stays in this request
        executor = getattr(agent, "code_executor", None)
        if executor is not None and getattr(executor, "runs_in_model", False):  # BuiltInCodeExecutor
            executor.process_llm_request(request)
        await process_request(hooked, lambda: ToolContext(ctx, None), request)  # google-adk tools' hooks
        code_request(agent, request)  # an agent with a code_executor: code parts as text
        cb = CallbackContext(ctx)
        response: Any = await call_chain(agent.before_model_callback, "before_model", cb, request)
        if response is None and ctx.plugins is not None:
            response = await ctx.plugins.first("before_model", cb, request)
        try:
            request.settle()  # the callbacks may have changed it in place, as google-adk's do
        except (ValueError, TypeError) as exc:
            raise CallbackError(f"agent {agent.name!r}: a before_model callback left a request the model "
                                f"cannot be sent: {exc}") from exc
        event_id = str(uuid.uuid4())
        answered_by_hook = response is not None  # then no after-model hook runs, as in google-adk
        if response is None:
            ctx.counters["llm_calls"] += 1
            failure: ModelStepError | None = None
            with telemetry.span(("adk", "llm"), _meta(agent, ctx, model=model_name(inherited_model(agent, ctx.root_agent)))) as llm_meta:
                llm_meta["event_id"] = event_id
                llm_meta["request"] = request
                try:
                    async for part_response in _call_model(agent, ctx, request, cb):
                        if part_response.partial:
                            yield _partial_event(ctx, event_id, part_response)
                        else:
                            response = part_response
                            llm_meta["response"] = part_response
                            usage = part_response.usage_metadata
                            llm_meta["usage"] = usage.counts() if usage is not None else None
                            llm_meta["model_version"] = part_response.model_version
                except ModelStepError as error:
                    failure = error
                    llm_meta["error"] = _error_type(error.error)
            if failure is not None:
                kind, message = _error_type(failure.error), str(failure.error) or type(failure.error).__name__
                yield ctx.event(id=event_id, error_code=kind, error_message=message)
                raise ModelRaised(kind, message) from failure.error
        if not answered_by_hook:
            replaced = await call_chain(agent.after_model_callback, "after_model", cb, response)
            if replaced is None and ctx.plugins is not None:
                replaced = await ctx.plugins.first("after_model", cb, response)
            if replaced is not None:
                response = replaced
        assert isinstance(response, LlmResponse)
        if not answered_by_hook:
            response = _propagated_grounding(response, tools, ctx)
        state_delta = dict(cb.actions.state_delta)
        if response.error_code:
            yield ctx.event(id=event_id, error_code=response.error_code, error_message=response.error_message,
                            actions=EventActions(state_delta=state_delta))
            return
        ran_code = False
        async for event in code_step(agent, ctx, response, state_delta):  # code in the answer: run, ask again
            ran_code = True
            yield event
        if ran_code:
            continue
        if executor is not None and getattr(executor, "runs_in_model", False) and response.content is not None:
            step, response = await model_code_step(ctx, response)  # the model's images saved as artifacts
            yield step  # google-adk's code-execution step gives this event before the answer's
        content = _with_call_ids(response.content)
        # A set_model_response call runs as a tool: its call and response are events,
        # then the answer's own event (_structured_answer), as google-adk gives them.
        calls = content.function_calls if content is not None else []
        # A streamed answer's final event says it is final (partial: false), as google-adk's do.
        final = False if ctx.run_config.streaming_mode is StreamingMode.SSE else None
        common = {"id": event_id, "finish_reason": response.finish_reason, "usage_metadata": response.usage_metadata,
                  "model_version": response.model_version, "partial": final,
                  "grounding_metadata": response.grounding_metadata, "cache_metadata": response.cache_metadata}
        if not calls:
            if agent.output_key and content is not None and content.text:
                state_delta[agent.output_key] = _output_value(agent, content.text)
            yield ctx.event(content=content, actions=EventActions(state_delta=state_delta), **common)
            if content is not None and content.parts and content.parts[-1].code_execution_result is not None:
                continue  # an answer ending in a code run's result is not final: the model goes on (google-adk)
            return
        yield ctx.event(content=content, actions=EventActions(state_delta=state_delta),
                        long_running_tool_ids=long_running_ids(calls, tools), **common)
        ctx.check_cancelled()
        # Steps with a tool that must not run twice are put on record (a host's run; None: embedded)
        committed = None if all(is_idempotent(tools.get(c.name), c.name) for c in calls) else ctx.committed
        if committed is not None:
            await committed()  # the calls are on record before a tool that must not run twice runs
        results = await asyncio.gather(*(run_tool(agent, ctx, call, tools) for call in calls))
        ended = []
        async for event in _answered(ctx, calls, results, ended):
            yield event
        if committed is not None:
            # ... and their results before the run goes on: a crash later must not leave
            # a side effect done but not on record (its resume would stop for a decision).
            await committed()
        if ended:
            return
    yield ctx.event(error_code="max_iterations",
                    error_message=f"agent {agent.name!r} reached its limit of {agent.max_iterations} model steps")


def _structured_answer(ctx: InvocationContext, tool_event: Event) -> Event | None:
    """The answer's event after a tool-response event in which ``set_model_response``
    accepted a structured answer (``actions.set_model_response``): the model's text, the
    answer as JSON, and the answer under the agent's ``output_key``. None otherwise (no
    such call, or the tool refused its arguments: the model is asked again)."""
    answer = tool_event.actions.set_model_response
    if answer is None or not any(r.name == SET_MODEL_RESPONSE for r in tool_event.get_function_responses()):
        return None
    agent = ctx.agent
    text = json.dumps(answer, ensure_ascii=False)
    state_delta = {agent.output_key: _output_value(agent, text)} if getattr(agent, "output_key", None) else {}
    return ctx.event(content=Content(role="model", parts=(Part(text=text),)),
                     actions=EventActions(state_delta=state_delta))


async def _answered(ctx: InvocationContext, calls: list[FunctionCall],
                    results: list[tuple[dict[str, Any] | None, Any]], ended: list[bool]) -> AsyncIterator[Event]:
    """The events that answer a model event's ``calls`` (their ``results``): the
    tool-response event, then the structured answer's event when ``set_model_response``
    accepted one (the flow ends), or an auth request; ``ended`` gets True when the
    agent's flow ends there (only long-running calls, auth, a transfer,
    ``skip_summarization``, or a structured answer)."""
    tool_event = tool_response_event(ctx, calls, results)
    if tool_event is None:
        ended.append(True)  # only long-running calls, each to be answered later: the turn ends
        return
    yield tool_event
    answer = _structured_answer(ctx, tool_event)
    if answer is not None:
        yield answer
        ended.append(True)
        return
    if tool_event.actions.requested_auth_configs:
        # Auth as a return value: the turn ends with an auth request of its own (no
        # content, so the history the model sees is not polluted).
        yield ctx.event(actions=EventActions(requested_auth_configs=dict(tool_event.actions.requested_auth_configs)),
                        turn_complete=True)
        ended.append(True)
        return
    if tool_event.actions.transfer_to_agent or tool_event.actions.skip_summarization:
        ended.append(True)


async def _never_approved(agent: Any, ctx: InvocationContext, calls: list[FunctionCall],
                          tools: dict[str, Any]) -> set[str]:
    """Of a resumed step's pending calls, those that need a human's approval that was
    never given (pending, expired or denied): their tools cannot have run."""
    if ctx.approvals is None or not hasattr(ctx.approvals, "call_status"):
        return set()
    never: set[str] = set()
    for call in calls:
        tool = tools.get(call.name)
        if not call.id or tool is None or not _confirmation(agent, tool, call.name, dict(call.args))[0]:
            continue
        try:
            status = await ctx.approvals.call_status(ctx, call.id)
        except Exception as exc:  # not known: the call may have run (a decision is asked for)
            _log.warning("the approval of call %s could not be read: %s", call.id, exc)
            continue
        if status in ("pending", "expired", "denied"):
            never.add(call.id)
    return never


def _tool_context(ctx: InvocationContext, call: FunctionCall) -> ToolContext:
    return ToolContext(ctx, call.id, call.name)


def long_running_ids(calls: list[FunctionCall], tools: dict[str, Any]) -> tuple[str, ...]:
    """The ids of the calls to long-running tools: an event's ``long_running_tool_ids``
    (``[]`` on the wire when none, as google-adk's)."""
    return tuple(c.id for c in calls if c.id and getattr(tools.get(c.name), "is_long_running", False))


async def run_tool(agent: Any, ctx: InvocationContext, call: FunctionCall,
                   tools: dict[str, Any]) -> tuple[dict[str, Any] | None, Any]:
    """The call's response (None: a long-running tool that answers later) and its
    ToolContext."""
    with telemetry.span(("adk", "tool"), _meta(agent, ctx, tool=call.name, function_call_id=call.id)) as meta:
        result, tool_context = await _run_tool_inner(agent, ctx, call, tools)
        meta["args"], meta["response"] = call.args, result
        if result is not None and "error" in result:
            meta["error"] = str(result["error"])[:200]
        return result, tool_context


def _meta(agent: Any, ctx: InvocationContext, **extra: Any) -> dict[str, Any]:
    session = ctx.session
    return {"agent": agent.name, "invocation_id": ctx.invocation_id, "branch": ctx.branch,
            "app": session.app_name, "user": session.user_id, "session": session.session_id, **extra}


async def _run_tool_inner(agent: Any, ctx: InvocationContext, call: FunctionCall,
                          tools: dict[str, Any]) -> tuple[dict[str, Any] | None, Any]:

    tool_context = ToolContext(ctx, call.id, call.name)
    args = dict(call.args)
    if call.name == TRANSFER_TO_AGENT:
        names = [t.name for t in transfer_targets(agent, ctx.root_agent)]
        target = args.get("agent_name")
        if target not in names:
            return {"error": f"Unknown agent {target!r}. You can transfer to: {', '.join(names) or 'no agent'}."}, tool_context
        tool_context.transfer_to_agent = target
        return {"result": None}, tool_context  # google-adk's tool answers nothing
    tool = tools.get(call.name)
    if tool is None:
        return await _unknown_tool(agent, ctx, call.name, args, tools, tool_context), tool_context
    if ctx.policies is not None:
        verdict = ctx.policies.authorize_tool(ctx, call.name, args)
        if isinstance(verdict, Deny):
            return {"error": f"The call to {call.name} was denied by policy: {verdict.reason}"}, tool_context
    needed, timeout, hint = _confirmation(agent, tool, call.name, args)
    if needed:
        if ctx.approvals is None:
            return {"error": f"The call to {call.name} needs a human's approval and no approval service is "
                             f"available, so it did not run."}, tool_context
        approval = await ctx.approvals.request(ctx, call.name, args, hint, timeout, call_id=call.id or "")
        if not approval.approved:
            return {"error": f"The call to {call.name} was not approved, so it did not run: {approval.reason}"}, \
                tool_context
    result: Any = await call_chain(agent.before_tool_callback, "before_tool", tool, args, tool_context)
    if result is None and ctx.plugins is not None:
        result = await ctx.plugins.first("before_tool", tool, args, tool_context)
    if result is None:
        attempts = 0
        while True:
            attempts += 1
            try:
                result = await tool.run(tool_context, args)
                break
            except ToolArgumentError as error:
                result = {"error": str(error)}
                break
            except (RunCancelled, asyncio.CancelledError):
                raise
            except Exception as error:
                decision: Any = await call_chain(agent.on_tool_error_callback, "on_tool_error", tool, args, tool_context, error)
                if decision is None and ctx.plugins is not None:
                    decision = await ctx.plugins.first("on_tool_error", tool, args, tool_context, error)
                decision = Reraise() if decision is None else check_decision(decision, "on_tool_error")
                if isinstance(decision, Retry) and attempts < decision.max_attempts:
                    continue
                if isinstance(decision, Fallback):
                    result = decision.value
                else:
                    result = {"error": f"{type(error).__name__}: {error}"}
                break
    # After-tool hooks see the tool's own return value, as google-adk's do.
    replaced = await call_chain(agent.after_tool_callback, "after_tool", tool, args, tool_context, result)
    if replaced is None and ctx.plugins is not None:
        replaced = await ctx.plugins.first("after_tool", tool, args, tool_context, result)
    if replaced is not None:
        result = replaced
    if result is None and tool.is_long_running:
        return None, tool_context  # its result comes later: the call stays open
    response = _as_dict(result)
    if tool_context.actions.skip_summarization and isinstance(tool, AgentTool) and "error" not in response \
            and result not in (None, "", {"result": None}):
        # google-adk shows an agent's answer that ends the turn as text too
        tool_context.shown_text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                                                     default=str)
    return response, tool_context


async def _unknown_tool(agent: Any, ctx: InvocationContext, name: str, args: dict[str, Any], tools: dict[str, Any],
                        tool_context: ToolContext) -> dict[str, Any]:
    """The answer to a call of a tool the agent does not have, in google-adk's order: the
    before-tool hooks (agent's, then plugins') may answer it, given a stand-in tool of
    that name; else the tool-error hooks are given a ``ValueError`` that says so (a
    reflect-and-retry plugin answers it as any failure; one that raises ends the run);
    else the error result that lists the tools there are. No after-tool hook runs: no
    tool ran."""
    stand_in = BaseTool(name=name, description="Tool not found")
    answer: Any = await call_chain(agent.before_tool_callback, "before_tool", stand_in, args, tool_context)
    if answer is None and ctx.plugins is not None:
        answer = await ctx.plugins.first("before_tool", stand_in, args, tool_context)
    if answer is None:
        error = ValueError(f"Tool '{name}' not found.\nAvailable tools: {', '.join(tools)}")
        decision: Any = await call_chain(agent.on_tool_error_callback, "on_tool_error", stand_in, args, tool_context,
                                         error)
        if decision is None and ctx.plugins is not None:
            decision = await ctx.plugins.first("on_tool_error", stand_in, args, tool_context, error)
        decision = None if decision is None else check_decision(decision, "on_tool_error")
        if isinstance(decision, Fallback):
            answer = decision.value
    if answer is None:
        return {"error": f"Unknown tool: {name}. Available tools: {', '.join(sorted(tools)) or 'none'}."}
    return _as_dict(answer)


def _confirmation(agent: Any, tool: Any, name: str, args: dict[str, Any]) -> tuple[bool, float, str]:
    """Does this call need a human's approval? (needed, timeout, hint)"""
    policy = getattr(agent, "confirmation_policy", None)
    if policy is not None and policy.needs(name, args):
        return True, policy.timeout, policy.hint or f"{agent.name} wants to call {name}"
    required = getattr(tool, "require_confirmation", False)
    if callable(required):
        required = required(args)
    return bool(required), 60.0, getattr(tool, "confirmation_hint", None) or f"{agent.name} wants to call {name}"


def _as_dict(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return result
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
        return value if isinstance(value, dict) else {"result": value}
    return {"result": result}


def tool_response_event(ctx: InvocationContext, calls: list[FunctionCall],
                        results: list[tuple[dict[str, Any] | None, Any]]) -> Event | None:
    """One event with the responses of the calls answered now (a long-running tool that
    answered None is answered later) and their tools' actions merged; None when no call
    was answered."""
    parts = []
    merged = Actions()
    for call, (response, tool_context) in zip(calls, results, strict=True):
        if response is not None:
            parts.append(Part(function_response=FunctionResponse(id=call.id, name=call.name, response=response)))
            if getattr(tool_context, "shown_text", None) is not None:
                parts.append(Part(text=tool_context.shown_text))
        taken = tool_context.actions
        merged.state_delta.update(taken.state_delta)
        merged.artifact_delta.update(taken.artifact_delta)
        merged.requested_auth_configs.update(taken.requested_auth_configs)
        merged.escalate = merged.escalate or taken.escalate
        merged.skip_summarization = merged.skip_summarization or taken.skip_summarization
        merged.transfer_to_agent = taken.transfer_to_agent or merged.transfer_to_agent
        if taken.set_model_response is not None:
            merged.set_model_response = taken.set_model_response
    if not parts:
        return None
    return ctx.event(content=Content(role="user", parts=tuple(parts)), actions=merged.event_actions())


def template_artifacts(agent: Any, ctx: InvocationContext) -> dict[str, Part]:
    """The artifacts that ``{artifact.NAME}`` placeholders of the agent's instruction
    and the root's global instruction name: the latest version of each, through the
    invocation's artifact service (in a host, the artifact actor). One that does not
    exist, or cannot be loaded, is left out: its placeholder then stays as written (or
    goes, with ``?``). Instruction providers (callables) name none that can be known."""
    names: set[str] = set()
    for template in (getattr(agent, "instruction", None), getattr(ctx.root_agent, "global_instruction", None)):
        if isinstance(template, str):
            names |= referenced_artifacts(template)
    loaded: dict[str, Part] = {}
    session = ctx.session
    for name in sorted(names):
        try:
            part = ctx.artifacts.load(session.app_name, session.user_id, session.session_id, name)
        except AdkError:
            continue
        if part is not None:
            loaded[name] = part
    return loaded
