"""google-adk's evaluator classes of the built-in metrics (``TrajectoryEvaluator``,
``RougeEvaluator``, ...), each one of our metrics by name (``adk_actors.evals._metrics``):
``evaluate_invocations(actual, expected, conversation_scenario)`` scores it on the
invocations and answers google-adk's :class:`EvaluationResult`. The metrics that only
score (trajectory, ROUGE) answer at once; the judged ones are coroutines, as in
google-adk."""

from __future__ import annotations

from typing import Any

from ..evals import (
    ConversationScenario,
    EvalCase,
    EvalMetric,
    EvalMetricResult,
    EvaluationResult,
    Invocation,
    PerInvocationResult,
)
from ..evals._custom import Evaluator
from ..evals._efficiency import (
    INFERENCE_CALL_COUNT,
    INVOCATION_DURATION,
    TOKEN_USAGE,
    TOOL_CALL_COUNT,
)
from ..evals._metrics import check_metric, score, score_async
from ..evals._vertex import VERTEX_METRICS, vertex_required

__all__ = ["EFFICIENCY_EVALUATORS", "JudgedMetricEvaluator", "ScoredMetricEvaluator", "VertexOnlyEvaluator",
           "metric_named"]


def metric_named(name: str, eval_metric: EvalMetric) -> EvalMetric:
    """``eval_metric`` as metric ``name`` (the evaluator's own), checked: an EvalError
    (a ValueError) for a criterion or threshold that is not valid for it."""
    metric = eval_metric.model_copy(update={"metric_name": name})
    check_metric(metric)
    return metric


def _pairs(actual: list[Invocation], expected: list[Invocation] | None) -> list[tuple[Invocation, Invocation | None]]:
    """Each actual invocation with its expected one (None for all when there are
    none); ValueError when both lists are given and their lengths differ."""
    if expected is None:
        return [(one, None) for one in actual]
    if len(expected) != len(actual):
        raise ValueError(f"{len(actual)} actual invocations and {len(expected)} expected ones: they must match")
    return list(zip(actual, expected, strict=True))


def _case(scenario: ConversationScenario | None) -> EvalCase | None:
    return None if scenario is None else EvalCase(eval_id="", conversation_scenario=scenario)


def _result(total: EvalMetricResult, each: list[EvalMetricResult],
            pairs: list[tuple[Invocation, Invocation | None]]) -> EvaluationResult:
    """Our overall and per-invocation results as google-adk's ``EvaluationResult`` (the
    details' ``error``, which it has no field for, left out)."""
    def details(result: EvalMetricResult) -> dict[str, Any]:
        return {key: value for key, value in result.details.items() if key != "error"}

    rows = [PerInvocationResult.model_validate({
        "actual_invocation": actual, "expected_invocation": expected, "score": result.score,
        "eval_status": result.eval_status, **details(result)})
        for (actual, expected), result in zip(pairs, each, strict=True)]
    overall = details(total)
    return EvaluationResult.model_validate({
        "overall_score": total.score, "overall_eval_status": total.eval_status, "per_invocation_results": rows,
        "overall_rubric_scores": overall.get("rubric_scores"),
        "overall_token_usage_details": overall.get("token_usage_details"),
        "overall_duration_details": overall.get("duration_details")})


class ScoredMetricEvaluator(Evaluator):
    """An evaluator of a metric scored without a model (see the module)."""

    _eval_metric: EvalMetric

    def evaluate_invocations(self, actual_invocations: list[Invocation],
                             expected_invocations: list[Invocation] | None = None,
                             conversation_scenario: ConversationScenario | None = None) -> EvaluationResult:
        """The metric on the (actual, expected) pairs, in order."""
        pairs = _pairs(actual_invocations, expected_invocations)
        total, each = score(self._eval_metric, pairs, _case(conversation_scenario))
        return _result(total, each, pairs)


class JudgedMetricEvaluator(Evaluator):
    """An evaluator of a metric a judge model scores (see the module). The judge is
    resolved by name from our model registry; one that cannot be had raises (the
    services report the metric as not evaluated instead)."""

    _eval_metric: EvalMetric

    def __init__(self, eval_metric: EvalMetric) -> None:
        self._eval_metric = metric_named(self.metric_name, eval_metric)

    metric_name = ""

    async def evaluate_invocations(self, actual_invocations: list[Invocation],
                                   expected_invocations: list[Invocation] | None = None,
                                   conversation_scenario: ConversationScenario | None = None) -> EvaluationResult:
        """The judge's scores on the (actual, expected) pairs, in order."""
        pairs = _pairs(actual_invocations, expected_invocations)
        total, each = await score_async(self._eval_metric, pairs, case=_case(conversation_scenario))
        return _result(total, each, pairs)


class _EfficiencyEvaluator(ScoredMetricEvaluator):
    """An informational efficiency metric (``metric_name``) on given invocations:
    made with ``eval_metric=`` (an EvalError when it has a threshold)."""

    metric_name = ""

    def __init__(self, eval_metric: EvalMetric) -> None:
        self._eval_metric = metric_named(self.metric_name, eval_metric)


class ToolCallCountV1Evaluator(_EfficiencyEvaluator):
    metric_name = TOOL_CALL_COUNT
    _scores_metrics = (TOOL_CALL_COUNT,)


class InferenceCallCountV1Evaluator(_EfficiencyEvaluator):
    metric_name = INFERENCE_CALL_COUNT
    _scores_metrics = (INFERENCE_CALL_COUNT,)


class TokenUsageV1Evaluator(_EfficiencyEvaluator):
    metric_name = TOKEN_USAGE
    _scores_metrics = (TOKEN_USAGE,)


class InvocationDurationV1Evaluator(_EfficiencyEvaluator):
    metric_name = INVOCATION_DURATION
    _scores_metrics = (INVOCATION_DURATION,)


EFFICIENCY_EVALUATORS: tuple[type[_EfficiencyEvaluator], ...] = (
    ToolCallCountV1Evaluator, InferenceCallCountV1Evaluator, TokenUsageV1Evaluator, InvocationDurationV1Evaluator)


class VertexOnlyEvaluator(Evaluator):
    """The registry's entry of a metric only Vertex AI's eval service scores in
    google-adk (``safety_v1``, ``multi_turn_*_v1``...): making one raises
    ``VertexEvalRequired`` (an EvalError) saying what it needs. Scoring treats it as
    ours: the metric is refused before any agent runs."""

    _scores_metrics = tuple(VERTEX_METRICS)

    def __init__(self, eval_metric: EvalMetric) -> None:
        raise vertex_required(eval_metric)
