"""``FileArtifactService.save_artifact(..., custom_metadata=)`` with metadata JSON
cannot hold as it is (issue 52): a clear ``InputValidationError`` (a ``ValueError``,
as google-adk's refusals are) raised before anything is written, with the words of a
host's artifact actor (``runtime/_artifacts.py``); the versions already there and
their numbering untouched; a tool that tries it in process gets the error as its
result and the run goes on.

Side by side with google-adk 2.13's ``FileArtifactService``: where google-adk raises
(keys that are not strings, metadata that is not a dict, a value pydantic cannot
serialise) ours raises a ``ValueError`` too; where google-adk converts (a set to a
list, NaN to null) ours refuses, as a host does, so that what is read back is what
was given (docs/design.md).
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from adk_actors import Content, Part
from adk_actors.artifacts import FileArtifactService
from adk_actors.errors.input_validation_error import InputValidationError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

WHERE = {"app_name": "shop", "user_id": "ann", "session_id": "s1"}

BAD: list[Any] = [
    pytest.param({"tags": {"a", "b"}}, "custom_metadata must be JSON: Object of type set", id="a set"),
    pytest.param({"owner": object()}, "custom_metadata must be JSON: Object of type object", id="an object"),
    pytest.param({"ratio": math.nan}, "custom_metadata must be JSON: Out of range float", id="NaN"),
    pytest.param({"deep": {"inner": [1, {2, 3}]}}, "custom_metadata must be JSON", id="a nested set"),
    pytest.param({1: "one"}, "custom_metadata's keys must be strings, not int", id="an int key"),
    pytest.param(["not", "a", "dict"], "custom_metadata must be a dict, not list", id="a list"),
]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _save(service: Any, filename: str, part: Any, metadata: Any) -> int:
    version: int = asyncio.run(service.save_artifact(filename=filename, artifact=part, custom_metadata=metadata,
                                                     **WHERE))
    return version


@pytest.mark.parametrize(("metadata", "words"), BAD)
def test_bad_metadata_is_refused_before_anything_is_written(tmp_path: Path, metadata: Any, words: str) -> None:
    service = FileArtifactService(tmp_path / "artifacts")
    # nothing there yet: nothing written, not even the artifact's folder's data file
    with pytest.raises(InputValidationError) as refused:
        _save(service, "note.txt", Part(text="first"), metadata)
    assert isinstance(refused.value, ValueError) and words in str(refused.value)
    assert _files(tmp_path) == {}
    assert asyncio.run(service.list_versions(filename="note.txt", **WHERE)) == []
    # a version there: the refusal leaves it, and the numbering, as they were
    assert _save(service, "note.txt", Part(text="first"), {"by": "ann"}) == 0
    before = _files(tmp_path)
    with pytest.raises(InputValidationError):
        _save(service, "note.txt", Part(text="second"), metadata)
    assert _files(tmp_path) == before
    assert _save(service, "note.txt", Part(text="second"), {"by": "bob", "tags": ["a", "b"]}) == 1
    assert asyncio.run(service.list_versions(filename="note.txt", **WHERE)) == [0, 1]
    found = asyncio.run(service.get_artifact_version(filename="note.txt", version=1, **WHERE))
    assert found is not None and found.custom_metadata == {"by": "bob", "tags": ["a", "b"]}
    loaded = asyncio.run(service.load_artifact(filename="note.txt", **WHERE))
    assert loaded is not None and loaded.text == "second"


def test_where_google_adk_refuses_ours_refuses_with_a_value_error_too(tmp_path: Path) -> None:
    from google.adk.artifacts.file_artifact_service import FileArtifactService as Theirs
    from google.genai import types

    theirs, ours = Theirs(tmp_path / "theirs"), FileArtifactService(tmp_path / "ours")
    for metadata in ({1: "one"}, "not a dict", {"owner": object()}):
        with pytest.raises(ValueError):
            _save(theirs, "note.txt", types.Part(text="x"), metadata)
        with pytest.raises(ValueError):
            _save(ours, "note.txt", Part(text="x"), metadata)
    assert _files(tmp_path / "ours") == {}
    # where google-adk converts, ours refuses (see the module)
    assert _save(theirs, "note.txt", types.Part(text="x"), {"tags": {"a"}}) == 0
    with pytest.raises(InputValidationError):
        _save(ours, "note.txt", Part(text="x"), {"tags": {"a"}})


PROGRAM_TOOLS = '''
from adk_actors.tools import ToolContext


def keep_odd(tool_context: ToolContext) -> dict:
    """Save a note whose metadata JSON cannot hold (a set)."""
    return {"version": tool_context.save_artifact("odd.txt", Part(text="odd"), custom_metadata={"odd": {1, 2}})}


def keep(tool_context: ToolContext) -> dict:
    """Save a note with metadata JSON holds."""
    return {"version": tool_context.save_artifact("fine.txt", Part(text="fine"), custom_metadata={"n": 1})}
'''


def test_a_tool_in_process_gets_the_error_and_the_run_goes_on(tmp_path: Path) -> None:
    from adk_actors import LlmAgent
    from adk_actors.models import ScriptedModel, call
    from adk_actors.runners import Runner
    from adk_actors.sessions import InMemorySessionService

    namespace: dict[str, Any] = {"Part": Part}
    exec(compile(PROGRAM_TOOLS, "<tools>", "exec"), namespace)
    model = ScriptedModel([call("keep_odd"), "Could not.", call("keep"), "Kept."])
    agent = LlmAgent(name="keeper", model=model, tools=[namespace["keep_odd"], namespace["keep"]])
    sessions = InMemorySessionService()
    asyncio.run(sessions.create_session(**WHERE))
    service = FileArtifactService(tmp_path / "artifacts")
    runner = Runner(agent=agent, app_name="shop", session_service=sessions, artifact_service=service)

    def turn(text: str) -> list[Any]:
        return list(runner.run(user_id="ann", session_id="s1", new_message=Content(role="user", parts=[Part(text=text)])))

    first = turn("keep the odd one")
    [refused] = [r.response for e in first if e.content for r in e.content.function_responses]
    assert "InputValidationError" in refused["error"] and "custom_metadata must be JSON" in refused["error"]
    assert first[-1].content is not None and first[-1].content.parts[0].text == "Could not."
    assert _files(tmp_path) == {}
    second = turn("keep a fine one")
    [kept] = [r.response for e in second if e.content for r in e.content.function_responses]
    assert kept == {"version": 0}
    assert asyncio.run(service.list_artifact_keys(**WHERE)) == ["fine.txt"]
