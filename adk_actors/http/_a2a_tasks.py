"""A2A tasks kept in the host's data folder, so that they outlive the HTTP process.

a2a-sdk's own ``DatabaseTaskStore`` (SQLAlchemy on ``aiosqlite``) keeps each app's
tasks in a table of its own (``a2a_tasks_<app>``) of one SQLite file, readable by the
host's user only; its owner scoping is a2a-sdk's (a token's user sees only its own
tasks). :func:`task_stores` opens the file for one HTTP process.

A task is run by the HTTP process that took it (its executor follows the run). When
that process dies (a kill -9, a crash) and the supervisor starts a new one, the tasks
it left unfinished (submitted, working, or waiting for their client) can no longer
be followed: on its first use of an app's table the new process ends each of them
``failed``, saying why (``interrupted: ...``), so ``GetTask`` gives a terminal state
and no client waits on it. The session keeps every event the run committed.
"""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any, cast

from a2a.server.tasks.database_task_store import DatabaseTaskStore
from a2a.types import TaskState
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from .._files import private_file

__all__ = ["INTERRUPTED", "DurableTaskStore", "TaskStores"]

#: the reason a task left unfinished by an earlier HTTP process ends failed
INTERRUPTED = ("interrupted: the HTTP process that ran this task stopped; the session keeps what its run "
               "had committed")
_UNFINISHED = {TaskState.Name(state) for state in (
    TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_INPUT_REQUIRED,
    TaskState.TASK_STATE_AUTH_REQUIRED)}


class DurableTaskStore(DatabaseTaskStore):
    """An app's tasks in its own table; ``initialize`` (a2a-sdk calls it before the
    first read or write) creates the table, then ends the unfinished tasks of earlier
    processes (see the module)."""

    async def initialize(self) -> None:
        if self._initialized:
            return
        await super().initialize()
        async with self.async_session_maker.begin() as session:
            rows = (await session.execute(select(self.task_model))).scalars().all()
            for row in rows:
                status = cast("dict[str, Any]", row.status)  # typed as a TaskStatus, a dict at rest
                if status.get("state") in _UNFINISHED:
                    row.status = _failed(row.context_id, row.id)  # type: ignore[assignment]


def _failed(context_id: str, task_id: str) -> dict[str, Any]:
    """A failed status whose agent message gives :data:`INTERRUPTED` (a2a-sdk's JSON form)."""
    now = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
    return {"state": TaskState.Name(TaskState.TASK_STATE_FAILED), "timestamp": now,
            "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_AGENT", "contextId": context_id,
                        "taskId": task_id, "parts": [{"text": INTERRUPTED}]}}


class TaskStores:
    """The task stores of one HTTP process: one SQLite file (``path``, made private),
    a table per app."""

    def __init__(self, path: str | Path) -> None:
        private_file(path)
        self._engine: AsyncEngine = create_async_engine(f"sqlite+aiosqlite:///{path}")

    def for_app(self, app: str) -> DurableTaskStore:
        return DurableTaskStore(self._engine, table_name=f"a2a_tasks_{app}")
