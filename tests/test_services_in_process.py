"""google-adk's session, memory and artifact services, in process (issue 52).

Each program below is written the way google-adk's docs use these services: it is
run on google-adk 2.13 as written, then on ours with its imports, and only they,
rewritten by search-and-replace (``google.adk`` -> ``adk_actors``, google.genai's
``types`` -> ``adk_actors.types``), and what it observed is compared whole:

* sessions: ids, state after deltas in every scope (``app:``, ``user:``, ``temp:``
  on the caller's object only), the events kept and their trimmed deltas,
  ``GetSessionConfig``'s filters, listing, ``get_user_state``, deletion and the
  errors, on ``InMemorySessionService``, ``DatabaseSessionService`` (a SQLite file)
  and ``SqliteSessionService``, and ours on a real PostgreSQL server against
  google-adk's on SQLite (its PostgreSQL driver is not installed);
* memory: ``InMemoryMemoryService``'s search hits, their order, the ten-hit cap,
  a session added again, ``add_events_to_memory`` and ``delete_memory``; the same
  for ``SqliteMemoryService`` (a file with SQLite's full-text index, and without);
* artifacts: versions, loads, keys by scope, version metadata, deletion and refused
  ids, on ``InMemoryArtifactService`` and ``FileArtifactService`` (a folder);
* a user's own ``BaseSessionService``, ``BaseMemoryService`` and
  ``BaseArtifactService`` subclasses given to ``Runner``: the calls each got, in
  order, what they hold after the turn, the events and the model's requests (one
  Gemini REST stand-in on 127.0.0.1, named to both sides by environment variables);
* ``InMemoryRunner``'s own services, read by the program after its turns, and
  ``temp:`` state, which lives for the turn and is not in the events yielded.

Then ours only: sessions that outlive their service (a SQLite file read again by a
new process), google-adk's URLs and the typed refusals (no Google Cloud here), a sync
tool using a user's async artifact service, a user's session service that fails, an
event the store cannot keep, and a service call cut off at its deadline.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import types
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, rewritten, run_case

from adk_actors import _service_loop
from adk_actors._service_loop import ServiceCallTimeout
from adk_actors.agents import Agent
from adk_actors.artifacts import BaseArtifactService, GcsArtifactService, InMemoryArtifactService
from adk_actors.errors import ServiceUnavailableError
from adk_actors.events import Event, EventActions
from adk_actors.memory import VertexAiMemoryBankService, VertexAiRagMemoryService
from adk_actors.models import ScriptedModel, call
from adk_actors.runners import InMemoryRunner, Runner
from adk_actors.sessions import (
    DatabaseSessionService,
    InMemorySessionService,
    Session,
    VertexAiSessionService,
)
from adk_actors.store import Unstorable
from adk_actors.testing import StubServer, gemini_response
from adk_actors.tools import ToolContext
from adk_actors.types import Content, Part

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini


def _observed(source: str, make: str) -> Any:
    """What ``source``'s ``main(make)`` returned, ``make`` being a service's
    constructor call evaluated in the program's namespace, as JSON data."""
    module = types.ModuleType("services_case")
    sys.modules["services_case"] = module
    try:
        exec(compile(source, "<services case>", "exec"), module.__dict__)
        result = asyncio.run(asyncio.wait_for(module.main(lambda: eval(make, module.__dict__)), timeout=60))
    finally:
        sys.modules.pop("services_case", None)
    return json.loads(json.dumps(result, default=str, sort_keys=True))


def _alike(source: str, theirs: str, ours: str | None = None) -> Any:
    """``source`` run on google-adk with ``theirs`` and here (imports rewritten) with
    ``ours`` (the same constructor unless given): the same observations, returned."""
    mine = rewritten(source)
    assert "google" not in mine
    expected = _observed(source, theirs)
    assert _observed(mine, ours or theirs) == expected
    return expected


# -- sessions ---------------------------------------------------------------------------

