"""The A2A task store of the HTTP process (``http/_a2a_tasks``), on a real SQLite file:
what it answers, what survives a new process, and owners kept apart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from a2a.server.context import ServerCallContext
from a2a.types import ListTasksRequest, Task, TaskState, TaskStatus

from adk_actors.http import _a2a_tasks
from adk_actors.http._a2a import _Principal
from adk_actors.http._a2a_tasks import INTERRUPTED, TaskStores


def of(user: str) -> ServerCallContext:
    return ServerCallContext(user=_Principal(user))  # the HTTP front door's principal


def task(task_id: str, state: Any, context_id: str = "c1") -> Task:
    status = TaskStatus(state=state)
    status.timestamp.GetCurrentTime()
    return Task(id=task_id, context_id=context_id, status=status)


def test_tasks_outlive_their_process_and_the_unfinished_end_failed_saying_why(tmp_path: Path) -> None:
    """A new process (a new TaskStores on the file) answers every task the last one
    saved; the ones it left unfinished (working, input-required) are failed with
    INTERRUPTED, the finished ones are as they were; owners never see each other's."""
    path = tmp_path / "data" / "a2a_tasks.db"

    async def first_process() -> None:
        stores = TaskStores(path)
        store = stores.for_app("echo")
        await store.save(task("done", TaskState.TASK_STATE_SUBMITTED), of("ann"))
        await store.save(task("done", TaskState.TASK_STATE_COMPLETED), of("ann"))
        await store.save(task("asking", TaskState.TASK_STATE_SUBMITTED), of("bob"))
        await store.save(task("asking", TaskState.TASK_STATE_INPUT_REQUIRED), of("bob"))
        await store.save(task("working", TaskState.TASK_STATE_SUBMITTED), of("ann"))
        await store.save(task("working", TaskState.TASK_STATE_WORKING), of("ann"))  # not waited for
        stores.close()

    asyncio.run(first_process())
    assert path.stat().st_mode & 0o777 == 0o600

    async def second_process() -> tuple[Any, ...]:
        stores = TaskStores(path)
        store, other_app = stores.for_app("echo"), stores.for_app("other")
        try:
            return (await store.get("done", of("ann")), await store.get("working", of("ann")),
                    await store.get("asking", of("bob")), await store.get("done", of("bob")),
                    await other_app.get("done", of("ann")))
        finally:
            stores.close()

    done, working, asking, not_bobs, not_this_apps = asyncio.run(second_process())
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    for cut in (working, asking):
        assert cut.status.state == TaskState.TASK_STATE_FAILED
        assert cut.status.message.parts[0].text == INTERRUPTED
    assert not_bobs is None and not_this_apps is None


def test_many_saves_at_once_are_all_kept_and_a_task_no_longer_cached_is_read_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """300 tasks saved at once (one writer commits what waits together) are all in the
    file; with a cache of 8, an early task is read back from the file; ``list`` pages
    through the owner's tasks of one context with a2a-sdk's own listing; ``delete``
    forgets a task."""
    monkeypatch.setattr(_a2a_tasks, "CACHED", 8)
    path = tmp_path / "a2a_tasks.db"

    async def go() -> tuple[Any, ...]:
        stores = TaskStores(path)
        store = stores.for_app("echo")
        try:
            await asyncio.gather(*(store.save(task(f"t{i}", TaskState.TASK_STATE_COMPLETED, f"c{i % 3}"),
                                              of("ann")) for i in range(300)))
            early = await store.get("t0", of("ann"))
            first = await store.list(ListTasksRequest(context_id="c1", page_size=60), of("ann"))
            second = await store.list(ListTasksRequest(context_id="c1", page_size=60,
                                                       page_token=first.next_page_token), of("ann"))
            nobody = await store.list(ListTasksRequest(), of("bob"))
            await store.delete("t1", of("ann"))
            return early, first, second, nobody, await store.get("t1", of("ann"))
        finally:
            stores.close()

    early, first, second, nobody, deleted = asyncio.run(go())
    assert early is not None and early.id == "t0" and early.status.state == TaskState.TASK_STATE_COMPLETED
    assert first.total_size == 100 and len(first.tasks) == 60 and len(second.tasks) == 40
    assert {t.id for t in [*first.tasks, *second.tasks]} == {f"t{i}" for i in range(1, 300, 3)}
    assert len(nobody.tasks) == 0 and deleted is None

    async def reopened() -> int:
        stores = TaskStores(path)
        try:
            listed = await stores.for_app("echo").list(ListTasksRequest(page_size=100), of("ann"))
            return int(listed.total_size)
        finally:
            stores.close()

    assert asyncio.run(reopened()) == 299
