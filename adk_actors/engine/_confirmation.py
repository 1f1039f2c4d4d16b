"""google-adk's tool confirmation flow, on our flow.

A call is held for a human in two ways: its tool asks (``tool_context.request_confirmation``,
google-adk's keyword form), or its tool requires it (``require_confirmation`` /
``check_require_confirmation``) and the run has no approval service of ours (with one,
the seeds' blocking approval decides instead: ``_flow_tools._refusal``). Either way the
call's tool-response event carries ``actions.requested_tool_confirmations`` and, just
before it, :func:`request_event` gives one ``adk_request_confirmation`` call per request
(long-running, so a client knows to answer it).

The user answers with a function response named ``adk_request_confirmation`` (its id the
request's). :class:`ConfirmationStep` runs first in the next flow of that agent, in order:
the answers read from the last user event (none: nothing happens); an answer whose id
no call in the history has is google-adk's ``ValueError``; those already acted on
(a result of the original call after the answer) dropped, and when every answer was, the
flow ends there (google-adk ends the invocation), unless the invocation that acted on
them is being resumed (``ctx.replay``: its replay hands the results back and the flow
goes on); each remaining answer's request found
in the history (made by this agent) and its original call checked, as google-adk checks
it (a ``ValueError`` otherwise: in the history, its tool known, needing confirmation or
having asked, the same name and arguments); the original calls run again, each with
``tool_context.tool_confirmation`` set, and answered as a live tool step is.

:func:`request_history` is what the request compiler reads at every model step: the
events of a single-turn sub-agent's run as a tool (``tools._single_turn``) left out
unless the step is inside that run; when a confirmation was asked, the confirmation
requests and answers left out, and the history ending in the re-run call's result
rearranged as google-adk's contents are (the events between the call and its latest
result left out). Whether either applies is read incrementally (:class:`~adk_actors._prefix_scan.PrefixScan`), so
a long session's step does not scan its whole history again.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from .._prefix_scan import PrefixScan
from .._types import Content, Event, FunctionCall, Part
from ..tools._base import ToolContext
from ..tools._single_turn import sub_branch
from ..tools._tool_pool import pool_size, run_sync_call
from ..tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME as CONFIRM
from ..tools.tool_confirmation import ToolConfirmation
from ._context import InvocationContext
from ._flow_step import StepOutcome, unmatched_answer

__all__ = ["ConfirmationStep", "call_requirement", "gate", "request_event", "request_history", "tool_requires_confirmation"]

#: google-adk's answers of a call held by the gate
HELD = {"error": "This tool call requires confirmation, please approve or reject."}
REJECTED = {"error": "This tool call is rejected."}


def request_event(ctx: InvocationContext, calls: list[FunctionCall], tool_event: Event) -> Event | None:
    """The ``adk_request_confirmation`` calls for the confirmations ``tool_event``'s
    calls asked for (each naming its original call and the confirmation asked), as
    one long-running model event of the agent; None when none was asked for."""
    asked = tool_event.actions.requested_tool_confirmations
    if not asked:
        return None
    parts, ids = [], []
    for call_id, confirmation in asked.items():
        original = next((c for c in calls if c.id == call_id), None)
        if original is None:
            continue
        request_id = f"adk-{uuid.uuid4()}"
        ids.append(request_id)
        if not isinstance(confirmation, ToolConfirmation):
            confirmation = ToolConfirmation.model_validate(confirmation)
        parts.append(Part(function_call=FunctionCall(id=request_id, name=CONFIRM, args={
            "originalFunctionCall": original.model_dump(mode="json", exclude_none=True, by_alias=True),
            "toolConfirmation": confirmation.model_dump(mode="json", exclude_none=True, by_alias=True)})))
    if not parts:
        return None
    return ctx.event(content=Content(role="model", parts=tuple(parts)), long_running_tool_ids=tuple(ids))


def call_requirement(required: Any, args: dict[str, Any], context: ToolContext | None) -> Any:
    """A ``require_confirmation`` callable's answer (see :func:`tool_requires_confirmation`)."""
    named = dict(args)
    try:
        if "tool_context" in inspect.signature(required).parameters:
            named["tool_context"] = context
        inspect.signature(required).bind(**named)
    except (TypeError, ValueError):
        return required(args)
    return required(**named)


