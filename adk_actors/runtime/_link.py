"""The direct line between a session partition and one of its run workers.

A turn's two messages between a partition and its worker (``StartRun`` one way,
``RunOutput`` the other) cost each side, through Thespian, several turns of its loop
(the select set rebuilt, timers checked, an acknowledgement sent back): measured, a
serial turn took about twice as long (bench/turns.py, docs/benchmarks.md). So each
worker, a child of the partition's pool (``_run_pool``), connects an ``AF_UNIX``
``SOCK_SEQPACKET`` socket to its partition, one datagram per message, kept whole by
the kernel, delivered in order. Each side watches its end with ``ThespianWatch``.

* The partition listens at ``worker_line_path`` (in the host's private ``lines``
  folder, 0700; the socket 0600), a name that does not change when the partition
  restarts, so its pool's workers find the new one. It takes a connection only from a
  process of its own user (``SO_PEERCRED``), and only as a worker once its first
  message is ``WorkerHello``.
* A worker whose line ends (its partition died or stopped) exits: its turns died with
  the partition; the pool starts another, which connects to the partition's next self.

The jobs actor's executors, its own children, share such a line with it as a socket
pair made just before the fork (``fork_linked``).

The line is a fast path, never the only one. ``send`` returns False, and the caller
sends through Thespian instead, when the message is larger than ``MAX_MESSAGE``, when
the peer's buffer is full (nothing ever blocks), or when the peer is gone. A run whose
message fell back once keeps to Thespian for the rest of that run, and a receiver
reads its line before it handles a message that came through Thespian from the same
peer, so the order of a run's messages holds on either path. A line that reads
end-of-file (the peer died) is closed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import socket
import struct
from pathlib import Path
from typing import Any

from .._files import private_dir, socket_name

__all__ = ["MAX_MESSAGE", "RunLink", "WorkerLineServer", "connect_unix", "fork_linked", "read_waiting", "worker_line_path"]

#: Messages larger than this (pickled) go through Thespian instead.
MAX_MESSAGE = 64 * 1024


def connect_unix(path: str, kind: int) -> socket.socket | None:
    """A Unix socket of ``kind`` connected to ``path``; None when none listens there."""
    sock = socket.socket(socket.AF_UNIX, kind)
    try:
        with socket_name(path) as name:
            sock.connect(name)
    except OSError:
        sock.close()
        return None
    return sock


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
    """One end of a partition / worker line. Not thread-safe: one thread at a time (a run
    worker's main thread, and its worker thread under the actor's line lock: ``_run``)."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock: socket.socket | None = sock
        self.fd = sock.fileno()

    @classmethod
    def pair(cls) -> tuple[RunLink, RunLink]:
        """(the parent's end, the child's end) of a line to a child about to be forked."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        return cls(ours), cls(theirs)

    @classmethod
    def adopt(cls, fd: int) -> RunLink:
        """In the forked child: its end of the line, inherited as descriptor ``fd``."""
        return cls(socket.socket(fileno=fd))

    @classmethod
    def connect(cls, path: str) -> RunLink | None:
        """A worker's line to the partition listening at ``path``; None while none listens."""
        sock = connect_unix(path, socket.SOCK_SEQPACKET)
        return cls(sock) if sock is not None else None

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


def fork_linked(parent: Any, actor_class: type) -> tuple[Any, RunLink, int]:
    """Fork a child actor of ``parent`` with a line to it (the jobs actor's executors):
    (its address, the parent's end, the descriptor number of the child's end, to name
    in its ``Init``). The parent's copy of the child's end is closed once the child has
    it; if the fork fails, both ends are closed."""
    ours, theirs = RunLink.pair()
    try:
        address = parent.createActor(actor_class)
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()  # the child's now
    return address, ours, theirs.fd


def worker_line_path(lines_dir: str, holder: str, index: int) -> str:
    """Where partition ``index`` of the host leasing as ``holder`` listens for its
    workers: the same path across the partition's restarts, and another for each host
    sharing the data folder (however long the folder is: ``_files.socket_name``)."""
    digest = hashlib.sha256(holder.encode()).hexdigest()[:8]
    return str(Path(lines_dir) / f"w{index}-{digest}.sock")


_PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid


class WorkerLineServer:
    """The partition's listening socket for its workers' lines (main thread only)."""

    def __init__(self, path: str) -> None:
        """Bind a name of our own, then rename it to ``path`` (atomic: the name the
        partition's earlier self bound, if any, now names ours; no moment without it)."""
        folder = Path(path).parent
        private_dir(folder)
        self.path = path
        own = f"{path}.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(own)  # a process of that pid before us
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with socket_name(own) as name:
                self._sock.bind(name)
            os.chmod(own, 0o600)
            self._sock.listen(64)
            os.rename(own, path)
        except OSError:
            self._sock.close()
            with contextlib.suppress(OSError):
                os.unlink(own)
            raise
        self._sock.setblocking(False)
        self.fd = self._sock.fileno()

    def accept(self) -> list[RunLink]:
        """The lines connected since last asked, from processes of our own user."""
        lines: list[RunLink] = []
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # BlockingIOError: none waits
                return lines
            _pid, uid, _gid = _PEER.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER.size))
            if uid != os.getuid():
                conn.close()
                continue
            lines.append(RunLink(conn))

    def close(self) -> None:
        """Stop listening. The path stays: the partition's next self may have taken it
        already (a partition stopping late must not take it from its successor); a
        worker that connects to a name nobody listens on is refused, and tries again."""
        self._sock.close()
