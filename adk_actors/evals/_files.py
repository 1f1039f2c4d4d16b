"""Eval sets and results as files, in google-adk's layout and format.

Under the host's ``data/evals``: ``<app>/<eval_set_id>.evalset.json`` for a set and
``<app>/eval_history/<result_id>.evalset_result.json`` for a run's results, each one
google-adk's JSON (snake_case, as it writes them; camelCase is read too), so a set moves between ``adk web`` and this host as a
file. Files are 0600 in 0700 folders, written whole (a temporary file renamed over
the old one: a kill mid-write leaves the previous version). Ids are letters, digits,
``_`` and ``-`` (google-adk's rule): nothing else can name a path.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from pydantic import ValidationError

from ..store import write_private
from ._errors import EvalError
from ._models import EvalCase, EvalSet, EvalSetResult

__all__ = ["EvalFiles", "EvalNotFound"]

_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_SET = ".evalset.json"
_RESULT = ".evalset_result.json"


class EvalNotFound(EvalError, LookupError):
    """No eval set, case or result of that id."""


def _checked(kind: str, value: str) -> str:
    if not _ID.match(value):
        raise EvalError(f"{kind} {value!r} is not valid: use letters, digits, '_' and '-' (at most 200)")
    return value


class EvalFiles:
    """The eval sets and results of every app under ``root``. Thread-safe in one process
    (the HTTP server's): a change of a set reads, changes and rewrites it under a lock."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()

    def _app_dir(self, app: str) -> Path:
        return self.root / _checked("app name", app)

    def _set_path(self, app: str, eval_set_id: str) -> Path:
        return self._app_dir(app) / (_checked("eval set id", eval_set_id) + _SET)

    def _write(self, path: Path, text: str) -> None:
        write_private(path, text.encode())

    # -- sets -------------------------------------------------------------------------------

    def list_sets(self, app: str) -> list[str]:
        folder = self._app_dir(app)
        return sorted(p.name[: -len(_SET)] for p in folder.glob("*" + _SET)) if folder.is_dir() else []

    def create_set(self, app: str, eval_set_id: str, *, name: str | None = None,
                   description: str | None = None) -> EvalSet:
        """A new, empty set; EvalError if one of that id exists."""
        path = self._set_path(app, eval_set_id)
        with self._lock:
            if path.exists():
                raise EvalError(f"eval set {eval_set_id!r} of {app!r} exists already")
            created = EvalSet(eval_set_id=eval_set_id, name=name or eval_set_id, description=description,
                              creation_timestamp=time.time())
            self._write(path, created.model_dump_json(exclude_none=True, indent=2))
        return created

    def get_set(self, app: str, eval_set_id: str) -> EvalSet:
        path = self._set_path(app, eval_set_id)
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise EvalNotFound(f"eval set {eval_set_id!r} of {app!r} not found") from None
        try:
            return EvalSet.model_validate_json(text)
        except ValidationError as exc:
            raise EvalError(f"eval set {eval_set_id!r} of {app!r} is not a valid eval set: "
                            f"{exc.errors()[0]['msg']}") from None

    def delete_set(self, app: str, eval_set_id: str) -> None:
        path = self._set_path(app, eval_set_id)
        with self._lock:
            if not path.exists():
                raise EvalNotFound(f"eval set {eval_set_id!r} of {app!r} not found")
            path.unlink()

    def _save(self, app: str, eval_set: EvalSet) -> None:
        self._write(self._set_path(app, eval_set.eval_set_id),
                    eval_set.model_dump_json(exclude_none=True, indent=2))

    # -- cases ------------------------------------------------------------------------------

    def add_case(self, app: str, eval_set_id: str, case: EvalCase) -> None:
        """Add ``case``; EvalError if the set has a case of its id."""
        _checked("eval id", case.eval_id)
        with self._lock:
            eval_set = self.get_set(app, eval_set_id)
            if any(known.eval_id == case.eval_id for known in eval_set.eval_cases):
                raise EvalError(f"eval set {eval_set_id!r} has a case {case.eval_id!r} already")
            eval_set.eval_cases.append(case)
            self._save(app, eval_set)

    def get_case(self, app: str, eval_set_id: str, eval_id: str) -> EvalCase:
        found = next((c for c in self.get_set(app, eval_set_id).eval_cases if c.eval_id == eval_id), None)
        if found is None:
            raise EvalNotFound(f"eval set {eval_set_id!r} has no case {eval_id!r}")
        return found

    def replace_case(self, app: str, eval_set_id: str, case: EvalCase) -> None:
        with self._lock:
            eval_set = self.get_set(app, eval_set_id)
            position = next((i for i, c in enumerate(eval_set.eval_cases) if c.eval_id == case.eval_id), None)
            if position is None:
                raise EvalNotFound(f"eval set {eval_set_id!r} has no case {case.eval_id!r}")
            eval_set.eval_cases[position] = case
            self._save(app, eval_set)

    def delete_case(self, app: str, eval_set_id: str, eval_id: str) -> None:
        with self._lock:
            eval_set = self.get_set(app, eval_set_id)
            kept = [c for c in eval_set.eval_cases if c.eval_id != eval_id]
            if len(kept) == len(eval_set.eval_cases):
                raise EvalNotFound(f"eval set {eval_set_id!r} has no case {eval_id!r}")
            eval_set.eval_cases = kept
            self._save(app, eval_set)

    # -- results ----------------------------------------------------------------------------

    def save_result(self, app: str, result: EvalSetResult) -> None:
        path = self._app_dir(app) / "eval_history" / (_checked("result id", result.eval_set_result_id) + _RESULT)
        self._write(path, result.model_dump_json(exclude_none=True, indent=2))

    def list_results(self, app: str) -> list[str]:
        folder = self._app_dir(app) / "eval_history"
        return sorted(p.name[: -len(_RESULT)] for p in folder.glob("*" + _RESULT)) if folder.is_dir() else []

    def get_result(self, app: str, result_id: str) -> EvalSetResult:
        path = self._app_dir(app) / "eval_history" / (_checked("result id", result_id) + _RESULT)
        try:
            return EvalSetResult.model_validate_json(path.read_text())
        except FileNotFoundError:
            raise EvalNotFound(f"eval result {result_id!r} of {app!r} not found") from None
