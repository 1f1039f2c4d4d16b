"""google-adk's import paths of the evaluations (``from google.adk.evaluation import
AgentEvaluator``): the names live in :mod:`adk_actors.evals`."""

from ..evals import AgentEvaluator

__all__ = ["AgentEvaluator"]
