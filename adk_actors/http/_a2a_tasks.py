"""A2A tasks kept in the host's data folder, so that they outlive the HTTP process.

One SQLite file (readable by the host's user only) holds every app's tasks: a row per
task (app, owner, id), the task as a2a-sdk's protobuf bytes. Owner scoping is
a2a-sdk's (``resolve_user_scope``: a token's user sees only its own tasks).

How a task is kept (:class:`DurableTaskStore`, a2a-sdk's ``TaskStore``):

1. ``save`` puts a copy in this process's cache (:class:`_Kept`: the tasks it touched
   lately, at most :data:`CACHED`). A task's first save, and every save of a state
   a client may act on (completed, failed, canceled, rejected, input-required,
   auth-required), is written to the file before ``save`` returns: a2a-sdk answers a
   client only after its save, so what a client was told survives a kill -9 of the
   process. The states a task goes on from (submitted, working) are kept in the cache
   only, and written with the task's next written state (or when the cache lets the
   task go, or at ``close``): after a crash the task is ended failed anyway (below),
   and its run's events are in its session.
2. The file has one writer thread, which commits every row waiting for it in one
   transaction (a group commit: 100 tasks at once cost one commit, not 100).
3. ``get`` answers from the cache, else reads the file (on the event loop: a read by
   primary key, on a connection of its own that WAL never puts behind the writer).
4. ``list`` reads the owner's tasks of the app from the file, takes the cache's newer
   states, and lists them with a2a-sdk's own in-memory listing (its filters, order
   and pages).

A task is run by the HTTP process that took it (its executor follows the run). When
that process dies (a kill -9, a crash) and the supervisor starts a new one, the tasks
it left unfinished (submitted, working, or waiting for their client) can no longer
be followed: when the new process opens the file it ends each of them ``failed``,
saying why (:data:`INTERRUPTED`), so ``GetTask`` gives a terminal state and no
client waits on it.

A write that fails (a full disk) raises :class:`StoreError` to a2a-sdk, which fails
the request (a write nobody waits for is logged); rows already committed stay.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import uuid
from collections import OrderedDict
from pathlib import Path

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Message, Part, Role, Task, TaskState

from ..store import Database, Statements, StoreError

__all__ = ["CACHED", "INTERRUPTED", "DurableTaskStore", "TaskStores"]

#: the reason a task left unfinished by an earlier HTTP process ends failed
INTERRUPTED = ("interrupted: the HTTP process that ran this task stopped; the session keeps what its run "
               "had committed")
#: how many tasks a process keeps in memory (the ones it saved or read last)
CACHED = 4096
_UNFINISHED = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_INPUT_REQUIRED,
               TaskState.TASK_STATE_AUTH_REQUIRED)
#: states a task goes on from: kept in the cache, written with the task's next written state
_GOING_ON = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
_log = logging.getLogger("adk_actors.http")
_MIGRATIONS = [(1, """
CREATE TABLE a2a_tasks (app TEXT NOT NULL, owner TEXT NOT NULL, id TEXT NOT NULL, state INTEGER NOT NULL,
                        task BLOB NOT NULL, PRIMARY KEY (app, owner, id))
""")]
_SAVE = ("INSERT INTO a2a_tasks (app, owner, id, state, task) VALUES (?, ?, ?, ?, ?) "
         "ON CONFLICT (app, owner, id) DO UPDATE SET state = excluded.state, task = excluded.task")
_BY_KEY = "app = ? AND owner = ? AND id = ?"
_DELETE = f"DELETE FROM a2a_tasks WHERE {_BY_KEY}"
_Key = tuple[str, str, str]  # app, owner, task id


class TaskStores:
    """The task stores of one HTTP process: one SQLite file (``path``, made private),
    a store per app. The file is opened on the first ``for_app`` (a process forked
    ahead of need opens it only once it serves): its unfinished tasks are ended failed
    then (see the module). StoreError when it cannot be opened."""

    def __init__(self, path: str | Path) -> None:
        self._path = str(path)
        self._kept: _Kept | None = None

    def for_app(self, app: str) -> DurableTaskStore:
        if self._kept is None:
            writes = Database(self._path)
            writes.migrate("tasks", _MIGRATIONS)
            with writes.transaction() as statements:
                _end_unfinished(statements)
            self._kept = _Kept(Database(self._path), _Writer(writes))
        return DurableTaskStore(app, self._kept)

    def close(self) -> None:
        """Write the states only the cache has, stop the writer once every row waiting
        for it is committed, close the file."""
        if self._kept is not None:
            self._kept.close()
            self._kept = None


class DurableTaskStore(TaskStore):
    """One app's tasks (see the module for how they are kept)."""

    def __init__(self, app: str, kept: _Kept) -> None:
        self._app = app
        self._kept = kept

    async def save(self, task: Task, context: ServerCallContext) -> None:
        key = (self._app, resolve_user_scope(context), task.id)
        copy = Task()
        copy.CopyFrom(task)
        if not self._kept.remember(key, copy, unwritten=copy.status.state in _GOING_ON):
            await self._kept.writer.write(_SAVE, _row(key, copy))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        key = (self._app, resolve_user_scope(context), task_id)
        kept = self._kept.cache.get(key)
        if kept is None:  # a2a-sdk asks for every new task's id first: a miss per task
            rows = self._kept.reads.run(f"SELECT task FROM a2a_tasks WHERE {_BY_KEY}", key).rows
            if not rows:
                return None
            kept = Task.FromString(rows[0][0])
            self._kept.remember(key, kept, unwritten=False)
        copy = Task()
        copy.CopyFrom(kept)
        return copy

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        owner = resolve_user_scope(context)
        rows = (await asyncio.to_thread(self._kept.reads.run, "SELECT id, task FROM a2a_tasks WHERE app = ? AND "
                                        "owner = ?", (self._app, owner))).rows
        listing = InMemoryTaskStore(use_copying=False)
        for task_id, blob in rows:
            newer = self._kept.cache.get((self._app, owner, task_id))
            await listing.save(newer if newer is not None else Task.FromString(blob), context)
        return await listing.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        key = (self._app, resolve_user_scope(context), task_id)
        self._kept.forget(key)
        await self._kept.writer.write(_DELETE, key)