async def tool_requires_confirmation(tool: Any, args: dict[str, Any], context: ToolContext) -> bool:
    """Does this call of ``tool`` need a confirmation? A google-adk tool's
    ``check_require_confirmation(args, tool_context)``; else its ``require_confirmation``:
    a bool, or a callable given the call's arguments by name and ``tool_context`` when
    it has that parameter (google-adk's) or, when it does not take them so, as one
    dict (ours); awaited when it returns an awaitable. A synchronous callable runs on
    the run's tool thread pool when its ``RunConfig.tool_thread_pool_config`` is set
    (as google-adk's does), else on the loop; its exception is raised here either way."""
    check = getattr(tool, "check_require_confirmation", None)
    required = getattr(tool, "require_confirmation", None)
    if required is None and callable(check):
        return bool(await check(args, context))
    if callable(required):
        workers = pool_size(context)
        if workers is not None and not _is_async_callable(required):
            answer = await run_sync_call(workers, call_requirement, required, args, context)
        else:
            answer = call_requirement(required, args, context)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer is True
    return bool(required)


def _is_async_callable(target: Any) -> bool:
    """Does calling ``target`` give a coroutine (an ``async def`` function or ``__call__``)?"""
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(type(target).__call__)


async def gate(tool: Any, args: dict[str, Any], context: ToolContext) -> dict[str, Any] | None:
    """google-adk's gate of a call whose tool requires confirmation (after the
    before-tool hooks): not confirmed yet, the confirmation is asked for, the turn ends
    after the tool-response event (``skip_summarization``) and the call is answered
    with google-adk's error; rejected, with its rejection; else None (the tool runs)."""
    if not await tool_requires_confirmation(tool, args, context):
        return None
    confirmation = context.tool_confirmation
    if confirmation is None:
        context.request_confirmation(hint=(
            f"Please approve or reject the tool call {context.tool_name}() by responding with a FunctionResponse "
            "with an expected ToolConfirmation payload."))
        context.actions.skip_summarization = True
        return dict(HELD)
    return None if confirmation.confirmed else dict(REJECTED)


def _answers(events: Sequence[Event]) -> tuple[int, dict[str, ToolConfirmation]]:
    """The index of the last user event and the confirmations it answers (by request
    id); (-1, {}) when it answers none."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.author != "user":
            continue
        found = {r.id: ToolConfirmation.from_response_dict(dict(r.response or {}))
                 for r in event.get_function_responses() if r.name == CONFIRM and r.id and r.response is not None}
        return (index, found) if found else (-1, {})
    return -1, {}


def _requests(events: Sequence[Event], agent_name: str, ids: set[str]) -> dict[str, FunctionCall]:
    """request id -> the original call it names, for this agent's requests among ``ids``."""
    found: dict[str, FunctionCall] = {}
    for event in events:
        if event.author != agent_name:
            continue
        for call in event.get_function_calls():
            original = (call.args or {}).get("originalFunctionCall") if call.name == CONFIRM else None
            if call.id in ids and isinstance(original, dict):
                found[call.id or ""] = FunctionCall.model_validate(original)
    return found


async def _checked(ctx: InvocationContext, agent: Any, original: FunctionCall, tools: dict[str, Any],
                   events: Sequence[Event]) -> None:
    """google-adk's checks of a confirmed call (a ``ValueError`` saying which failed)."""
    if not original.id or not original.name:
        raise ValueError("Original function call ID is missing." if not original.id
                         else "Original function call name is missing.")
    history = {c.id: c for e in events for c in e.get_function_calls() if c.id and c.name != CONFIRM}
    earlier = history.get(original.id)
    if earlier is None:
        raise ValueError(f"Original function call for ID '{original.id}' not found in session history.")
    tool = tools.get(original.name)
    if tool is None:
        raise ValueError(f"Tool '{original.name}' is not registered.")
    asked = any(original.id in e.actions.requested_tool_confirmations for e in events)
    if not asked and not await tool_requires_confirmation(tool, dict(original.args),
                                                          ToolContext(ctx, original.id, original.name)):
        raise ValueError(f"Tool '{original.name}' does not require confirmation.")
    if earlier.name != original.name:
        raise ValueError(f"Function call name mismatch for ID '{original.id}': history has '{earlier.name}', "
                         f"confirmation has '{original.name}'.")
    if dict(earlier.args) != dict(original.args):
        raise ValueError(f"Function call arguments mismatch for ID '{original.id}'.")


