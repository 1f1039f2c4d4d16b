"""google-adk's ``google.adk.evaluation.local_eval_sets_manager`` path: eval sets as files
in an agents folder, ``<agents_dir>/<app>/<eval_set_id>.evalset.json`` (google-adk's
layout, which ``adk web`` and this package's host read too), written by
:class:`~adk_actors.evals.EvalFiles` (0600 files, written whole). A file in
google-adk's oldest format (a list of cases of ``name``, ``data`` turns and
``initial_session``) is read as an eval set (:func:`load_eval_set_from_file`)."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._exceptions import NotFoundError
from .._types import Content, FunctionCall, Part
from ..evals import (
    EvalCase,
    EvalFiles,
    EvalNotFound,
    EvalSet,
    IntermediateData,
    Invocation,
    SessionInput,
)
from .eval_sets_manager import EvalSetsManager

__all__ = ["LocalEvalSetsManager", "check_path_segment", "convert_eval_set_to_pydantic_schema",
           "load_eval_set_from_file"]

logger = logging.getLogger(__name__)

_SET = ".evalset.json"
_NEW_ID = re.compile(r"^[a-zA-Z0-9_]+$")
_DRIVE = re.compile(r"[A-Za-z]:")


def check_path_segment(value: str, field_name: str) -> None:
    """ValueError naming ``field_name`` when ``value`` could name another path than one
    entry of its folder: empty, a null byte, a ``/`` or ``\\``, a drive (``C:``), ``.``
    or ``..`` (google-adk's rule for the names it puts in a path)."""
    if not value:
        raise ValueError(f"{field_name} must not be empty")
    if "\x00" in value:
        raise ValueError(f"{field_name} must not hold a null byte")
    if "/" in value or "\\" in value:
        raise ValueError(f"{field_name} {value!r} must not hold a path separator")
    if _DRIVE.match(value):
        raise ValueError(f"{field_name} {value!r} must not name a drive")
    if value in (".", ".."):
        raise ValueError(f"{field_name} {value!r} must not be '.' or '..'")


def _old_invocation(turn: dict[str, Any]) -> Invocation:
    """One turn of the oldest format: ``query``, ``reference`` (else ""),
    ``expected_tool_use`` (``tool_name`` and ``tool_input``, both needed: KeyError),
    ``expected_intermediate_agent_responses`` (``author`` and ``text``)."""
    calls = [FunctionCall(name=use["tool_name"], args=use["tool_input"]) for use in turn.get("expected_tool_use", [])]
    between = [(said["author"], [Part(text=said["text"])])
               for said in turn.get("expected_intermediate_agent_responses", [])]
    return Invocation(invocation_id=str(uuid.uuid4()), user_content=Content.user(turn["query"]),
                      final_response=Content.model(turn.get("reference", "")),
                      intermediate_data=IntermediateData(tool_uses=calls, intermediate_responses=between),
                      creation_timestamp=time.time())


def convert_eval_set_to_pydantic_schema(eval_set_id: str, eval_set_in_json_format: list[dict[str, Any]]) -> EvalSet:
    """An eval set of id and name ``eval_set_id`` made from the oldest format's cases, in
    order: each case's ``name`` is its id, its ``data`` turns its conversation, and a
    non-empty ``initial_session`` (``app_name``, ``user_id``: "" when missing;
    ``state``) its session input. A missing key is a KeyError."""
    cases = []
    for old in eval_set_in_json_format:
        given = old.get("initial_session") or {}
        session = SessionInput(app_name=given.get("app_name", ""), user_id=given.get("user_id", ""),
                               state=given.get("state", {})) if given else None
        cases.append(EvalCase(eval_id=old["name"], conversation=[_old_invocation(turn) for turn in old["data"]],
                              session_input=session, creation_timestamp=time.time()))
    return EvalSet(eval_set_id=eval_set_id, name=eval_set_id, creation_timestamp=time.time(), eval_cases=cases)


def load_eval_set_from_file(eval_set_file_path: str, eval_set_id: str) -> EvalSet:
    """The eval set in the file: google-adk's eval set JSON, or else the oldest format
    (:func:`convert_eval_set_to_pydantic_schema`, the set taking ``eval_set_id``).
    FileNotFoundError when there is no file; a ValueError (a JSON error) or KeyError
    when it is neither."""
    text = Path(eval_set_file_path).read_text(encoding="utf-8")
    try:
        return EvalSet.model_validate_json(text)
    except ValidationError:
        return convert_eval_set_to_pydantic_schema(eval_set_id, json.loads(text))


def _not_found(missing: EvalNotFound) -> NotFoundError:
    return NotFoundError(str(missing))


class LocalEvalSetsManager(EvalSetsManager):
    """The eval sets under ``agents_dir`` (see the module). App names and set ids are
    checked (:func:`check_path_segment`, a ValueError) before any path is made of them;
    the writes take :class:`~adk_actors.evals.EvalFiles`'s ids (letters, digits, ``_``,
    ``-``; an ``EvalError``, a ValueError, for another)."""

    def __init__(self, agents_dir: str) -> None:
        self._agents_dir = agents_dir
        self._files = EvalFiles(agents_dir)

    def _path(self, app_name: str, eval_set_id: str) -> Path:
        check_path_segment(app_name, "app_name")
        check_path_segment(eval_set_id, "eval_set_id")
        return Path(self._agents_dir) / app_name / (eval_set_id + _SET)

    def get_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet | None:
        """The set's file read (:func:`load_eval_set_from_file`); None when there is no file."""
        try:
            return load_eval_set_from_file(str(self._path(app_name, eval_set_id)), eval_set_id)
        except FileNotFoundError:
            return None

    def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        """Write a new, empty set named as its id (the app's folder made if missing) and
        return it. ValueError when the id is not letters, digits and ``_`` (google-adk's
        rule for a new id), or a set of that id exists."""
        if not _NEW_ID.fullmatch(eval_set_id):
            raise ValueError(f"eval set id {eval_set_id!r} is not valid: use letters, digits and '_'")
        if self._path(app_name, eval_set_id).exists():
            raise ValueError(f"eval set {eval_set_id!r} exists already for app {app_name!r}")
        logger.info("creating eval set %r of app %r", eval_set_id, app_name)
        return self._files.create_set(app_name, eval_set_id)

    def list_eval_sets(self, app_name: str) -> list[str]:
        """The ids of the app's ``*.evalset.json`` files, sorted; NotFoundError when the
        app has no folder."""
        check_path_segment(app_name, "app_name")
        if not (Path(self._agents_dir) / app_name).is_dir():
            raise NotFoundError(f"no eval folder for app {app_name!r} in {self._agents_dir}")
        return self._files.list_sets(app_name)

    def add_eval_case(self, app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
        """Append the case and rewrite the set; NotFoundError for no set, ValueError when
        it has a case of that id."""
        self._path(app_name, eval_set_id)
        try:
            self._files.add_case(app_name, eval_set_id, eval_case)
        except EvalNotFound as missing:
            raise _not_found(missing) from None

    def update_eval_case(self, app_name: str, eval_set_id: str, updated_eval_case: EvalCase) -> None:
        """Replace the case of that id in its place and rewrite the set; NotFoundError
        when the set or the case is not there."""
        self._path(app_name, eval_set_id)
        try:
            self._files.replace_case(app_name, eval_set_id, updated_eval_case)
        except EvalNotFound as missing:
            raise _not_found(missing) from None

    def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        """Remove the case and rewrite the set; NotFoundError when the set or the case is
        not there."""
        self._path(app_name, eval_set_id)
        try:
            self._files.delete_case(app_name, eval_set_id, eval_case_id)
        except EvalNotFound as missing:
            raise _not_found(missing) from None
