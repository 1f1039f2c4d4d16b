"""The SQLite session store on its own: one transaction per batch, scopes, duplicates, run ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adk_actors import Content, Event
from adk_actors._types import EventActions
from adk_actors.store import RunExists, SQLiteSessionStore, StoreError


def event(text: str, author: str = "user", delta: dict[str, Any] | None = None) -> Event:
    return Event(author=author, invocation_id="e-1", content=Content.user(text) if author == "user"
                 else Content.model(text), actions=EventActions(state_delta=delta or {}))


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = SQLiteSessionStore(tmp_path / "sessions.db")
    opened.create_session("app", "ann", "s1")
    yield opened
    opened.close()


def test_a_batch_and_the_end_of_its_run_commit_together(store: SQLiteSessionStore, tmp_path: Path) -> None:
    store.start_run("app", "ann", "s1", "run-1", None)
    stored = store.append_events("app", "ann", "s1", [event("hi"), event("hello", "bot", {"n": 1, "temp:x": 2})],
                                 end_run=("run-1", "done"))
    assert [s is not None for s in stored] == [True, True]
    assert stored[1] is not None and stored[1].actions.state_delta == {"n": 1}  # temp: never persisted
    reopened = SQLiteSessionStore(tmp_path / "sessions.db")
    data = reopened.get_session("app", "ann", "s1")
    assert [e.content.text for e in data.events if e.content] == ["hi", "hello"] and data.state == {"n": 1}
    assert reopened.running_runs("app", "ann", "s1") == []
    reopened.close()


def test_a_batch_that_fails_half_way_leaves_nothing_behind(store: SQLiteSessionStore) -> None:
    store.start_run("app", "ann", "s1", "run-1", None)
    unstorable = event("bad", "bot", {"when": {1, 2}})  # a set is not JSON
    with pytest.raises(TypeError):
        store.append_events("app", "ann", "s1", [event("first"), unstorable], end_run=("run-1", "done"))
    data = store.get_session("app", "ann", "s1")
    assert data.events == [] and data.state == {}
    assert [r.run_id for r in store.running_runs("app", "ann", "s1")] == ["run-1"]


def test_duplicates_are_ignored_and_scoped_state_is_shared(store: SQLiteSessionStore) -> None:
    first = event("hi", delta={"app:theme": "dark", "user:name": "Ann"})
    assert store.append_event("app", "ann", "s1", first) is not None
    assert store.append_event("app", "ann", "s1", first) is None
    store.create_session("app", "ann", "s2")
    store.create_session("app", "bob", "s3")
    assert store.get_session("app", "ann", "s2").state == {"app:theme": "dark", "user:name": "Ann"}
    assert store.get_session("app", "bob", "s3").state == {"app:theme": "dark"}
    assert len(store.get_session("app", "ann", "s1").events) == 1


def test_a_run_id_is_never_used_twice(store: SQLiteSessionStore) -> None:
    store.start_run("app", "ann", "s1", "run-1", None)
    store.end_run("run-1", "done")
    with pytest.raises(RunExists):
        store.start_run("app", "ann", "s1", "run-1", None)
    assert issubclass(RunExists, StoreError)
