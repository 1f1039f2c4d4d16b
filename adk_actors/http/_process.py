"""The HTTP server's own process: ``python -m adk_actors.http``.

In order: read the launch settings (JSON, one line) from stdin, so tokens never
appear on a command line; die with the actor that started it (``PR_SET_PDEATHSIG``,
set before exec); attach to the host's actor system as an external client
(``Host.connect``); bind the listening socket, retrying for up to 5 s while a
previous server's socket is still going away; print ``READY <port>`` on stdout; serve
with uvicorn until SIGTERM. Any failure before ``READY`` is printed on stderr and
exits 1, which the actor reports as a failed start.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import sys
import time

import uvicorn

from ..config import HttpSection
from ..engine import AppCatalog
from ..runtime import Host
from ._app import create_app

__all__ = ["main"]

BIND_RETRY = 5.0


def _bind(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    deadline = time.monotonic() + BIND_RETRY
    while True:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by every accepted connection. Without it a response's second write
        # (uvicorn writes the headers and the body apart) waits for the client's
        # delayed ACK: 40 ms per request (bench/http_api.py).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((address, port))
            sock.listen(1024)
            sock.set_inheritable(True)
            return sock
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def main() -> int:
    launch = json.loads(sys.stdin.readline())
    section = HttpSection.model_validate(launch["http"])
    sys.path[:0] = launch.get("path", [])
    try:
        host = Host.connect(int(launch["admin_port"]), launch["admin_address"])
        sock = _bind(section.address, section.port)
    except Exception as exc:
        print(f"the HTTP server cannot start: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1
    catalog = AppCatalog(dict(launch["apps"]), launch.get("agents_dir"))
    app = create_app(host, catalog, section, evals_dir=launch.get("evals_dir"))
    # An idle connection is kept 65 s, longer than clients keep theirs (httpx: 5 s), so a
    # client never sends a request on a connection the server is closing at that moment
    # (uvicorn's 5 s made a burst of SSE turns lose one in a few hundred: bench/http_api.py).
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_keep_alive=65, timeout_graceful_shutdown=5))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            print(f"READY {sock.getsockname()[1]}", flush=True)
        await task

    asyncio.run(serve())
    return 0
