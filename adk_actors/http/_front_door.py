"""The front door: the HTTP listening socket of a host, which ``serve`` binds once and
keeps until it exits; every HTTP server process of the host serves on it (see
``_standby``), so a server that restarts leaves connections waiting, not refused."""

from __future__ import annotations

import errno
import socket
import time

__all__ = ["BACKLOG", "open_front_door"]

BACKLOG = 1024  # connections that wait while no server accepts (a restart takes 2-3 s)


def open_front_door(address: str, port: int, *, retry: float = 0.0) -> socket.socket:
    """A TCP socket bound to ``address``:``port`` (0: a free port) and listening, for
    the HTTP servers of a host. Bound to that address only (never all interfaces);
    ``TCP_NODELAY`` is set on it, so every accepted connection has it. A port still
    held by a socket going away is tried again for ``retry`` seconds; then, or for any
    other failure, the ``OSError`` is raised."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    deadline = time.monotonic() + retry
    while True:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by every accepted connection. Without it a response's second write
        # (uvicorn writes the headers and the body apart) waits for the client's
        # delayed ACK: 40 ms per request (bench/http_api.py).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((address, port))
            sock.listen(BACKLOG)
            return sock
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
