"""google-adk's ``google.adk.evaluation.hallucinations_v1`` path:
:class:`HallucinationsV1Evaluator`, ``hallucinations_v1`` (a judge model cuts each
response into sentences and labels each against what the agent was told and its
tools answered) on given invocations."""

from __future__ import annotations

from ..evals import HALLUCINATIONS_V1, HallucinationsCriterion
from ._metric_evaluators import JudgedMetricEvaluator

__all__ = ["HallucinationsV1Evaluator"]


class HallucinationsV1Evaluator(JudgedMetricEvaluator):
    """``HallucinationsV1Evaluator(eval_metric)``: an EvalError (a ValueError) when its
    criterion is not a valid ``HallucinationsCriterion``."""

    criterion_type = HallucinationsCriterion
    metric_name = HALLUCINATIONS_V1
