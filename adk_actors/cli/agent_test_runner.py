"""google-adk's ``cli.agent_test_runner`` helpers for replay tests, on this kit's test
double (``models.ScriptedModel``) and in-process Runner:

* :func:`get_test_files`: ``AGENT_DIR/tests/*.json`` under a folder (the argument, else
  ``$ADK_TEST_FOLDER``), each as a ``pytest.param(agent_dir, test_file)`` with id
  ``AGENT/FILE`` (a file named ``*_xfail`` marked xfail); [] when there is no folder.
* :class:`MockModel`: a model answering with recorded responses, in order
  (``MockModel.create(contents)``); a request past the last is an IndexError.
* :class:`InMemoryRunner`: a Runner on in-memory services with one session of
  ``test_user``, made at the first use; ``run(message)`` gives the turn's events.
* :func:`normalize_events` / :func:`make_sort_key`: events (or their recorded JSON) as
  comparable dicts, and a key to order them.

Not here: ``test_agent_replay`` and ``rebuild_tests``, which replay sessions google-adk
recorded and compare every event field (node paths with run ids, branches), fields
this kit's events do not carry the same way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from .._types import Content, Event, LlmResponse, Part
from ..apps import App
from ..artifacts import InMemoryArtifactService
from ..memory import InMemoryMemoryService
from ..models import ScriptedModel
from ..runners import Runner
from ..sessions import InMemorySessionService, Session

__all__ = ["EXCLUDED_EVENT_FIELDS", "InMemoryRunner", "MockModel", "get_test_files", "make_sort_key",
           "normalize_events"]

#: Event fields a comparison leaves out (they differ from run to run or model to model).
EXCLUDED_EVENT_FIELDS = frozenset({
    "id", "timestamp", "invocation_id", "model_version", "finish_reason", "usage_metadata", "avg_logprobs",
    "cache_metadata", "logprobs_result", "citation_metadata", "interaction_id", "turn_complete"})
_EXCLUDED_JSON = frozenset({*EXCLUDED_EVENT_FIELDS, *("".join(w if i == 0 else w.title() for i, w in
                                                            enumerate(f.split("_"))) for f in EXCLUDED_EVENT_FIELDS)})
_ASKING_CALLS = frozenset({"adk_request_input", "adk_request_confirmation", "adk_request_credential"})
TEST_USER = "test_user"


def get_test_files(target_folder: str | None = None) -> list[Any]:
    """The replay test files under ``target_folder`` (else ``$ADK_TEST_FOLDER``), as the
    module says, sorted by path."""
    folder = target_folder or os.environ.get("ADK_TEST_FOLDER")
    if not folder or not Path(folder).exists():
        return []
    found = []
    for test_file in sorted(Path(folder).rglob("tests/*.json")):
        agent_dir = test_file.parent.parent
        if not any((agent_dir / name).exists() for name in ("agent.py", "__init__.py", "root_agent.yaml")):
            continue
        marks = [pytest.mark.xfail] if test_file.stem.endswith("_xfail") else []
        found.append(pytest.param(agent_dir, test_file, id=f"{agent_dir.name}/{test_file.name}", marks=marks))
    return found


class MockModel(ScriptedModel):
    """A :class:`ScriptedModel` whose script is ``responses`` (LlmResponses), answered in
    order; each request is kept in ``requests``. One more request than responses
    raises IndexError in the turn."""

    def __init__(self, responses: Iterable[LlmResponse] = ()) -> None:
        self.responses = list(responses)
        super().__init__(self.responses, fallback=IndexError("MockModel: no recorded response is left"),
                         name="mock")

    @classmethod
    def create(cls, contents: list[Content]) -> MockModel:
        """A MockModel answering with each of ``contents`` in turn."""
        return cls([LlmResponse(content=content) for content in contents])

    @classmethod
    def supported_models(cls) -> list[str]:
        return ["mock"]

    @property
    def model(self) -> str:
        return self.name

    @property
    def response_index(self) -> int:
        """The index of the last response given (-1 before the first request)."""
        return len(self.requests) - 1


class InMemoryRunner:
    """A Runner of ``app`` (named by it), else of ``root_agent`` (app ``test_app``), on
    in-memory services, with one session of ``test_user``."""

    def __init__(self, root_agent: Any = None, app: App | None = None) -> None:
        self._session_service = InMemorySessionService()
        self.app_name = app.name if app is not None and app.name else "test_app"
        self.runner = Runner(app=app, agent=None if app is not None else root_agent, app_name=self.app_name,
                             artifact_service=InMemoryArtifactService(), session_service=self._session_service,
                             memory_service=InMemoryMemoryService())
        self.session_id: str | None = None

    @property
    def session(self) -> Session | None:
        """The session: made at the first use, then read again each time (None once it is gone)."""
        if self.session_id is None:
            made = self._session_service.create_session_sync(app_name=self.app_name, user_id=TEST_USER)
            self.session_id = made.id
            return made
        return self._session_service.get_session_sync(app_name=self.app_name, user_id=TEST_USER,
                                                      session_id=self.session_id)

    def run(self, new_message: Content | str) -> list[Event]:
        """One turn of ``new_message`` (text: a user's message) in the session; its events.
        ValueError when the session is gone."""
        session = self.session
        if session is None:
            raise ValueError(f"Session {self.session_id} not found.")
        content = new_message if isinstance(new_message, Content) else Content(role="user",
                                                                                parts=(Part(text=new_message),))
        return list(self.runner.run(user_id=session.user_id, session_id=session.id, new_message=content))


def _tidy(found: dict[str, Any]) -> dict[str, Any]:
    """One event's dict made comparable: no thought signatures, no role on a message
    asking for input, confirmation or credentials, long-running ids sorted (none: left
    out), empty actions and ``*_join_state`` deltas left out."""
    content = found.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict):
                part.pop("thoughtSignature", None)
        if any(isinstance(p, dict) and (p.get("functionCall") or {}).get("name") in _ASKING_CALLS for p in parts):
            content.pop("role", None)  # type: ignore[union-attr]
    if isinstance(found.get("longRunningToolIds"), list):
        if found["longRunningToolIds"]:
            found["longRunningToolIds"] = sorted(found["longRunningToolIds"])
        else:
            del found["longRunningToolIds"]
    actions = found.get("actions")
    if isinstance(actions, dict):
        for key in [key for key, value in actions.items() if value == {}]:
            del actions[key]
        for key in [key for key in actions.get("stateDelta", {}) if key.endswith("_join_state")]:
            del actions["stateDelta"][key]
        if not actions:
            del found["actions"]
    return found


def normalize_events(events: Iterable[Any], is_json: bool = False) -> list[dict[str, Any]]:
    """``events`` (Events, or with ``is_json`` their recorded JSON) as dicts to compare:
    their JSON without :data:`EXCLUDED_EVENT_FIELDS` and null fields, then tidied
    (thought signatures, asking calls' role, long-running ids, empty actions)."""
    normalized = []
    for event in events:
        found = dict(event) if is_json else event.to_dict()
        found = {k: v for k, v in found.items() if k not in _EXCLUDED_JSON and v is not None}
        normalized.append(_tidy(json.loads(json.dumps(found, default=str))))
    return normalized


def make_sort_key(d: Mapping[str, Any]) -> tuple[str, str, str]:
    """(author, node path, the whole dict as sorted JSON): a key ordering normalized events."""
    return (d.get("author", ""), (d.get("nodeInfo") or {}).get("path", ""), json.dumps(d, sort_keys=True))
