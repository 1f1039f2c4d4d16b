"""The run behind an A2A task, consumed in the background so that it can outlive an
``execute`` that stopped to ask the A2A client something.

A :class:`TaskRun` reads its run's events as they come into :attr:`TaskRun.items`,
in order: ``("event", Event)`` for each event, then ``("done", None)`` or
``("failed", AdkError)``. While the run is silent longer than ``APPROVAL_POLL`` (a
tool waits for a human's approval), it asks the host's approvals for one of this
run, and puts each new one as ``("approval", Approval)``. ``cancel`` stops reading
(the run itself is cancelled on the host by the executor).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from .._exceptions import AdkError

__all__ = ["APPROVAL_POLL", "TaskRun"]

#: After this long without an event, and then this often, a run's pending approvals are asked for.
APPROVAL_POLL = 0.5


class TaskRun:
    def __init__(self, events: AsyncIterator[Any], pending_approvals: Callable[[], Awaitable[list[Any]]]) -> None:
        self.items: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._last_event = time.monotonic()
        self._ended = False
        self._reader = asyncio.get_running_loop().create_task(self._read(events), name="a2a-task-run")
        self._watcher = asyncio.get_running_loop().create_task(self._watch(pending_approvals),
                                                               name="a2a-task-approvals")

    async def _read(self, events: AsyncIterator[Any]) -> None:
        try:
            async for event in events:
                self._last_event = time.monotonic()
                self.items.put_nowait(("event", event))
        except AdkError as error:
            self.items.put_nowait(("failed", error))
        else:
            self.items.put_nowait(("done", None))
        finally:
            self._ended = True
            self._watcher.cancel()

    async def _watch(self, pending_approvals: Callable[[], Awaitable[list[Any]]]) -> None:
        seen: set[str] = set()
        while not self._ended:
            await asyncio.sleep(APPROVAL_POLL)
            if time.monotonic() - self._last_event < APPROVAL_POLL:
                continue
            try:
                found = await pending_approvals()
            except AdkError:
                continue  # the approvals service restarts: asked again next time
            for approval in found:
                if approval.id not in seen and not self._ended:
                    seen.add(approval.id)
                    self.items.put_nowait(("approval", approval))

    def cancel(self) -> None:
        self._reader.cancel()
        self._watcher.cancel()
