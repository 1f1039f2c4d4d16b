"""The HTTP server's own process: ``python -m adk_actors.http``, or a fork of ``serve``.

A spawned process (``python -m adk_actors.http``), in order: read the settings and its
owner (JSON, one line) from stdin, so tokens never appear on a command line; watch
the actor that owns it, and when that actor ends (kill -9 included) stop as on
SIGTERM, finishing the requests it has taken, then die (SIGKILL) after ``DRAIN``
seconds; build the app; attach to the host's actor system as an external client
(``Host.attach``); take the front door: the listening socket ``serve`` owns, whose
descriptor (``listen_fd``) this process inherited, checked to be a TCP socket
listening on the configured address (without one, as for a host not started by
``serve``, bind it here, retrying for up to 5 s while a previous server's socket is
still going away); print ``READY <port>`` on stdout; serve with uvicorn until
SIGTERM.

A process forked ahead by ``serve`` (``_standby``) has its settings from its parent
and starts before the host's tree: it builds its app, takes the front door, serves
and prints ``READY <port>`` at once, answering what needs no host (``/list-apps``:
see ``_gate``) while every other request waits at the gate; meanwhile it does the
work of its first requests that needs no host (``_app.warm_up``). When its owner's line
comes (the ``http`` actor, the tree's last child, claimed it), it watches that owner
as above, attaches to the host and opens the gate. An attach that fails, or no
owner within ``OWNER_WAIT`` seconds, stops the process with status 1 (its actor sees
it end and is restarted with a spawned process).

On SIGTERM, either way: take no new connection, read the request of each connection
already taken (:class:`FinishingServer`), give the requests in progress
``ANSWER_WITHIN`` seconds, answer those still waiting (their answer not begun: a
session that is restarting, or the gate) 503 with ``Retry-After`` instead of
dropping them (:class:`Draining`), and close this process's copy of the socket (it
keeps listening in ``serve``). Any failure before ``READY`` is printed on stderr and
exits 1, which the actor reports as a failed start.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from supervision.lowlevel import open_pidfd, process_alive

from ..config import HttpSection
from ..engine import AppCatalog
from ..runtime import Host, HostConfig
from ._app import create_app, warm_up
from ._errors import HOST_UNAVAILABLE, RETRY_AFTER
from ._front_door import BACKLOG, open_front_door
from ._gate import WAIT, HostGate

__all__ = ["main", "serve_standby"]

BIND_RETRY = 5.0
#: How long a server whose owner has died may finish the requests it took (uvicorn's
#: graceful shutdown takes up to 5 s) before it kills itself.
DRAIN = 7.0
#: How long a request may still take once the server is told to stop, before it is
#: answered 503 (uvicorn's own graceful shutdown, 5 s, would drop its connection).
ANSWER_WITHIN = 3.0
#: How long a process forked ahead waits for its owner's line: longer than the root's
#: start deadline (``_gate.WAIT``, ``Host.start``), plus what ``serve`` does before it.
OWNER_WAIT = WAIT + 60.0
#: How long a server told to stop waits for the first request on a connection it has
#: accepted but not yet read: the client sent it with the connect, and closing such a
#: connection with its request unread makes the kernel reset it.
FIRST_REQUEST_WAIT = 1.0


class Draining:
    """ASGI wrapper of the app: an HTTP request still in the app ``ANSWER_WITHIN``
    seconds after the server was told to stop (:meth:`stop_soon`), its answer not
    begun, is answered 503 with ``Retry-After`` and left to end on its own (what it
    sends later is dropped); one whose answer has begun (a stream) goes on until
    uvicorn's own deadline. WebSockets and lifespan pass through."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._stopped: asyncio.Future[None] | None = None

    def _stopped_future(self) -> asyncio.Future[None]:
        if self._stopped is None:
            self._stopped = asyncio.get_running_loop().create_future()
        return self._stopped

    def stop_soon(self) -> None:
        """In the server's loop: answer the requests still waiting ``ANSWER_WITHIN`` s from now."""
        stopped = self._stopped_future()

        def answer_now() -> None:
            if not stopped.done():
                stopped.set_result(None)

        asyncio.get_running_loop().call_later(ANSWER_WITHIN, answer_now)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        begun, answered = False, False

        async def tracked(message: Any) -> None:
            nonlocal begun
            if answered:
                return
            begun = begun or message["type"] == "http.response.start"
            await send(message)

        task = asyncio.ensure_future(self.app(scope, receive, tracked))
        stopped = self._stopped_future()
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if task.done() or begun:
            await task
            return
        answered = True
        task.add_done_callback(lambda done: done.cancelled() or done.exception())  # its end is not ours to report
        task.cancel()
        body = json.dumps({"detail": HOST_UNAVAILABLE}).encode()
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"retry-after", str(RETRY_AFTER).encode())]})
        await send({"type": "http.response.body", "body": body})