class _Kept:
    """What the stores of one process share: the cache (newest first out last), which
    of its tasks have a state the file lacks, the reading connection and the writer."""

    def __init__(self, reads: Database, writer: _Writer) -> None:
        self.reads = reads
        self.writer = writer
        self.cache: OrderedDict[_Key, Task] = OrderedDict()
        self._unwritten: set[_Key] = set()

    def remember(self, key: _Key, task: Task, *, unwritten: bool) -> bool:
        """Cache ``task``; True when its state may stay unwritten for now (``unwritten``,
        and the task is known: a new one is always written). A task the cache lets go
        is written first if the file lacks its state."""
        known = key in self.cache
        self.cache[key] = task
        self.cache.move_to_end(key)
        deferred = unwritten and known
        if deferred:
            self._unwritten.add(key)
        else:
            self._unwritten.discard(key)
        while len(self.cache) > CACHED:
            old_key, old = self.cache.popitem(last=False)
            if old_key in self._unwritten:
                self._unwritten.discard(old_key)
                self.writer.write(_SAVE, _row(old_key, old)).add_done_callback(_log_failure)
        return deferred

    def forget(self, key: _Key) -> None:
        self.cache.pop(key, None)
        self._unwritten.discard(key)

    def close(self) -> None:
        for key in list(self._unwritten):
            self.writer.write_unwatched(_SAVE, _row(key, self.cache[key]))
        self._unwritten.clear()
        self.writer.stop()
        self.reads.close()


def _row(key: _Key, task: Task) -> tuple[str, str, str, int, bytes]:
    return (*key, int(task.status.state), task.SerializeToString())


class _Writer:
    """The file's one writer: a thread that commits, in one transaction, every write
    waiting when it is free; each write's future is done once it is committed (or
    holds the StoreError that rolled the transaction back)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._waiting: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._commit_forever, name="a2a-task-writer", daemon=True)
        self._thread.start()

    def write(self, sql: str, params: tuple[object, ...]) -> asyncio.Future[None]:
        """Queue one statement; the future (of the running loop) is done once it is committed."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._waiting.put(_Write(sql, params, loop, done))
        return done

    def write_unwatched(self, sql: str, params: tuple[object, ...]) -> None:
        """Queue one statement nobody waits for (from any thread)."""
        self._waiting.put(_Write(sql, params, None, None))

    def stop(self) -> None:
        """Commit what waits, end the thread, close the file's writing connection."""
        self._waiting.put(None)
        self._thread.join(timeout=30)
        self._db.close()

    def _commit_forever(self) -> None:
        while True:
            first = self._waiting.get()
            if first is None:
                return
            batch = [first]
            while not self._waiting.empty():
                more = self._waiting.get()
                if more is None:
                    self._commit(batch)
                    return
                batch.append(more)
            self._commit(batch)

    def _commit(self, batch: list[_Write]) -> None:
        error: StoreError | None = None
        try:
            with self._db.transaction() as statements:
                for write in batch:
                    statements.run(write.sql, write.params)
        except StoreError as failure:
            error = failure
        for write in batch:
            if write.loop is None or write.done is None:
                if error is not None:
                    _log.error("an A2A task's update was not kept: %s", error)
                continue
            try:
                write.loop.call_soon_threadsafe(_settle, write.done, error)
            except RuntimeError:  # its loop has closed: nobody waits for it
                pass


class _Write:
    __slots__ = ("done", "loop", "params", "sql")

    def __init__(self, sql: str, params: tuple[object, ...], loop: asyncio.AbstractEventLoop | None,
                 done: asyncio.Future[None] | None) -> None:
        self.sql = sql
        self.params = params
        self.loop = loop
        self.done = done


def _log_failure(written: asyncio.Future[None]) -> None:
    if not written.cancelled() and written.exception() is not None:
        _log.error("an A2A task's update was not kept: %s", written.exception())


def _settle(done: asyncio.Future[None], error: StoreError | None) -> None:
    if done.done():  # its writer was cancelled; the row is committed (or not) all the same
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


def _end_unfinished(statements: Statements) -> None:
    """End every unfinished task failed, its status message saying :data:`INTERRUPTED`."""
    marks = ", ".join("?" for _ in _UNFINISHED)
    rows = statements.run(f"SELECT app, owner, id, task FROM a2a_tasks WHERE state IN ({marks})",
                          [int(state) for state in _UNFINISHED]).rows
    for app, owner, task_id, blob in rows:
        task = Task.FromString(blob)
        task.status.state = TaskState.TASK_STATE_FAILED
        task.status.message.CopyFrom(Message(message_id=uuid.uuid4().hex, role=Role.ROLE_AGENT, task_id=task_id,
                                             context_id=task.context_id, parts=[Part(text=INTERRUPTED)]))
        task.status.timestamp.GetCurrentTime()
        statements.run(f"UPDATE a2a_tasks SET state = ?, task = ? WHERE {_BY_KEY}",
                       (int(TaskState.TASK_STATE_FAILED), task.SerializeToString(), app, owner, task_id))
