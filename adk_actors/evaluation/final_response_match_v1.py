"""google-adk's ``google.adk.evaluation.final_response_match_v1`` path:
:class:`RougeEvaluator`, the ``response_match_score`` metric (ROUGE-1 F between the
actual and the expected final response) on given invocations."""

from __future__ import annotations

from ..evals import RESPONSE_MATCH, EvalMetric
from ._metric_evaluators import ScoredMetricEvaluator, metric_named

__all__ = ["RougeEvaluator"]


class RougeEvaluator(ScoredMetricEvaluator):
    """Scores each actual final response against the expected one, the mean overall,
    against the metric's threshold."""

    _scores_metrics = (RESPONSE_MATCH,)

    def __init__(self, eval_metric: EvalMetric) -> None:
        """Keep ``eval_metric``; an EvalError (a ValueError) when it has no threshold."""
        self._eval_metric = metric_named(RESPONSE_MATCH, eval_metric)
