"""LiveRun: a Runner's live run (voice, video, text), from plain Python code.

``Runner.run_live(user_id, session_id)`` asks the session's partition for a live run
and returns once it is accepted (a typed error otherwise: unknown session, busy...).
Then, from any threads: ``send(LiveRequest)`` passes one input to it, in order (a
typed error once the run has ended); ``events()`` (or ``events_async()``) yields its
events, partial ones included, until its terminal message (``RunFailedError`` for a
failure); ``close()`` sends the input ``close``, after which the run ends ``RunDone``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from .._types import Event, LiveRequest

__all__ = ["LiveRun", "iterate_in_thread"]


class LiveRun:
    def __init__(self, run_id: str, send: Callable[[LiveRequest], Any], stream: Iterator[Event]) -> None:
        self.run_id = run_id
        self._send = send
        self._stream = stream

    def send(self, request: LiveRequest) -> None:
        """Pass one input to the run (see the module)."""
        self._send(request)

    def close(self) -> None:
        """Ask the run to end (its stream then ends with ``RunDone``)."""
        self._send(LiveRequest(close=True))

    def events(self) -> Iterator[Event]:
        """The run's events until its end (iterate once)."""
        return self._stream

    def events_async(self) -> AsyncIterator[Event]:
        """:meth:`events` as an async iterator (see :func:`iterate_in_thread`)."""
        return iterate_in_thread(lambda: self._stream)


async def iterate_in_thread(make: Callable[[], Iterator[Any]]) -> AsyncIterator[Any]:
    """Iterate ``make()`` on a thread of its own that hands each item to this loop; if
    the consumer stops early (or is cancelled), that thread stops at the next item.
    An exception of the iterator is raised here."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def hand(kind: str, item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, item))
        except RuntimeError:  # the loop is closed: nobody is listening any more
            stop.set()

    def pump() -> None:
        try:
            for item in make():
                if stop.is_set():
                    return
                hand("item", item)
        except BaseException as exc:
            hand("error", exc)
        else:
            hand("done", None)

    threading.Thread(target=pump, name="runner-iterate", daemon=True).start()
    try:
        while True:
            kind, item = await queue.get()
            if kind == "item":
                yield item
            elif kind == "error":
                raise item
            else:
                return
    finally:
        stop.set()
