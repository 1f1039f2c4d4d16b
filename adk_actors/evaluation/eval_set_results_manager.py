"""google-adk's ``google.adk.evaluation.eval_set_results_manager`` path: the interface of a
store of eval results, by app. ``LocalEvalSetResultsManager`` keeps them as files in
an agents folder (where ``adk web``, ``adk eval`` and this package's console read
them)."""

from __future__ import annotations

import abc

from ..evals import EvalCaseResult, EvalSetResult

__all__ = ["EvalSetResultsManager"]


class EvalSetResultsManager(abc.ABC):
    """A run's results, by app name and result id."""

    @abc.abstractmethod
    def save_eval_set_result(self, app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]) -> None:
        """Store the case results of a run of ``eval_set_id`` as a new result."""

    @abc.abstractmethod
    def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> EvalSetResult:
        """The result of that id; NotFoundError when there is none."""

    @abc.abstractmethod
    def list_eval_set_results(self, app_name: str) -> list[str]:
        """The ids of the app's results."""
