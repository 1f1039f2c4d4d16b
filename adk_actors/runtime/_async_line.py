"""The direct line to a partition, for runs started from an asyncio event loop.

``Runner.run_async`` on the host's machine (the HTTP API's routes, the A2A server)
talks to the session's partition over the same Unix socket as ``_caller_line``'s
``RunnerLine``, without a thread per run:

* one connection per event loop and partition, shared by all that loop's runs (a run's
  messages carry its run id, a call's error reply its ref: the line's reader hands
  each message to the run waiting for it and drops the others: late ones of a run
  that was given up);
* the reader is a task of the loop; the frames are ``_caller_line``'s (a 4-byte length
  and a pickle), so the partition serves it as any other Runner's line;
* the partition's death is an end-of-file: every run waiting on the line gets
  :data:`CLOSED`, and the line is connected again for the next run.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import weakref
from collections.abc import Callable
from typing import Any

from .._files import socket_name
from ._caller_line import HEADER, MAX_FRAME, frame_of

__all__ = ["CLOSED", "AsyncLines", "AsyncRunnerLine"]

#: What a waiting run gets when the line ends (its partition died, or a broken frame).
CLOSED: Any = object()


class AsyncRunnerLine:
    """One event loop's connection to one partition (see the module)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._by_run: dict[str, asyncio.Queue[Any]] = {}
        self._by_ref: dict[str, asyncio.Queue[Any]] = {}
        self.closed = False
        self._task = asyncio.get_running_loop().create_task(self._read(), name="runner-line-reader")

    @classmethod
    async def connect(cls, path: str) -> AsyncRunnerLine | None:
        """A line to the partition listening at ``path``; None when it cannot be had."""
        try:
            with socket_name(path) as name:
                reader, writer = await asyncio.open_unix_connection(name)
        except OSError:
            return None
        return cls(reader, writer)

    def open(self, run_id: str, ref: str) -> asyncio.Queue[Any]:
        """The queue that gets the run's messages and its call's reply (or :data:`CLOSED`)."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        if self.closed:
            queue.put_nowait(CLOSED)
        self._by_run[run_id] = self._by_ref[ref] = queue
        return queue

    def release(self, run_id: str, ref: str) -> None:
        """Nothing more is handed to that run (what still comes for it is dropped)."""
        self._by_run.pop(run_id, None)
        self._by_ref.pop(ref, None)

    def send(self, message: Any) -> bool:
        """Queue ``message`` on the socket; False when the line is closed. (Frames are
        small and the partition reads its lines on every turn: what the socket does not
        take at once waits in the transport's buffer.)"""
        if self.closed:
            return False
        try:
            self._writer.write(frame_of(message))
        except (OSError, RuntimeError):
            self._close()
            return False
        return True

    async def _read(self) -> None:
        """Hand each frame to the run or call it is for, until the line ends."""
        try:
            while True:
                header = await self._reader.readexactly(HEADER.size)
                (size,) = HEADER.unpack(header)
                if size > MAX_FRAME:
                    return
                message = pickle.loads(await self._reader.readexactly(size))
                queue = self._by_run.get(getattr(message, "run_id", None) or "")
                if queue is None:
                    queue = self._by_ref.get(getattr(message, "ref", None) or "")
                if queue is not None:
                    queue.put_nowait(message)
        except (asyncio.IncompleteReadError, OSError, pickle.UnpicklingError, EOFError, ValueError):
            return
        finally:
            self._close()

    def _close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for queue in {id(q): q for q in (*self._by_run.values(), *self._by_ref.values())}.values():
            queue.put_nowait(CLOSED)
        self._by_run.clear()
        self._by_ref.clear()
        with contextlib.suppress(Exception):
            self._writer.close()

    def close(self) -> None:
        """End the line (its waiting runs get :data:`CLOSED`)."""
        self._close()
        self._task.cancel()


class AsyncLines:
    """A Runner's async lines: one per event loop and partition, connected on first use
    and again after the one before ended."""

    def __init__(self) -> None:
        self._lines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Task[Any]]] = (
            weakref.WeakKeyDictionary())

    def open_line(self, partition: str) -> AsyncRunnerLine | None:
        """This loop's line to ``partition`` if it is connected and open now (no wait)."""
        lines = self._lines.get(asyncio.get_running_loop())
        task = lines.get(partition) if lines is not None else None
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        line: AsyncRunnerLine | None = task.result()
        return line if line is not None and not line.closed else None

    async def line(self, partition: str, find_path: Callable[[], str | None]) -> AsyncRunnerLine | None:
        """This loop's open line to ``partition`` (a key), or None when it cannot be had.
        ``find_path()`` says where its socket is (None: it has none); it may block, so
        it is called on a thread. Runs that ask at once share one attempt."""
        loop = asyncio.get_running_loop()
        lines = self._lines.setdefault(loop, {})
        task = lines.get(partition)
        if task is not None and task.done():
            line = None if task.cancelled() or task.exception() else task.result()
            if line is None or line.closed:
                task = None
        if task is None:
            task = lines[partition] = loop.create_task(_connect(find_path))
        return await asyncio.shield(task)


async def _connect(find_path: Callable[[], str | None]) -> AsyncRunnerLine | None:
    path = await asyncio.to_thread(find_path)
    return await AsyncRunnerLine.connect(path) if path else None
