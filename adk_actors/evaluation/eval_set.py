"""google-adk's ``google.adk.evaluation.eval_set`` path (see :mod:`adk_actors.evals`)."""

from ..evals import EvalSet

__all__ = ["EvalSet"]
