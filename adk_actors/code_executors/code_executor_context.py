"""google-adk's ``CodeExecutorContext``: the code executor's data kept in session state.

The keys are google-adk's, and the execution id is the one the engine's code step keeps
(``engine._code_execution``), so a custom executor reading this context sees the id the
agent's loop recorded:

- ``_code_execution_context``: a dict holding ``execution_session_id`` and
  ``processed_input_files``; :meth:`CodeExecutorContext.get_state_delta` returns it;
- ``_code_executor_input_files``: the input files, each as a dict of a :class:`File`;
- ``_code_executor_error_counts``: failed runs per invocation id;
- ``_code_execution_results``: per invocation id, the runs recorded (code, stdout,
  stderr, a Unix timestamp in whole seconds).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import MutableMapping
from typing import Any

from ._utils import File

__all__ = ["CodeExecutorContext"]

_CONTEXT = "_code_execution_context"
_EXECUTION_ID = "execution_session_id"
_PROCESSED = "processed_input_files"
_INPUT_FILES = "_code_executor_input_files"
_ERROR_COUNTS = "_code_executor_error_counts"
_RESULTS = "_code_execution_results"


class CodeExecutorContext:
    """A view of a session state (a ``State`` or a plain dict) for a code executor.
    Every setter writes straight into that state (in place: the state object given is
    the one changed; nothing is copied until :meth:`get_state_delta`)."""

    def __init__(self, session_state: MutableMapping[str, Any]) -> None:
        """Keep ``session_state``; when it has no ``_code_execution_context`` entry,
        put an empty dict there first; that dict is the context read and written."""
        if _CONTEXT not in session_state:
            session_state[_CONTEXT] = {}
        self._session_state = session_state
        self._context: dict[str, Any] = session_state[_CONTEXT]

    def get_state_delta(self) -> dict[str, Any]:
        """``{"_code_execution_context": <a deep copy of the context>}``, for an event's
        state delta; later changes to this object do not reach the copy."""
        return {_CONTEXT: copy.deepcopy(self._context)}

    def get_execution_id(self) -> str | None:
        """The execution id recorded (a stateful executor's session), or None."""
        value = self._context.get(_EXECUTION_ID)
        return None if value is None else str(value)

    def set_execution_id(self, session_id: str) -> None:
        """Record ``session_id`` as the execution id."""
        self._context[_EXECUTION_ID] = session_id

    def get_processed_file_names(self) -> list[str]:
        """The names of the input files already handled ([] when none)."""
        names: list[str] | None = self._context.get(_PROCESSED)
        return [] if names is None else names

    def add_processed_file_names(self, file_names: list[str]) -> None:
        """Append ``file_names`` to the handled names (duplicates are kept)."""
        self._context[_PROCESSED] = [*self.get_processed_file_names(), *file_names]

    def get_input_files(self) -> list[File]:
        """The input files in state, rebuilt as :class:`File` objects ([] when none)."""
        stored: list[dict[str, Any]] | None = self._session_state.get(_INPUT_FILES)
        return [] if stored is None else [File(**entry) for entry in stored]

    def add_input_files(self, input_files: list[File]) -> None:
        """Append ``input_files`` (each stored as a dict of its fields) to the state's
        input files, then write the list back to the state."""
        stored: list[dict[str, Any]] = list(self._session_state.get(_INPUT_FILES, []))
        stored.extend(dataclasses.asdict(f) for f in input_files)
        self._session_state[_INPUT_FILES] = stored

    def clear_input_files(self) -> None:
        """Empty the state's input files and the handled names, each only when present."""
        if _INPUT_FILES in self._session_state:
            self._session_state[_INPUT_FILES] = []
        if _PROCESSED in self._context:
            self._context[_PROCESSED] = []

    def get_error_count(self, invocation_id: str) -> int:
        """How many runs of ``invocation_id`` were counted as failed (0 when none)."""
        counts: dict[str, int] | None = self._session_state.get(_ERROR_COUNTS)
        return 0 if counts is None else counts.get(invocation_id, 0)

    def increment_error_count(self, invocation_id: str) -> None:
        """Add one to ``invocation_id``'s failed-run count and write the counts back."""
        counts: dict[str, int] = dict(self._session_state.get(_ERROR_COUNTS, {}))
        counts[invocation_id] = counts.get(invocation_id, 0) + 1
        self._session_state[_ERROR_COUNTS] = counts

    def reset_error_count(self, invocation_id: str) -> None:
        """Forget ``invocation_id``'s failed-run count (nothing when no counts exist)."""
        counts: dict[str, int] | None = self._session_state.get(_ERROR_COUNTS)
        if counts is None:
            return
        counts = dict(counts)
        counts.pop(invocation_id, None)
        self._session_state[_ERROR_COUNTS] = counts

    def update_code_execution_result(self, invocation_id: str, code: str,
                                     result_stdout: str, result_stderr: str) -> None:
        """Append one run (``code``, ``result_stdout``, ``result_stderr`` and the
        current Unix time in whole seconds as ``timestamp``) to ``invocation_id``'s
        recorded runs, then write all recorded runs back to the state."""
        results: dict[str, list[dict[str, Any]]] = dict(self._session_state.get(_RESULTS, {}))
        runs = [*results.get(invocation_id, []), {"code": code, "result_stdout": result_stdout,
                                                   "result_stderr": result_stderr,
                                                   "timestamp": int(time.time())}]
        results[invocation_id] = runs
        self._session_state[_RESULTS] = results
