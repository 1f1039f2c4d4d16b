"""google-adk's ``google.adk.evaluation.rubric_based_final_response_quality_v1`` path:
:class:`RubricBasedFinalResponseQualityV1Evaluator`,
``rubric_based_final_response_quality_v1`` (a judge model says yes or no, rubric by
rubric, on each invocation's final response, given what the agent was told, its tools,
the user's message and the tool steps) on given invocations; see
``rubric_based_evaluator`` for where the rubrics come from."""

from __future__ import annotations

from ..evals import RUBRIC_FINAL_RESPONSE
from .rubric_based_evaluator import RubricInvocationsEvaluator

__all__ = ["RubricBasedFinalResponseQualityV1Evaluator"]


class RubricBasedFinalResponseQualityV1Evaluator(RubricInvocationsEvaluator):
    """``RubricBasedFinalResponseQualityV1Evaluator(eval_metric)``: an EvalError (a
    ValueError) when its criterion is not a valid ``RubricsBasedCriterion``.
    Invocations' rubrics of type ``FINAL_RESPONSE_QUALITY`` count."""

    metric_name = RUBRIC_FINAL_RESPONSE
    _scores_metrics = (RUBRIC_FINAL_RESPONSE,)
    RUBRIC_TYPE = "FINAL_RESPONSE_QUALITY"
