"""Work an invocation's agents start beside it (``adk_actors.fluent``'s ``dispatch``).

One :class:`Background` per invocation, shared by every copy of its context
(``ctx.background``). In order:

1. an agent ``start``s a named task: a function making the coroutine that does the
   work and gives the events to deliver once it is joined; at most ``limit`` (50 by
   default, the first start sets it) run at once, the others wait for a place;
2. an agent ``join``s some of them (every one when no name is given), waiting at most
   ``timeout`` seconds: it gets the ones that ended (done, failed or cancelled) and
   the names of those still running, which are cancelled; joined tasks are forgotten;
3. when the invocation's root agent is done, what is left is joined by ``at_end`` (set
   by the agent that started them: its events are delivered after the root agent's),
   so dispatched work is never lost with the run's end;
4. an invocation that ends any other way (an error, a cancel, its caller gone) cancels
   what still runs (:meth:`cancel`): no task outlives its invocation.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

from .._exceptions import AdkError
from .._types import Event

__all__ = ["DEFAULT_LIMIT", "Background"]

#: how many background tasks of one invocation run at once unless the first start says
DEFAULT_LIMIT = 50


class Background:
    """See the module."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[list[Event]]] = {}
        self._places: asyncio.Semaphore | None = None
        #: joins what is left when the root agent is done (its events, in order)
        self.at_end: Callable[[], AsyncIterator[Event]] | None = None

    @property
    def names(self) -> list[str]:
        """The tasks started and not joined yet, in the order they started."""
        return list(self._tasks)

    def start(self, name: str, work: Callable[[], Awaitable[list[Event]]], *, limit: int | None = None) -> None:
        """Run ``work()`` as task ``name`` (AdkError when a task of that name is running)."""
        if name in self._tasks:
            raise AdkError(f"a background task named {name!r} is already running in this invocation")
        if self._places is None:
            self._places = asyncio.Semaphore(limit or DEFAULT_LIMIT)
        places = self._places

        async def in_place() -> list[Event]:
            async with places:
                return await work()

        self._tasks[name] = asyncio.create_task(in_place(), name=f"background:{name}")

    async def join(self, names: Iterable[str] | None = None,
                   timeout: float | None = None) -> tuple[dict[str, asyncio.Task[list[Event]]], list[str]]:
        """Wait for the tasks named (all when None): (name -> ended task, names still
        running at ``timeout``, now cancelled). Names not started are left out."""
        wanted = None if names is None else set(names)
        chosen = {name: task for name, task in self._tasks.items() if wanted is None or name in wanted}
        if not chosen:
            return {}, []
        done, late = await asyncio.wait(chosen.values(), timeout=timeout)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        for name in chosen:
            del self._tasks[name]
        return ({name: task for name, task in chosen.items() if task in done},
                [name for name, task in chosen.items() if task in late])

    def cancel(self) -> None:
        """Cancel every task still running and forget them all."""
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
        self.at_end = None

