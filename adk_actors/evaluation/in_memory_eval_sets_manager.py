"""google-adk's ``google.adk.evaluation.in_memory_eval_sets_manager`` path: eval sets in
memory, for tests and for runs that need no files. The sets returned are the ones
kept: a change to a case made through the manager shows in a set got before it."""

from __future__ import annotations

import time

from .._exceptions import NotFoundError
from ..evals import EvalCase, EvalSet
from .eval_sets_manager import EvalSetsManager

__all__ = ["InMemoryEvalSetsManager"]


class InMemoryEvalSetsManager(EvalSetsManager):
    """Eval sets by app name and set id, in this object (see the module)."""

    def __init__(self) -> None:
        self._eval_sets: dict[str, dict[str, EvalSet]] = {}

    def _set(self, app_name: str, eval_set_id: str) -> EvalSet:
        """The set; NotFoundError when there is none."""
        found = self._eval_sets.get(app_name, {}).get(eval_set_id)
        if found is None:
            raise NotFoundError(f"eval set {eval_set_id!r} not found for app {app_name!r}")
        return found

    def _position(self, eval_set: EvalSet, eval_case_id: str) -> int:
        """Where the case is in the set; NotFoundError when it is not there."""
        for position, case in enumerate(eval_set.eval_cases):
            if case.eval_id == eval_case_id:
                return position
        raise NotFoundError(f"eval case {eval_case_id!r} not found in eval set {eval_set.eval_set_id!r}")

    def get_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet | None:
        return self._eval_sets.get(app_name, {}).get(eval_set_id)

    def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        """A new, empty set (no name, as google-adk's in-memory one); ValueError when the
        app has a set of that id."""
        sets = self._eval_sets.setdefault(app_name, {})
        if eval_set_id in sets:
            raise ValueError(f"eval set {eval_set_id!r} exists already for app {app_name!r}")
        sets[eval_set_id] = EvalSet(eval_set_id=eval_set_id, eval_cases=[], creation_timestamp=time.time())
        return sets[eval_set_id]

    def list_eval_sets(self, app_name: str) -> list[str]:
        """The app's set ids in the order they were created; [] for an app without sets."""
        return list(self._eval_sets.get(app_name, {}))

    def add_eval_case(self, app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
        """Append the case; NotFoundError for no set, ValueError when it has a case of that id."""
        eval_set = self._set(app_name, eval_set_id)
        if any(case.eval_id == eval_case.eval_id for case in eval_set.eval_cases):
            raise ValueError(f"eval case {eval_case.eval_id!r} exists already in eval set {eval_set_id!r} "
                             f"of app {app_name!r}")
        eval_set.eval_cases.append(eval_case)

    def update_eval_case(self, app_name: str, eval_set_id: str, updated_eval_case: EvalCase) -> None:
        """Replace the case of that id, in its place; NotFoundError when the set or the
        case is not there."""
        eval_set = self._set(app_name, eval_set_id)
        eval_set.eval_cases[self._position(eval_set, updated_eval_case.eval_id)] = updated_eval_case

    def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        """Remove the case; NotFoundError when the set or the case is not there."""
        eval_set = self._set(app_name, eval_set_id)
        del eval_set.eval_cases[self._position(eval_set, eval_case_id)]
