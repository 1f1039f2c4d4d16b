"""google-adk's ``google.adk.evaluation.evaluator`` path: :class:`Evaluator`, the base
of what scores a metric (ours: every built-in evaluator class; yours: register a
subclass in ``metric_evaluator_registry``), and what it answers
(:class:`EvaluationResult`, a :class:`PerInvocationResult` per invocation; see
:mod:`adk_actors.evals._custom`).

The contract of ``evaluate_invocations(actual_invocations, expected_invocations=None,
conversation_scenario=None)``: an :class:`EvaluationResult`, or an awaitable of one,
with one per-invocation result per actual invocation, in order, whenever its overall
status is PASSED or FAILED (the eval services raise ``CustomMetricError``, a
ValueError, otherwise); the overall status it gives is the metric's. An evaluator
that raises leaves the metric not evaluated, the exception named in the result's
``details["error"]``."""

from ..evals import EvalStatus, EvaluationResult, PerInvocationResult
from ..evals._custom import Evaluator

__all__ = ["EvalStatus", "EvaluationResult", "Evaluator", "PerInvocationResult"]