SESSIONS = '''
import time

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event, EventActions
from google.adk.sessions import DatabaseSessionService, InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.sessions.state import State
from google.genai import types


def said(author, text, when, delta):
    role = "user" if author == "user" else "model"
    return Event(invocation_id="inv-1", author=author, timestamp=when,
                 content=types.Content(role=role, parts=[types.Part(text=text)]),
                 actions=EventActions(state_delta=delta))


def texts(session):
    return [event.content.parts[0].text for event in session.events]


async def main(make):
    service = make()
    out = {}
    first = await service.create_session(app_name="shop", user_id="ann", session_id="s1", state={
        "cart": [], "app:currency": "EUR", "user:name": "Ann", "temp:draft": "x"})
    out["created"] = [first.id, first.app_name, first.user_id, first.state, len(first.events)]
    try:
        await service.create_session(app_name="shop", user_id="ann", session_id="s1")
        out["duplicate"] = "created"
    except AlreadyExistsError:
        out["duplicate"] = "AlreadyExistsError"
    await service.create_session(app_name="shop", user_id="ann", session_id="s2")
    await service.create_session(app_name="shop", user_id="bob", session_id="b1")
    fresh = await service.create_session(app_name="shop", user_id="bob")
    out["generated_id"] = bool(fresh.id) and fresh.id != "b1"
    start = time.time()
    session = await service.get_session(app_name="shop", user_id="ann", session_id="s1")
    turns = [("user", "I want tea", {}),
             ("shop_agent", "Added tea", {"cart": ["tea"], "temp:step": 1, "user:last_item": "tea"}),
             ("user", "and milk", {}),
             ("shop_agent", "Added milk", {"cart": ["tea", "milk"], "app:orders": 2, "user:last_item": "milk"})]
    returned = []
    for i, (author, text, delta) in enumerate(turns):
        kept = await service.append_event(session, said(author, text, start + i, delta))
        returned.append(dict(kept.actions.state_delta))
    out["returned_deltas"] = returned
    out["caller_state"] = dict(session.state)
    out["caller_events"] = texts(session)
    stored = await service.get_session(app_name="shop", user_id="ann", session_id="s1")
    out["stored_state"] = stored.state
    out["stored_events"] = [[e.author, e.content.parts[0].text, dict(e.actions.state_delta)] for e in stored.events]
    recent = await service.get_session(app_name="shop", user_id="ann", session_id="s1",
                                       config=GetSessionConfig(num_recent_events=2))
    out["recent"] = texts(recent)
    later = await service.get_session(app_name="shop", user_id="ann", session_id="s1",
                                      config=GetSessionConfig(after_timestamp=start + 2))
    out["after"] = texts(later)
    none = await service.get_session(app_name="shop", user_id="ann", session_id="s1",
                                     config=GetSessionConfig(num_recent_events=0))
    out["none"] = texts(none)
    try:
        GetSessionConfig(num_recent_events=-1)
        out["negative"] = "taken"
    except ValueError:
        out["negative"] = "ValueError"
    out["sibling_state"] = (await service.get_session(app_name="shop", user_id="ann", session_id="s2")).state
    out["bob_state"] = (await service.get_session(app_name="shop", user_id="bob", session_id="b1")).state
    listed = await service.list_sessions(app_name="shop", user_id="ann")
    out["listed"] = sorted([s.id, len(s.events), s.state] for s in listed.sessions)
    out["user_state"] = await service.get_user_state(app_name="shop", user_id="ann")
    out["missing"] = await service.get_session(app_name="shop", user_id="ann", session_id="nope")
    await service.delete_session(app_name="shop", user_id="ann", session_id="s2")
    await service.delete_session(app_name="shop", user_id="ann", session_id="never")
    left = await service.list_sessions(app_name="shop", user_id="ann")
    out["after_delete"] = sorted(s.id for s in left.sessions)
    out["prefixes"] = [State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX]
    return out
'''


