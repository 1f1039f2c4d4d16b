"""The session store contract, run against both stores: SQLite (a real file) and
PostgreSQL (a real server owned by the test run, a fresh database per test).

What a user of either store relies on: atomic batches with their state deltas and
run ends, scopes, duplicates, run ids never reused, the per-user session limit under
concurrent creators on separate connections, typed refusals of what could not be read
back (nothing written), one unreadable session harming no other, traces kept per
turn, single-writer leases with fencing, and the URL's password in no message.

Each store is opened on a ManualClock (``supervision.testing``): a lease runs out
when the test moves the clock past it, never by waiting.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from adk_actors import Content, Event
from adk_actors._types import EventActions
from adk_actors.store import (
    LeaseLost,
    PostgresSessionStore,
    RunExists,
    RunNotResumable,
    SessionExists,
    SessionLeased,
    SessionLimitReached,
    SessionNotFound,
    StoreError,
    Unreadable,
    Unstorable,
    open_session_store,
    request_of,
    request_text,
)
from adk_actors.tracing import TraceSpan, pack
from supervision.testing import ManualClock


def event(text: str, author: str = "user", delta: dict[str, Any] | None = None, **fields: Any) -> Event:
    return Event(author=author, invocation_id="e-1", content=Content.user(text) if author == "user"
                 else Content.model(text), actions=EventActions(state_delta=delta or {}), **fields)


class Backend:
    """A store location of one kind, the clock its stores read (a ManualClock that
    starts at the real time), and a way to reach its rows behind the store's back."""

    def __init__(self, kind: str, location: str) -> None:
        self.kind = kind
        self.location = location
        self.clock = ManualClock(time.time())

    def open(self) -> Any:
        return open_session_store(self.location, clock=self.clock)

    def raw(self, sql: str) -> None:
        if self.kind == "sqlite":
            db = sqlite3.connect(self.location, isolation_level=None)
            db.execute(sql)
            db.close()
        else:
            with psycopg.connect(self.location, autocommit=True) as conn:
                conn.execute(sql)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "sessions.db"))
    return Backend("postgres", request.getfixturevalue("postgres").new_database())


@pytest.fixture
def store(backend: Backend) -> Iterator[Any]:
    opened = backend.open()
    opened.create_session("app", "ann", "s1")
    yield opened
    opened.close()


def texts(store: Any, session: str = "s1", user: str = "ann") -> list[str]:
    return [e.content.text for e in store.get_session("app", user, session).events if e.content]


def test_a_batch_and_the_end_of_its_run_commit_together_and_outlive_the_store(store: Any, backend: Backend) -> None:
    store.start_run("app", "ann", "s1", "run-1", ("caller", 7))
    stored = store.append_events("app", "ann", "s1", [event("hi"), event("hello", "bot", {"n": 1, "temp:x": 2})],
                                 end_run=("run-1", "done"))
    assert [s is not None for s in stored] == [True, True]
    assert stored[1].actions.state_delta == {"n": 1}  # temp: never persisted
    reopened = backend.open()
    try:
        data = reopened.get_session("app", "ann", "s1")
        assert [e.content.text for e in data.events if e.content] == ["hi", "hello"] and data.state == {"n": 1}
        assert data.events[1].actions.state_delta == {"n": 1}
        assert reopened.running_runs("app", "ann", "s1") == [] and reopened.run_status("run-1") == "done"
    finally:
        reopened.close()


def test_a_batch_with_an_unstorable_event_leaves_nothing_behind(store: Any) -> None:
    store.start_run("app", "ann", "s1", "run-1", None)
    lone_surrogate = event("bad \ud800 text", "bot")
    too_deep: Any = "x"
    for _ in range(200):
        too_deep = [too_deep]
    for bad in (lone_surrogate, event("deep", "bot", {"k": too_deep})):
        with pytest.raises(Unstorable):
            store.append_events("app", "ann", "s1", [event("first", delta={"n": 1}), bad], end_run=("run-1", "done"))
    data = store.get_session("app", "ann", "s1")
    assert data.events == [] and data.state == {}
    assert [r.run_id for r in store.running_runs("app", "ann", "s1")] == ["run-1"]
    with pytest.raises(Unstorable):
        store.create_session("app", "ann", "s2", {"k": too_deep})
    assert not store.session_exists("app", "ann", "s2")


