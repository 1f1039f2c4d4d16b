"""google-adk's ``google.adk.evaluation.eval_sets_manager`` path: the interface of a store
of eval sets, by app. ``LocalEvalSetsManager`` keeps them as files in an agents folder,
``InMemoryEvalSetsManager`` in memory."""

from __future__ import annotations

import abc

from ..evals import EvalCase, EvalSet

__all__ = ["EvalSetsManager"]


class EvalSetsManager(abc.ABC):
    """Eval sets, and their cases, by app name and eval set id."""

    @abc.abstractmethod
    def get_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet | None:
        """The eval set, or None when there is none of that id."""

    @abc.abstractmethod
    def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        """A new, empty eval set, stored and returned; ValueError for an id that is not
        valid or is taken."""

    @abc.abstractmethod
    def list_eval_sets(self, app_name: str) -> list[str]:
        """The ids of the app's eval sets."""

    def get_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase | None:
        """The case, or None when the set or the case is not there (read from
        :meth:`get_eval_set`; a manager may answer it its own way)."""
        eval_set = self.get_eval_set(app_name, eval_set_id)
        if eval_set is None:
            return None
        return next((case for case in eval_set.eval_cases if case.eval_id == eval_case_id), None)

    @abc.abstractmethod
    def add_eval_case(self, app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
        """Add ``eval_case`` to the set; NotFoundError when there is no such set,
        ValueError when it has a case of that id."""

    @abc.abstractmethod
    def update_eval_case(self, app_name: str, eval_set_id: str, updated_eval_case: EvalCase) -> None:
        """Replace the case of ``updated_eval_case``'s id, in its place; NotFoundError
        when the set or the case is not there."""

    @abc.abstractmethod
    def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        """Remove the case; NotFoundError when the set or the case is not there."""
