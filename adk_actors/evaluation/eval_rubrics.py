"""google-adk's ``google.adk.evaluation.eval_rubrics`` path (see :mod:`adk_actors.evals`)."""

from ..evals import Rubric, RubricContent

__all__ = ["Rubric", "RubricContent"]
