"""Calls left open in a request's contents, answered for the providers that refuse them.

google-adk sends a long-running tool's call whose result has not come yet as it is,
with no response after it (the compiler does the same: ``compiler/_contents``), and
Gemini takes such a history. Anthropic's Messages API and OpenAI's (chat completions
and responses) refuse it: every call must be answered before the conversation goes
on. :func:`with_open_calls_answered` is what their adapters send instead, in order:
the contents are read in turn; a model turn's calls are open until a later user turn
answers them (by id, or by name for a call without one); when a turn that answers
none of them comes first (a model turn, the user's own words), a user turn that
answers each open call with :data:`NO_RESULT_YET` goes before it; calls still open at
the end are answered so too. A history with no open call is returned as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._types import Content, FunctionCall, FunctionResponse, Part

__all__ = ["NO_RESULT_YET", "with_open_calls_answered"]

#: What a call with no result is answered with (the model reads it as the tool's result).
NO_RESULT_YET = "This call has no result yet: it may still be running, or its run was interrupted."


def _key(call_id: str | None, name: str) -> str:
    return call_id or name


def _answers(calls: Sequence[FunctionCall]) -> Content:
    return Content(role="user", parts=tuple(
        Part(function_response=FunctionResponse(id=c.id, name=c.name, response={"result": NO_RESULT_YET}))
        for c in calls))


def with_open_calls_answered(contents: Sequence[Content]) -> list[Content]:
    """``contents`` with every call left open answered (see the module)."""
    healed: list[Content] = []
    open_calls: list[FunctionCall] = []
    for content in contents:
        answered = {_key(p.function_response.id, p.function_response.name or "")
                    for p in content.parts if p.function_response is not None}
        if open_calls and content.role != "model" and answered:
            open_calls = [c for c in open_calls if _key(c.id, c.name) not in answered]
        elif open_calls:
            healed.append(_answers(open_calls))
            open_calls = []
        healed.append(content)
        if content.role == "model":
            open_calls = [p.function_call for p in content.parts if p.function_call is not None]
    if open_calls:
        healed.append(_answers(open_calls))
    return healed
