"""google-adk's ``google.adk.evaluation.local_eval_set_results_manager`` path: a run's
results as files in an agents folder,
``<agents_dir>/<app>/.adk/eval_history/<result id>.evalset_result.json`` (where
google-adk's ``adk eval`` and ``adk web`` keep theirs and this package's console reads
them), written and read by :class:`~adk_actors.evals.EvalFiles` in google-adk's
format."""

from __future__ import annotations

import logging
import time

from .._exceptions import NotFoundError
from ..evals import EvalCaseResult, EvalFiles, EvalNotFound, EvalSetResult
from ..evals._files import new_result_id
from .eval_set_results_manager import EvalSetResultsManager
from .local_eval_sets_manager import check_path_segment

__all__ = ["LocalEvalSetResultsManager"]

logger = logging.getLogger(__name__)


class LocalEvalSetResultsManager(EvalSetResultsManager):
    """The results under ``agents_dir`` (see the module)."""

    def __init__(self, agents_dir: str) -> None:
        self._agents_dir = agents_dir
        self._files = EvalFiles(agents_dir)

    def save_eval_set_result(self, app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]) -> None:
        """Write a new result of the case results, in order: the names checked
        (:func:`~adk_actors.evaluation.local_eval_sets_manager.check_path_segment`, a
        ValueError), its id and name ``<app>_<eval set id>_<time.time()>`` (google-adk's),
        its file written whole (the history folder made if missing). OSError when it
        cannot be written."""
        check_path_segment(app_name, "app_name")
        check_path_segment(eval_set_id, "eval_set_id")
        began = time.time()
        result_id = new_result_id(app_name, eval_set_id, began)
        result = EvalSetResult(eval_set_result_id=result_id, eval_set_result_name=result_id, eval_set_id=eval_set_id,
                               eval_case_results=list(eval_case_results), creation_timestamp=began)
        path = self._files.save_result(app_name, result)
        logger.info("eval result written to %s", path)

    def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> EvalSetResult:
        """The result read from its file (google-adk's, or an older one holding the
        result as a JSON string); NotFoundError when there is no file, an ``EvalError``
        (a ValueError) when the id cannot name one or the file is no result."""
        check_path_segment(eval_set_result_id, "eval_set_result_id")
        try:
            return self._files.get_result(app_name, eval_set_result_id)
        except EvalNotFound as missing:
            raise NotFoundError(str(missing)) from None

    def list_eval_set_results(self, app_name: str) -> list[str]:
        """The ids of the app's result files, sorted; [] when it has none."""
        check_path_segment(app_name, "app_name")
        return self._files.list_results(app_name)
