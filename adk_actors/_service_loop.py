"""The one event loop, on a daemon thread of its own, on which the engine's sync
calls run a google-adk-shaped service's async methods.

The engine asks its artifact and memory services synchronously (``save``, ``load``,
``list``, ``add_session``, ``search``), from a tool's thread or from the run's event
loop. A user's ``BaseArtifactService`` / ``BaseMemoryService`` subclass is async, as
google-adk's are: :func:`call` runs one of its coroutines on this loop and waits for
the result (the caller's thread, or the run's loop, waits meanwhile). The same loop
serves every call, so a service that keeps a connection made on its first call finds
it on its next one; a service that needs the caller's own event loop cannot be used
this way. The loop waits with ``poll``, which holds no descriptor: an actor system
started later in the same process forks its actors from it, and an epoll descriptor
would live on, unused, in every one of them (Thespian's own loops wait with poll for
the same reason).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import selectors
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ._exceptions import AdkError

__all__ = ["SERVICE_CALL_TIMEOUT", "ServiceCallTimeout", "call"]

T = TypeVar("T")

#: How long (seconds) the engine waits for one call of a user's service.
SERVICE_CALL_TIMEOUT = 120.0

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


class ServiceCallTimeout(AdkError, TimeoutError):
    """A service's method did not answer within ``SERVICE_CALL_TIMEOUT`` seconds; the
    call was cancelled."""


def _service_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.SelectorEventLoop(selectors.PollSelector())
            thread = threading.Thread(target=loop.run_forever, name="adk-services", daemon=True)
            thread.start()
            _loop, _thread = loop, thread
        return _loop


async def _awaited(value: Awaitable[T]) -> T:
    return await value


def call(make: Callable[[], Awaitable[T]], what: str, timeout: float = SERVICE_CALL_TIMEOUT) -> T:
    """The result of the awaitable ``make()`` makes, run on the service loop. In order:
    ``make()`` is called here (a service whose method is a plain ``def`` has answered
    then: its value is returned as it is); on the service loop's own thread (a
    service calling the engine back) the awaitable cannot be waited for:
    RuntimeError; else it is handed to the loop and waited for up to ``timeout``
    seconds (then cancelled: :class:`ServiceCallTimeout` naming ``what``); what it
    raised is raised here."""
    made: Any = make()
    if not inspect.isawaitable(made):
        return made  # type: ignore[no-any-return]
    loop = _service_loop()
    if threading.current_thread() is _thread:
        if inspect.iscoroutine(made):
            made.close()  # never to be awaited: no "never awaited" warning
        raise RuntimeError(f"{what} was called from a service's own loop, which would wait for itself")
    future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(_awaited(made), loop)
    done, _ = concurrent.futures.wait([future], timeout)
    if not done:
        future.cancel()
        raise ServiceCallTimeout(f"{what} did not answer within {timeout:g} s")
    return future.result()
