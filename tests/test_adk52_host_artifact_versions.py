"""Issue 52 on a host: ``tool_context.save_artifact(..., custom_metadata=)`` and
``tool_context.get_artifact_version`` through the host's artifact actor.

One program (its tools save a text note and a PNG with custom metadata, and read a
version's metadata back) runs as an app of a real host; between the saves and the
reads the artifact actor is killed with SIGKILL, so what is read back is what the
restarted actor found on disk. The same program run by the in-process Runner with
google-adk's ``InMemoryArtifactService`` (ours) gives the reference answers: the host's
differ only in ``canonical_uri`` (``artifact://`` naming the version in this host where
the in-memory service says ``memory://``) and in ``create_time``. An unknown file or
version is None, as google-adk's; a bad name is an error the model is shown, and the
actor serves on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_actors.runtime import Host, HostConfig
from supervision.testing import kill_child

PROGRAM = '''
from typing import Any

from adk_actors import Blob, LlmAgent, LlmRequest, Part
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext


def keep(text: str, tool_context: ToolContext) -> dict[str, Any]:
    """Save a note (text) and a logo (PNG bytes), each with custom metadata."""
    note = tool_context.save_artifact("note.txt", Part(text=text),
                                      custom_metadata={"author": "ann", "tags": [text, "kept"], "n": len(text)})
    logo = tool_context.save_artifact("user:logo.png", Part(inline_data=Blob(mime_type="image/png",
                                                                             data=b"\\x89PNG" + text.encode())),
                                      custom_metadata={"width": 2})
    return {"note": note, "logo": logo}


def keep_odd(tool_context: ToolContext) -> dict[str, Any]:
    """Save a note whose metadata JSON cannot hold (a set)."""
    return {"note": tool_context.save_artifact("odd.txt", Part(text="odd"), custom_metadata={"odd": {1, 2}})}


def describe(name: str, tool_context: ToolContext, version: int | None = None) -> dict[str, Any]:
    """What was recorded with a version of an artifact."""
    found = tool_context.get_artifact_version(name, version=version)
    return {"found": None if found is None else found.model_dump(mode="json")}


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return "done"
    words = last.text.split()
    if words[0] == "odd":
        return call("keep_odd")
    if words[0] == "keep":
        return call("keep", text=words[1])
    version = int(words[2]) if len(words) > 2 else None
    return call("describe", name=words[1], version=version)


root_agent = LlmAgent(name="keeper", model=ScriptedModel(fallback=_script), tools=[keep, keep_odd, describe])
'''

ASKS = ["describe note.txt", "describe note.txt 0", "describe user:logo.png", "describe note.txt 7",
        "describe nothing.txt", "describe note.txt -1"]


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The program as module ``adk52_keeper`` (its folder on the path before the actor
    system starts, so the host's forked processes import it too)."""
    folder = tmp_path / "program"
    folder.mkdir()
    (folder / "adk52_keeper.py").write_text(PROGRAM)
    monkeypatch.syspath_prepend(str(folder))
    yield "adk52_keeper"
    sys.modules.pop("adk52_keeper", None)