def test_duplicates_are_ignored_and_scoped_state_is_shared_and_deleted_keys_go(store: Any) -> None:
    first = event("hi", delta={"app:theme": "dark", "user:name": "Ann", "mine": 1})
    assert store.append_event("app", "ann", "s1", first) is not None
    assert store.append_event("app", "ann", "s1", first) is None
    store.create_session("app", "ann", "s2")
    store.create_session("app", "bob", "s3", {"user:name": "Bob"})
    assert store.get_session("app", "ann", "s2").state == {"app:theme": "dark", "user:name": "Ann"}
    assert store.get_session("app", "bob", "s3").state == {"app:theme": "dark", "user:name": "Bob"}
    assert len(store.get_session("app", "ann", "s1").events) == 1
    store.append_events("app", "ann", "s2", [event("x", delta={"app:theme": "light"}),
                                             event("y", delta={"app:theme": None, "user:name": None})])
    assert store.get_session("app", "bob", "s3").state == {"user:name": "Bob"}
    assert store.get_session("app", "ann", "s1").state == {"mine": 1}
    assert store.scoped_state("app", "bob") == {"user:name": "Bob"}


def test_sessions_are_created_listed_and_deleted_with_everything_they_had(store: Any) -> None:
    with pytest.raises(SessionExists):
        store.create_session("app", "ann", "s1")
    store.start_run("app", "ann", "s1", "run-1", None)
    store.append_event("app", "ann", "s1", event("hi"))
    store.create_session("app", "ann", "s2")
    assert {s.id for s in store.list_sessions("app", "ann")} == {"s1", "s2"}
    assert store.list_sessions("app", "nobody") == []
    store.delete_session("app", "ann", "s1")
    assert [s.id for s in store.list_sessions("app", "ann")] == ["s2"]
    assert store.running_runs("app", "ann", "s1") == []
    for call in (lambda: store.get_session("app", "ann", "s1"), lambda: store.delete_session("app", "ann", "s1"),
                 lambda: store.append_event("app", "ann", "s1", event("late"))):
        with pytest.raises(SessionNotFound):
            call()
    store.create_session("app", "ann", "s1")  # the id may be used again: it starts empty
    assert store.get_session("app", "ann", "s1").events == []


def test_a_run_id_is_never_used_twice_and_a_callers_address_comes_back(store: Any) -> None:
    store.start_run("app", "ann", "s1", "run-1", {"address": ("127.0.0.1", 1234)})
    [(app, user, session, record)] = store.all_running_runs()
    assert (app, user, session, record.run_id, record.caller) == ("app", "ann", "s1", "run-1",
                                                                    {"address": ("127.0.0.1", 1234)})
    store.end_run("run-1", "interrupted")
    assert store.all_running_runs() == [] and store.run_status("run-1") == "interrupted"
    assert store.run_status("never") is None
    with pytest.raises(RunExists):
        store.start_run("app", "ann", "s1", "run-1", None)
    assert issubclass(RunExists, StoreError)


def test_a_failed_run_is_resumed_once_as_a_run_of_its_invocation_that_keeps_its_message(store: Any,
                                                                                      backend: Backend) -> None:
    kept = request_text(Content.user("book it"), {"trip": "oslo"})
    first = store.start_run("app", "ann", "s1", "run-first", None, request=kept)
    assert (first.invocation_id, first.attempt, first.resumes) == ("e-first", 0, None)
    with pytest.raises(RunNotResumable, match="'running'"):
        store.start_run("app", "ann", "s1", "run-2", None, resumes="run-first")
    store.end_run("run-first", "killed")
    backend.clock.advance(1.0)  # the resume starts later than the run it resumes (the latest run)
    store.create_session("app", "bob", "s9")
    with pytest.raises(RunNotResumable, match="no run"):  # a run of another session
        store.start_run("app", "bob", "s9", "run-2", None, resumes="run-first")
    second = store.start_run("app", "ann", "s1", "run-2", None, resumes="run-first")
    assert (second.invocation_id, second.attempt, second.resumes) == ("e-first", 1, "run-first")
    assert request_of(second.request) == (Content.user("book it"), {"trip": "oslo"})
    assert store.run_status("run-first") == "resumed" and store.run_info("run-2") == second
    assert store.last_run("app", "ann", "s1") == second and store.last_run("app", "bob", "s9") is None
    store.end_run("run-first", "interrupted")  # a late end, stored after its resume began
    assert store.run_status("run-first") == "resumed"  # keeps it: its resume stays followable
    with pytest.raises(RunNotResumable, match="resumed already"):
        store.start_run("app", "ann", "s1", "run-3", None, resumes="run-first")
    with pytest.raises(RunExists):  # the same resume sent again: its run id is known
        store.start_run("app", "ann", "s1", "run-2", None, resumes="run-first")
    store.end_run("run-2", "done")
    with pytest.raises(RunNotResumable, match="'done'"):
        store.start_run("app", "ann", "s1", "run-3", None, resumes="run-2")
    assert store.run_status("run-3") is None  # a refused resume records nothing


