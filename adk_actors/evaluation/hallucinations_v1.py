"""google-adk's ``google.adk.evaluation.hallucinations_v1`` path:
:class:`HallucinationsV1Evaluator`, ``hallucinations_v1`` (a judge model cuts each
response into sentences and labels each against what the agent was told and its
tools answered) on given invocations, and :class:`EvaluationStep`, google-adk's record
of one response to check and its context (our scorer, ``adk_actors.evals.
_hallucinations``, does not take it)."""

from __future__ import annotations

import dataclasses

from ..evals import HALLUCINATIONS_V1, HallucinationsCriterion
from ._metric_evaluators import JudgedMetricEvaluator

__all__ = ["EvaluationStep", "HallucinationsV1Evaluator"]


@dataclasses.dataclass(frozen=True)
class EvaluationStep:
    """One response a hallucination judge checks (google-adk's type): its text
    (``nl_response``) and what it is checked against (``context``)."""

    context: str
    nl_response: str


class HallucinationsV1Evaluator(JudgedMetricEvaluator):
    """``HallucinationsV1Evaluator(eval_metric)``: an EvalError (a ValueError) when its
    criterion is not a valid ``HallucinationsCriterion``."""

    criterion_type = HallucinationsCriterion
    metric_name = HALLUCINATIONS_V1
    _scores_metrics = (HALLUCINATIONS_V1,)
