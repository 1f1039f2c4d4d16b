"""google-adk's ``google.adk.evaluation.rubric_based_multi_turn_trajectory_evaluator``
path: :class:`RubricBasedMultiTurnTrajectoryEvaluator`,
``rubric_based_multi_turn_trajectory_quality_v1`` (a judge model reads the whole
conversation once and says yes or no, rubric by rubric, on the agent's work across its
turns) on given invocations. Every invocation but the last is not evaluated; the last
one's score, the mean of its rubric scores, is the overall score. The rubrics are the
criterion's and the last actual invocation's of type ``TRAJECTORY_QUALITY`` (see
``rubric_based_evaluator``)."""

from __future__ import annotations

from ..evals import RUBRIC_MULTI_TURN_TRAJECTORY
from .rubric_based_evaluator import RubricInvocationsEvaluator

__all__ = ["RubricBasedMultiTurnTrajectoryEvaluator"]


class RubricBasedMultiTurnTrajectoryEvaluator(RubricInvocationsEvaluator):
    """``RubricBasedMultiTurnTrajectoryEvaluator(eval_metric)``: an EvalError (a
    ValueError) when its criterion is not a valid ``RubricsBasedCriterion``."""

    metric_name = RUBRIC_MULTI_TURN_TRAJECTORY
    _scores_metrics = (RUBRIC_MULTI_TURN_TRAJECTORY,)
    RUBRIC_TYPE = "TRAJECTORY_QUALITY"
    _last_only = True
