"""A session actor's direct line to one of its run actors (a socket pair made before the fork).

A turn's two messages between a session actor and its run actor (``StartRun`` one
way, ``RunOutput`` the other) went through Thespian like any other: its transport
costs each side a few loop turns per message (select set rebuilt, timers checked,
an acknowledgement sent back). Measured under a burst of 100 sessions, a session
actor's main thread spent more on those two messages than on the store.

The run actor is the session actor's own child, forked from it, so the two can share
an ``AF_UNIX`` ``SOCK_SEQPACKET`` socket pair made just before the fork: one
datagram per message, kept whole by the kernel, delivered in order. Each side
watches its end with ``ThespianWatch`` and reads it in ``handle_watch``.

The line is a fast path, never the only one. ``send`` returns False, and the caller
sends through Thespian instead, when the message is larger than ``MAX_MESSAGE``, when
the peer's buffer is full (nothing ever blocks), or when the peer is gone. A sender
that fell back once keeps to Thespian for the rest of that run, and a receiver reads
its line before it handles a message of that run that came through Thespian, so the
order of a run's messages holds on either path. A line that reads end-of-file (the
peer died) is closed, and the actor's exit is seen through Thespian as before.

After the fork, the child closes the parent's other line ends it inherited
(``_handoff``): a line's end held by a third process would hide its peer's death.
"""

from __future__ import annotations

import os
import pickle
import socket
from typing import Any

__all__ = ["MAX_MESSAGE", "RunLink"]

#: Messages larger than this (pickled) go through Thespian instead.
MAX_MESSAGE = 64 * 1024


class RunLink:
    """One end of a session actor / run actor line. Not thread-safe: the actor's main
    thread only."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock: socket.socket | None = sock
        self.fd = sock.fileno()

    @classmethod
    def pair(cls) -> tuple[RunLink, RunLink]:
        """(the session actor's end, the run actor's end)."""
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
        messages: list[Any] = []
        while self._sock is not None:
            try:
                data = self._sock.recv(MAX_MESSAGE + 1)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                break
            if not data:
                self.close()
                break
            messages.append(pickle.loads(data))
        return messages

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def forget_in_child(self) -> None:
        """In a forked child that inherited this end and must not hold it: close the
        descriptor only (the parent's socket object is not ours to use)."""
        if self._sock is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self._sock.detach()
            self._sock = None