def test_concurrent_creators_on_separate_connections_never_pass_the_limit(backend: Backend) -> None:
    stores = [backend.open() for _ in range(4)]
    made: list[str] = []
    refused: list[str] = []
    gate = threading.Barrier(len(stores))

    def create(index: int) -> None:
        gate.wait()
        for n in range(5):
            try:
                stores[index].create_session("app", "ann", f"s{index}-{n}", max_per_user=7)
                made.append(f"{index}-{n}")
            except SessionLimitReached:
                refused.append(f"{index}-{n}")

    threads = [threading.Thread(target=create, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert len(made) == 7 and len(refused) == 13
        assert len(stores[0].list_sessions("app", "ann")) == 7
    finally:
        for opened in stores:
            opened.close()


def test_concurrent_writers_of_one_session_queue_and_lose_nothing(backend: Backend) -> None:
    first = backend.open()
    first.create_session("app", "ann", "s1")
    stores = [first, backend.open(), backend.open()]

    def write(index: int) -> None:
        for n in range(15):
            stores[index].append_events("app", "ann", "s1", [event(f"{index}-{n}", delta={"app:count": n})])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        written = texts(first)
        assert sorted(written) == sorted(f"{i}-{n}" for i in range(3) for n in range(15))
        for index in range(3):  # each writer's events in the order it wrote them
            mine = [t for t in written if t.startswith(f"{index}-")]
            assert mine == [f"{index}-{n}" for n in range(15)]
    finally:
        for opened in stores:
            opened.close()


def test_one_unreadable_session_harms_no_other(store: Any, backend: Backend) -> None:
    store.append_event("app", "ann", "s1", event("hi"))
    store.create_session("app", "ann", "s2")
    store.append_event("app", "ann", "s2", event("fine"))
    backend.raw("UPDATE events SET event='{\"not\": \"an event\"' WHERE session_id='s1'")
    with pytest.raises(Unreadable, match="s1"):
        store.get_session("app", "ann", "s1")
    assert texts(store, "s2") == ["fine"]
    backend.raw("UPDATE sessions SET state='[1, 2]' WHERE id='s2'")
    with pytest.raises(Unreadable, match="s2"):
        store.get_session("app", "ann", "s2")
    assert {s.id: s.state for s in store.list_sessions("app", "ann")} == {"s1": {}, "s2": {}}


def _span(name: str, event_id: str | None) -> TraceSpan:
    return TraceSpan(name, 1, 2, 3, 4, None, {"gcp.vertex.agent.event_id": event_id} if event_id else {})


def test_each_session_keeps_the_traces_of_its_last_turns(store: Any) -> None:
    for turn in range(4):
        trace = pack(f"e-{turn}", [_span(f"call_llm {turn}", f"ev-{turn}")])
        store.append_events("app", "ann", "s1", [event(f"t{turn}")], trace=trace, keep_turns=2)
    assert [s.name for s in store.session_trace("app", "s1")] == ["call_llm 2", "call_llm 3"]
    assert [s.name for s in store.session_trace("app", "s1", "bob")] == []
    found = store.event_trace("app", "ev-3", "ann")
    assert found is not None and found.name == "call_llm 3"
    assert store.event_trace("app", "ev-0") is None  # its turn was forgotten


def test_a_lease_has_one_holder_until_it_expires_or_is_released(store: Any, backend: Backend) -> None:
    lease = store.acquire_lease("app", "ann", "s1", "host-a/partition-0", ttl=30, address=("10.0.0.7", 41234))
    with pytest.raises(SessionLeased) as refused:
        store.acquire_lease("app", "ann", "s1", "host-b/partition-1", ttl=30)
    assert refused.value.holder == "host-a/partition-0" and "host-a/partition-0" in str(refused.value)
    assert refused.value.address == ("10.0.0.7", 41234)  # where other hosts forward its requests
    with pytest.raises(SessionNotFound):  # no lease is ever made for a session that does not exist
        store.acquire_lease("app", "ann", "nowhere", "host-a/partition-0", ttl=30)
    again = store.acquire_lease("app", "ann", "s1", "host-a/partition-0", ttl=30)  # a restarted holder
    assert again.epoch == lease.epoch + 1
    store.release_lease(again)
    taken = store.acquire_lease("app", "ann", "s1", "host-b/partition-1", ttl=0.3)
    assert taken.epoch == again.epoch + 1
    backend.clock.advance(0.2)  # not yet expired: still host-b's
    with pytest.raises(SessionLeased):
        store.acquire_lease("app", "ann", "s1", "host-a/partition-0", ttl=30)
    backend.clock.advance(0.2)  # expired: anyone may take it
    assert store.acquire_lease("app", "ann", "s1", "host-a/partition-0", ttl=30).epoch == taken.epoch + 1


def test_a_write_under_a_lease_taken_since_is_refused_and_writes_nothing(store: Any, backend: Backend) -> None:
    old = store.acquire_lease("app", "ann", "s1", "host-a/partition-0", ttl=0.2)
    store.append_events("app", "ann", "s1", [event("under a")], lease=old)
    store.start_run("app", "ann", "s1", "run-a", None, lease=old)
    backend.clock.advance(0.3)  # host-a was cut off for longer than its lease
    new = store.acquire_lease("app", "ann", "s1", "host-b/partition-0", ttl=30)
    with pytest.raises(LeaseLost, match="host-b"):
        store.append_events("app", "ann", "s1", [event("zombie", delta={"z": 1})], end_run=("run-a", "done"),
                            lease=old)
    with pytest.raises(LeaseLost):
        store.start_run("app", "ann", "s1", "run-zombie", None, lease=old)
    store.append_events("app", "ann", "s1", [event("under b")], lease=new)
    assert texts(store) == ["under a", "under b"] and store.get_session("app", "ann", "s1").state == {}
    assert store.run_status("run-a") == "running" and store.run_status("run-zombie") is None
    assert store.renew_leases("host-a/partition-0", 30) == set()  # what host-a learns on its next renewal
    assert store.renew_leases("host-b/partition-0", 30) == {("app", "ann", "s1")}
    store.release_lease(old)  # a stale release leaves the new holder alone
    with pytest.raises(SessionLeased):
        store.acquire_lease("app", "ann", "s1", "host-c/partition-0", ttl=30)


def test_a_deleted_sessions_lease_keeps_its_epoch(store: Any) -> None:
    old = store.acquire_lease("app", "ann", "s1", "host-a/partition-0", ttl=30)
    store.delete_session("app", "ann", "s1")
    store.create_session("app", "ann", "s1")
    new = store.acquire_lease("app", "ann", "s1", "host-b/partition-0", ttl=30)
    assert new.epoch > old.epoch
    with pytest.raises(LeaseLost):
        store.append_events("app", "ann", "s1", [event("zombie")], lease=old)


def test_opening_twice_at_once_migrates_once(backend: Backend) -> None:
    opened: list[Any] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            opened.append(backend.open())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert errors == [] and len({store.schema_version() for store in opened}) == 1
    finally:
        for store in opened:
            store.close()


def test_a_postgres_url_s_password_reaches_no_message(postgres: Any) -> None:
    wrong_port = postgres.database_url("adk").replace(f":{postgres.port}/", ":1/")
    with pytest.raises(StoreError) as failed:
        PostgresSessionStore(wrong_port, connect_timeout=2)
    assert postgres.password not in str(failed.value) and "***" in str(failed.value)
    wrong_password = postgres.database_url("adk").replace(postgres.password, postgres.password[::-1])
    with pytest.raises(StoreError) as refused:
        PostgresSessionStore(wrong_password, connect_timeout=2)
    assert postgres.password[::-1] not in str(refused.value) and "password" in str(refused.value).lower()


def test_the_postgres_store_works_again_after_its_server_restarts(postgres: Any) -> None:
    """A broken connection (the server went away under it) is replaced on the next use:
    one call may fail with StoreError, the next one works, and nothing is lost."""
    store = PostgresSessionStore(postgres.new_database())
    try:
        store.create_session("app", "ann", "s1")
        store.append_event("app", "ann", "s1", event("before"))
        with psycopg.connect(postgres.database_url("postgres"), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname <> 'postgres' AND pid <> pg_backend_pid()")
        outcomes: list[str] = []
        for _ in range(3):
            try:
                store.append_event("app", "ann", "s1", event(f"after {len(outcomes)}"))
                outcomes.append("ok")
            except StoreError:
                outcomes.append("failed")
        assert outcomes[-1] == "ok" and outcomes.count("failed") <= 1
        assert texts(store)[0] == "before" and len(texts(store)) == 1 + outcomes.count("ok")
    finally:
        store.close()




# -- the services' own tables (store._database): memory and credentials, on both --------------


def _service_location(backend: Backend, tmp_path: Path, name: str) -> str:
    """Where a service keeps its table: its own SQLite file, or the sessions' database."""
    return str(tmp_path / f"{name}.db") if backend.kind == "sqlite" else backend.location


def test_memories_are_per_user_replaced_per_session_and_seen_by_every_host(backend: Backend,
                                                                        tmp_path: Path) -> None:
    from adk_actors.store._memory import MemoryStore

    location = _service_location(backend, tmp_path, "memory")
    first, second = MemoryStore(location), MemoryStore(location)  # two hosts' memory services
    try:
        first.add_session("app", "ann", "s1", [event("my cat is called Tom"), event("noted", "bot")])
        first.add_session("app", "bob", "s9", [event("my cat is called Felix")])
        assert [m.text for m in second.search("app", "ann", "cat")] == ["my cat is called Tom"]
        first.add_session("app", "ann", "s1", [event("my dog is called Rex")])  # the session again: replaced
        assert second.search("app", "ann", "cat") == []
        assert [m.text for m in second.search("app", "ann", "dog")] == ["my dog is called Rex"]
        assert [m.text for m in second.search("app", "bob", "cat")] == ["my cat is called Felix"]
    finally:
        first.close()
        second.close()


def test_credentials_are_shared_encrypted_at_rest_and_replaced_in_place(backend: Backend, tmp_path: Path) -> None:
    from cryptography.fernet import Fernet
    from pydantic import SecretStr

    from adk_actors.runtime._credentials import CredentialStore
    from adk_actors.runtime._service_calls import Credential

    key = Fernet.generate_key().decode()
    location = _service_location(backend, tmp_path, "credentials")
    first, second = CredentialStore(location, key=key), CredentialStore(location, key=key)
    try:
        first.put("app", "ann", "calendar", Credential(api_key=SecretStr("sk-first-secret")))
        first.put("app", "ann", "calendar", Credential(api_key=SecretStr("sk-second-secret")))
        found = second.get("app", "ann", "calendar")
        assert found is not None and found.api_key is not None
        assert found.api_key.get_secret_value() == "sk-second-secret"
        assert second.get("app", "bob", "calendar") is None
        if backend.kind == "postgres":
            with psycopg.connect(backend.location) as conn:
                raw = b"".join(bytes(row[0]) for row in conn.execute("SELECT data FROM credentials"))
        else:
            raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("credentials"))
        assert raw and b"sk-second-secret" not in raw and b"sk-first-secret" not in raw
        assert second.delete("app", "ann", "calendar") and first.get("app", "ann", "calendar") is None
    finally:
        first.close()
        second.close()


def test_the_orphaned_runs_are_those_no_live_writer_holds(store: Any, backend: Backend) -> None:
    for session in ("mine", "theirs", "expired"):
        store.create_session("app", "ann", session)
    store.acquire_lease("app", "ann", "mine", "host-a/partition-0", ttl=30)
    store.acquire_lease("app", "ann", "theirs", "host-b/partition-0", ttl=30)
    store.acquire_lease("app", "ann", "expired", "host-c/partition-0", ttl=0.2)
    for session in ("mine", "theirs", "expired", "s1"):  # s1: never leased (an older store's)
        store.start_run("app", "ann", session, f"run-{session}", None)
    backend.clock.advance(0.3)
    orphaned = {record.run_id for *_, record in store.orphaned_runs("host-a/partition-0")}
    assert orphaned == {"run-mine", "run-expired", "run-s1"}  # host-b is alive: its run is left to it
