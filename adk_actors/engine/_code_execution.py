"""The code-execution step of an LlmAgent with a ``code_executor`` (google-adk's loop).

Before each model call, :func:`code_request` writes code parts of the request as text
the model reads back: a content ending in executable code gets that part as a code
block (the executor's first ``code_block_delimiters``); a content that is one code
execution result becomes a user content with that result in the
``execution_result_delimiters``.

After a final model answer, :func:`code_step`, in order: stops (the answer stands) when
the agent has no executor or one the model runs itself (``BuiltInCodeExecutor``), when ``error_retry_attempts`` runs of this invocation have
failed in a row, or when the answer holds no code; otherwise finds the first code (an
``executable_code`` part with no result after it, else the earliest block between one of
the delimiters in the answer's text), and yields the answer cut after that code, its
code as an ``executable_code`` part (thought parts kept in front: under a planner that
rewrites answers, which marks its own text as thought, only the thoughts the model
signed, ``thought_signature``, count as such; the planner's are searched for code as
the rest of the answer); runs the code on a
daemon thread, with the session's id as execution id when the executor is stateful
(kept in state under ``_code_execution_context``); and yields the result as a
``code_execution_result`` part (failed when the run wrote to stderr), with the
``_code_execution_context`` state delta. The flow then calls the model again.

An executor that raises gives a failed result naming its error: the run goes on.
``optimize_data_file`` (CSV files given to the code) is not done.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator
from typing import Any

from .._types import Content, Event, EventActions, LlmRequest, LlmResponse, Part
from ..code_executors import (
    BaseCodeExecutor,
    CodeExecutionInput,
    CodeExecutionResult,
    CodeExecutionUtils,
)
from ..planners._apply import answer_planner
from ..tools._function import in_daemon_thread
from ._context import InvocationContext

__all__ = ["CONTEXT_KEY", "code_request", "code_step", "first_code"]

_log = logging.getLogger("adk_actors.code_execution")

#: the session-state key of the executor's context (google-adk's)
CONTEXT_KEY = "_code_execution_context"
_EXECUTION_ID = "execution_session_id"
_ERRORS = "code_execution_errors"  # ctx.counters: failed runs in a row, this invocation


def _executor(agent: Any) -> BaseCodeExecutor | None:
    executor = getattr(agent, "code_executor", None)
    return executor if isinstance(executor, BaseCodeExecutor) else None


def code_request(agent: Any, request: LlmRequest) -> None:
    """Rewrite the request's code parts as text (see the module), in place."""
    executor = _executor(agent)
    if executor is None:
        return
    block = executor.code_block_delimiters[0] if executor.code_block_delimiters else ("", "")
    start, end = executor.execution_result_delimiters
    contents = []
    for content in request.contents:
        parts = content.parts
        if parts and parts[-1].executable_code is not None:
            text = block[0] + parts[-1].executable_code.code + block[1]
            content = Content(role=content.role, parts=(*parts[:-1], Part(text=text)))
        elif len(parts) == 1 and parts[0].code_execution_result is not None:
            output = parts[0].code_execution_result.output
            content = Content(role="user", parts=(Part(text="" if output is None else start + output + end),))
        contents.append(content)
    request.contents = contents


def first_code(content: Content, delimiters: list[tuple[str, str]]) -> tuple[str, Content] | None:
    """The first code of ``content`` and the content cut after it (see the module);
    None when it has none. A block that encloses nothing is no code."""
    parts = content.parts
    for index, part in enumerate(parts):
        if part.executable_code is not None and (
                index == len(parts) - 1 or parts[index + 1].code_execution_result is None):
            return part.executable_code.code, Content(role=content.role, parts=parts[: index + 1])
    texts = [p for p in parts if p.text]
    if not texts:
        return None
    whole = "\n".join(p.text or "" for p in texts)
    found: tuple[int, int, int] | None = None  # start of the block, of the code, end of the code
    for lead, trail in delimiters:
        at = whole.find(lead)
        if at == -1:
            continue
        ends = whole.find(trail, at + len(lead))
        if ends != -1 and (found is None or at < found[0]):
            found = (at, at + len(lead), ends)
    if found is None or found[1] == found[2]:
        return None
    kept: list[Part] = []
    if found[0] > 0:
        kept.append(texts[0].model_copy(update={"text": whole[: found[0]]}))
    code = whole[found[1]: found[2]]
    kept.append(CodeExecutionUtils.build_executable_code_part(code))
    return code, Content(role=content.role, parts=tuple(kept))


def _execution_id(executor: BaseCodeExecutor, ctx: InvocationContext, context: dict[str, Any]) -> str | None:
    if not executor.stateful:
        return None
    known = context.get(_EXECUTION_ID)
    if not known:
        known = context[_EXECUTION_ID] = ctx.session.session_id
    return str(known)


async def _execute(executor: BaseCodeExecutor, ctx: InvocationContext, given: CodeExecutionInput) -> CodeExecutionResult:
    try:
        result = await in_daemon_thread(executor.execute_code, ctx, given)
    except Exception as exc:
        _log.error("code executor %s failed: %s", type(executor).__name__, exc)
        return CodeExecutionResult(stderr=f"The code executor failed: {type(exc).__name__}: {exc}")
    if not isinstance(result, CodeExecutionResult):
        return CodeExecutionResult(stderr=f"The code executor returned {type(result).__name__}, "
                                          "not a CodeExecutionResult.")
    return result


async def code_step(agent: Any, ctx: InvocationContext, response: LlmResponse,
                    state_delta: dict[str, Any]) -> AsyncIterator[Event]:
    """The code event and the result event of a final answer with code (see the
    module); nothing when the answer stands. ``state_delta`` (the model hooks') goes
    with the code event."""
    executor = _executor(agent)
    if executor is None or getattr(executor, "runs_in_model", False) or response.content is None \
            or response.partial:
        return  # no executor, or the model ran the code itself (BuiltInCodeExecutor)
    if ctx.counters.get(_ERRORS, 0) >= executor.error_retry_attempts:
        return
    signed_only = answer_planner(agent) is not None  # a planner's thoughts carry no signature
    thoughts = tuple(p for p in response.content.parts if p.thought and (p.thought_signature or not signed_only))
    answer = Content(role=response.content.role,
                     parts=tuple(p for p in response.content.parts if all(p is not t for t in thoughts)))
    found = first_code(answer, executor.code_block_delimiters)
    if found is None:
        return
    code, cut = found
    if thoughts:
        cut = Content(role=cut.role, parts=(*thoughts, *cut.parts))
    yield ctx.event(content=cut, actions=EventActions(state_delta=dict(state_delta)))
    context = copy.deepcopy(ctx.session.state.get(CONTEXT_KEY) or {})
    given = CodeExecutionInput(code=code, input_files=[], execution_id=_execution_id(executor, ctx, context))
    result = await _execute(executor, ctx, given)
    ctx.counters[_ERRORS] = ctx.counters.get(_ERRORS, 0) + 1 if result.stderr else 0
    yield ctx.event(content=Content(role="model", parts=(CodeExecutionUtils.build_code_execution_result_part(result),)),
                    actions=EventActions(state_delta={CONTEXT_KEY: context}))
