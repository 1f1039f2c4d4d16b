"""The HTTP server's own process: ``python -m adk_actors.http``, or a fork of ``serve``.

In order: read the settings (JSON, one line) from stdin, so tokens never appear on a
command line (a process forked ahead by ``serve``, see ``_standby``, has them from
its parent, builds its app first, and reads only its owner's line); die with the
actor that owns it (``PR_SET_PDEATHSIG`` when that actor started it, else a watch on
the owner's pid); build the app; attach to the host's actor system as an external
client (``Host.attach``); bind the listening socket, retrying for up to 5 s while a
previous server's socket is still going away; print ``READY <port>`` on stdout;
serve with uvicorn until SIGTERM. Any failure before ``READY`` is printed on stderr
and exits 1, which the actor reports as a failed start.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from typing import Any

import uvicorn

from supervision import open_pidfd, process_alive

from ..config import HttpSection
from ..engine import AppCatalog
from ..runtime import Host, HostConfig
from ._app import create_app

__all__ = ["main", "serve_standby"]

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


def _die_with(owner: int) -> None:
    """SIGKILL this process when process ``owner`` ends (at once if it has ended):
    its pidfd is watched, or, where pidfds are missing, its pid polled."""
    pidfd = open_pidfd(owner)

    def watch() -> None:
        if pidfd is not None:
            select.select([pidfd], [], [])
        while pidfd is None and process_alive(owner):
            time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


def _build(launch: dict[str, Any]) -> tuple[Host, Any, HttpSection]:
    """The app for ``launch``, with its host not yet attached (it is used by requests only)."""
    section = HttpSection.model_validate(launch["http"])
    sys.path[:0] = launch.get("path", [])
    host = Host(HostConfig(apps={}, cluster_join=str(launch.get("cluster_join", ""))))
    app = create_app(host, AppCatalog(dict(launch["apps"]), launch.get("agents_dir")), section,
                     evals_dir=launch.get("evals_dir"), max_json_depth=int(launch["max_json_depth"]),
                     a2a_tasks=launch.get("a2a_tasks"), http_functions=frozenset(launch.get("http_functions", ())))
    return host, app, section


def _serve(launch: dict[str, Any], host: Host, app: Any, section: HttpSection) -> int:
    """Attach ``host``, bind, print ``READY <port>``, serve until SIGTERM."""
    try:
        host.attach(int(launch["admin_port"]), launch["admin_address"])
        sock = _bind(section.address, section.port)
    except Exception as exc:
        print(f"the HTTP server cannot start: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1
    # An idle connection is kept 65 s, longer than clients keep theirs (httpx: 5 s), so a
    # client never sends a request on a connection the server is closing at that moment
    # (uvicorn's 5 s made a burst of SSE turns lose one in a few hundred: bench/http_api.py).
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_keep_alive=65, timeout_graceful_shutdown=5))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.002)
        if server.started:
            print(f"READY {sock.getsockname()[1]}", flush=True)
        await task

    asyncio.run(serve())
    return 0


def _owned(line: dict[str, Any]) -> None:
    """Die with the owner the line names, unless it is our parent (which already
    kills us with its death: ``PR_SET_PDEATHSIG``)."""
    owner = line.get("owner")
    if owner is not None and owner != os.getppid():
        _die_with(int(owner))


def main() -> int:
    """``python -m adk_actors.http``: the settings and the owner come on one line."""
    launch = json.loads(sys.stdin.readline())
    _owned(launch)
    return _serve(launch, *_build(launch))


def serve_standby(launch: dict[str, Any]) -> int:
    """In a process forked ahead by ``serve`` (``_standby``): build the app for
    ``launch`` now, then wait for the owner's line."""
    built = _build(launch)
    _owned(json.loads(sys.stdin.readline()))
    return _serve(launch, *built)
