"""google-adk's ``google.adk.evaluation.agent_evaluator`` path (see :mod:`adk_actors.evals`)."""

from ..evals import NUM_RUNS, AgentEvaluator, EvalFailed

__all__ = ["NUM_RUNS", "AgentEvaluator", "EvalFailed"]
