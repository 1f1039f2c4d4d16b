"""``PlanReActPlanner``: the model writes a plan, acts with tools, then answers, each
part under its tag; the tagged parts other than the final answer become thoughts."""

from __future__ import annotations

from typing import Any

from .._types import LlmRequest, Part
from .base_planner import BasePlanner

__all__ = ["ACTION_TAG", "FINAL_ANSWER_TAG", "PLANNING_TAG", "REASONING_TAG", "REPLANNING_TAG", "PlanReActPlanner"]

PLANNING_TAG = "/*PLANNING*/"
REPLANNING_TAG = "/*REPLANNING*/"
REASONING_TAG = "/*REASONING*/"
ACTION_TAG = "/*ACTION*/"
FINAL_ANSWER_TAG = "/*FINAL_ANSWER*/"

#: the tags that mark a text as the model's working rather than its answer
_WORKING_TAGS = (PLANNING_TAG, REASONING_TAG, ACTION_TAG, REPLANNING_TAG)

_INSTRUCTION = f"""
Answer with the available tools rather than from memory, in three steps:
(1) write a plan in plain language; (2) carry it out with tool calls, with a short
reasoning between calls that sums up where things stand and what comes next;
(3) give one final answer.

Mark each part with its tag: the plan with {PLANNING_TAG}; tool calls with {ACTION_TAG};
reasoning with {REASONING_TAG}; the final answer with {FINAL_ANSWER_TAG}.

The plan:
It answers the user's query when followed, covers everything the query asks, and uses
only the tools this agent has. It is a numbered list of steps, each naming the tool or
tools it uses, so that reading it tells which calls come next.
When the plan cannot be carried out, learn from the results so far and write a new
plan under {REPLANNING_TAG}, then follow it.

The reasoning:
It sums up the work so far from the query and the tools' results, and says what to
do next to get closer to the final answer.

The final answer:
It is precise and follows any format the query asks for. When the tools and the
information at hand cannot answer the query, say why and ask for what is missing.

The tool calls:
The tools described in the context can be called directly. Call only those tools,
with only the parameters their declarations define; write no code beyond the calls.

Above all: ask for clarification when you need more information, and prefer what the
context already holds over calling a tool again.
"""


def _without_working_tags(text: str) -> str:
    for tag in _WORKING_TAGS:
        text = text.replace(tag, "")
    return text


def _as_thought(part: Part) -> None:
    if part.text is not None:
        part.thought = True


class PlanReActPlanner(BasePlanner):
    """google-adk's plan-then-act planner, which needs no thinking support from the
    model. The flow applies it as google-adk's does (``planners._apply``): its
    instruction is added to every request's system instruction, and each answer of the
    model goes through :meth:`process_planning_response`, so the plan, reasoning and
    tool-call texts become thoughts and the final answer is what the user reads."""

    def build_planning_instruction(self, readonly_context: Any, llm_request: LlmRequest) -> str:
        """The instruction that asks for a tagged plan, tool calls, reasoning and a
        final answer (same tags as google-adk's, our words)."""
        return _INSTRUCTION

    def process_planning_response(self, callback_context: Any, response_parts: list[Part]) -> list[Part] | None:
        """The answer parts to keep, in order, or None when there are none.

        Text parts up to the first named function call are kept: a text holding
        ``/*FINAL_ANSWER*/`` is split at its last one into a thought (the text
        before, working tags removed, when not empty) and the final answer (the text
        after, when not empty); a text that starts with a working tag loses its tags
        and becomes a thought (the part itself is changed); any other part is kept as
        it is. Function calls without a name before the first named one are dropped;
        the first named call and the calls right after it are kept, and nothing
        after them."""
        if not response_parts:
            return None
        kept: list[Part] = []
        for index, part in enumerate(response_parts):
            call = part.function_call
            if call is not None:
                if not call.name:
                    continue
                kept.append(part)
                kept.extend(_calls_following(response_parts, index + 1))
                return kept
            kept.extend(_kept_text(part))
        return kept


def _calls_following(parts: list[Part], start: int) -> list[Part]:
    """The function-call parts from ``start`` up to the first part that is none."""
    calls: list[Part] = []
    for part in parts[start:]:
        if part.function_call is None:
            break
        calls.append(part)
    return calls


def _kept_text(part: Part) -> list[Part]:
    """A part that is no function call, as :meth:`PlanReActPlanner.process_planning_response` keeps it."""
    text = part.text or ""
    if FINAL_ANSWER_TAG in text:
        cut = text.rfind(FINAL_ANSWER_TAG)
        working, answer = _without_working_tags(text[:cut]), text[cut + len(FINAL_ANSWER_TAG):]
        out: list[Part] = []
        if working:
            out.append(Part(text=working, thought=True))
        if answer:
            out.append(Part(text=answer))
        return out
    if text.startswith(_WORKING_TAGS):
        part.text = _without_working_tags(text)
        _as_thought(part)
    return [part]
