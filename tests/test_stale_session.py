"""``StaleSessionError`` (``adk_actors.errors``, google-adk's ``google.adk.errors``)
and ``list_sessions`` of every user (issue 52), side by side with google-adk 2.13.

Each program is run on google-adk as written, then on ours with its imports, and only
they, rewritten by search-and-replace; the sequences of calls are the same, and what
each call did (returned, or raised: the exception's class name, its message, whether
it is a ``ValueError``) is compared whole, with what the stored session holds after.

* ``DatabaseSessionService`` (a SQLite file; ours also on a real PostgreSQL server,
  compared with google-adk's on SQLite, whose PostgreSQL driver is not installed)
  and ``SqliteSessionService``: an append to a copy read before another copy's append
  raises; the copy that wrote goes on; a copy read again goes on; a hand-made session
  object that holds fewer events than the store raises; one that holds as many goes
  on; a stale append writes nothing.
* ``InMemorySessionService`` never raises it: the stale copy's event is kept too, as
  google-adk keeps it.
* ``list_sessions(app_name=...)`` with no ``user_id`` lists every user's sessions
  (each with its own user's ``user:`` state), on each service.
"""

from __future__ import annotations

import asyncio
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from google_adk_harness import rewritten

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _observed(source: str, make: str) -> Any:
    """What ``source``'s ``main(make)`` returned (``make``: a service's constructor call
    evaluated in the program's namespace), as JSON data; within 60 s."""
    module = types.ModuleType("stale_case")
    sys.modules["stale_case"] = module
    try:
        exec(compile(source, "<stale case>", "exec"), module.__dict__)
        result = asyncio.run(asyncio.wait_for(module.main(lambda: eval(make, module.__dict__)), timeout=60))
    finally:
        sys.modules.pop("stale_case", None)
    return json.loads(json.dumps(result, default=str, sort_keys=True))


def _alike(source: str, theirs: str, ours: str | None = None) -> Any:
    """``source`` on google-adk with ``theirs``, then here with ``ours`` (the same call
    unless given): the same observations, returned."""
    mine = rewritten(source)
    assert "google" not in mine
    expected = _observed(source, theirs)
    assert _observed(mine, ours or theirs) == expected
    return expected


STALE = '''
import time

from google.adk.errors import StaleSessionError
from google.adk.events import Event, EventActions
from google.adk.sessions import DatabaseSessionService, InMemorySessionService, Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

CLOCK = [time.time()]


def said(text, delta=None):
    CLOCK[0] += 1.0
    return Event(invocation_id="inv-1", author="helper", timestamp=CLOCK[0],
                 content=types.Content(role="model", parts=[types.Part(text=text)]),
                 actions=EventActions(state_delta=delta or {}))


async def attempt(service, session, text, delta=None):
    """What one append did: ok, or the error's class, message and whether it is a ValueError."""
    try:
        await service.append_event(session, said(text, delta))
        return "ok"
    except Exception as exc:
        return [type(exc).__name__, str(exc), isinstance(exc, ValueError), isinstance(exc, StaleSessionError)]


async def main(make):
    service = make()
    steps = {}
    created = await service.create_session(app_name="app", user_id="ann", session_id="s1", state={"n": 0})
    first = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    second = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    steps["first_writes"] = await attempt(service, first, "one", {"n": 1})
    steps["second_is_stale"] = await attempt(service, second, "two", {"n": 2})
    steps["first_writes_again"] = await attempt(service, first, "three", {"n": 3})
    steps["created_copy_is_stale"] = await attempt(service, created, "four", {"n": 4})
    again = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    steps["read_again_writes"] = await attempt(service, again, "five", {"n": 5})
    steps["first_now_stale"] = await attempt(service, first, "six", {"n": 6})
    # a session object made by hand: stale when it holds fewer events than the store
    bare = Session(id="s1", app_name="app", user_id="ann")
    steps["bare_is_stale"] = await attempt(service, bare, "seven", {"n": 7})
    # another session of the same user is not touched by any of it
    other = await service.create_session(app_name="app", user_id="ann", session_id="s2")
    steps["other_writes"] = await attempt(service, other, "eight")
    fresh_bare = Session(id="s2", app_name="app", user_id="ann", events=list(other.events))
    fresh_bare.last_update_time = other.last_update_time
    steps["bare_up_to_date_writes"] = await attempt(service, fresh_bare, "nine")
    stored = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    steps["stored"] = [[e.content.parts[0].text for e in stored.events], stored.state["n"]]
    return steps
'''


