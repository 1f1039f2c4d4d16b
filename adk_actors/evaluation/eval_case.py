"""google-adk's ``google.adk.evaluation.eval_case`` path (see :mod:`adk_actors.evals`),
with google-adk's helpers that read an invocation's tool calls, their answers and its
token counts."""

from __future__ import annotations

from typing import TypeAlias

from .._types import Content, FunctionCall, FunctionResponse, UsageMetadata
from ..evals import (
    ConversationScenario,
    EvalCase,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    SessionInput,
)

__all__ = ["ConversationScenario", "EvalCase", "IntermediateData", "IntermediateDataType", "Invocation",
           "InvocationEvent", "InvocationEvents", "SessionInput", "ToolCallAndResponse", "get_all_tool_calls",
           "get_all_tool_calls_with_responses", "get_all_tool_responses", "get_all_usage_metadata"]

#: an invocation's ``intermediate_data``: google-adk 2.x's events, or 1.x's lists
IntermediateDataType: TypeAlias = IntermediateData | InvocationEvents
#: a tool call and the tool's answer to it (None: no answer with the call's id)
ToolCallAndResponse: TypeAlias = tuple[FunctionCall, FunctionResponse | None]


def _holding(intermediate_data: IntermediateDataType) -> Invocation:
    """An invocation that holds ``intermediate_data`` and nothing else, so that its
    readers (:meth:`Invocation.tool_calls`, :meth:`Invocation.tool_responses`) read it;
    ValueError for data of neither form."""
    if not isinstance(intermediate_data, (IntermediateData, InvocationEvents)):
        raise ValueError(f"intermediate_data is neither IntermediateData nor InvocationEvents: {intermediate_data!r}")
    return Invocation(user_content=Content(role="user", parts=[]), intermediate_data=intermediate_data)


def get_all_tool_calls(intermediate_data: IntermediateDataType | None) -> list[FunctionCall]:
    """The tool calls in ``intermediate_data``, in order: 1.x's ``tool_uses``, or each
    function call of each event's content; [] for None. ValueError for data of
    neither form."""
    if intermediate_data is None:
        return []
    return _holding(intermediate_data).tool_calls()


def get_all_tool_responses(intermediate_data: IntermediateDataType | None) -> list[FunctionResponse]:
    """The tools' answers in ``intermediate_data``, in order (as
    :func:`get_all_tool_calls` finds the calls); [] for None."""
    if intermediate_data is None:
        return []
    return _holding(intermediate_data).tool_responses()


def get_all_tool_calls_with_responses(intermediate_data: IntermediateDataType | None) -> list[ToolCallAndResponse]:
    """Each tool call of ``intermediate_data``, in order, with the answer whose ``id`` is
    the call's (the last such answer when several have it; None when none has it)."""
    answers = {answer.id: answer for answer in get_all_tool_responses(intermediate_data)}
    return [(call, answers.get(call.id)) for call in get_all_tool_calls(intermediate_data)]


def get_all_usage_metadata(invocation: Invocation) -> list[UsageMetadata]:
    """The token counts of each of the invocation's events that reported them, in
    order; [] when its ``intermediate_data`` is not in the events form (1.x lists keep
    no counts)."""
    data = invocation.intermediate_data
    if not isinstance(data, InvocationEvents):
        return []
    return [event.usage_metadata for event in data.invocation_events if event.usage_metadata is not None]
