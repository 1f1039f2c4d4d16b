"""The metrics a run of an eval set computes: google-adk's two that need no judge model.

* ``tool_trajectory_avg_score``: per invocation, 1.0 when the agent's tool calls match
  the expected ones, else 0.0; overall, the mean. Passes at its threshold (default
  1.0). How they match is the criterion's (google-adk's ``ToolTrajectoryCriterion``):
  ``match_type`` ``EXACT`` (the default: the same calls, in order, nothing more),
  ``IN_ORDER`` (the expected calls in that order among others) or ``ANY_ORDER`` (the
  expected calls among others, in any order); ``ignore_args`` compares names only.
* ``response_match_score``: per invocation, ROUGE-1 F1 between the expected and the
  actual final response's words; overall, the mean. Passes at its threshold (default
  0.8). Words are lower-cased runs of letters and digits, without stemming (google-adk
  stems English words with the Porter stemmer, so "rains" and "rain" match there and
  not here).

google-adk's metrics that ask a judge model (``final_response_match_v2``, the rubric
metrics, hallucinations, safety) are not offered: an unknown metric name is an
:class:`EvalError`.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

from .._exceptions import InvalidRequestError
from ._models import (
    EvalMetric,
    EvalMetricResult,
    EvalStatus,
    Interval,
    Invocation,
    MetricInfo,
    MetricValueInfo,
)

__all__ = ["DEFAULT_THRESHOLDS", "MATCH_TYPES", "RESPONSE_MATCH", "TOOL_TRAJECTORY", "EvalError", "metrics_info",
           "rouge1_f", "score"]

TOOL_TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE_MATCH = "response_match_score"
DEFAULT_THRESHOLDS = {TOOL_TRAJECTORY: 1.0, RESPONSE_MATCH: 0.8}
_WORD = re.compile(r"[a-z0-9]+")


class EvalError(InvalidRequestError):
    """An eval request that cannot be carried out as asked (an unknown metric, a bad id)."""


def rouge1_f(reference: str, candidate: str) -> float:
    """ROUGE-1 F1 of ``candidate`` against ``reference`` (0.0 when either has no word)."""
    expected, actual = Counter(_WORD.findall(reference.lower())), Counter(_WORD.findall(candidate.lower()))
    overlap = sum((expected & actual).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(actual.values()), overlap / sum(expected.values())
    return 2 * precision * recall / (precision + recall)


#: the trajectory criterion's match types (google-adk's ``ToolTrajectoryCriterion.MatchType``)
MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")


def _criterion_value(criterion: dict[str, Any] | None, snake: str, camel: str, default: Any) -> Any:
    if not criterion:
        return default
    return criterion.get(snake, criterion.get(camel, default))


def _match_type(criterion: dict[str, Any] | None) -> str:
    match = str(_criterion_value(criterion, "match_type", "matchType", "EXACT")).upper()
    if match not in MATCH_TYPES:
        raise EvalError(f"a tool trajectory's match_type is one of {', '.join(MATCH_TYPES)}, got {match!r}")
    return match


def _trajectory(actual: Invocation, expected: Invocation, criterion: dict[str, Any] | None) -> float | None:
    match = _match_type(criterion)
    names_only = bool(_criterion_value(criterion, "ignore_args", "ignoreArgs", False))

    def calls(invocation: Invocation) -> list[tuple[str, Any]]:
        return [(call.name, None if names_only else dict(call.args)) for call in invocation.tool_calls()]

    made, wanted = calls(actual), calls(expected)
    if match == "EXACT":
        return 1.0 if made == wanted else 0.0
    if match == "IN_ORDER":
        rest = iter(made)
        return 1.0 if all(any(call == one for one in rest) for call in wanted) else 0.0
    left = list(made)
    for call in wanted:
        if call not in left:
            return 0.0
        left.remove(call)
    return 1.0


def _response(actual: Invocation, expected: Invocation, criterion: dict[str, Any] | None) -> float | None:
    if expected.final_response is None:
        return None  # nothing to compare with: not evaluated
    return rouge1_f(expected.final_response.text, actual.final_response.text if actual.final_response else "")


_SCORERS: dict[str, Callable[[Invocation, Invocation, dict[str, Any] | None], float | None]] = {
    TOOL_TRAJECTORY: _trajectory, RESPONSE_MATCH: _response}
_DESCRIPTIONS = {
    TOOL_TRAJECTORY: "1.0 when the agent made exactly the expected tool calls, in order, with the expected "
                     "arguments; the mean over the conversation's invocations.",
    RESPONSE_MATCH: "ROUGE-1 F1 between the expected and the actual final response (words, no stemming); "
                    "the mean over the conversation's invocations.",
}


def metrics_info() -> list[MetricInfo]:
    """The metrics this kit computes, as google-adk's ``metrics-info`` lists them."""
    return [MetricInfo(metric_name=name, description=_DESCRIPTIONS[name],
                       metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=1.0)))
            for name in _SCORERS]


def _status(value: float | None, threshold: float) -> EvalStatus:
    if value is None:
        return EvalStatus.NOT_EVALUATED
    return EvalStatus.PASSED if value >= threshold else EvalStatus.FAILED


def score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation]]
          ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    """``metric`` over the (actual, expected) invocations of one case: the overall
    result and one per invocation. Raises EvalError for a metric not offered here."""
    scorer = _SCORERS.get(metric.metric_name)
    if scorer is None:
        raise EvalError(f"metric {metric.metric_name!r} is not offered here; the metrics are "
                        f"{', '.join(sorted(_SCORERS))}")
    if metric.metric_name == TOOL_TRAJECTORY:
        _match_type(metric.criterion)  # a bad one: EvalError before any case runs
    threshold = metric.threshold if metric.threshold is not None else DEFAULT_THRESHOLDS[metric.metric_name]

    def result(value: float | None) -> EvalMetricResult:
        return EvalMetricResult(metric_name=metric.metric_name, threshold=threshold, criterion=metric.criterion,
                                score=value, eval_status=_status(value, threshold))

    values = [scorer(actual, expected, metric.criterion) for actual, expected in pairs]
    known = [value for value in values if value is not None]
    return result(statistics.fmean(known) if known else None), [result(value) for value in values]
