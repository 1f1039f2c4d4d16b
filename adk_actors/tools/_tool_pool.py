"""The bounded pool of daemon threads that ``RunConfig.tool_thread_pool_config`` asks
for (google-adk's tool thread pool).

One pool per event loop and ``max_workers``: every run on that loop (in a run worker,
all the turns of its process) with the same ``max_workers`` shares it, as google-adk's
pool is shared by the invocations of one loop. A pool starts a worker thread when a
call is submitted and no worker is idle, up to ``max_workers``; the others wait in its
queue, in order. Its workers are daemon threads: a call that never returns keeps
neither the pool nor the process alive (a stopped run's worker process still exits
at once, as with the thread per call used without the config). A call awaited by a
coroutine that is cancelled is dropped if it has not started; one that has started
runs on to its end on its worker, which stays busy until then (Python cannot stop a
thread). A pool is shut down (its idle workers end) when its loop is collected, or
at the next look-up once its loop is closed.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

__all__ = ["DaemonThreadPool", "pool_size", "run_sync_call", "tool_thread_pool"]

_Work = tuple[Future[Any], Callable[[], Any]]


class DaemonThreadPool:
    """At most ``max_workers`` daemon threads running submitted calls in order."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, call: Callable[[], Any]) -> Future[Any]:
        """Queue ``call`` and return its future; an idle worker takes it, else a new
        worker starts if fewer than ``max_workers`` run. A RuntimeError once shut down."""
        future: Future[Any] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("the tool thread pool is shut down")
            self._queue.put((future, call))
            if not self._idle.acquire(blocking=False) and len(self._threads) < self.max_workers:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"adk_tool_executor_{len(self._threads)}")
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        """A worker: take calls in order and settle their futures (a cancelled one is
        skipped) until shut down."""
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, call = item
            if future.set_running_or_notify_cancel():
                try:
                    result = call()
                except BaseException as exc:  # handed to whoever awaits the future
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del item, future, call
            self._idle.release()

    def shutdown(self) -> None:
        """Refuse new calls; each worker ends once the calls queued before are done."""
        with self._lock:
            self._shut = True
            for _ in self._threads:
                self._queue.put(None)


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, DaemonThreadPool]] = \
    weakref.WeakKeyDictionary()
_pools_lock = threading.Lock()


def tool_thread_pool(max_workers: int) -> DaemonThreadPool:
    """The running loop's pool of ``max_workers`` (made on first use); first the pools
    of closed loops are shut down and forgotten."""
    loop = asyncio.get_running_loop()
    with _pools_lock:
        for closed in [known for known in _pools if known.is_closed()]:
            for pool in _pools.pop(closed, {}).values():
                pool.shutdown()
        pools = _pools.setdefault(loop, {})
        found = pools.get(max_workers)
        if found is None:
            found = pools[max_workers] = DaemonThreadPool(max_workers)
            weakref.finalize(loop, found.shutdown)
        return found


def pool_size(context: Any) -> int | None:
    """``max_workers`` of the run's ``tool_thread_pool_config`` that ``context`` (a
    ToolContext or an InvocationContext) belongs to; None without one."""
    invocation = getattr(context, "invocation", context)
    config = getattr(getattr(invocation, "run_config", None), "tool_thread_pool_config", None)
    size = getattr(config, "max_workers", None)
    return size if isinstance(size, int) and not isinstance(size, bool) else None


async def run_sync_call(max_workers: int, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``func(*args, **kwargs)`` on the running loop's pool of ``max_workers``, with
    a copy of the caller's context variables, and await its result (its exception is
    raised here). Cancelled before a worker took it, the call never runs."""
    context = contextvars.copy_context()
    future = tool_thread_pool(max_workers).submit(lambda: context.run(func, *args, **kwargs))
    return await asyncio.wrap_future(future)