def _front_door(section: HttpSection, listen_fd: int | None) -> socket.socket:
    """The socket to serve on: the inherited ``listen_fd`` (``serve``'s), checked to be
    a TCP socket listening on ``section``'s address (and port, unless 0), else
    ``OSError``; without one, a socket bound here."""
    if listen_fd is None:
        return open_front_door(section.address, section.port, retry=BIND_RETRY)
    sock = socket.socket(fileno=listen_fd)
    bound = sock.getsockname()
    listening = sock.type == socket.SOCK_STREAM and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    if (not listening or ipaddress.ip_address(bound[0]) != ipaddress.ip_address(section.address)
            or section.port not in (0, bound[1])):
        sock.detach()  # not ours to close
        raise OSError(f"descriptor {listen_fd} is not the front door on {section.address}:{section.port} "
                      f"(it is {bound!r}, listening: {bool(listening)})")
    return sock


class FinishingServer(uvicorn.Server):
    """uvicorn's server, with one change to its stop: it stops listening first, then
    waits (at most ``FIRST_REQUEST_WAIT`` s, checking every 10 ms) until every connection
    it accepted has its first request read, and only then does uvicorn's own shutdown
    (close the idle connections, finish the requests taken). uvicorn alone closes a
    connection whose request it has not read yet at once, and its caller sees
    "connection reset" for a request sent to a server that had accepted it."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for listener in self.servers:
            listener.close()
        deadline = time.monotonic() + FIRST_REQUEST_WAIT
        await asyncio.sleep(0.01)
        while _unread_connections(self) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await super().shutdown(sockets)


def _unread_connections(server: uvicorn.Server) -> int:
    """How many of ``server``'s HTTP connections have no request read yet (uvicorn's HTTP
    protocols set ``cycle`` with each request; a WebSocket's has none)."""
    return sum(1 for connection in server.server_state.connections
               if getattr(connection, "cycle", "not HTTP") is None)


def _die_with(owner: int) -> None:
    """When process ``owner`` ends (at once if it has ended), stop as on SIGTERM (uvicorn
    finishes the requests it took), and SIGKILL this process ``DRAIN`` seconds later.
    Its pidfd is watched, or, where pidfds are missing, its pid polled."""
    pidfd = open_pidfd(owner)

    def watch() -> None:
        if pidfd is not None:
            select.select([pidfd], [], [])
        while pidfd is None and process_alive(owner):
            time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(DRAIN)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


def _build(launch: dict[str, Any], *, attached_first: bool) -> tuple[Host, Draining, HostGate, HttpSection]:
    """The app for ``launch``, with its host not yet attached; its gate open when the
    host is attached before the server serves (``attached_first``)."""
    section = HttpSection.model_validate(launch["http"])
    sys.path[:0] = launch.get("path", [])
    host = Host(HostConfig(apps={}, cluster_join=str(launch.get("cluster_join", ""))))
    gate = HostGate(create_app(host, AppCatalog(dict(launch["apps"]), launch.get("agents_dir")), section,
                               evals_dir=launch.get("evals_dir"), max_json_depth=int(launch["max_json_depth"]),
                               a2a_tasks=launch.get("a2a_tasks"),
                               http_functions=frozenset(launch.get("http_functions", ()))),
                    opened=attached_first)
    return host, Draining(gate), gate, section


def _attach(host: Host, launch: dict[str, Any]) -> None:
    host.attach(int(launch["admin_port"]), launch["admin_address"])


