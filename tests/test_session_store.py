"""The SQLite session store on its own: one transaction per batch, scopes, duplicates, run ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adk_actors import Content, Event
from adk_actors._types import EventActions
from adk_actors.store import RunExists, SQLiteSessionStore, StoreError, _sqlite


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


def _hold_a_write_transaction(store_or_path: Any, ready_fd: int, hold: float) -> None:
    """In a child process: start a write transaction (through a store of its own, or
    the one it inherited), say so on ``ready_fd``, and keep it open ``hold`` seconds."""
    import os
    import time

    if isinstance(store_or_path, SQLiteSessionStore):
        # Inherited: only its writer lock is taken (SQLite's own lock would hide a
        # writer lock shared with the parent).
        store_or_path._writer.acquire()
        os.write(ready_fd, b"x")
        time.sleep(hold)
        store_or_path._writer.release()
        return
    held = SQLiteSessionStore(store_or_path)
    with held._tx() as db:
        db.execute("UPDATE sessions SET update_time=update_time WHERE id='s1'")
        os.write(ready_fd, b"x")
        time.sleep(hold)


def _write_while_held(store: SQLiteSessionStore, target: Any, hold: float, kill: bool) -> list[str]:
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
        assert not written.wait(0.3)  # the child holds the writer lock
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


def test_a_store_object_inherited_through_fork_takes_a_lock_of_its_own(store: SQLiteSessionStore) -> None:
    store.append_event("app", "ann", "s1", event("before"))  # this process's lock files are open now
    assert _write_while_held(store, store, hold=0.6, kill=False) == ["before", "waited"]


# -- the writers' queue (_sqlite._WriterLock), process against process ----------------------

def _queued_writer(path: str, name: str, log: str, hold_fd: int | None) -> None:
    """In a child process: take the writer lock, note ``name`` in ``log``, then hold
    the lock until ``hold_fd`` is readable (if given), and let it go."""
    import os

    lock = _sqlite._WriterLock(path)
    lock.acquire()
    with open(log, "a") as out:
        out.write(name + "\n")
    if hold_fd is not None:
        os.read(hold_fd, 1)
    lock.release()


def _served(log: str) -> list[str]:
    """The writers that got the lock, in order (from their notes in ``log``)."""
    return Path(log).read_text().split() if Path(log).exists() else []


def _tickets(path: str) -> int:
    import struct

    raw = (Path(path) / "ticket").read_bytes()
    return int(struct.unpack("<Q", raw)[0]) if len(raw) == 8 else 0


class _Queue:
    """Writers started one after another, each once the one before has taken its
    ticket: a holder first, then waiters."""

    def __init__(self, tmp_path: Path) -> None:
        import multiprocessing
        import os

        self.path, self.log = str(tmp_path / "db-writers"), str(tmp_path / "order.log")
        self.context = multiprocessing.get_context("fork")
        self.release_read, self.release_write = os.pipe()
        self.children: dict[str, Any] = {}

    def start(self, name: str, hold: bool = False) -> Any:
        from supervision.testing import wait_until

        before = _tickets(self.path) if Path(self.path, "ticket").exists() else 0
        child = self.context.Process(target=_queued_writer,
                                     args=(self.path, name, self.log, self.release_read if hold else None))
        child.start()
        self.children[name] = child
        wait_until(lambda: Path(self.path, "ticket").exists() and _tickets(self.path) == before + 1, timeout=10,
                   message=f"{name} took its ticket")
        return child

    def order(self) -> list[str]:
        return _served(self.log)

    def let_go(self) -> None:
        import os

        os.write(self.release_write, b"x")

    def close(self) -> None:
        import os

        for child in self.children.values():
            if child.is_alive():
                child.kill()
            child.join(5)
        os.close(self.release_read)
        os.close(self.release_write)


def test_writers_are_served_in_the_order_they_came(tmp_path: Path) -> None:
    """Three writers queue behind one holding the lock. The first of them is stopped
    (SIGSTOP) when the lock is let go: the others wait for it, not only for the lock
    (one flock would go to whichever waiter runs first), and once it continues all
    three go in arrival order."""
    import os
    import signal
    import time

    from supervision.testing import wait_until

    queue = _Queue(tmp_path)
    try:
        queue.start("holder", hold=True)
        first = queue.start("w1")
        for name in ("w2", "w3"):
            queue.start(name)
        os.kill(first.pid, signal.SIGSTOP)
        queue.let_go()
        time.sleep(0.5)
        assert queue.order() == ["holder"]  # w2 and w3 wait for w1's turn
        os.kill(first.pid, signal.SIGCONT)
        wait_until(lambda: len(queue.order()) == 4, timeout=10)
        assert queue.order() == ["holder", "w1", "w2", "w3"]
    finally:
        queue.close()


def test_a_writer_killed_while_waiting_holds_up_no_one(tmp_path: Path) -> None:
    """kill -9 of a queued writer: the writers behind it still get their turn."""
    import os
    import signal

    from supervision.testing import wait_until

    queue = _Queue(tmp_path)
    try:
        queue.start("holder", hold=True)
        doomed = queue.start("doomed")
        queue.start("after")
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.join(5)
        queue.let_go()
        wait_until(lambda: queue.order() == ["holder", "after"], timeout=10)
    finally:
        queue.close()


def test_a_nested_transaction_takes_no_second_ticket(tmp_path: Path) -> None:
    """The lock is re-entrant within a process: taken twice, let go twice, it is free
    for the next process (a second ticket would wait for the first: forever)."""
    from supervision.testing import wait_until

    lock = _sqlite._WriterLock(str(tmp_path / "db-writers"))
    lock.acquire()
    lock.acquire()
    assert _tickets(str(tmp_path / "db-writers")) == 1
    lock.release()
    lock.release()
    queue = _Queue(tmp_path)
    try:
        queue.start("next")
        wait_until(lambda: queue.order() == ["next"], timeout=10)
    finally:
        queue.close()
        lock.close()


def _writer_on_signal(path: str, log: str, go_fd: int) -> None:
    """In a child process: once ``go_fd`` is readable, take the writer lock, note it
    in ``log``, and let it go."""
    import os

    os.read(go_fd, 1)
    _queued_writer(path, "waiter", log, None)


def test_a_writer_gives_up_its_cpu_only_when_it_hands_the_lock_to_a_waiting_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Alone, a writer lets the lock go and goes on; with a writer queued behind it
    (another process, waiting for its slot), it yields its CPU once, after letting
    the lock go, and the waiting writer gets the lock."""
    import multiprocessing
    import os

    from supervision.testing import wait_until

    path, log = str(tmp_path / "db-writers"), str(tmp_path / "order.log")
    yields: list[bool] = []
    lock = _sqlite._WriterLock(path)
    monkeypatch.setattr(_sqlite, "_yield_cpu", lambda: yields.append(lock._mine is None))
    lock.acquire()
    lock.release()
    assert yields == []
    # Forked before we take the lock again: a child forked while we hold it would
    # share our slot's lock and wait for itself.
    go_read, go_write = os.pipe()
    waiter = multiprocessing.get_context("fork").Process(target=_writer_on_signal, args=(path, log, go_read))
    waiter.start()
    try:
        lock.acquire()
        os.write(go_write, b"x")
        wait_until(lambda: _tickets(path) == 3, timeout=10, message="the waiter took its ticket")
        lock.release()
        assert yields == [True]  # once, with our slot already let go
        wait_until(lambda: _served(log) == ["waiter"], timeout=10)
    finally:
        if waiter.is_alive():
            waiter.kill()
        waiter.join(5)
        os.close(go_read)
        os.close(go_write)
        lock.close()


def test_a_deleted_key_is_gone_from_every_copy_of_the_state(host: Any) -> None:
    """Issue 20: a state_delta {"k": None} deleted the key in SQLite but left k: None in
    the session actor's copy (and the engine's); one rule now serves all three."""
    runner = host.runner("keeper")
    session = runner.create_session(user_id="ann")
    list(runner.run("ann", session.id, "remember the milk"))
    assert runner.get_state("ann", session.id)["kept"] == "the milk"
    list(runner.run("ann", session.id, "forget it"))
    assert "kept" not in runner.get_state("ann", session.id)  # the session actor's copy
    assert "kept" not in runner.get_session("ann", session.id).state
