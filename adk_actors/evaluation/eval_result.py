"""google-adk's ``google.adk.evaluation.eval_result`` path (see :mod:`adk_actors.evals`)."""

from ..evals import EvalCaseResult, EvalSetResult

__all__ = ["EvalCaseResult", "EvalSetResult"]
