"""google-adk's ``google.adk.evaluation.trajectory_evaluator`` path:
:class:`TrajectoryEvaluator`, the ``tool_trajectory_avg_score`` metric on given
invocations (our metric: the criterion's ``match_type`` and ``ignore_args``)."""

from __future__ import annotations

from ..evals import TOOL_TRAJECTORY, EvalMetric
from ._metric_evaluators import ScoredMetricEvaluator, metric_named
from .eval_metrics import ToolTrajectoryCriterion

__all__ = ["TrajectoryEvaluator"]


class TrajectoryEvaluator(ScoredMetricEvaluator):
    """Scores each actual invocation's tool calls against the expected ones (1.0 or
    0.0), the mean overall, against a threshold."""

    criterion_type = ToolTrajectoryCriterion
    _scores_metrics = (TOOL_TRAJECTORY,)

    def __init__(self, threshold: float | None = None, eval_metric: EvalMetric | None = None) -> None:
        """``eval_metric`` (its criterion, else its threshold with an exact match), or
        ``threshold`` with an exact match; ValueError when both or neither are given,
        or the criterion is not valid."""
        if threshold is not None and eval_metric is not None:
            raise ValueError("give either eval_metric or threshold, not both")
        if eval_metric is None:
            if threshold is None:
                raise ValueError("a trajectory evaluation needs a threshold")
            eval_metric = EvalMetric(metric_name=TOOL_TRAJECTORY, threshold=threshold)
        self._eval_metric = metric_named(TOOL_TRAJECTORY, eval_metric)
