"""google-adk 2.13's informational efficiency metrics: values reported with every
evaluation that never pass or fail (status ``INFORMATIONAL``), and that take no
threshold (giving one is an :class:`EvalError`, as google-adk's ``ValueError``).

Per invocation:

* ``tool_call_count_v1``: the tool calls made;
* ``inference_call_count_v1``: the model calls made (the events between the user's
  message and the end of the turn that carry a usage report or a model version);
  none for an invocation in google-adk's older file form;
* ``token_usage_v1``: the tokens the model calls used, input (prompt and tool-use
  prompt) plus output (candidates and thoughts); each count in
  ``details["token_usage_details"]``, a count no call reported being None;
* ``invocation_duration_v1``: the seconds the turn took, as measured while it ran
  (``Invocation.duration``; None for one read back from a file), and where they went
  in ``details["duration_details"]`` (a :class:`DurationDetails`, every field present):
  ``total_seconds`` the duration, ``model_seconds`` and ``tool_seconds`` the
  invocation's ``model_duration`` and ``tool_duration`` (measured with it: ``_timing``;
  for a turn a host ran, read from its trace: ``_run``),
  ``framework_seconds`` the rest of the total (never below 0, rounded to the
  millisecond); all None for an untimed invocation, and the framework's None when a
  part is (an invocation timed before the split was measured: not all framework).

Overall: the mean of the invocations' values that are not None (the token counts:
each averaged over every invocation, one that did not report a count counting 0
unless none did; each duration part over the invocations that have it, rounded to the
millisecond; all None when none was timed, no details when there is no invocation).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from ._errors import EvalError
from ._models import (
    DurationDetails,
    EvalMetric,
    EvalMetricResult,
    EvalStatus,
    Invocation,
    InvocationEvents,
)

__all__ = ["EFFICIENCY_METRICS", "check_no_threshold", "efficiency_results"]

TOOL_CALL_COUNT = "tool_call_count_v1"
INFERENCE_CALL_COUNT = "inference_call_count_v1"
TOKEN_USAGE = "token_usage_v1"
INVOCATION_DURATION = "invocation_duration_v1"
EFFICIENCY_METRICS = (TOOL_CALL_COUNT, INFERENCE_CALL_COUNT, TOKEN_USAGE, INVOCATION_DURATION)
_TOKEN_FIELDS = ("total_tokens", "input_tokens", "prompt_tokens", "cached_tokens", "tool_use_tokens",
                 "output_tokens", "candidates_tokens", "reasoning_tokens")


def check_no_threshold(metric: EvalMetric) -> None:
    """EvalError when an informational metric is given a threshold or a criterion."""
    if metric.threshold is not None or metric.criterion is not None:
        raise EvalError(f"{metric.metric_name!r} does not take a threshold: it reports a value and never passes "
                        f"or fails, and is reported on every evaluation without being asked for")


def _plus(total: float | None, count: int | None) -> float | None:
    return total if count is None else (total or 0) + count


def _tokens(invocation: Invocation) -> dict[str, float | None]:
    counts: dict[str, float | None] = dict.fromkeys(_TOKEN_FIELDS)
    data = invocation.intermediate_data
    events = data.invocation_events if isinstance(data, InvocationEvents) else []
    for usage in (event.usage_metadata for event in events if event.usage_metadata is not None):
        prompt, tool = usage.prompt_token_count, usage.tool_use_prompt_token_count
        candidates, thoughts = usage.candidates_token_count, usage.thoughts_token_count
        if prompt is not None or tool is not None:
            counts["input_tokens"] = _plus(counts["input_tokens"], (prompt or 0) + (tool or 0))
        if candidates is not None or thoughts is not None:
            counts["output_tokens"] = _plus(counts["output_tokens"], (candidates or 0) + (thoughts or 0))
        counts["prompt_tokens"] = _plus(counts["prompt_tokens"], prompt)
        counts["cached_tokens"] = _plus(counts["cached_tokens"], usage.cached_content_token_count)
        counts["tool_use_tokens"] = _plus(counts["tool_use_tokens"], tool)
        counts["candidates_tokens"] = _plus(counts["candidates_tokens"], candidates)
        counts["reasoning_tokens"] = _plus(counts["reasoning_tokens"], thoughts)
    if counts["input_tokens"] is not None or counts["output_tokens"] is not None:
        counts["total_tokens"] = (counts["input_tokens"] or 0) + (counts["output_tokens"] or 0)
    return counts


def _value(name: str) -> Callable[[Invocation], float | None]:
    def tool_calls(invocation: Invocation) -> float | None:
        return float(len(invocation.tool_calls()))

    def model_calls(invocation: Invocation) -> float | None:
        data = invocation.intermediate_data
        if not isinstance(data, InvocationEvents):
            return None
        return float(sum(1 for e in data.invocation_events if e.usage_metadata is not None or e.model_version))

    def duration(invocation: Invocation) -> float | None:
        return invocation.duration

    return {TOOL_CALL_COUNT: tool_calls, INFERENCE_CALL_COUNT: model_calls,
            INVOCATION_DURATION: duration}.get(name, lambda invocation: _tokens(invocation)["total_tokens"])


def _details(name: str, invocation: Invocation) -> dict[str, object]:
    if name == TOKEN_USAGE:
        return {"token_usage_details": {k: v for k, v in _tokens(invocation).items() if v is not None}}
    if name == INVOCATION_DURATION:
        return {"duration_details": _split(invocation).model_dump()}
    return {}


def _split(invocation: Invocation) -> DurationDetails:
    """Where the invocation's seconds went (see the module); all None when untimed."""
    total = invocation.duration
    if total is None:
        return DurationDetails()
    model, tool = invocation.model_duration, invocation.tool_duration
    framework = None if model is None or tool is None else round(max(total - model - tool, 0.0), 3)
    return DurationDetails(total_seconds=total, model_seconds=model, tool_seconds=tool, framework_seconds=framework)


