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
  the run was interrupted;
* the Runner's end may outlive the Runner: a child it forked (``os.fork``, a
  ``multiprocessing`` worker; ``SOCK_CLOEXEC`` only closes it at an ``exec``) holds the
  socket open, so the line never ends when the Runner dies. The partition therefore
  knows its peer (``SO_PEERCRED``: the pid that connected, watched through a pidfd,
  so a pid used again is not taken for it) and asks, before it writes what a line
  brought, whether that process still runs (``CallerLine.caller_gone``). A
  Runner's process also closes its lines in the children it forks
  (``os.register_at_fork``), which then connect lines of their own.

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
import weakref
from pathlib import Path
from typing import Any

from .._files import private_dir, socket_name
from ._link import connect_unix, read_waiting

__all__ = ["HEADER", "MAX_FRAME", "CallerLine", "LineClosed", "LineServer", "PeerProcess", "RunnerLine", "frame_of",
           "peer_pid", "process_start"]

#: A frame's header: the length of its pickle.
HEADER = struct.Struct(">I")
#: The most a frame may carry (a pickled message); a larger one closes the line.
MAX_FRAME = 64 * 1024 * 1024


#: SO_PEERCRED's answer: the peer's pid, uid and gid.
_PEERCRED = struct.Struct("3i")


def peer_pid(sock: socket.socket) -> int | None:
    """The pid of the process that connected the Unix socket ``sock`` (as this process
    sees pids), or None when the system cannot say (no ``SO_PEERCRED``, or a peer in a
    pid space this one cannot see: 0)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        pid, _, _ = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _PEERCRED.size))
    except OSError:
        return None
    return pid if pid > 0 else None


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (``/proc/PID/stat``'s starttime, in clock ticks since
    boot: with the pid, it names one process for ever); None when no such process runs
    (gone, or a zombie: dead, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if len(fields) < 20 or fields[0] in (b"Z", b"X", b"x"):
        return None
    return fields[19].decode()


class PeerProcess:
    """The process that connected a line, and whether it has ended (``ended``). Watched
    through a pidfd (readable once that process ended; it names that process, never
    another given its pid later): one ``poll`` per look. Where pidfds are missing, by
    its start time in ``/proc/PID/stat`` (one read per look). A process gone before it
    is watched (it connected while the partition was busy, and died) has ended."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.ended = False
        self._fd: int | None = None
        self._poll: Any = None
        self._start: str | None = None
        try:
            self._fd = os.pidfd_open(pid)
        except ProcessLookupError:
            self.ended = True
            return
        except (AttributeError, OSError):  # no pidfds here: /proc tells
            self._start = process_start(pid)
            self.ended = self._start is None
            return
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)

    def gone(self) -> bool:
        """Has the process ended (looked at now)?"""
        if not self.ended:
            self.ended = bool(self._poll.poll(0)) if self._poll is not None else process_start(self.pid) != self._start
            if self.ended:
                self.close()
        return self.ended

    def close(self) -> None:
        """Stop watching (the pidfd closed); ``gone`` then says what was last seen."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._poll = None
            self._start = None
            self.ended = True


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
        # Who connected (see the module). None: the system cannot say, and the line's
        # end alone tells that its Runner is gone.
        pid = peer_pid(sock)
        self.peer = PeerProcess(pid) if pid is not None else None

    def __repr__(self) -> str:
        return f"CallerLine(fd={self.fd}, peer={self.peer.pid if self.peer is not None else None})"

    def __reduce__(self) -> Any:  # a line is no address another process could use
        raise TypeError("a CallerLine is not sent anywhere")

    @property
    def closed(self) -> bool:
        return self._sock is None

    @property
    def caller_gone(self) -> bool:
        """Is the Runner at the other end gone: the line ended, or the process that
        connected it no longer runs (a child it forked may hold the line open)? A
        ``poll`` of its pidfd (see ``PeerProcess``), for a write only."""
        return self._sock is None or (self.peer is not None and self.peer.gone())

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
        if self.peer is not None:
            self.peer.close()


class RunnerLine:
    """A Runner endpoint's end of its line to one partition (one thread at a time).
    Closed in a child the process forks (see the module): only the Runner's own
    process speaks on it."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock: socket.socket | None = sock
        self._in = bytearray()
        self._ready: list[Any] = []
        self._poll = select.poll()  # (select() cannot take a descriptor over 1023)
        self._poll.register(sock, select.POLLIN)
        _RUNNER_LINES.add(self)

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


#: The Runner lines open in this process, closed in a child it forks.
_RUNNER_LINES: weakref.WeakSet[RunnerLine] = weakref.WeakSet()


def _close_lines_in_child() -> None:
    """In a forked child: close its copies of the parent's lines (the parent's stay
    open), so that the line ends when the Runner's process does, and two processes
    never read and write one stream."""
    for line in list(_RUNNER_LINES):
        line.close()


os.register_at_fork(after_in_child=_close_lines_in_child)
