"""google-adk's ``google.adk.evaluation.simulation.per_turn_user_simulator_quality_v1``
path: :class:`PerTurnUserSimulatorQualityV1`, ``per_turn_user_simulator_quality_v1`` (a
judge model says, turn by turn, whether the simulated user kept to its scenario) on
given invocations and their ``conversation_scenario``."""

from __future__ import annotations

from ...evals import PER_TURN_USER_SIMULATOR_QUALITY, LlmBackedUserSimulatorCriterion
from .._metric_evaluators import JudgedMetricEvaluator

__all__ = ["PerTurnUserSimulatorQualityV1"]


class PerTurnUserSimulatorQualityV1(JudgedMetricEvaluator):
    """``PerTurnUserSimulatorQualityV1(eval_metric)``: an EvalError (a ValueError) when
    its criterion is not a valid ``LlmBackedUserSimulatorCriterion``. Without a
    scenario the metric is not evaluated."""

    criterion_type = LlmBackedUserSimulatorCriterion
    metric_name = PER_TURN_USER_SIMULATOR_QUALITY
    _scores_metrics = (PER_TURN_USER_SIMULATOR_QUALITY,)
