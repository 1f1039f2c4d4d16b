"""Artifacts: the file store's rules, the artifact actor after kill -9, tools through a host."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from adk_actors import Blob, Part
from adk_actors.runtime import Host
from adk_actors.runtime._artifacts import ArtifactActor
from adk_actors.runtime._service_calls import LoadArtifact, SaveArtifact
from adk_actors.store import ArtifactTooLarge, FileArtifactStore, InvalidArtifactName
from supervision import BadRequest, ChildSpec, SupervisorSpec, call, start_supervisor
from supervision.testing import kill_child, wait_until

PNG = Part(inline_data=Blob(mime_type="image/png", data=b"\x89PNG fake"))


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_versions_scopes_and_delete(tmp_path: Path) -> None:
    store = FileArtifactStore(tmp_path)
    assert store.save("app", "ann", "s1", "notes.txt", Part(text="v0")) == 0
    assert store.save("app", "ann", "s1", "notes.txt", Part(text="v1")) == 1
    assert store.load("app", "ann", "s1", "notes.txt") == Part(text="v1")
    assert store.load("app", "ann", "s1", "notes.txt", version=0) == Part(text="v0")
    assert store.load("app", "ann", "s1", "notes.txt", version=7) is None
    assert store.save("app", "ann", "s1", "logo.png", PNG) == 0
    assert store.load("app", "ann", "s1", "logo.png") == PNG
    store.save("app", "ann", "s1", "user:profile.json", Part(text="{}"))
    assert store.list("app", "ann", "s2") == ["user:profile.json"]  # user scope: every session of ann
    assert store.list("app", "ann", "s1") == ["logo.png", "notes.txt", "user:profile.json"]
    assert store.versions("app", "ann", "s1", "notes.txt") == [0, 1]
    assert store.delete("app", "ann", "s1", "notes.txt") and store.load("app", "ann", "s1", "notes.txt") is None
    assert not store.delete("app", "ann", "s1", "notes.txt")
    assert not [f for f in files(tmp_path) if ".tmp-" in f]  # atomic writes leave nothing behind


def test_one_user_never_reads_another_users_artifacts(tmp_path: Path) -> None:
    store = FileArtifactStore(tmp_path)
    store.save("app", "ann", "s1", "secret.txt", Part(text="ann's"))
    store.save("app", "ann", "s1", "user:diary.txt", Part(text="ann's diary"))
    assert store.load("app", "bob", "s1", "secret.txt") is None
    assert store.load("app", "bob", "s1", "user:diary.txt") is None
    assert store.list("app", "bob", "s1") == [] and store.list("other_app", "ann", "s1") == []


@pytest.mark.parametrize("name", ["../evil.txt", "a/b.txt", "..", ".", "..\\x", "a\\b", "nul\x00byte", "line\nbreak",
                                  "", "x" * 256, "user:../x", "user:", "tab\tname", 42])
def test_bad_names_are_refused_and_nothing_is_written(tmp_path: Path, name: Any) -> None:
    store = FileArtifactStore(tmp_path / "store")
    with pytest.raises(InvalidArtifactName):
        store.save("app", "ann", "s1", name, Part(text="x"))
    assert files(tmp_path) == []


@pytest.mark.parametrize("field", ["app", "user", "session"])
def test_ids_cannot_traverse_either(tmp_path: Path, field: str) -> None:
    store = FileArtifactStore(tmp_path / "store")
    ids = {"app": "app", "user": "ann", "session": "s1", field: "../../etc"}
    with pytest.raises(InvalidArtifactName):
        store.save(ids["app"], ids["user"], ids["session"], "a.txt", Part(text="x"))
    assert files(tmp_path) == []


def test_size_limit_and_corruption(tmp_path: Path) -> None:
    store = FileArtifactStore(tmp_path, max_bytes=10)
    with pytest.raises(ArtifactTooLarge):
        store.save("app", "ann", "s1", "big.bin", Part(text="x" * 11))
    assert files(tmp_path) == []
    store.save("app", "ann", "s1", "ok.txt", Part(text="small"))
    (tmp_path / "app" / "ann" / "s1" / "ok.txt" / "0.bin").write_bytes(b"tampered")
    with pytest.raises(Exception, match="hash mismatch"):
        store.load("app", "ann", "s1", "ok.txt")


def test_artifact_actor_keeps_acknowledged_saves_across_kill_9(actor_system: Any, tmp_path: Path) -> None:
    sup = start_supervisor(actor_system, SupervisorSpec(children=(
        ChildSpec(id="artifacts", start=ArtifactActor, args={"root": str(tmp_path)}),)))
    address = sup.child("artifacts").address
    assert call(actor_system, address, SaveArtifact("app", "ann", "s1", "a.txt", Part(text="kept"))) == 0
    with pytest.raises(BadRequest, match="path separators"):
        call(actor_system, address, SaveArtifact("app", "ann", "s1", "x/../../y", Part(text="no")))
    pid = sup.child("artifacts").pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    back = wait_until(lambda: (info := sup.child("artifacts")).status == "running" and info.pid != pid and info)
    fresh = back.address
    assert call(actor_system, fresh, LoadArtifact("app", "ann", "s1", "a.txt")) == Part(text="kept")




def test_tools_save_and_load_artifacts_through_the_host(host: Host) -> None:
    runner = host.runner("notes")
    runner.create_session("ann", "s1")
    saved = list(runner.run("ann", "s1", "save buy milk"))
    result_event = next(e for e in saved if e.content and e.content.function_responses)
    assert result_event.actions.artifact_delta == {"note.txt": 0}
    list(runner.run("ann", "s1", "save buy eggs"))
    read = list(runner.run("ann", "s1", "read it"))
    response = next(e for e in read if e.content and e.content.function_responses).content.function_responses[0]
    assert response.response == {"text": "buy eggs", "names": ["note.txt"]}
    refused = list(runner.run("ann", "s1", "badname"))
    error = next(e for e in refused if e.content and e.content.function_responses).content.function_responses[0]
    assert "path separators" in error.response["error"]  # the model sees why; nothing crashed
    assert host.root is not None
    kill_child(host.services(), "artifacts")
    again = list(runner.run("ann", "s1", "read it"))
    response = next(e for e in again if e.content and e.content.function_responses).content.function_responses[0]
    assert response.response["text"] == "buy eggs"  # the run actor looked the restarted service up again


def test_a_part_comes_back_exactly_as_it_was_saved(tmp_path: Path) -> None:
    """Issue 19 item 12: text stays text, inline data stays inline data with its MIME
    type, also when that type is text/plain."""
    from adk_actors._types import Blob, Part
    from adk_actors.store import FileArtifactStore

    store = FileArtifactStore(tmp_path)
    saved = [Part(text="plain words"), Part(inline_data=Blob(mime_type="text/plain", data=b"raw bytes")),
             Part(inline_data=Blob(mime_type="image/png", data=b"\x89PNG\x00"))]
    for number, part in enumerate(saved):
        store.save("app", "ann", "s1", f"a{number}", part)
    assert [store.load("app", "ann", "s1", f"a{number}") for number in range(3)] == saved


def test_artifact_placeholders_are_filled_in_a_host_turn(host: Any) -> None:
    """Issue 19 item 1: ``{artifact.NAME}`` in an instruction is filled from the artifact
    service in a real run (latest version), and left out with ``?`` while it is missing."""
    runner = host.runner("briefed")
    session = runner.create_session(user_id="ann")
    before = [e.content.text for e in runner.run("ann", session.id, "what is the brief?") if e.content][-1]
    assert "The brief:" in before and "{artifact" not in before
    list(runner.run("ann", session.id, "save ship the pilot on Friday"))
    after = [e.content.text for e in runner.run("ann", session.id, "what is the brief?") if e.content][-1]
    assert "The brief: ship the pilot on Friday" in after
    list(runner.run("ann", session.id, "save ship it on Monday"))
    latest = [e.content.text for e in runner.run("ann", session.id, "and now?") if e.content][-1]
    assert "The brief: ship it on Monday" in latest


def test_inline_data_saved_by_a_tool_comes_back_as_inline_data_through_a_host(host: Any) -> None:
    runner = host.runner("blobs")
    session = runner.create_session(user_id="ann")
    list(runner.run("ann", session.id, "save it"))
    answer = [e.content.text for e in runner.run("ann", session.id, "describe it") if e.content][-1]
    assert answer == "{'kind': 'inline_data', 'mime': 'text/plain', 'size': 11}"
