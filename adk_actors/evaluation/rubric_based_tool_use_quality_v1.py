"""google-adk's ``google.adk.evaluation.rubric_based_tool_use_quality_v1`` path:
:class:`RubricBasedToolUseV1Evaluator`, ``rubric_based_tool_use_quality_v1`` (a judge
model says yes or no, rubric by rubric, on each invocation's tool calls and their
answers, given the agent's tools and the user's message) on given invocations; see
``rubric_based_evaluator`` for where the rubrics come from."""

from __future__ import annotations

from ..evals import RUBRIC_TOOL_USE
from .rubric_based_evaluator import RubricInvocationsEvaluator

__all__ = ["RubricBasedToolUseV1Evaluator"]


class RubricBasedToolUseV1Evaluator(RubricInvocationsEvaluator):
    """``RubricBasedToolUseV1Evaluator(eval_metric)``: an EvalError (a ValueError) when
    its criterion is not a valid ``RubricsBasedCriterion``. Invocations' rubrics of
    type ``TOOL_USE_QUALITY`` count."""

    metric_name = RUBRIC_TOOL_USE
    _scores_metrics = (RUBRIC_TOOL_USE,)
    RUBRIC_TYPE = "TOOL_USE_QUALITY"
