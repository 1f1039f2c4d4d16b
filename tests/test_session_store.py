"""What only the SQLite session store does: its write lock among processes, its
migrations of older files (the contract both stores keep: test_store_contract)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adk_actors import Content, Event
from adk_actors._types import EventActions
from adk_actors.store import SQLiteSessionStore


def event(text: str, author: str = "user", delta: dict[str, Any] | None = None) -> Event:
    return Event(author=author, invocation_id="e-1", content=Content.user(text) if author == "user"
                 else Content.model(text), actions=EventActions(state_delta=delta or {}))


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = SQLiteSessionStore(tmp_path / "sessions.db")
    opened.create_session("app", "ann", "s1")
    yield opened
    opened.close()


def _hold_a_write_transaction(path: str, ready_fd: int, hold: float) -> None:
    """In a child process: start a write transaction through a store of its own, say so
    on ``ready_fd``, and keep it open ``hold`` seconds."""
    import os
    import time

    held = SQLiteSessionStore(path)
    with held._tx() as db:
        db.execute("UPDATE sessions SET update_time=update_time WHERE id='s1'")
        os.write(ready_fd, b"x")
        time.sleep(hold)


def _write_while_held(store: SQLiteSessionStore, target: str, hold: float, kill: bool) -> list[str]:
    """Run ``_hold_a_write_transaction`` in a forked child; meanwhile write from here: the
    write must wait for the child (its lock excludes ours), and go through when the
    child commits or is killed. Returns the session's texts."""
    import multiprocessing
    import os
    import signal
    import threading

    read_fd, write_fd = os.pipe()
    holder = multiprocessing.get_context("fork").Process(target=_hold_a_write_transaction,
                                                         args=(target, write_fd, hold))
    holder.start()
    try:
        assert os.read(read_fd, 1) == b"x"
        written = threading.Event()
        threading.Thread(target=lambda: (store.append_event("app", "ann", "s1", event("waited")), written.set()),
                         daemon=True).start()
        assert not written.wait(0.3)  # the child holds SQLite's write lock
        if kill:
            os.kill(holder.pid or 0, signal.SIGKILL)
        assert written.wait(10)  # freed by its commit, or by the kernel when it died
    finally:
        if holder.is_alive():
            holder.kill()
        holder.join(5)
        os.close(read_fd)
        os.close(write_fd)
    return [e.content.text for e in store.get_session("app", "ann", "s1").events if e.content]


def test_a_writer_killed_inside_its_transaction_holds_up_no_one(store: SQLiteSessionStore, tmp_path: Path) -> None:
    assert _write_while_held(store, str(tmp_path / "sessions.db"), hold=60, kill=True) == ["waited"]


def test_a_deleted_key_is_gone_from_every_copy_of_the_state(host: Any) -> None:
    """Issue 20: a state_delta {"k": None} deleted the key in SQLite but left k: None in
    the session's in-memory view (and the engine's); one rule now serves all three."""
    runner = host.runner("keeper")
    session = runner.create_session(user_id="ann")
    list(runner.run("ann", session.id, "remember the milk"))
    assert runner.get_state("ann", session.id)["kept"] == "the milk"
    list(runner.run("ann", session.id, "forget it"))
    assert "kept" not in runner.get_state("ann", session.id)  # the partition's view
    assert "kept" not in runner.get_session("ann", session.id).state


def test_a_store_of_an_older_schema_is_migrated_and_finds_running_runs_by_index(tmp_path: Path) -> None:
    """A partition's start looks up the runs still running: through an index, not a scan
    of every run ever (migration 4, applied to a file of schema 3 when it is opened)."""
    import sqlite3

    from adk_actors.store import MIGRATIONS

    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied REAL)")
    for version, script in MIGRATIONS[:3]:
        old.executescript(script)
        old.execute("INSERT INTO schema_migrations VALUES (?, 0)", (version,))
    old.execute("INSERT INTO sessions VALUES ('app', 'u', 's', '{}', 0, 0)")
    old.executemany("INSERT INTO runs VALUES (?, 'app', 'u', 's', NULL, ?, 0, NULL)",
                    [(f"run-{i}", "done" if i else "running") for i in range(500)])
    old.commit()
    old.close()
    store = SQLiteSessionStore(path)
    try:
        assert store.schema_version() == MIGRATIONS[-1][0]
        assert [record.run_id for *_, record in store.all_running_runs()] == ["run-0"]
    finally:
        store.close()
    plan = sqlite3.connect(path).execute("EXPLAIN QUERY PLAN SELECT app_name, user_id, session_id, run_id, caller "
                                         "FROM runs WHERE status='running'").fetchall()
    assert "USING INDEX runs_running" in str(plan), plan