def _overall_details(name: str, actual: list[Invocation]) -> dict[str, object]:
    if name == TOKEN_USAGE and actual:
        each = [_tokens(invocation) for invocation in actual]
        averaged = {}
        for field in _TOKEN_FIELDS:
            present = [counts[field] or 0.0 for counts in each if counts[field] is not None]
            if present:
                averaged[field] = sum(present) / len(each)
        return {"token_usage_details": averaged}
    if name == INVOCATION_DURATION and actual:
        splits = [_split(invocation).model_dump() for invocation in actual]
        means: dict[str, float | None] = {}
        for part in DurationDetails.model_fields:
            present = [split[part] for split in splits if split[part] is not None]
            means[part] = round(statistics.fmean(present), 3) if present else None
        return {"duration_details": DurationDetails(**means).model_dump()}
    return {}


def efficiency_results(metric: EvalMetric, actual: list[Invocation]
                       ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    """An informational metric over one case's actual invocations (see the module)."""
    check_no_threshold(metric)
    value = _value(metric.metric_name)
    values = [value(invocation) for invocation in actual]
    known = [v for v in values if v is not None]
    overall_details = _overall_details(metric.metric_name, actual)
    if metric.metric_name == TOKEN_USAGE:
        total = overall_details.get("token_usage_details", {})
        overall = total.get("total_tokens") if isinstance(total, dict) else None
    elif metric.metric_name == INVOCATION_DURATION:
        overall = round(statistics.fmean(known), 3) if known else None
    else:
        overall = sum(known) / len(known) if known else None

    def result(score: float | None, details: dict[str, object]) -> EvalMetricResult:
        return EvalMetricResult(metric_name=metric.metric_name, score=score, eval_status=EvalStatus.INFORMATIONAL,
                                details=details)

    return (result(overall, overall_details),
            [result(v, _details(metric.metric_name, invocation)) for v, invocation in zip(values, actual, strict=True)])
