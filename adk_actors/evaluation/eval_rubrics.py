"""google-adk's ``google.adk.evaluation.eval_rubrics`` path (see :mod:`adk_actors.evals`),
with :class:`RubricScore`, a rubric's score as the rubric metrics report it."""

from __future__ import annotations

from ..evals import Rubric, RubricContent
from .common import EvalBaseModel

__all__ = ["Rubric", "RubricContent", "RubricScore"]


class RubricScore(EvalBaseModel):
    """One rubric's verdict on a response: the rubric's id, the judge's reasons, and
    the score (None: not assessed). A rubric metric's result holds these as data in
    ``details["rubric_scores"]``; ``RubricScore.model_validate`` reads each entry."""

    rubric_id: str
    rationale: str | None = None
    score: float | None = None