class ConfirmationStep:
    """The confirmed calls run again (see the module's docstring); ``outcome`` is
    ``END`` when the flow ends there, ``NEXT`` when it goes on to the model."""

    def __init__(self, agent: Any, ctx: InvocationContext) -> None:
        self.agent, self.ctx = agent, ctx
        self.outcome = StepOutcome.NEXT

    async def events(self, run_tool: Any, answer_step: Any, resolve_tools: Any) -> AsyncGenerator[Event, None]:
        """``run_tool``, ``answer_step`` and ``resolve_tools`` are the flow's own (passed
        in, so that this module sits below the tool step)."""
        agent, ctx = self.agent, self.ctx
        events = ctx.session.events
        _, answers = _answers(events)
        if not answers:
            return
        called = {c.id for e in events for c in e.get_function_calls()}
        missing = set(answers) - called
        if missing:  # google-adk's runner refuses such an answer (for any function response)
            raise unmatched_answer(missing)
        originals = _requests(events, agent.name, set(answers))
        fresh = {rid: call for rid, call in originals.items() if not _consumed(events, rid, call)}
        if not fresh:
            # answered again, already acted on: the invocation ends; unless this is the
            # invocation that acted on it, resumed (its replay hands the results back)
            if originals and not (ctx.replay is not None and all(
                    _consumed(events, rid, call, ctx.invocation_id) for rid, call in originals.items())):
                self.outcome = StepOutcome.END
            return
        tools, _, _ = await resolve_tools(agent, ctx)
        for call in fresh.values():
            await _checked(ctx, agent, call, tools, events)
        calls = list(fresh.values())
        results = await asyncio.gather(*(run_tool(agent, ctx, call, tools, confirmation=answers[rid])
                                          for rid, call in fresh.items()))
        answer = answer_step(ctx, calls, list(results))
        async for event in answer.events():
            yield event
        self.outcome = answer.outcome


def _consumed(events: Sequence[Event], request_id: str, call: FunctionCall, invocation_id: str | None = None) -> bool:
    """Was the call run again after the first answer to ``request_id`` (in invocation
    ``invocation_id``, when given)?"""
    first = next((i for i, e in enumerate(events) if e.author == "user"
                  and any(r.id == request_id for r in e.get_function_responses())), len(events))
    return any(r.id == call.id for e in events[first + 1:] if e.author != "user"
               and invocation_id in (None, e.invocation_id) for r in e.get_function_responses())


def _is_confirmation(event: Event) -> bool:
    return any(c.name == CONFIRM for c in event.get_function_calls()) or \
        any(r.name == CONFIRM for r in event.get_function_responses())


#: whether a history holds a single-turn sub-agent's event / a confirmation request
#: (each read incrementally as the session grows, :class:`PrefixScan`)
_has_sub_branch = PrefixScan(lambda event: bool(event.branch and "@" in event.branch))
_has_confirmation_request = PrefixScan(lambda event: bool(event.actions.requested_tool_confirmations))


def request_history(events: Sequence[Event], branch: str | None = None) -> Sequence[Event]:
    """The history the compiler reads on ``branch`` (see the module): without the events
    of a single-turn sub-agent's run as a tool (on a ``<name>@<call id>`` branch) that
    ``branch`` is not inside, as google-adk leaves them out; then, when a call asked
    for a confirmation, without the confirmation requests and answers and, when its
    last event answers a call made before the event just preceding it, without the
    events between that call and its last answer. ``events`` itself when neither applies."""
    has_sub, has_confirmation = _has_sub_branch(events), _has_confirmation_request(events)
    if not (has_sub or has_confirmation):
        return events
    if has_sub:
        events = [e for e in events if not sub_branch(e.branch)
                  or (branch is not None and (branch == e.branch or branch.startswith(f"{e.branch}.")))]
    if not has_confirmation:
        return events
    kept = [e for e in events if not _is_confirmation(e)]
    if not kept:
        return kept
    answered = {r.id for r in kept[-1].get_function_responses() if r.id}
    if not answered or len(kept) < 2 or answered & {c.id for c in kept[-2].get_function_calls()}:
        return kept
    for index in range(len(kept) - 2, -1, -1):
        if answered & {c.id for c in kept[index].get_function_calls()}:
            return [*kept[:index + 1], kept[-1]]
    return kept
