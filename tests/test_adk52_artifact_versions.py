"""Artifact version metadata as google-adk 2.13 has it (issue 52), side by side:
``tool_context.save_artifact(..., custom_metadata=)`` and
``tool_context.get_artifact_version``, the services' ``list_artifact_versions`` /
``get_artifact_version``, a part's ``display_name`` kept by ``FileArtifactService``, and
``FileArtifactVersion``.

As tests/test_google_adk_parity.py: one google-adk program run as written on google-adk,
then with its imports rewritten on ours, against one Gemini REST stand-in named by
environment variables only. Compared: what the tool read, the events, and each
version's metadata. ``canonical_uri`` is compared as written for the in-memory service
(``memory://...``, the same on both); a file service's names its own layout's file of the
version (each side's), so it is compared as a ``file://`` URI of an existing file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, rewritten, run_program

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.artifacts import FileArtifactService, InMemoryArtifactService
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_context import ToolContext
from google.genai import types

SEEN = []


async def keep(note: str, tool_context: ToolContext) -> dict:
    """Keeps a note and a picture."""
    first = await tool_context.save_artifact("note.txt", types.Part(text=note), custom_metadata={"by": "keep"})
    second = await tool_context.save_artifact("note.txt", types.Part(inline_data=types.Blob(
        mime_type="image/png", data=b"PNG-bytes", display_name="note.png")))
    latest = await tool_context.get_artifact_version("note.txt")
    oldest = await tool_context.get_artifact_version("note.txt", version=0)
    missing = await tool_context.get_artifact_version("nothing.txt")
    SEEN.append([first, second, latest.version, latest.mime_type, latest.custom_metadata,
                 oldest.version, oldest.custom_metadata, missing])
    return {"versions": [first, second]}


root_agent = Agent(name="keeper", model="gemini-2.5-flash", instruction="Keep notes.", tools=[keep])


async def main(folder):
    service = InMemoryArtifactService() if folder is None else FileArtifactService(root_dir=folder)
    runner = Runner(agent=root_agent, app_name="arts", session_service=InMemorySessionService(),
                    artifact_service=service)
    session = await runner.session_service.create_session(app_name="arts", user_id="ann")
    events = []
    message = types.Content(role="user", parts=[types.Part(text="keep hi")])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        events.append(event)
    where = dict(app_name="arts", user_id="ann", session_id=session.id)
    versions = await service.list_artifact_versions(filename="note.txt", **where)
    one = await service.get_artifact_version(filename="note.txt", version=1, **where)
    loaded = await service.load_artifact(filename="note.txt", **where)
    await runner.close()
    return {"events": events, "seen": SEEN,
            "versions": [(type(v).__name__, v.version, v.mime_type, v.custom_metadata,
                          v.canonical_uri.replace(session.id, "SESSION"))
                         for v in versions],
            "one": (type(one).__name__, one.version, one.mime_type),
            "loaded": (loaded.inline_data.mime_type, loaded.inline_data.data, loaded.inline_data.display_name)}
'''


def _run(source: str, server: StubServer, folder: str | None) -> dict[str, Any]:
    answers = [calls(("keep", {"note": "hi"})), gemini_response("Kept.")]
    _, result = run_program(source, answers, server, folder)
    result["events"] = event_rows(result["events"])
    result["unused_answers"] = len(server.responses)
    return result


def _file_uri(uri: str) -> bool:
    """A ``file://`` URI of an existing file (the session's id given as ``SESSION``)."""
    parsed = urlparse(uri)
    return parsed.scheme == "file" and any(p.is_file() for p in Path("/").glob(
        parsed.path.lstrip("/").replace("SESSION", "*")))


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_version_metadata_as_google_adks(gemini: StubServer, tmp_path: Path, kind: str) -> None:
    folders = (None, None) if kind == "memory" else (str(tmp_path / "theirs"), str(tmp_path / "ours"))
    theirs = _run(PROGRAM, gemini, folders[0])
    assert theirs["unused_answers"] == 0
    ours = _run(rewritten(PROGRAM), gemini, folders[1])
    assert theirs["seen"][0][:2] == [0, 1] and theirs["seen"][0][4] == {} and theirs["seen"][0][6] == {"by": "keep"}
    assert theirs["seen"][0][-1] is None
    for key in ("events", "seen", "one", "loaded", "unused_answers"):
        assert ours[key] == theirs[key], key
    assert theirs["loaded"][2] == "note.png"  # the display name comes back
    if kind == "memory":
        assert ours["versions"] == theirs["versions"]
    else:
        assert [v[:4] for v in ours["versions"]] == [v[:4] for v in theirs["versions"]]
        assert all(_file_uri(v[4]) for v in theirs["versions"] + ours["versions"])


def test_file_artifact_version_is_google_adks_model() -> None:
    from google.adk.artifacts.file_artifact_service import FileArtifactVersion as Theirs
    from pydantic import ValidationError

    from adk_actors.artifacts.file_artifact_service import FileArtifactVersion as Ours

    given = {"version": 2, "canonicalUri": "file:///x/2", "customMetadata": {"a": 1}, "createTime": 5.0,
             "mimeType": "text/plain", "fileName": "x.txt", "displayName": "X"}
    assert Ours.model_validate(given).model_dump(by_alias=True) == Theirs.model_validate(given).model_dump(by_alias=True)
    assert Ours(version=0, canonical_uri="u", file_name="f").display_name is None
    for model in (Ours, Theirs):
        with pytest.raises(ValidationError):
            model.model_validate({"version": 0, "canonicalUri": "u"})  # no file name
