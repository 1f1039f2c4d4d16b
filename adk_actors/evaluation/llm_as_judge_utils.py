"""google-adk's ``google.adk.evaluation.llm_as_judge_utils`` path: what a judge metric
(one of yours, say a custom metric's function) reads of an invocation, as google-adk's
judges read it. The texts and statuses are those our judge metrics use
(``adk_actors.evals._judge``, ``_metrics``, ``_app_details``).

``get_grounding_metadata_as_json_str`` reads the events' ``grounding_metadata``: the
invocations our eval runs record keep each event's grounding (a search or retrieval
of Gemini's own tools), the final response's included, where google-adk keeps it."""

from __future__ import annotations

import enum
import json
import statistics
from typing import Any

from .._types import Content
from ..evals import AppDetails, EvalStatus, Invocation
from ..evals._app_details import tool_declarations_text
from ..evals._grounding_text import grounding_text
from ..evals._judge import joined_text, response_text
from ..evals._metrics import _status
from ..types import GenerateContentConfig
from .eval_case import IntermediateDataType, get_all_tool_calls_with_responses
from .eval_rubrics import RubricScore

__all__ = ["Label", "build_judge_request_config", "get_average_rubric_score", "get_eval_status",
           "get_grounding_metadata_as_json_str", "get_text_from_content", "get_tool_calls_and_responses_as_json_str", "get_tool_declarations_as_json_str"]


class Label(enum.Enum):
    """The labels a judge's answer may carry (google-adk's values; ``PARTIALLY_VALID``'s
    value is its three spellings)."""

    TRUE = "true"
    INVALID = "invalid"
    VALID = "valid"
    PARTIALLY_VALID = "partially_valid", "partially valid", "partially"
    ALMOST = "almost"
    FALSE = "false"
    NOT_FOUND = "label field not found"


def get_text_from_content(content: Content | Invocation | None, *,
                          include_intermediate_responses_in_final: bool = False) -> str | None:
    """A content's text parts, a line each; for an invocation, its final response's
    (with ``include_intermediate_responses_in_final``, first the text of each event or
    intermediate response before it, a line each). None when there is no text."""
    if isinstance(content, Invocation):
        return response_text(content, include_intermediate_responses_in_final)
    return joined_text(content)


def get_eval_status(score: float | None, threshold: float) -> EvalStatus:
    """NOT_EVALUATED for no score, else PASSED at or above ``threshold``, else FAILED."""
    return _status(score, threshold)


def get_average_rubric_score(rubric_scores: list[RubricScore]) -> float | None:
    """The mean of the rubric scores that have one; None when none has."""
    scores = [rubric.score for rubric in rubric_scores if rubric.score is not None]
    return statistics.mean(scores) if scores else None


def build_judge_request_config(user_config: GenerateContentConfig | None) -> GenerateContentConfig:
    """A copy of ``user_config`` (a new config for None) for a judge's request; the
    caller's object is not changed. (google-adk turns google-genai's automatic
    function calling off here; no model here calls functions by itself.)"""
    return user_config.model_copy(deep=True) if user_config is not None else GenerateContentConfig()


def get_tool_declarations_as_json_str(app_details: AppDetails) -> str:
    """Each agent's tool declarations as JSON, ``{"tool_declarations": {agent: [...]}}``,
    indented by 2 (what our judges' prompts carry)."""
    return tool_declarations_text(app_details) or ""


def get_tool_calls_and_responses_as_json_str(intermediate_data: IntermediateDataType | None) -> str:
    """The tool calls, each with its step number and the answer with its id (``"None"``
    when it has none), as JSON: ``{"tool_calls_and_response": [{"step", "tool_call",
    "tool_response"}]}`` without empty fields, indented by 2; "No intermediate steps
    were taken." when there was no call."""
    pairs = get_all_tool_calls_with_responses(intermediate_data)
    if not pairs:
        return "No intermediate steps were taken."
    steps: list[dict[str, Any]] = [
        {"step": step, "tool_call": call.model_dump(mode="json", exclude_none=True),
         "tool_response": answer.model_dump(mode="json", exclude_none=True) if answer is not None else "None"}
        for step, (call, answer) in enumerate(pairs)]
    return json.dumps({"tool_calls_and_response": steps}, indent=2, ensure_ascii=False)


def get_grounding_metadata_as_json_str(intermediate_data: IntermediateDataType | None) -> str:
    """The grounding metadata of an invocation's events, each with its step (the
    event's index) and author, as JSON: ``{"grounding_metadata": [{"step", "author",
    "grounding_metadata"}]}`` without empty fields, indented by 2;
    "No grounding metadata was provided." when the data is not events or no event has any (the text
    our judges' prompts carry, ``adk_actors.evals._grounding_text``)."""
    return grounding_text(intermediate_data)
