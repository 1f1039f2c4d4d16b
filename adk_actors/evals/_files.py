"""Eval sets and results as files, in google-adk's layout and format.

An app's eval files live in its *home*: its own folder when it is an app of the
host's agents folder (``AGENTS_DIR/<app>/``, as google-adk's ``adk web`` keeps them),
else ``<root>/<app>/`` under the host's ``data/evals``. In the home,
``<eval_set_id>.evalset.json`` is a set and ``.adk/eval_history/<result_id>.evalset_result.json``
a run's results (google-adk's ``.adk/eval_history``, where its ``adk eval`` and ``adk web``
save theirs, so one folder's history is read by both). Each file is google-adk's JSON
(snake_case, as it writes them; camelCase is read too), so a set or a result moves
between google-adk and this host as a file. Files are 0600 in 0700 folders, written
whole (a temporary file renamed over the old one: a kill mid-write leaves the previous
version). Set and app ids are letters, digits, ``_`` and ``-`` (google-adk's rule);
a result id may also hold ``.`` (google-adk's end in a ``time.time()``) but is never
``.`` or ``..``: nothing else can name a path.

Older hosts kept everything under ``<root>/<app>/`` (results in its ``eval_history/``):
those files are still listed and read; a set from there that is changed is written to
the home and its old copy removed.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from ..store import write_private
from ._errors import EvalError
from ._models import EvalCase, EvalSet, EvalSetResult

__all__ = ["HISTORY_DIR", "EvalFiles", "EvalNotFound", "new_result_id", "result_file_text", "save_result_file"]

_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_RESULT_ID = re.compile(r"^(?!\.+$)[A-Za-z0-9_.-]{1,200}$")
_SET = ".evalset.json"
_RESULT = ".evalset_result.json"
#: where an app's results are kept, in its folder (google-adk's ``_ADK_EVAL_HISTORY_DIR``)
HISTORY_DIR = Path(".adk") / "eval_history"
_OLD_HISTORY = "eval_history"  # under <root>/<app>/, before results followed google-adk's folder

# The fields google-adk writes, null when there is no value, of the objects whose shape
# is the eval kit's (not a Content's or an Event's): a file written here has them all.
_CASE_FIELDS = ("eval_set_file", "eval_metric_results", "session_details", "user_id")
_METRIC_FIELDS = ("threshold", "criterion", "custom_function_path", "score")
_DETAIL_FIELDS = ("rubric_scores", "token_usage_details", "duration_details")
_INVOCATION_FIELDS = ("final_response", "intermediate_data", "duration", "model_duration", "tool_duration",
                      "rubrics", "app_details")


class EvalNotFound(EvalError, LookupError):
    """No eval set, case or result of that id."""


def _checked(kind: str, value: str, pattern: re.Pattern[str] = _ID) -> str:
    if not pattern.match(value):
        allowed = "letters, digits, '_', '-' and '.'" if pattern is _RESULT_ID else "letters, digits, '_' and '-'"
        raise EvalError(f"{kind} {value!r} is not valid: use {allowed} (at most 200)")
    return value


def new_result_id(app_name: str, eval_set_id: str, timestamp: float) -> str:
    """A run's result id, google-adk's way: ``<app>_<eval set>_<timestamp>``."""
    return f"{app_name}_{eval_set_id}_{timestamp}".replace("/", "_")


def _session_json(session: Any) -> dict[str, Any]:
    """A session (ours, or a host's ``SessionInfo``) as google-adk's ``Session`` JSON."""
    return {"id": session.id, "app_name": session.app_name, "user_id": session.user_id,
            "state": to_jsonable_python(session.state, fallback=repr),
            "events": [event.model_dump(mode="json", exclude_none=True) for event in session.events],
            "last_update_time": session.last_update_time}


def _invocation(invocation: dict[str, Any] | None) -> None:
    if invocation is not None:
        for name in _INVOCATION_FIELDS:
            invocation.setdefault(name, None)


def _metric(metric: dict[str, Any]) -> None:
    """google-adk's fields of a metric result; its details only those google-adk knows
    (its reader refuses any other: a judge's error is in what ``eval`` printed, not here)."""
    for name in _METRIC_FIELDS:
        metric.setdefault(name, None)
    details = metric.get("details") or {}
    metric["details"] = {name: details.get(name) for name in _DETAIL_FIELDS}


def result_file_text(result: EvalSetResult, sessions: Mapping[str, Any] | None = None) -> str:
    """``result`` as the file google-adk writes: snake_case, every field of its result,
    case, metric and invocation present (null when there is none), each case's session
    (``sessions``: by case id) as its ``session_details``, indented by 2."""
    data = result.model_dump(mode="json", exclude_none=True)
    for case in data["eval_case_results"]:
        for name in _CASE_FIELDS:
            case.setdefault(name, None)
        case["eval_set_file"] = case["eval_set_file"] or case.get("eval_set_id")
        session = (sessions or {}).get(case.get("eval_id", ""))
        case["session_details"] = _session_json(session) if session is not None else None
        for metric in case["overall_eval_metric_results"]:
            _metric(metric)
        for row in case["eval_metric_result_per_invocation"]:
            row.setdefault("expected_invocation", None)
            _invocation(row["actual_invocation"])
            _invocation(row["expected_invocation"])
            for metric in row.get("eval_metric_results", []):
                _metric(metric)
    return json.dumps(data, indent=2, ensure_ascii=False)


def save_result_file(home: str | Path, result: EvalSetResult, sessions: Mapping[str, Any] | None = None) -> Path:
    """Write ``result`` (see :func:`result_file_text`) into the app folder ``home``'s
    ``.adk/eval_history`` (made 0700 if missing) as ``<result id>.evalset_result.json``;
    return its path. EvalError for a result id that cannot name a file; OSError when
    it cannot be written (nothing is left half-written)."""
    path = Path(home) / HISTORY_DIR / (_checked("result id", result.eval_set_result_id, _RESULT_ID) + _RESULT)
    write_private(path, result_file_text(result, sessions).encode())
    return path


class EvalFiles:
    """The eval sets and results of every app under ``root`` (the host's ``data/evals``),
    an app of ``agents_dir`` in its own folder (see the module). Thread-safe in one
    process (the HTTP server's): a change of a set reads, changes and rewrites it under
    a lock."""

    def __init__(self, root: str | Path, agents_dir: str | Path | None = None) -> None:
        self.root = Path(root)
        self.agents_dir = Path(agents_dir) if agents_dir is not None else None
        self._lock = threading.Lock()

    def _old_dir(self, app: str) -> Path:
        return self.root / _checked("app name", app)

    def home(self, app: str) -> Path:
        """Where app ``app``'s sets and results are written: its folder in the agents
        folder when it has one, else ``<root>/<app>``."""
        old = self._old_dir(app)
        if self.agents_dir is not None and (self.agents_dir / app).is_dir():
            return self.agents_dir / app
        return old

    def _homes(self, app: str) -> list[Path]:
        """The app's home, then its older folder under ``root`` when that is another one."""
        home, old = self.home(app), self._old_dir(app)
        return [home] if home == old else [home, old]

    def _write(self, path: Path, text: str) -> None:
        write_private(path, text.encode())

    # -- sets -------------------------------------------------------------------------------

    def _set_paths(self, app: str, eval_set_id: str) -> list[Path]:
        """Where set ``eval_set_id`` may be: in the home, then in the older folder."""
        name = _checked("eval set id", eval_set_id) + _SET
        return [folder / name for folder in self._homes(app)]

    def list_sets(self, app: str) -> list[str]:
        found = {p.name[: -len(_SET)] for folder in self._homes(app) if folder.is_dir()
                 for p in folder.glob("*" + _SET)}
        return sorted(found)

    def create_set(self, app: str, eval_set_id: str, *, name: str | None = None,
                   description: str | None = None) -> EvalSet:
        """A new, empty set, written in the app's home; EvalError if one of that id exists."""
        paths = self._set_paths(app, eval_set_id)
        with self._lock:
            if any(path.exists() for path in paths):
                raise EvalError(f"eval set {eval_set_id!r} of {app!r} exists already")
            created = EvalSet(eval_set_id=eval_set_id, name=name or eval_set_id, description=description,
                              creation_timestamp=time.time())
            self._write(paths[0], created.model_dump_json(exclude_none=True, indent=2))
        return created

    def get_set(self, app: str, eval_set_id: str) -> EvalSet:
        """Set ``eval_set_id`` (from the home, else the older folder); EvalNotFound if
        it is in neither, EvalError if the file is no eval set."""
        for path in self._set_paths(app, eval_set_id):
            try:
                text = path.read_text()
            except FileNotFoundError:
                continue
            try:
                return EvalSet.model_validate_json(text)
            except ValidationError as exc:
                raise EvalError(f"eval set {eval_set_id!r} of {app!r} is not a valid eval set: "
                                f"{exc.errors()[0]['msg']}") from None
        raise EvalNotFound(f"eval set {eval_set_id!r} of {app!r} not found")

    def delete_set(self, app: str, eval_set_id: str) -> None:
        """Remove set ``eval_set_id`` (each copy); EvalNotFound if there is none."""
        with self._lock:
            present = [path for path in self._set_paths(app, eval_set_id) if path.exists()]
            if not present:
                raise EvalNotFound(f"eval set {eval_set_id!r} of {app!r} not found")
            for path in present:
                path.unlink()

    def _save(self, app: str, eval_set: EvalSet) -> None:
        """Write a changed set into the home, then remove an older copy of it."""
        home, *older = self._set_paths(app, eval_set.eval_set_id)
        self._write(home, eval_set.model_dump_json(exclude_none=True, indent=2))
        for path in older:
            path.unlink(missing_ok=True)

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

    def save_result(self, app: str, result: EvalSetResult, sessions: Mapping[str, Any] | None = None) -> Path:
        """Write ``result`` into the app's home's ``.adk/eval_history`` (see
        :func:`save_result_file`); return its path."""
        self._old_dir(app)  # the app's name checked
        return save_result_file(self.home(app), result, sessions)

    def _result_folders(self, app: str) -> list[Path]:
        """The home's ``.adk/eval_history``, then the older ``<root>/<app>/eval_history``."""
        return [self.home(app) / HISTORY_DIR, self._old_dir(app) / _OLD_HISTORY]

    def list_results(self, app: str) -> list[str]:
        found = {p.name[: -len(_RESULT)] for folder in self._result_folders(app) if folder.is_dir()
                 for p in folder.glob("*" + _RESULT)}
        return sorted(found)

    def get_result(self, app: str, result_id: str) -> EvalSetResult:
        """Result ``result_id`` (from the home's history, else the older folder);
        EvalNotFound if it is in neither, EvalError if the file is no eval set result
        (an older google-adk file, the result JSON-encoded as a string, is read)."""
        name = _checked("result id", result_id, _RESULT_ID) + _RESULT
        for folder in self._result_folders(app):
            try:
                text = (folder / name).read_text()
            except FileNotFoundError:
                continue
            return _parsed_result(text, f"eval result {result_id!r} of {app!r}")
        raise EvalNotFound(f"eval result {result_id!r} of {app!r} not found")


#: values that are the user's or a tool's data, whose nulls are kept
_FREE_FORM = frozenset({"args", "response", "state", "state_delta", "custom_metadata", "partial_args"})


def _without_nulls(value: Any) -> Any:
    """``value`` without the null fields google-adk writes (every field of google-genai's
    types is written, set or not; ours know fewer), but in data of the user's own."""
    if isinstance(value, dict):
        return {key: item if key in _FREE_FORM else _without_nulls(item) for key, item in value.items()
                if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _parsed_result(text: str, named: str) -> EvalSetResult:
    """The result in a file's ``text``: its JSON object, or (older google-adk files) a
    JSON string holding it, its null fields dropped (:func:`_without_nulls`). EvalError
    naming ``named`` when it is neither, or a field is not a result's."""
    try:
        data = json.loads(text)
        if isinstance(data, str):
            data = json.loads(data)
        return EvalSetResult.model_validate(_without_nulls(data))
    except ValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])
        raise EvalError(f"{named} is not a valid eval set result ({where}: {exc.errors()[0]['msg']})") from None
    except ValueError as exc:
        raise EvalError(f"{named} is not a valid eval set result: {exc}") from None
