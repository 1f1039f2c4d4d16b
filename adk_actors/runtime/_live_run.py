"""LiveRun: a Runner's live run (voice, video, text), from plain Python code.

``Runner.run_live(user_id, session_id)`` asks the session's partition for a live run
and returns once it is accepted (a typed error otherwise: unknown session, busy...).
Then, from any threads: ``send(LiveRequest)`` passes one input to it, in order (a
typed error once the run has ended); ``events()`` (or ``events_async()``) yields its
events, partial ones included, until its terminal message (``RunFailedError`` for a
failure); ``close()`` sends the input ``close``, after which the run ends ``RunDone``.

google-adk's shape, ``runner.run_live(user_id=..., session_id=...,
live_request_queue=queue, run_config=...)`` iterated with ``async for``, is
:func:`fed_by_queue` over such a run: what the caller puts on the queue goes to the
run, and the run's events come back as google-adk's ``run_live`` yields them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

from .._exceptions import InvalidRequestError
from .._types import Event, LiveRequest, RunConfig

if TYPE_CHECKING:  # the queue's package loads the agent definitions; a client of a host needs none of them
    from ..agents.live_request_queue import LiveRequestQueue

__all__ = ["LiveRun", "fed_by_queue", "iterate_in_thread"]


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


async def fed_by_queue(start: Callable[[RunConfig], LiveRun], queue: LiveRequestQueue,
                       run_config: RunConfig | None) -> AsyncIterator[Event]:
    """A live run fed by ``queue``, as google-adk's ``Runner.run_live`` is. Nothing is
    asked until the first ``__anext__``; then, in order: without
    ``run_config.response_modalities`` the model is asked for ``AUDIO`` (on a copy, as
    google-adk's); ``start(config)`` asks for the run on a thread (its typed error, an unknown session or a
    busy one, is raised here, at the first ``__anext__``); a task then passes each
    request the caller puts on the queue to the run, in order, until one closes it;
    meanwhile the run's events are yielded as they come, except the user's own (what
    the caller sent is stored, not yielded back; the user's transcribed speech is
    yielded), as google-adk's. The iteration ends with the run (``RunFailedError`` for
    a failure). Should passing a request fail while the run goes on (the host
    unreachable), the run is asked to close and that error is raised once its events
    end. A caller that stops iterating early closes the run."""
    config = run_config or RunConfig()
    if config.response_modalities is None:  # google-adk's default for live runs
        config = config.model_copy(update={"response_modalities": ("AUDIO",)})
    live = await asyncio.to_thread(start, config)
    failed: list[BaseException] = []

    async def pump() -> None:
        try:
            while True:
                request = await queue.get()
                await asyncio.to_thread(live.send, request)
                if request.close:
                    return
        except Exception as exc:  # the run ended meanwhile, or the host is out of reach
            failed.append(exc)
            with contextlib.suppress(Exception):
                await asyncio.to_thread(live.close)

    pumping = asyncio.create_task(pump())
    ended = False
    try:
        async for event in live.events_async():
            if event.author != "user" or event.input_transcription is not None:
                yield event
        ended = True
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
        if not ended and not failed:
            with contextlib.suppress(Exception):  # ended already: nothing to close
                await asyncio.to_thread(live.close)
    if failed and not isinstance(failed[0], InvalidRequestError):
        raise failed[0]