@pytest.mark.parametrize("kind", ["database", "sqlite"])
def test_an_append_to_a_stale_copy_raises_as_google_adks_does(kind: str, tmp_path: Path) -> None:
    makers = {"database": (f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/theirs.db')",
                           f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/ours.db')"),
              "sqlite": (f"SqliteSessionService('{tmp_path}/theirs.db')", f"SqliteSessionService('{tmp_path}/ours.db')")}
    seen = _alike(STALE, *makers[kind])
    # what the comparison covered, as google-adk's service showed it
    assert seen["first_writes"] == "ok" and seen["first_writes_again"] == "ok"
    assert seen["second_is_stale"][0] == "StaleSessionError" and seen["second_is_stale"][2:] == [True, True]
    assert seen["created_copy_is_stale"][0] == "StaleSessionError"
    assert seen["read_again_writes"] == "ok" and seen["first_now_stale"][0] == "StaleSessionError"
    assert seen["stored"] == [["one", "three", "five"], 5]  # the stale appends wrote nothing


def test_our_postgresql_store_raises_it_where_google_adks_database_service_does(postgres: Any,
                                                                                tmp_path: Path) -> None:
    url = postgres.new_database().replace("postgresql://", "postgresql+asyncpg://")
    _alike(STALE, f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/theirs.db')",
           f"DatabaseSessionService({url!r})")


def test_the_in_memory_service_keeps_a_stale_copys_event_as_google_adks_does() -> None:
    seen = _alike(STALE, "InMemorySessionService()")
    assert all(seen[step] == "ok" for step in seen if step != "stored")
    assert seen["stored"] == [["one", "two", "three", "four", "five", "six", "seven"], 7]


def test_stale_session_error_is_at_google_adks_path() -> None:
    from google.adk.errors import StaleSessionError as Theirs

    from adk_actors.errors import StaleSessionError
    from adk_actors.errors._stale_session_error import StaleSessionError as AtItsModule

    assert StaleSessionError is AtItsModule
    assert issubclass(Theirs, ValueError) and issubclass(StaleSessionError, ValueError)


def test_a_stale_append_leaves_the_store_and_the_copy_untouched(tmp_path: Path) -> None:
    from adk_actors.errors import StaleSessionError
    from adk_actors.events import Event, EventActions
    from adk_actors.sessions import DatabaseSessionService

    async def main() -> None:
        service = DatabaseSessionService(f"sqlite:///{tmp_path}/s.db")
        await service.create_session(app_name="a", user_id="u", session_id="s", state={"n": 0})
        one = await service.get_session(app_name="a", user_id="u", session_id="s")
        two = await service.get_session(app_name="a", user_id="u", session_id="s")
        await service.append_event(one, Event(author="x", actions=EventActions(state_delta={"n": 1})))
        with pytest.raises(StaleSessionError):
            await service.append_event(two, Event(author="x", actions=EventActions(state_delta={"n": 2,
                                                                                              "app:k": 1})))
        assert two.state == {"n": 0} and two.events == []  # the caller's copy untouched
        stored = await service.get_session(app_name="a", user_id="u", session_id="s")
        assert stored is not None and stored.state == {"n": 1} and len(stored.events) == 1
        await service.close()

    asyncio.run(main())


# -- list_sessions of every user -------------------------------------------------------------

LISTING = '''
import time

from google.adk.events import Event, EventActions
from google.adk.sessions import DatabaseSessionService, InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService


async def main(make):
    service = make()
    start = time.time()
    made = [("ann", "a1", {"user:name": "Ann", "app:shop": "tea"}), ("bob", "b1", {"user:name": "Bob"}),
            ("ann", "a2", {"x": 1}), ("cid", "c1", {}), ("bob", "b2", {"y": 2})]
    for user, sid, state in made:
        await service.create_session(app_name="shop", user_id=user, session_id=sid, state=state)
    await service.create_session(app_name="other", user_id="ann", session_id="o1")
    # touch one session so it is the most recently updated
    session = await service.get_session(app_name="shop", user_id="ann", session_id="a1")
    await service.append_event(session, Event(author="helper", timestamp=start + 100,
                                              actions=EventActions(state_delta={"seen": True})))
    everyone = await service.list_sessions(app_name="shop")
    one = await service.list_sessions(app_name="shop", user_id="bob")
    nobody = await service.list_sessions(app_name="empty")
    return {"everyone": sorted([s.user_id, s.id, s.app_name, len(s.events), s.state] for s in everyone.sessions),
            "last": [everyone.sessions[-1].user_id, everyone.sessions[-1].id],
            "bob": sorted([s.id, s.state] for s in one.sessions),
            "empty": [s.id for s in nobody.sessions]}
'''


@pytest.mark.parametrize("kind", ["in_memory", "database", "sqlite"])
def test_list_sessions_without_a_user_lists_every_users_sessions(kind: str, tmp_path: Path) -> None:
    makers = {"in_memory": ("InMemorySessionService()", "InMemorySessionService()"),
              "database": (f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/theirs.db')",
                           f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/ours.db')"),
              "sqlite": (f"SqliteSessionService('{tmp_path}/theirs.db')", f"SqliteSessionService('{tmp_path}/ours.db')")}
    seen = _alike(LISTING, *makers[kind])
    assert [row[:2] for row in seen["everyone"]] == [["ann", "a1"], ["ann", "a2"], ["bob", "b1"], ["bob", "b2"],
                                                      ["cid", "c1"]]
    assert seen["last"] == ["ann", "a1"] and seen["empty"] == []
    states = {row[1]: row[4] for row in seen["everyone"]}
    assert states["b1"] == {"app:shop": "tea", "user:name": "Bob"} and states["c1"] == {"app:shop": "tea"}


def test_list_sessions_of_every_user_on_postgresql(postgres: Any, tmp_path: Path) -> None:
    url = postgres.new_database().replace("postgresql://", "postgresql+asyncpg://")
    _alike(LISTING, f"DatabaseSessionService('sqlite+aiosqlite:///{tmp_path}/theirs.db')",
           f"DatabaseSessionService({url!r})")
