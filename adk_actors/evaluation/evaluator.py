"""google-adk's ``google.adk.evaluation.evaluator`` path: what a custom metric's
function returns (see :mod:`adk_actors.evals._custom`)."""

from ..evals import EvalStatus, EvaluationResult, PerInvocationResult

__all__ = ["EvalStatus", "EvaluationResult", "PerInvocationResult"]
