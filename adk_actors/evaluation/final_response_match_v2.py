"""google-adk's ``google.adk.evaluation.final_response_match_v2`` path:
:class:`FinalResponseMatchV2Evaluator`, ``final_response_match_v2`` (a judge model
says whether each actual final response is valid against the expected one, by
majority of its samples) on given invocations."""

from __future__ import annotations

from ..evals import FINAL_RESPONSE_MATCH_V2, LlmAsAJudgeCriterion
from ._metric_evaluators import JudgedMetricEvaluator

__all__ = ["FinalResponseMatchV2Evaluator"]


class FinalResponseMatchV2Evaluator(JudgedMetricEvaluator):
    """``FinalResponseMatchV2Evaluator(eval_metric)``: an EvalError (a ValueError) when
    its criterion is not a valid ``LlmAsAJudgeCriterion``."""

    criterion_type = LlmAsAJudgeCriterion
    metric_name = FINAL_RESPONSE_MATCH_V2
    _scores_metrics = (FINAL_RESPONSE_MATCH_V2,)