@pytest.fixture
def keeper_host(program: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Host]:
    actor_system = request.getfixturevalue("actor_system")
    config = HostConfig(apps={"keeper": f"{program}:root_agent"}, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as running:
        yield running


def _answer(events: list[Any]) -> dict[str, Any]:
    """The tool's answer in a turn's events."""
    responses = [r for e in events if e.content for r in e.content.function_responses]
    assert len(responses) == 1, events
    answer: dict[str, Any] = responses[0].response
    return answer


def _in_process(program: str) -> dict[str, Any]:
    """The same turns with the in-process Runner and the in-memory artifact service."""
    import asyncio
    import importlib

    from adk_actors.artifacts import InMemoryArtifactService
    from adk_actors.runners import Runner
    from adk_actors.sessions import InMemorySessionService

    agent = importlib.import_module(program).root_agent
    sessions = InMemorySessionService()
    asyncio.run(sessions.create_session(app_name="keeper", user_id="ann", session_id="s1"))
    runner = Runner(agent=agent, app_name="keeper", session_service=sessions,
                    artifact_service=InMemoryArtifactService())
    answers = {}
    for text in ["keep apples", "keep pears", *ASKS]:
        events = list(runner.run(user_id="ann", session_id="s1", new_message=_content(text)))
        answers[text] = _answer(events)
    return answers


def _content(text: str) -> Any:
    from adk_actors import Content, Part

    return Content(role="user", parts=[Part(text=text)])


def test_a_tool_reads_back_version_metadata_saved_before_a_kill_9_of_the_artifact_actor(
        keeper_host: Host, program: str) -> None:
    reference = _in_process(program)
    # what the in-process reference says, so that the comparison means something
    assert reference["describe note.txt"]["found"]["custom_metadata"] == {"author": "ann",
                                                                          "tags": ["pears", "kept"], "n": 5}
    assert reference["describe note.txt"]["found"]["mime_type"] == "text/plain"
    assert reference["describe note.txt 7"] == {"found": None}

    runner = keeper_host.runner("keeper")
    runner.create_session("ann", "s1")
    before = time.time()
    saved = [_answer(list(runner.run("ann", "s1", text))) for text in ["keep apples", "keep pears"]]
    after = time.time()
    assert saved == [{"note": 0, "logo": 0}, {"note": 1, "logo": 1}] == [reference["keep apples"],
                                                                        reference["keep pears"]]

    kill_child(keeper_host.services(), "artifacts")  # SIGKILL; back in a new process

    answers = {text: _answer(list(runner.run("ann", "s1", text))) for text in ASKS}
    for text in ASKS:
        ours, theirs = answers[text]["found"], reference[text]["found"]
        if theirs is None:
            assert ours is None, text
            continue
        assert ours is not None, text
        assert before - 1 <= ours["create_time"] <= after + 1, text  # the time of the save, kept
        assert {k: v for k, v in ours.items() if k not in ("canonical_uri", "create_time")} == \
            {k: v for k, v in theirs.items() if k not in ("canonical_uri", "create_time")}, text
    assert answers["describe note.txt"]["found"]["canonical_uri"] == \
        "artifact://apps/keeper/users/ann/sessions/s1/artifacts/note.txt/versions/1"
    assert answers["describe note.txt 0"]["found"]["custom_metadata"]["tags"] == ["apples", "kept"]
    assert answers["describe user:logo.png"]["found"]["canonical_uri"] == \
        "artifact://apps/keeper/users/ann/artifacts/user:logo.png/versions/1"  # the user's, in every session
    assert answers["describe user:logo.png"]["found"]["mime_type"] == "image/png"


def test_a_bad_name_is_an_error_the_model_sees_and_the_actor_serves_on(keeper_host: Host) -> None:
    runner = keeper_host.runner("keeper")
    runner.create_session("ann", "s1")
    pid = keeper_host.services().child("artifacts").pid
    refused = _answer(list(runner.run("ann", "s1", "describe ../escape.txt")))
    assert "error" in refused and "escape" in refused["error"]
    assert "found" not in refused
    _answer(list(runner.run("ann", "s1", "keep figs")))
    found = _answer(list(runner.run("ann", "s1", "describe note.txt")))["found"]
    assert found["custom_metadata"] == {"author": "ann", "tags": ["figs", "kept"], "n": 4}
    odd = _answer(list(runner.run("ann", "s1", "odd")))
    assert "custom_metadata must be JSON" in odd["error"]
    assert _answer(list(runner.run("ann", "s1", "describe odd.txt"))) == {"found": None}  # nothing written
    assert keeper_host.services().child("artifacts").pid == pid  # never restarted by a caller's input