def _serve(launch: dict[str, Any], host: Host, app: Draining, gate: HostGate, section: HttpSection,
           owner_line: Callable[[], str] | None = None) -> int:
    """Serve until SIGTERM. Without ``owner_line``: attach ``host``, bind, print ``READY
    <port>``, serve. With it (a process forked ahead): bind, serve, print ``READY
    <port>``, then read the owner's line with ``owner_line`` (on a thread), watch the
    owner, attach and open ``gate`` (:func:`_attach_when_owned`). 1 for a start that
    failed, else 0."""
    try:
        if owner_line is None:
            _attach(host, launch)
        listen_fd = launch.get("listen_fd")
        sock = _front_door(section, int(listen_fd) if listen_fd is not None else None)
    except Exception as exc:
        print(f"the HTTP server cannot start: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1
    # An idle connection is kept 65 s, longer than clients keep theirs (httpx: 5 s), so a
    # client never sends a request on a connection the server is closing at that moment
    # (uvicorn's 5 s made a burst of SSE turns lose one in a few hundred: bench/http_api.py).
    server = FinishingServer(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_keep_alive=65, timeout_graceful_shutdown=5, backlog=BACKLOG))
    failed: list[str] = []

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        attaching: asyncio.Task[None] | None = None
        while not server.started and not task.done():
            await asyncio.sleep(0.002)
        if server.started:
            print(f"READY {sock.getsockname()[1]}", flush=True)
            if owner_line is not None:
                attaching = asyncio.create_task(_attach_when_owned(launch, host, gate, owner_line, server, failed))
                await _warm_up(app)
        while not server.should_exit and not task.done():  # set by uvicorn's SIGTERM handler
            await asyncio.sleep(0.1)
        if attaching is not None:
            attaching.cancel()
        app.stop_soon()
        await task

    asyncio.run(serve())
    return 1 if failed else 0


async def _attach_when_owned(launch: dict[str, Any], host: Host, gate: HostGate, owner_line: Callable[[], str],
                             server: uvicorn.Server, failed: list[str]) -> None:
    """In a serving process forked ahead: wait (at most ``OWNER_WAIT`` s) for the owner's line,
    read by ``owner_line`` on a daemon thread (the event loop goes on serving); watch
    the owner (:func:`_owned`), attach ``host`` (on the loop: requests past the gate
    need it) and open ``gate``. A line that is no JSON, an attach that fails or no line
    in time: the reason on stderr, appended to ``failed``, and the server told to exit."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def arrived(text: str) -> None:
        if not line.done():  # (cancelled when the server stopped first)
            line.set_result(text)

    def read() -> None:
        text = owner_line()
        try:
            loop.call_soon_threadsafe(arrived, text)
        except RuntimeError:  # the loop has closed: the server stopped first
            pass

    threading.Thread(target=read, name="owner-line", daemon=True).start()
    try:
        _owned(json.loads(await asyncio.wait_for(line, OWNER_WAIT)))
        _attach(host, launch)
    except Exception as exc:
        reason = (f"no owner within {OWNER_WAIT} s" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}")
        print(f"the HTTP server cannot serve its host: {reason}", file=sys.stderr, flush=True)
        failed.append(reason)
        server.should_exit = True
        return
    gate.open()


async def _warm_up(app: Any) -> None:
    """While the process forked ahead waits for its owner: the app's first-request work
    (``_app.warm_up``); a failure is only written on stderr (the first request does
    that work then)."""
    try:
        await warm_up(app)
    except Exception as exc:
        print(f"the HTTP server's warm-up failed (its first requests do that work): {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)


def _owned(line: dict[str, Any]) -> None:
    """Stop with the owner the line names (a spawned process's parent also sends it
    SIGTERM with its death: ``PR_SET_PDEATHSIG``, for the time before this watch)."""
    owner = line.get("owner")
    if owner is not None:
        _die_with(int(owner))


def main() -> int:
    """``python -m adk_actors.http``: the settings and the owner come on one line."""
    launch = json.loads(sys.stdin.readline())
    _owned(launch)
    return _serve(launch, *_build(launch, attached_first=True))


def serve_standby(launch: dict[str, Any]) -> int:
    """In a process forked ahead by ``serve`` (``_standby``): build the app for
    ``launch`` and serve what needs no host at once; the owner's line comes later on
    stdin."""
    return _serve(launch, *_build(launch, attached_first=False), owner_line=sys.stdin.readline)
