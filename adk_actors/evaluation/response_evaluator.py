"""google-adk's ``google.adk.evaluation.response_evaluator`` path: :class:`ResponseEvaluator`,
``response_match_score`` on given invocations. Its other metric,
``response_evaluation_score``, is scored by Vertex AI's eval service in google-adk, which
is not called here: asking for it raises ``VertexEvalRequired``."""

from __future__ import annotations

from ..evals import RESPONSE_MATCH, EvalMetric
from ..evals._vertex import RESPONSE_EVALUATION
from ._metric_evaluators import ScoredMetricEvaluator, metric_named

__all__ = ["ResponseEvaluator"]


class ResponseEvaluator(ScoredMetricEvaluator):
    """Scores final responses by the metric named (see the module)."""

    _scores_metrics = (RESPONSE_MATCH, RESPONSE_EVALUATION)

    def __init__(self, threshold: float | None = None, metric_name: str | None = None,
                 eval_metric: EvalMetric | None = None) -> None:
        """``eval_metric``, or ``threshold`` and ``metric_name``; ValueError when both ways
        are given or there is no threshold, ``VertexEvalRequired`` (an ``EvalError``) for
        ``response_evaluation_score``, an ``EvalError`` for any other unknown name."""
        if eval_metric is not None and (threshold is not None or metric_name is not None):
            raise ValueError("give either eval_metric or threshold and metric_name, not both")
        if eval_metric is None:
            if threshold is None:
                raise ValueError("a response evaluation needs a threshold")
            eval_metric = EvalMetric(metric_name=str(metric_name), threshold=threshold)
        self._eval_metric = metric_named(eval_metric.metric_name, eval_metric)
