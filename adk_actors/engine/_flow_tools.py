"""One tool call of a flow step, and the event that answers a step's calls.

:func:`run_tool` answers one call, in order (inside a tool span):

1. ``transfer_to_agent``: the target checked against the agent's transfer targets
   (an unknown one is an error result), the transfer put on the tool context;
2. a tool the agent does not have: :func:`_unknown_tool` (the hooks may answer it);
3. the invocation's policies (a ``Deny`` is an error result), then a human's
   approval when the agent's confirmation policy or the tool asks for one (no
   approval service, or not approved: an error result; the tool does not run);
4. the before-tool hooks (agent's, then plugins'): an answer skips the tool;
5. the tool, its failures decided by the on-tool-error hooks (``Retry``, ``Fallback``);
   else an error result, or with the app's ``tool_errors="raise"`` its own exception
   raised on (google-adk's: it ends the run); bad arguments are an error result either
   way; a cancelled run is never caught;
6. the after-tool hooks, which see the tool's own return value and may replace it;
7. a long-running tool that answered None stays open (None); else the media parts
   it returned taken out (:func:`take_media`, kept for its function response's
   ``parts``), and what is left as a dict (an AgentTool whose answer ends the turn
   shows it as text too).

:func:`run_calls` runs a step's calls at once (one raises: google-adk's way, see it);
:func:`tool_response_event` merges the answered calls into ONE event.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import inspect
import json
import logging
import weakref
from typing import Any

from pydantic import BaseModel

from .. import telemetry
from .._types import (
    Blob,
    Content,
    Event,
    FileData,
    FunctionCall,
    FunctionResponse,
    FunctionResponsePart,
    FunctionResponseScheduling,
    Part,
)
from ..agents.callback_context import Actions
from ..compiler import transfer_targets
from ..compiler._tools import TRANSFER_TO_AGENT
from ..tools._agent_tool import AgentTool
from ..tools._base import ToolContext
from ..tools._classes import BaseTool
from ..tools._function import ToolArgumentError
from ..tools._tool_pool import pool_size, run_sync_call
from ..tools.tool_confirmation import ToolConfirmation
from ..workflow._task import FINISH_TASK
from ..workflow._task_agent import delegates
from ._callbacks import Fallback, Retry, call_chain, check_decision
from ._confirmation import call_requirement, gate
from ._context import InvocationContext, RunCancelled
from ._flow_step import span_meta
from ._policy import Deny

__all__ = [
    "as_dict",
    "kept_response_event",
    "long_running_ids",
    "never_approved",
    "raised_by_tool",
    "run_calls",
    "run_tool",
    "take_media",
    "tool_context",
    "tool_response_event",
]

_log = logging.getLogger("adk_actors.flow")

#: A call's answer (None: a long-running tool answers later) and its ToolContext
ToolResult = tuple[dict[str, Any] | None, Any]

#: How deep media is looked for in a tool's result, as google-adk's flow looks: the
#: result itself, and the entries of one container inside it
_MEDIA_DEPTH = 1

#: a call's context -> the media parts taken out of its tool's result, for the
#: function response's ``parts`` (:func:`tool_response_event`)
_media_of: weakref.WeakKeyDictionary[Any, list[FunctionResponsePart]] = weakref.WeakKeyDictionary()
#: a call's context -> its tool's ``response_scheduling``, for its function response (:func:`tool_response_event`)
_scheduling_of: weakref.WeakKeyDictionary[Any, FunctionResponseScheduling] = weakref.WeakKeyDictionary()
#: the tool contexts of calls to task sub-agents (their response event is authored by the user)
_delegated: weakref.WeakSet[Any] = weakref.WeakSet()
#: put on exceptions (no weak reference to them): the tool that raised one, a failed step's ended calls
_RAISED_BY, _ENDED = "_adk_actors_raised_by_tool", "_adk_actors_ended_calls"


def tool_context(ctx: InvocationContext, call: FunctionCall) -> ToolContext:
    """A fresh tool context for ``call``."""
    return ToolContext(ctx, call.id, call.name)


def long_running_ids(calls: list[FunctionCall], tools: dict[str, Any]) -> tuple[str, ...]:
    """The ids of the calls to long-running tools: an event's ``long_running_tool_ids``
    (``[]`` on the wire when none, as google-adk's)."""
    return tuple(c.id for c in calls if c.id and getattr(tools.get(c.name), "is_long_running", False))


async def run_tool(agent: Any, ctx: InvocationContext, call: FunctionCall, tools: dict[str, Any], *,
                   confirmation: ToolConfirmation | None = None) -> ToolResult:
    """The call's response (None: a long-running tool that answers later) and its
    ToolContext; ``confirmation``: the human's answer when the call runs again after
    one (its ``tool_context.tool_confirmation``)."""
    with telemetry.span(("adk", "tool"), span_meta(agent, ctx, tool=call.name, function_call_id=call.id)) as meta:
        result, context = await _answer_call(agent, ctx, call, tools, confirmation)
        meta["args"], meta["response"] = call.args, result
        if result is not None and "error" in result:
            meta["error"] = str(result["error"])[:200]
        return result, context


async def _answer_call(agent: Any, ctx: InvocationContext, call: FunctionCall, tools: dict[str, Any],
                       confirmation: ToolConfirmation | None) -> ToolResult:
    """Steps 1-7 of the module's docstring."""
    context = ToolContext(ctx, call.id, call.name)
    context.tool_confirmation = confirmation
    args = dict(call.args)
    if call.name == TRANSFER_TO_AGENT:
        return _transfer(agent, ctx, args, context), context
    tool = tools.get(call.name)
    if tool is None:
        return await _unknown_tool(agent, ctx, call.name, args, tools, context), context
    scheduling = getattr(tool, "response_scheduling", None)
    if scheduling is not None:  # google-adk's: on every response of the tool's calls, live or not
        _scheduling_of[context] = FunctionResponseScheduling(scheduling)
    refusal = await _refusal(agent, ctx, call, tool, args)
    if refusal is not None:
        return refusal, context
    result: Any = await _before_tool(agent, ctx, tool, args, context)
    if result is None and ctx.approvals is None:  # without our approvals, google-adk's gate
        result = await gate(tool, args, context)
    if result is None:
        result = await _guarded_run(agent, ctx, tool, args, context)
    # After-tool hooks see the tool's own return value, as google-adk's do.
    replaced = await call_chain(agent.after_tool_callback, "after_tool", tool, args, context, result)
    if replaced is None and ctx.plugins is not None:
        replaced = await ctx.plugins.first("after_tool", tool, args, context, result)
    if replaced is not None:
        result = replaced
    if result is None and tool.is_long_running:
        return None, context  # its result comes later: the call stays open
    return _shown(tool, context, result), context


def _transfer(agent: Any, ctx: InvocationContext, args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    """``transfer_to_agent``: an error result naming the targets there are when its
    target is not one; else the transfer on the tool context and google-adk's empty
    answer."""
    names = [t.name for t in transfer_targets(agent, ctx.root_agent)]
    target = args.get("agent_name")
    if target not in names:
        return {"error": f"Unknown agent {target!r}. You can transfer to: {', '.join(names) or 'no agent'}."}
    context.transfer_to_agent = target
    return {"result": None}  # google-adk's tool answers nothing


async def _refusal(agent: Any, ctx: InvocationContext, call: FunctionCall, tool: Any,
                   args: dict[str, Any]) -> dict[str, Any] | None:
    """The error result of a call that may not run (denied by policy; an approval it
    needs cannot be asked for, or was not given); None when it may run. Whether it
    needs one is asked of a ``require_confirmation`` callable on the run's tool thread
    pool when its ``RunConfig.tool_thread_pool_config`` is set, else on the loop."""
    if ctx.policies is not None:
        verdict = ctx.policies.authorize_tool(ctx, call.name, args)
        if isinstance(verdict, Deny):
            return {"error": f"The call to {call.name} was denied by policy: {verdict.reason}"}
    workers = pool_size(ctx)
    if workers is not None and callable(getattr(tool, "require_confirmation", None)):
        # a predicate is the tool's code: on the run's tool thread pool, as google-adk runs it
        needed, timeout, hint = await run_sync_call(workers, confirmation, agent, tool, call.name, args)
    else:
        needed, timeout, hint = confirmation(agent, tool, call.name, args)
    if not needed:
        return None
    policy = getattr(agent, "confirmation_policy", None)
    if ctx.approvals is None and (policy is None or not policy.needs(call.name, args)):
        return None  # the tool's own requirement, without an approval service: google-adk's gate
    if ctx.approvals is None:
        return {"error": f"The call to {call.name} needs a human's approval and no approval service is "
                         f"available, so it did not run."}
    approval = await ctx.approvals.request(ctx, call.name, args, hint, timeout, call_id=call.id or "")
    if not approval.approved:
        return {"error": f"The call to {call.name} was not approved, so it did not run: {approval.reason}"}
    return None


async def _before_tool(agent: Any, ctx: InvocationContext, tool: Any, args: dict[str, Any],
                       context: ToolContext) -> Any:
    """The before-tool hooks' answer (agent's, then plugins'); None: the tool runs."""
    answer: Any = await call_chain(agent.before_tool_callback, "before_tool", tool, args, context)
    if answer is None and ctx.plugins is not None:
        answer = await ctx.plugins.first("before_tool", tool, args, context)
    return answer


async def _tool_error_decision(agent: Any, ctx: InvocationContext, tool: Any, args: dict[str, Any],
                               context: ToolContext, error: Exception) -> Any:
    """The on-tool-error hooks' decision (agent's, then plugins'), checked; None when
    they gave none."""
    decision: Any = await call_chain(agent.on_tool_error_callback, "on_tool_error", tool, args, context, error)
    if decision is None and ctx.plugins is not None:
        decision = await ctx.plugins.first("on_tool_error", tool, args, context, error)
    return None if decision is None else check_decision(decision, "on_tool_error")


def raised_by_tool(error: BaseException) -> str | None:
    """The tool whose own exception ``error`` is, raised on by ``tool_errors="raise"`` (the
    innermost, when an agent tool's run raised it); None for any other exception."""
    name = getattr(error, _RAISED_BY, None)
    return name if isinstance(name, str) else None


async def _guarded_run(agent: Any, ctx: InvocationContext, tool: Any, args: dict[str, Any],
                       context: ToolContext) -> Any:
    """The tool's return value; on failure the error hooks' ``Retry`` (up to its
    attempts) or ``Fallback`` value, else by ``ctx.tool_errors``: an error result
    (``to_model``), or the tool's exception raised unchanged, marked with the tool's
    name (``raise``; :func:`raised_by_tool`). Bad arguments are an error result at once
    (google-adk's answer to missing ones); a cancelled run raises."""
    attempts = 0
    while True:
        attempts += 1
        try:
            return await tool.run(context, args)
        except ToolArgumentError as error:
            return {"error": str(error)}
        except (RunCancelled, asyncio.CancelledError):
            raise
        except Exception as error:
            decision = await _tool_error_decision(agent, ctx, tool, args, context, error)
            if isinstance(decision, Retry) and attempts < decision.max_attempts:
                continue
            if isinstance(decision, Fallback):
                return decision.value
            if ctx.tool_errors == "raise":  # google-adk's: no hook answered, the run ends with it
                if raised_by_tool(error) is None:
                    with contextlib.suppress(AttributeError, TypeError):
                        setattr(error, _RAISED_BY, tool.name)
                raise
            return {"error": f"{type(error).__name__}: {error}"}


def _shown(tool: Any, context: ToolContext, result: Any) -> dict[str, Any]:
    """``result``'s media taken out (:func:`take_media`, kept for the call's function
    response), what is left as a dict; an AgentTool's answer that ends the turn
    (``skip_summarization``) is shown as text too, as google-adk shows it."""
    rest, media = take_media(result)
    if media is not None:
        _media_of[context] = media
    if delegates(tool):  # a task sub-agent's result: answered by a user-authored event (google-adk's)
        _delegated.add(context)
    response = as_dict(rest)
    if context.actions.skip_summarization and isinstance(tool, AgentTool) and "error" not in response \
            and result not in (None, "", {"result": None}):
        context.shown_text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    return response


async def _unknown_tool(agent: Any, ctx: InvocationContext, name: str, args: dict[str, Any], tools: dict[str, Any],
                        context: ToolContext) -> dict[str, Any]:
    """The answer to a call of a tool the agent does not have, in google-adk's order: the
    before-tool hooks (agent's, then plugins') may answer it, given a stand-in tool of
    that name; else the tool-error hooks are given a ``ValueError`` that says so (a
    reflect-and-retry plugin answers it as any failure; one that raises ends the run);
    else the error result that lists the tools there are. No after-tool hook runs: no
    tool ran."""
    stand_in = BaseTool(name=name, description="Tool not found")
    answer: Any = await _before_tool(agent, ctx, stand_in, args, context)
    if answer is None:
        error = ValueError(f"Tool '{name}' not found.\nAvailable tools: {', '.join(tools)}")
        decision = await _tool_error_decision(agent, ctx, stand_in, args, context, error)
        if isinstance(decision, Fallback):
            answer = decision.value
    if answer is None:
        return {"error": f"Unknown tool: {name}. Available tools: {', '.join(sorted(tools)) or 'none'}."}
    return as_dict(answer)


async def run_calls(agent: Any, ctx: InvocationContext, calls: list[FunctionCall],
                    tools: dict[str, Any]) -> list[ToolResult]:
    """The answers of a step's ``calls`` (:func:`run_tool`, each on a task, all at once),
    in order. When one raises (or this is cancelled), as google-adk's flow: the calls
    still running are cancelled and awaited, those that had ended put on the exception
    (:func:`kept_response_event`), and the first failure raised on."""
    tasks = [asyncio.ensure_future(run_tool(agent, ctx, call, tools)) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException as error:
        for task in tasks:
            task.cancel()  # those done already are left as they are
        await asyncio.gather(*tasks, return_exceptions=True)
        ended = [(call, task.result()) for call, task in zip(calls, tasks, strict=True)
                 if not task.cancelled() and task.exception() is None]
        with contextlib.suppress(AttributeError, TypeError):
            setattr(error, _ENDED, ended)
        raise


def _plain(call: FunctionCall, result: ToolResult) -> bool:
    """Whether an ended call's answer is plain (google-adk's test): answered now, not
    ``finish_task``, no action but state and artifact changes (no transfer, escalation,
    confirmation, credential or structured answer)."""
    response, context = result
    actions = context.actions
    return (response is not None and call.name != FINISH_TASK and not actions.transfer_to_agent
            and not actions.escalate and not actions.requested_auth_configs
            and not actions.requested_tool_confirmations and actions.set_model_response is None)


def kept_response_event(ctx: InvocationContext, calls: list[FunctionCall], error: BaseException) -> Event | None:
    """After :func:`run_calls` raised ``error``: one event answering the calls that had
    ended with a plain result (:func:`_plain`; taken off ``error``), as google-adk keeps
    them (their side effects happened) before the failure goes up; None when there are
    none, or the run was cancelled."""
    ended: list[tuple[FunctionCall, ToolResult]] = getattr(error, _ENDED, None) or []
    with contextlib.suppress(AttributeError):
        delattr(error, _ENDED)
    kept = [(call, result) for call, result in ended if call in calls and _plain(call, result)]
    if not kept or ctx.cancel.cancelled:
        return None
    return tool_response_event(ctx, [call for call, _ in kept], [result for _, result in kept])


def confirmation(agent: Any, tool: Any, name: str, args: dict[str, Any]) -> tuple[bool, float, str]:
    """Does this call need a human's approval? (needed, timeout, hint)"""
    policy = getattr(agent, "confirmation_policy", None)
    if policy is not None and policy.needs(name, args):
        return True, policy.timeout, policy.hint or f"{agent.name} wants to call {name}"
    required = getattr(tool, "require_confirmation", False)
    if callable(required):
        required = call_requirement(required, args, None)
        if inspect.isawaitable(required):  # an async requirement cannot be awaited here: approval is asked
            getattr(required, "close", lambda: None)()
            required = True
    return bool(required), 60.0, getattr(tool, "confirmation_hint", None) or f"{agent.name} wants to call {name}"


async def never_approved(agent: Any, ctx: InvocationContext, calls: list[FunctionCall],
                         tools: dict[str, Any]) -> set[str]:
    """Of a resumed step's pending calls, those that need a human's approval that was
    never given (pending, expired or denied): their tools cannot have run."""
    if ctx.approvals is None or not hasattr(ctx.approvals, "call_status"):
        return set()
    never: set[str] = set()
    for call in calls:
        tool = tools.get(call.name)
        if not call.id or tool is None or not confirmation(agent, tool, call.name, dict(call.args))[0]:
            continue
        try:
            status = await ctx.approvals.call_status(ctx, call.id)
        except Exception as exc:  # not known: the call may have run (a decision is asked for)
            _log.warning("the approval of call %s could not be read: %s", call.id, exc)
            continue
        if status in ("pending", "expired", "denied"):
            never.add(call.id)
    return never


def _media_part(value: Any) -> FunctionResponsePart | None:
    """``value`` as a function response part when it is a part (ours, or google.genai's
    by its class's name) carrying usable media: inline bytes with a MIME type, else a
    file URI with one; None otherwise."""
    if not (isinstance(value, Part) or type(value).__name__ == "Part"):
        return None
    blob = getattr(value, "inline_data", None)
    if blob is not None and blob.data is not None and blob.mime_type:
        return FunctionResponsePart(inline_data=Blob(mime_type=blob.mime_type, data=blob.data))
    file = getattr(value, "file_data", None)
    if file is not None and file.file_uri and file.mime_type:
        return FunctionResponsePart(file_data=FileData(file_uri=file.file_uri, mime_type=file.mime_type))
    return None


def _take_from_entry(value: Any, media: list[FunctionResponsePart], depth: int) -> tuple[bool, Any]:
    """One entry of a container: a media part goes to ``media`` and the entry is
    dropped; a dict, list or tuple not deeper than :data:`_MEDIA_DEPTH` has its own
    entries' media taken out, and is dropped when nothing else is left in it; anything
    else is kept as it is. (keep it?, what is left of it)"""
    part = _media_part(value)
    if part is not None:
        media.append(part)
        return False, None
    if depth >= _MEDIA_DEPTH or not isinstance(value, (dict, list, tuple)):
        return True, value
    rest, inner = _take_media(value, depth + 1)
    if inner is None:
        return True, value
    media.extend(inner)
    return bool(rest), rest


def _take_media(result: Any, depth: int) -> tuple[Any, list[FunctionResponsePart] | None]:
    """:func:`take_media` at ``depth``."""
    single = _media_part(result)
    if single is not None:
        return {}, [single]
    media: list[FunctionResponsePart] = []
    rest: Any
    if isinstance(result, dict):
        rest = {}
        for key, value in result.items():
            keep, kept = _take_from_entry(value, media, depth)
            if keep:
                rest[key] = kept
    elif isinstance(result, (list, tuple)):
        rest = []
        for value in result:
            keep, kept = _take_from_entry(value, media, depth)
            if keep:
                rest.append(kept)
    else:
        return result, None
    if not media:
        return result, None
    return rest or {}, media


def take_media(result: Any) -> tuple[Any, list[FunctionResponsePart] | None]:
    """A tool's result with its media parts taken out, as google-adk 2.13's flow takes
    them (a tool cannot put media in a JSON response otherwise): in order, a part
    carrying media (inline bytes or a file URI, each with a MIME type) returned alone
    is the whole of it (``{}`` left); else each entry of a returned dict, list or
    tuple that is one is taken out, and so are those of a container among its entries
    (one level down, no deeper), a container emptied so being dropped too. Returns
    what is left (``{}`` when nothing is) and the parts taken; the parts are None and
    the result is returned unchanged when it carries no media. Never raises."""
    return _take_media(result, 0)


def _jsonable(value: Any) -> Any:
    """``value`` with each pydantic model inside its dicts, lists and tuples (a part that
    is not media, or one deeper than media is looked for) as google-genai sends it: its
    set fields, snake_case, bytes in URL-safe base64. The same object when it holds
    none (nothing is copied then)."""
    if isinstance(value, BaseModel):
        return _jsonable(value.model_dump(exclude_none=True))
    if isinstance(value, bytes):
        return base64.urlsafe_b64encode(value).decode()
    if isinstance(value, dict):
        items = {key: _jsonable(item) for key, item in value.items()}
        return value if all(items[key] is item for key, item in value.items()) else items
    if isinstance(value, (list, tuple)):
        entries = [_jsonable(item) for item in value]
        return value if all(new is old for new, old in zip(entries, value, strict=True)) else entries
    return value


def as_dict(result: Any) -> dict[str, Any]:
    """A tool's answer as a dict: a dict as it is, a pydantic model dumped, anything
    else under ``result``; models left inside it (parts that are not media) in their
    JSON form (:func:`_jsonable`), so that a model request can carry it."""
    if isinstance(result, dict):
        return _jsonable(result)  # type: ignore[no-any-return]
    return {"result": _jsonable(result)}


def tool_response_event(ctx: InvocationContext, calls: list[FunctionCall], results: list[ToolResult]) -> Event | None:
    """One event with the responses of the calls answered now (a long-running tool that
    answered None is answered later; each with the media its tool returned as its
    ``parts``) and their tools' actions merged; None when no call was answered. When
    every call answered is a task sub-agent's, its author is ``user`` (google-adk's
    synthesized response to a task delegation)."""
    parts = []
    merged = Actions()
    for call, (response, context) in zip(calls, results, strict=True):
        if response is not None:
            parts.append(Part(function_response=FunctionResponse(id=call.id, name=call.name, response=response,
                                                                 parts=_media_of.pop(context, None),
                                                                 scheduling=_scheduling_of.pop(context, None))))
            if getattr(context, "shown_text", None) is not None:
                parts.append(Part(text=context.shown_text))
        taken = context.actions
        merged.state_delta.update(taken.state_delta)
        merged.artifact_delta.update(taken.artifact_delta)
        merged.requested_auth_configs.update(taken.requested_auth_configs)
        merged.requested_tool_confirmations.update(taken.requested_tool_confirmations)
        merged.escalate = merged.escalate or taken.escalate
        merged.skip_summarization = merged.skip_summarization or taken.skip_summarization
        merged.transfer_to_agent = taken.transfer_to_agent or merged.transfer_to_agent
        if taken.set_model_response is not None:
            merged.set_model_response = taken.set_model_response
    if not parts:
        return None
    answered = [context for (response, context) in results if response is not None]
    author = {"author": "user"} if all(c in _delegated for c in answered) else {}  # task delegations only
    return ctx.event(content=Content(role="user", parts=tuple(parts)), actions=merged.event_actions(), **author)