@pytest.mark.parametrize("kind", ["in_memory", "database", "sqlite"])
def test_a_session_service_keeps_sessions_state_and_events_as_google_adks_does(kind: str, tmp_path: Path) -> None:
    makers = {"in_memory": ("InMemorySessionService()", "InMemorySessionService()"),
              "database": (f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/theirs.db')",
                           f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/ours.db')"),
              "sqlite": (f"SqliteSessionService('{tmp_path}/theirs.db')", f"SqliteSessionService('{tmp_path}/ours.db')")}
    seen = _alike(SESSIONS, *makers[kind])
    # what the comparison covered, as google-adk's service showed it
    assert seen["duplicate"] == "AlreadyExistsError" and seen["missing"] is None
    assert seen["caller_state"]["temp:step"] == 1 and "temp:step" not in seen["stored_state"]
    assert seen["stored_state"]["user:last_item"] == "milk" and seen["bob_state"] == {"app:currency": "EUR",
                                                                                       "app:orders": 2}
    assert seen["recent"] == ["and milk", "Added milk"] and seen["after"] == ["and milk", "Added milk"]
    assert seen["after_delete"] == ["s1"] and seen["user_state"] == {"last_item": "milk", "name": "Ann"}
    if kind != "in_memory":
        assert (tmp_path / "ours.db").stat().st_size > 0  # a real file, written by our store



def test_a_database_session_service_on_postgresql_sees_what_google_adks_sees_in_sqlite(postgres: Any,
                                                                                        tmp_path: Path) -> None:
    """google-adk's DatabaseSessionService needs asyncpg for PostgreSQL, which is not
    installed: its observations on a SQLite file are the reference for ours on a
    real PostgreSQL server."""
    url = postgres.new_database().replace("postgresql://", "postgresql+asyncpg://")
    _alike(SESSIONS, f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/theirs.db')",
           f"DatabaseSessionService({url!r})")

# -- memory -------------------------------------------------------------------------------

MEMORY = '''
import time

from google.adk.events import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.sessions import InMemorySessionService
from google.genai import types


def said(author, text, when):
    role = "user" if author == "user" else "model"
    return Event(invocation_id="inv-1", author=author, timestamp=when,
                 content=types.Content(role=role, parts=[types.Part(text=text)]))


def hits(response):
    return [[m.author, m.content.role, m.content.parts[0].text, m.id is not None, bool(m.timestamp)]
            for m in response.memories]


async def main(make):
    sessions, memory = InMemorySessionService(), make()
    start = time.time()
    chats = {"s1": [("user", "My favourite tea is green tea"), ("helper", "Noted: green tea")],
             "s2": [("user", "I am allergic to peanuts"), ("helper", "Noted, no peanuts"),
                    ("user", "Green peppers are fine")]}
    for number, (session_id, lines) in enumerate(chats.items()):
        session = await sessions.create_session(app_name="diet", user_id="ann", session_id=session_id)
        for i, (author, text) in enumerate(lines):
            await sessions.append_event(session, said(author, text, start + 10 * number + i))
        await memory.add_session_to_memory(await sessions.get_session(
            app_name="diet", user_id="ann", session_id=session_id))
    out = {"tea": hits(await memory.search_memory(app_name="diet", user_id="ann", query="green tea")),
           "peanuts": hits(await memory.search_memory(app_name="diet", user_id="ann", query="Peanuts?")),
           "nothing": hits(await memory.search_memory(app_name="diet", user_id="ann", query="coffee")),
           "other_user": hits(await memory.search_memory(app_name="diet", user_id="bob", query="tea"))}
    session = await sessions.get_session(app_name="diet", user_id="ann", session_id="s1")
    await sessions.append_event(session, said("user", "Actually I prefer black tea now", start + 30))
    await memory.add_session_to_memory(await sessions.get_session(app_name="diet", user_id="ann", session_id="s1"))
    out["readded"] = hits(await memory.search_memory(app_name="diet", user_id="ann", query="tea"))
    await memory.add_events_to_memory(app_name="diet", user_id="ann", events=[said("user", "Oolong tea too", start + 40)])
    found = await memory.search_memory(app_name="diet", user_id="ann", query="tea")
    out["with_events"] = hits(found)
    await memory.delete_memory(app_name="diet", user_id="ann", memory_id=found.memories[0].id)
    out["after_delete"] = hits(await memory.search_memory(app_name="diet", user_id="ann", query="tea"))
    many = await sessions.create_session(app_name="diet", user_id="cy", session_id="m")
    for i in range(14):
        await sessions.append_event(many, said("user", f"note {i} about soup" + (" and bread" if i % 3 == 0 else ""),
                                               start + i))
    await memory.add_session_to_memory(many)
    out["at_most_ten"] = hits(await memory.search_memory(app_name="diet", user_id="cy", query="soup bread"))
    return out
'''


def test_the_in_memory_memory_service_finds_what_google_adks_finds_in_its_order() -> None:
    seen = _alike(MEMORY, "InMemoryMemoryService()")
    assert [hit[2] for hit in seen["peanuts"]] == ["I am allergic to peanuts", "Noted, no peanuts"]
    assert len(seen["at_most_ten"]) == 10 and seen["at_most_ten"][0][2] == "note 0 about soup and bread"
    assert seen["nothing"] == [] and seen["other_user"] == []
    assert len(seen["after_delete"]) == len(seen["with_events"]) - 1



SQLITE_MEMORY = '''
import time

from google.adk.events import Event
from google.adk.memory import SqliteMemoryService
from google.adk.sessions import InMemorySessionService
from google.genai import types


def said(author, text, when):
    role = "user" if author == "user" else "model"
    return Event(invocation_id="inv-1", author=author, timestamp=when,
                 content=types.Content(role=role, parts=[types.Part(text=text)]))


def hits(response):
    return [[m.id, m.author, m.content.role, m.content.parts[0].text, m.custom_metadata["session_id"],
             bool(m.timestamp)] for m in response.memories]


async def main(make):
    sessions, memory = InMemorySessionService(), make()
    start = time.time()
    chats = {"s1": [("user", "My favourite tea is green tea"), ("helper", "Noted: green tea, no sugar")],
             "s2": [("user", "I am allergic to peanuts"), ("helper", "Noted, no peanuts in the recipes"),
                    ("user", "Green peppers are fine, and so is tea with lemon")]}
    for number, (session_id, lines) in enumerate(chats.items()):
        session = await sessions.create_session(app_name="diet", user_id="ann", session_id=session_id)
        for i, (author, text) in enumerate(lines):
            await sessions.append_event(session, said(author, text, start + 10 * number + i))
        await memory.add_session_to_memory(await sessions.get_session(
            app_name="diet", user_id="ann", session_id=session_id))
    out = {}
    for query in ["green tea", "Peanuts?", "tea", "coffee", "", "lemon sugar"]:
        out[query or "(empty)"] = hits(await memory.search_memory(app_name="diet", user_id="ann", query=query))
    out["other_user"] = hits(await memory.search_memory(app_name="diet", user_id="bob", query="tea"))
    session = await sessions.get_session(app_name="diet", user_id="ann", session_id="s1")
    await sessions.append_event(session, said("user", "Actually I prefer black tea now", start + 30))
    await memory.add_session_to_memory(await sessions.get_session(app_name="diet", user_id="ann", session_id="s1"))
    out["readded"] = hits(await memory.search_memory(app_name="diet", user_id="ann", query="tea"))
    await memory.add_events_to_memory(app_name="diet", user_id="ann", events=[said("user", "Oolong tea too", start + 40)])
    out["with_events"] = hits(await memory.search_memory(app_name="diet", user_id="ann", query="oolong tea"))
    try:
        await memory.delete_memory(app_name="diet", user_id="ann", memory_id="1")
        out["delete"] = "deleted"
    except NotImplementedError:
        out["delete"] = "NotImplementedError"
    await memory.close()
    return out
'''


@pytest.mark.parametrize("index", ["fts5", "no_fts"])
def test_the_sqlite_memory_service_finds_what_google_adks_finds_in_its_order(index: str, tmp_path: Path) -> None:
    if index == "fts5":
        seen = _alike(SQLITE_MEMORY, f"SqliteMemoryService('{tmp_path}/theirs.db')",
                      f"SqliteMemoryService('{tmp_path}/ours.db')")
        assert (tmp_path / "ours.db").stat().st_size > 0
    else:
        seen = _alike(SQLITE_MEMORY, "SqliteMemoryService(':memory:', fts='off')")
    assert {hit[3] for hit in seen["green tea"]} == {"My favourite tea is green tea", "Noted: green tea, no sugar",
                                                     "Green peppers are fine, and so is tea with lemon"}
    assert seen["coffee"] == [] and seen["(empty)"] == [] and seen["other_user"] == []
    assert seen["with_events"][0][3] == "Oolong tea too" and seen["delete"] == "NotImplementedError"

# -- artifacts ----------------------------------------------------------------------------

ARTIFACTS = '''
from google.adk.artifacts import FileArtifactService, InMemoryArtifactService
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types


def shown(part):
    if part is None:
        return None
    if part.text is not None:
        return ["text", part.text]
    return ["bytes", part.inline_data.mime_type, part.inline_data.data.decode()]


async def main(make):
    artifacts = make()
    out = {}
    where = {"app_name": "reports", "user_id": "ann", "session_id": "s1"}
    saved = [await artifacts.save_artifact(**where, filename="summary.txt", artifact=types.Part(text="draft 1")),
             await artifacts.save_artifact(**where, filename="summary.txt", artifact=types.Part(text="draft 2"),
                                           custom_metadata={"reviewed": True}),
             await artifacts.save_artifact(**where, filename="chart.png", artifact=types.Part(
                 inline_data=types.Blob(mime_type="image/png", data=b"PNGDATA"))),
             await artifacts.save_artifact(**where, filename="user:profile.json", artifact=types.Part(
                 inline_data=types.Blob(mime_type="application/json", data=b'{"tier": "gold"}')))]
    out["versions_saved"] = saved
    out["latest"] = shown(await artifacts.load_artifact(**where, filename="summary.txt"))
    out["first"] = shown(await artifacts.load_artifact(**where, filename="summary.txt", version=0))
    out["no_such_version"] = shown(await artifacts.load_artifact(**where, filename="summary.txt", version=7))
    out["no_such_file"] = shown(await artifacts.load_artifact(**where, filename="absent.txt"))
    out["chart"] = shown(await artifacts.load_artifact(**where, filename="chart.png"))
    out["keys"] = await artifacts.list_artifact_keys(**where)
    out["other_session_keys"] = await artifacts.list_artifact_keys(app_name="reports", user_id="ann", session_id="s2")
    out["profile_from_s2"] = shown(await artifacts.load_artifact(
        app_name="reports", user_id="ann", session_id="s2", filename="user:profile.json"))
    out["bob_keys"] = await artifacts.list_artifact_keys(app_name="reports", user_id="bob", session_id="s1")
    out["list_versions"] = await artifacts.list_versions(**where, filename="summary.txt")
    out["version_info"] = [[v.version, v.mime_type, v.custom_metadata, v.canonical_uri.split(":")[0]]
                           for v in await artifacts.list_artifact_versions(**where, filename="summary.txt")]
    chart = await artifacts.get_artifact_version(**where, filename="chart.png")
    out["chart_info"] = [chart.version, chart.mime_type, chart.create_time > 0]
    out["missing_info"] = await artifacts.get_artifact_version(**where, filename="summary.txt", version=9)
    await artifacts.delete_artifact(**where, filename="summary.txt")
    out["after_delete"] = [await artifacts.list_artifact_keys(**where),
                           await artifacts.list_versions(**where, filename="summary.txt"),
                           shown(await artifacts.load_artifact(**where, filename="summary.txt"))]
    for name, bad in [("traversal", {"app_name": "reports", "user_id": "../eve", "session_id": "s1"}),
                      ("empty user", {"app_name": "reports", "user_id": "", "session_id": "s1"})]:
        try:
            await artifacts.save_artifact(**bad, filename="x.txt", artifact=types.Part(text="x"))
            out[name] = "saved"
        except InputValidationError:
            out[name] = "InputValidationError"
    return out
'''


@pytest.mark.parametrize("kind", ["in_memory", "file"])
def test_an_artifact_service_keeps_versions_as_google_adks_does(kind: str, tmp_path: Path) -> None:
    if kind == "in_memory":
        seen = _alike(ARTIFACTS, "InMemoryArtifactService()")
    else:
        seen = _alike(ARTIFACTS, f"FileArtifactService('{tmp_path}/theirs')", f"FileArtifactService('{tmp_path}/ours')")
        assert any(path.suffix == ".bin" for path in (tmp_path / "ours").rglob("*"))  # our store's files
    assert seen["versions_saved"] == [0, 1, 0, 0] and seen["first"] == ["text", "draft 1"]
    assert seen["keys"] == ["chart.png", "summary.txt", "user:profile.json"]
    assert seen["other_session_keys"] == ["user:profile.json"] and seen["traversal"] == "InputValidationError"


# -- a user's own services, used by the Runner ----------------------------------------

CUSTOM = '''
from google.adk.agents import Agent
from google.adk.artifacts import BaseArtifactService
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, Session
from google.adk.sessions.base_session_service import ListSessionsResponse
from google.adk.tools import ToolContext
from google.genai import types


class DictSessions(BaseSessionService):
    """A user's own session service: sessions in a dict, every call noted."""

    def __init__(self):
        self.kept = {}
        self.calls = []

    async def create_session(self, *, app_name, user_id, state=None, session_id=None):
        self.calls.append(["create_session", session_id])
        session = Session(id=session_id or "made-here", app_name=app_name, user_id=user_id, state=dict(state or {}))
        self.kept[(app_name, user_id, session.id)] = session
        return session.model_copy(deep=True)

    async def get_session(self, *, app_name, user_id, session_id, config=None):
        self.calls.append(["get_session", session_id])
        found = self.kept.get((app_name, user_id, session_id))
        return None if found is None else found.model_copy(deep=True)

    async def list_sessions(self, *, app_name, user_id=None):
        return ListSessionsResponse(sessions=[s for k, s in self.kept.items() if k[0] == app_name])

    async def delete_session(self, *, app_name, user_id, session_id):
        self.kept.pop((app_name, user_id, session_id), None)

    async def append_event(self, session, event):
        self.calls.append(["append_event", event.author])
        event = await super().append_event(session, event)
        stored = self.kept[(session.app_name, session.user_id, session.id)]
        stored.events.append(event)
        stored.state.update(event.actions.state_delta)
        return event


class NotesMemory(BaseMemoryService):
    def __init__(self):
        self.added = []
        self.queries = []

    async def add_session_to_memory(self, session):
        self.added.append([session.id, len(session.events)])

    async def search_memory(self, *, app_name, user_id, query):
        self.queries.append([app_name, user_id, query])
        return SearchMemoryResponse(memories=[MemoryEntry(
            content=types.Content(role="user", parts=[types.Part(text="Ann drinks green tea")]), author="user")])


class ListArtifacts(BaseArtifactService):
    def __init__(self):
        self.saved = {}

    async def save_artifact(self, *, app_name, user_id, filename, artifact, session_id=None, custom_metadata=None):
        versions = self.saved.setdefault((app_name, user_id, session_id, filename), [])
        versions.append(artifact)
        return len(versions) - 1

    async def load_artifact(self, *, app_name, user_id, filename, session_id=None, version=None):
        versions = self.saved.get((app_name, user_id, session_id, filename), [])
        if not versions:
            return None
        return versions[-1 if version is None else version]

    async def list_artifact_keys(self, *, app_name, user_id, session_id=None):
        return sorted(k[3] for k in self.saved if k[:3] == (app_name, user_id, session_id))

    async def delete_artifact(self, *, app_name, user_id, filename, session_id=None):
        self.saved.pop((app_name, user_id, session_id, filename), None)

    async def list_versions(self, *, app_name, user_id, filename, session_id=None):
        return list(range(len(self.saved.get((app_name, user_id, session_id, filename), []))))

    async def list_artifact_versions(self, *, app_name, user_id, filename, session_id=None):
        return []

    async def get_artifact_version(self, *, app_name, user_id, filename, session_id=None, version=None):
        return None


async def place_order(item: str, tool_context: ToolContext) -> dict:
    """Places an order for an item and files a receipt."""
    version = await tool_context.save_artifact("receipt.txt", types.Part(text=f"one {item}"))
    earlier = await tool_context.load_artifact("receipt.txt")
    found = await tool_context.search_memory(f"what does the user drink with {item}")
    tool_context.state["last_item"] = item
    return {"receipt_version": version, "receipt": earlier.text,
            "memories": [m.content.parts[0].text for m in found.memories]}


shop = Agent(name="shop_agent", model="gemini-2.5-flash", instruction="Take the user's orders.",
             tools=[place_order], output_key="last_reply")


async def main(turns):
    sessions, memory, artifacts = DictSessions(), NotesMemory(), ListArtifacts()
    runner = Runner(agent=shop, app_name="shop", session_service=sessions, memory_service=memory,
                    artifact_service=artifacts)
    await sessions.create_session(app_name="shop", user_id="ann", session_id="s1", state={"tier": "gold"})
    events, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="ann", session_id="s1",
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = sessions.kept[("shop", "ann", "s1")]
    await memory.add_session_to_memory(stored)
    seen = {"calls": sessions.calls,
            "stored": [[e.author, dict(e.actions.state_delta), dict(e.actions.artifact_delta)] for e in stored.events],
            "artifacts": {key[3]: [[key[2], part.text] for part in parts] for key, parts in artifacts.saved.items()},
            "queries": memory.queries, "added": memory.added}
    return events, finals, [stored.state, seen]
'''


def test_a_users_own_services_are_the_ones_the_runner_uses(gemini: StubServer) -> None:
    answers = [calls(("place_order", {"item": "tea"})), gemini_response(text="Your tea is ordered.")]
    theirs = run_case(CUSTOM, answers, ["one tea please"], gemini)
    ours = run_case(rewritten(CUSTOM), answers, ["one tea please"], gemini)
    assert ours == theirs
    state, seen = theirs["state"]
    assert state == {"last_item": "tea", "last_reply": "Your tea is ordered.", "tier": "gold"}
    assert seen["calls"][:3] == [["create_session", "s1"], ["get_session", "s1"], ["append_event", "user"]]
    assert seen["artifacts"] == {"receipt.txt": [["s1", "one tea"]]}
    assert seen["queries"] == [["shop", "ann", "what does the user drink with tea"]]
    response = next(row["responses"][0][2] for row in theirs["events"] if row["responses"])
    assert response == {"memories": ["Ann drinks green tea"], "receipt": "one tea", "receipt_version": 0}


# -- InMemoryRunner's own services ----------------------------------------------------------

IN_MEMORY_RUNNER = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import ToolContext
from google.genai import types


async def file_note(text: str, tool_context: ToolContext) -> dict:
    """Files a note as an artifact."""
    version = await tool_context.save_artifact("note.txt", types.Part(text=text))
    return {"version": version}


clerk = Agent(name="clerk", model="gemini-2.5-flash", instruction="File the user's notes.", tools=[file_note])


async def main(turns):
    runner = InMemoryRunner(agent=clerk, app_name="notes")
    session = await runner.session_service.create_session(app_name="notes", user_id="ann",
                                                          state={"user:lang": "en"})
    events, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    where = {"app_name": "notes", "user_id": "ann", "session_id": session.id}
    versions = await runner.artifact_service.list_versions(**where, filename="note.txt")
    first = await runner.artifact_service.load_artifact(**where, filename="note.txt", version=0)
    latest = await runner.artifact_service.load_artifact(**where, filename="note.txt")
    stored = await runner.session_service.get_session(**where)
    await runner.memory_service.add_session_to_memory(stored)
    found = await runner.memory_service.search_memory(app_name="notes", user_id="ann", query="milk")
    kept = list(runner.session_service.sessions["notes"]["ann"]) == [session.id]
    return events, finals, [stored.state, versions, first.text, latest.text,
                            [m.content.parts[0].text for m in found.memories], kept,
                            [e.author for e in stored.events]]
'''


def test_in_memory_runners_services_are_google_adks_and_hold_what_the_turns_made(gemini: StubServer) -> None:
    answers = [calls(("file_note", {"text": "buy milk"})), gemini_response(text="Filed."),
               calls(("file_note", {"text": "buy bread"})), gemini_response(text="Filed again.")]
    turns = ["note: buy milk", "note: buy bread"]
    theirs = run_case(IN_MEMORY_RUNNER, answers, turns, gemini)
    ours = run_case(rewritten(IN_MEMORY_RUNNER), answers, turns, gemini)
    assert ours == theirs
    state, versions, first, latest, memories, kept, authors = theirs["state"]
    assert state == {"user:lang": "en"} and versions == [0, 1] and (first, latest) == ("buy milk", "buy bread")
    assert memories == ["note: buy milk"] and kept and authors.count("user") == 2



TEMP_STATE = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import ToolContext
from google.genai import types


def stash(value: str, tool_context: ToolContext) -> dict:
    """Stashes a value for this turn only."""
    tool_context.state["temp:stash"] = value
    tool_context.state["kept"] = value
    return {"ok": True}


agent = Agent(name="stasher", model="gemini-2.5-flash", instruction="Stash values.", tools=[stash],
              output_key="temp:reply")


async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="t")
    session = await runner.session_service.create_session(app_name="t", user_id="u")
    events, finals = [], []
    deltas = []
    for text in turns:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
            deltas.append(dict(event.actions.state_delta))
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="t", user_id="u", session_id=session.id)
    return events, finals, [stored.state, deltas, [dict(e.actions.state_delta) for e in stored.events]]
'''


def test_temp_state_lives_for_the_turn_and_leaves_the_events_the_runner_yields(gemini: StubServer) -> None:
    answers = [calls(("stash", {"value": "v1"})), gemini_response(text="Stashed.")]
    theirs = run_case(TEMP_STATE, answers, ["stash v1"], gemini)
    assert run_case(rewritten(TEMP_STATE), answers, ["stash v1"], gemini) == theirs
    state, yielded, stored = theirs["state"]
    assert state == {"kept": "v1"} and yielded == [{}, {"kept": "v1"}, {}] and {"kept": "v1"} in stored

# -- ours only: sessions in a file, google-adk's URLs, refusals -------------------------------


_READ_BACK = """
import asyncio, json, sys
from adk_actors.sessions import DatabaseSessionService

async def main():
    service = DatabaseSessionService(sys.argv[1])
    session = await service.get_session(app_name="kept", user_id="ann", session_id="s1")
    listed = await service.list_sessions(app_name="kept", user_id="ann")
    print(json.dumps({"state": session.state, "texts": [e.content.parts[0].text for e in session.events],
                      "listed": [s.id for s in listed.sessions]}))
    await service.close()

asyncio.run(main())
"""


def _turn(runner: Any, session_id: str, text: str, user_id: str = "ann") -> list[Any]:
    async def go() -> list[Any]:
        return [event async for event in runner.run_async(user_id=user_id, session_id=session_id,
                                                          new_message=Content(role="user", parts=(Part(text=text),)))]

    return asyncio.run(go())


def test_a_database_session_service_keeps_a_runners_turns_in_a_file_another_process_reads(tmp_path: Path) -> None:
    url = "sqlite:///kept.db"  # google-adk's relative form: the file is in the working directory
    agent = Agent(name="scribe", model=ScriptedModel(["Noted."]), output_key="last")
    service = DatabaseSessionService(f"sqlite:///{tmp_path}/kept.db")
    runner = Runner(agent=agent, app_name="kept", session_service=service)
    asyncio.run(service.create_session(app_name="kept", user_id="ann", session_id="s1", state={"user:tz": "CET"}))
    _turn(runner, "s1", "remember the milk")
    asyncio.run(service.close())
    read = subprocess.run([sys.executable, "-c", _READ_BACK, url], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=True)
    assert json.loads(read.stdout) == {"state": {"last": "Noted.", "user:tz": "CET"},
                                       "texts": ["remember the milk", "Noted."], "listed": ["s1"]}


def test_google_adks_urls_are_read_and_what_is_not_here_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mysql"):
        DatabaseSessionService("mysql://db.example/sessions")
    with pytest.raises(ServiceUnavailableError, match="Vertex AI") as refused:
        VertexAiSessionService(project="p", location="us-central1", agent_engine_id="1")
    assert isinstance(refused.value, NotImplementedError)
    with pytest.raises(ServiceUnavailableError, match=r"Google Cloud Storage .*'bucket-1'.*FileArtifactService"):
        GcsArtifactService("bucket-1")
    with pytest.raises(ServiceUnavailableError, match="Memory Bank"):
        VertexAiMemoryBankService(project="p", location="us-central1", agent_engine_id="1")
    with pytest.raises(ServiceUnavailableError, match="RAG corpus"):
        VertexAiRagMemoryService(rag_corpus="projects/p/locations/l/ragCorpora/1")
    memory = DatabaseSessionService("sqlite://")  # in memory
    asyncio.run(memory.create_session(app_name="a", user_id="u", session_id="x"))
    listed = asyncio.run(memory.list_sessions(app_name="a"))  # every user's (tests/test_stale_session.py)
    assert [(s.user_id, s.id) for s in listed.sessions] == [("u", "x")]
    assert asyncio.run(memory.get_session(app_name="a", user_id="u", session_id="x")) is not None


class _Recorded(BaseArtifactService):
    """A user's async artifact service that notes the thread each save ran on."""

    def __init__(self) -> None:
        self.inner = InMemoryArtifactService()
        self.threads: list[str] = []

    async def save_artifact(self, **kwargs: Any) -> int:
        self.threads.append(threading.current_thread().name)
        return await self.inner.save_artifact(**kwargs)

    async def load_artifact(self, **kwargs: Any) -> Any:
        return await self.inner.load_artifact(**kwargs)

    async def list_artifact_keys(self, **kwargs: Any) -> list[str]:
        return await self.inner.list_artifact_keys(**kwargs)

    async def delete_artifact(self, **kwargs: Any) -> None:
        await self.inner.delete_artifact(**kwargs)

    async def list_versions(self, **kwargs: Any) -> list[int]:
        return await self.inner.list_versions(**kwargs)

    async def list_artifact_versions(self, **kwargs: Any) -> Any:
        return await self.inner.list_artifact_versions(**kwargs)

    async def get_artifact_version(self, **kwargs: Any) -> Any:
        return await self.inner.get_artifact_version(**kwargs)


def keep_note(text: str, tool_context: ToolContext) -> dict[str, Any]:
    """Keeps a note (a sync tool: it runs on a thread of its own)."""
    version = tool_context.save_artifact("note.txt", Part(text=text))
    return {"version": version, "names": tool_context.list_artifacts()}


def test_a_sync_tool_uses_a_users_async_artifact_service() -> None:
    artifacts = _Recorded()
    agent = Agent(name="keeper", model=ScriptedModel([call("keep_note", text="eggs"), call("keep_note", text="ham"),
                                                      "Kept."]), tools=[keep_note])
    runner = Runner(agent=agent, app_name="notes", session_service=InMemorySessionService(),
                    artifact_service=artifacts)
    asyncio.run(runner.session_service.create_session(app_name="notes", user_id="ann", session_id="s1"))
    events = _turn(runner, "s1", "keep eggs and ham")
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"version": 0, "names": ["note.txt"]}, {"version": 1, "names": ["note.txt"]}]
    assert [e.actions.artifact_delta for e in events if e.actions.artifact_delta] == [{"note.txt": 0},
                                                                                      {"note.txt": 1}]
    assert artifacts.threads == ["adk-services", "adk-services"]
    latest = asyncio.run(artifacts.load_artifact(app_name="notes", user_id="ann", session_id="s1",
                                                 filename="note.txt"))
    assert latest is not None and latest.text == "ham"


