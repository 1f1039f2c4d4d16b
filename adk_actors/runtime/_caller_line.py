"""The direct line between a Runner on the host's machine and a session partition.

A serial turn sent through Thespian paid about 0.9 ms for its two messages between
the caller and the partition (a call's round trip on an idle host: the messages, their
acknowledgements, both actors' select loops): a third of the turn
(docs/benchmarks.md). A Runner whose host runs on its own machine (the same pid space:
``Host.partition_alive`` can look at the partitions' processes) talks to a partition
over a Unix socket instead, for its runs only:

* the partition listens on ``<data dir>/lines/<pid>.sock`` (the folder 0700, the
  socket 0600: only the host's user can connect; what comes in is unpickled, as
  Thespian's own messages are) and says where when asked (``LinePath``);
* a Runner's endpoint connects once and sends ``Call(RunRequest)`` frames; the
  partition serves each as a call that came through Thespian (``GenServer.serve_call``)
  and sends the run's messages back on the same line, in order;
* frames are a 4-byte length and a pickle. The partition's end never blocks: what the
  socket does not take waits in a buffer, flushed on its next turns (``flush``);
  the Runner's end reads with a timeout;
* the partition is the only process holding its ends (its run workers close what they
  inherit with the fork), so its death is an end-of-file at the Runner at once:
  the run was interrupted.

The line is a fast path: a Runner that cannot connect, or whose send fails, uses
Thespian as before.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import socket
import struct
from pathlib import Path
from typing import Any

from .._files import private_dir, socket_name
from ._link import connect_unix, read_waiting

__all__ = ["HEADER", "MAX_FRAME", "CallerLine", "LineClosed", "LineServer", "RunnerLine", "frame_of"]

#: A frame's header: the length of its pickle.
HEADER = struct.Struct(">I")
#: The most a frame may carry (a pickled message); a larger one closes the line.
MAX_FRAME = 64 * 1024 * 1024


class LineClosed(Exception):
    """The other end is gone (end of file, reset, or a broken frame)."""


def frame_of(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def _frames(buffer: bytearray) -> list[Any]:
    """The whole frames at the start of ``buffer``, taken out of it."""
    messages = []
    while len(buffer) >= HEADER.size:
        (size,) = HEADER.unpack_from(buffer)
        if size > MAX_FRAME:
            raise LineClosed(f"a frame of {size} bytes")
        if len(buffer) < HEADER.size + size:
            break
        messages.append(pickle.loads(bytes(buffer[HEADER.size:HEADER.size + size])))
        del buffer[:HEADER.size + size]
    return messages


class LineServer:
    """The partition's listening socket (main thread only)."""

    def __init__(self, folder: Path) -> None:
        private_dir(folder)
        for stale in folder.glob("*.sock"):  # left by partitions killed before (their pid is gone)
            pid = stale.stem
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    stale.unlink()
        self.path = folder / f"{os.getpid()}.sock"
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with socket_name(self.path) as name:
            self._sock.bind(name)
        os.chmod(self.path, 0o600)
        self._sock.listen(256)
        self._sock.setblocking(False)
        self.fd = self._sock.fileno()

    def accept(self) -> list[CallerLine]:
        lines: list[CallerLine] = []
        while True:
            try:
                conn, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return lines
            except OSError:
                return lines
            lines.append(CallerLine(conn))

    def close(self) -> None:
        self._sock.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


class CallerLine:
    """The partition's end of one Runner endpoint's line: never blocks (main thread only)."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock: socket.socket | None = sock
        self.fd = sock.fileno()
        self._in = bytearray()
        self._out = bytearray()

    def __repr__(self) -> str:
        return f"CallerLine(fd={self.fd})"

    def __reduce__(self) -> Any:  # a line is no address another process could use
        raise TypeError("a CallerLine is not sent anywhere")

    @property
    def closed(self) -> bool:
        return self._sock is None

    @property
    def pending(self) -> bool:
        return bool(self._out) and self._sock is not None

    def receive(self) -> list[Any]:
        """The whole messages waiting; the peer gone (or a broken frame) closes the line."""
        if self._sock is not None:
            chunks, gone = read_waiting(self._sock, 1 << 16)
            for chunk in chunks:
                self._in.extend(chunk)
            if gone:
                self.close()
        try:
            return _frames(self._in)
        except (LineClosed, pickle.UnpicklingError, EOFError, ValueError):
            self.close()
            return []

    def send(self, message: Any) -> None:
        """Queue ``message`` and send what the socket takes now (see ``pending``)."""
        if self._sock is None:
            return
        self._out.extend(frame_of(message))
        self.flush()

    def flush(self) -> None:
        while self._out and self._sock is not None:
            try:
                sent = self._sock.send(self._out, socket.MSG_NOSIGNAL)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.close()
                return
            del self._out[:sent]

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._out.clear()


class RunnerLine:
    """A Runner endpoint's end of its line to one partition (one thread at a time)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock: socket.socket | None = sock
        self._in = bytearray()
        self._ready: list[Any] = []
        self._poll = select.poll()  # (select() cannot take a descriptor over 1023)
        self._poll.register(sock, select.POLLIN)

    @classmethod
    def connect(cls, path: str) -> RunnerLine | None:
        """A line to the partition listening at ``path``; None when it cannot be had."""
        sock = connect_unix(path, socket.SOCK_STREAM)
        return cls(sock) if sock is not None else None

    @property
    def closed(self) -> bool:
        return self._sock is None

    def send(self, message: Any) -> bool:
        """Send ``message`` whole; False (and the line closed) if it could not go."""
        if self._sock is None:
            return False
        try:
            self._sock.sendall(frame_of(message))
        except OSError:
            self.close()
            return False
        return True

    def receive(self, timeout: float) -> Any:
        """The next message, or None when none came within ``timeout`` seconds;
        LineClosed when the partition's end is gone."""
        if self._ready:
            return self._ready.pop(0)
        if self._sock is None:
            raise LineClosed("the line is closed")
        while self._poll.poll(timeout * 1000):  # each wait up to timeout: a frame may come in pieces
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                self.close()
                raise LineClosed("the partition's end of the line is gone")
            self._in.extend(data)
            self._ready.extend(_frames(self._in))
            if self._ready:
                return self._ready.pop(0)
        return None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
