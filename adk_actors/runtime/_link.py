"""The direct line between a session partition and one of its run workers (a socket pair).

A turn's two messages between a partition and its worker (``StartRun`` one way,
``RunOutput`` the other) cost each side, through Thespian, several turns of its loop
(the select set rebuilt, timers checked, an acknowledgement sent back): measured, a
serial turn took about twice as long (bench/turns.py, docs/benchmarks.md). The worker
is the partition's own child, forked from it, so the two share an ``AF_UNIX``
``SOCK_SEQPACKET`` socket pair the partition makes just before the fork: one datagram
per message, kept whole by the kernel, delivered in order. Each side watches its end
with ``ThespianWatch``.

The line is a fast path, never the only one. ``send`` returns False, and the caller
sends through Thespian instead, when the message is larger than ``MAX_MESSAGE``, when
the peer's buffer is full (nothing ever blocks), or when the peer is gone. A run whose
message fell back once keeps to Thespian for the rest of that run, and a receiver
reads its line before it handles a message that came through Thespian from the same
peer, so the order of a run's messages holds on either path. A line that reads
end-of-file (the peer died) is closed.

The worker is told which descriptor is its end (``WorkerSettings.link_fd``), and
closes the partition's ends it inherited with the fork (``inherited_fds``): a line's
end held by a third process would hide its peer's death.
"""

from __future__ import annotations

import pickle
import socket
from typing import Any

__all__ = ["MAX_MESSAGE", "RunLink", "fork_linked", "read_waiting"]

#: Messages larger than this (pickled) go through Thespian instead.
MAX_MESSAGE = 64 * 1024


def read_waiting(sock: socket.socket, size: int) -> tuple[list[bytes], bool]:
    """What the non-blocking ``sock`` holds now (one ``recv`` of at most ``size`` bytes
    each), and whether its peer is gone (end of file, or an error)."""
    received: list[bytes] = []
    while True:
        try:
            data = sock.recv(size)
        except (BlockingIOError, InterruptedError):
            return received, False
        except OSError:
            return received, True
        if not data:
            return received, True
        received.append(data)


class RunLink:
    """One end of a partition / worker line. Not thread-safe: the actor's main thread only."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock: socket.socket | None = sock
        self.fd = sock.fileno()

    @classmethod
    def pair(cls) -> tuple[RunLink, RunLink]:
        """(the partition's end, the worker's end)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        return cls(ours), cls(theirs)

    @property
    def closed(self) -> bool:
        return self._sock is None

    def send(self, message: Any) -> bool:
        """Queue ``message`` for the peer, whole, without blocking; False if it did not
        go (too large, the peer's buffer full, the peer gone, the line closed)."""
        if self._sock is None:
            return False
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > MAX_MESSAGE:
            return False
        try:
            return self._sock.send(data, socket.MSG_NOSIGNAL) == len(data)
        except OSError:  # BlockingIOError (full), BrokenPipeError, ConnectionResetError ...
            return False

    def receive(self) -> list[Any]:
        """Every message waiting on the line, in order (none if nothing is there). The
        peer gone (end-of-file, or a reset) closes the line."""
        if self._sock is None:
            return []
        datagrams, gone = read_waiting(self._sock, MAX_MESSAGE + 1)
        if gone:
            self.close()
        return [pickle.loads(data) for data in datagrams]

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    @classmethod
    def adopt(cls, fd: int) -> RunLink:
        """In the forked worker: its end of the line, inherited as descriptor ``fd``."""
        return cls(socket.socket(fileno=fd))


def fork_linked(parent: Any, actor_class: type) -> tuple[Any, RunLink, int]:
    """Fork a child actor of ``parent`` with a direct line to it: (its address, the
    parent's end, the descriptor number of the child's end, to name in its ``Init``).
    The parent's copy of the child's end is closed once the child has it; if the fork
    fails, both ends are closed."""
    ours, theirs = RunLink.pair()
    try:
        address = parent.createActor(actor_class)
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()  # the child's now
    return address, ours, theirs.fd