class _FullDisk(InMemorySessionService):
    """A user's session service whose store fills up after the user's message."""

    async def append_event(self, session: Session, event: Any) -> Any:
        if event.author != "user":
            raise OSError("disk full")
        return await super().append_event(session, event)


def test_what_a_users_session_service_raises_reaches_the_caller_and_what_was_kept_stays() -> None:
    runner = InMemoryRunner(Agent(name="talker", model=ScriptedModel(["Hello."])), app_name="talk")
    runner.session_service = _FullDisk()
    asyncio.run(runner.session_service.create_session(app_name="talk", user_id="ann", session_id="s1"))
    with pytest.raises(OSError, match="disk full"):
        _turn(runner, "s1", "hi")
    kept = asyncio.run(runner.session_service.get_session(app_name="talk", user_id="ann", session_id="s1"))
    assert kept is not None and [e.author for e in kept.events] == ["user"]


def test_an_event_the_database_cannot_keep_is_refused_and_leaves_the_session_as_it_was(tmp_path: Path) -> None:
    service = DatabaseSessionService(f"sqlite:///{tmp_path}/s.db")

    async def go() -> tuple[Session, Session | None]:
        session = await service.create_session(app_name="a", user_id="u", session_id="s1", state={"n": 1})
        with pytest.raises(Unstorable) as refused:
            await service.append_event(session, Event(author="user", content=Content.user("bad \ud800 text"),
                                                      actions=EventActions(state_delta={"n": 2, "temp:t": 1})))
        assert isinstance(refused.value, ValueError)
        return session, await service.get_session(app_name="a", user_id="u", session_id="s1")

    caller, stored = asyncio.run(go())
    assert caller.state == {"n": 1} and caller.events == []
    assert stored is not None and stored.state == {"n": 1} and stored.events == []


def test_a_service_call_that_never_answers_is_cancelled_at_its_deadline_with_a_typed_error() -> None:
    cancelled = threading.Event()

    async def hangs() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    with pytest.raises(ServiceCallTimeout, match=r"Stuck\.search_memory did not answer within 0\.2 s") as late:
        _service_loop.call(hangs, "Stuck.search_memory", timeout=0.2)
    assert isinstance(late.value, TimeoutError)
    assert cancelled.wait(10)  # the call was cancelled on the service loop, not left running
    assert _service_loop.call(lambda: asyncio.sleep(0, "still serving"), "next") == "still serving"
