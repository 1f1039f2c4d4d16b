"""A server told to stop answers the requests on the connections it has accepted.

uvicorn, told to stop, closes at once a connection whose request it has not read yet,
and the kernel resets it: a caller whose connect was accepted just before a restart
of the ``http`` actor (``rest_for_one`` after a kill of any root child before it) saw
"connection reset by peer" (``test_front_door`` in CI). ``FinishingServer`` reads and
answers it first; here the request is sent only once the server has begun to stop.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from adk_actors.http import _process
from adk_actors.http._process import FinishingServer
from supervision.testing import wait_until


async def hello(scope: Any, receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
    await send({"type": "http.response.body", "body": b"hello"})


class Running:
    """A ``FinishingServer`` serving ``hello`` on a loopback socket, on a thread."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.server = FinishingServer(uvicorn.Config(hello, log_level="warning", lifespan="off",
                                                     timeout_graceful_shutdown=5))
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve(sockets=[self.listener])),
                                       daemon=True)

    def connect(self) -> socket.socket:
        client = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        return client

    def unread(self) -> int:
        return sum(1 for c in list(self.server.server_state.connections) if getattr(c, "cycle", "x") is None)

    def stopping(self) -> bool:
        return bool(self.server.servers) and not any(s.is_serving() for s in self.server.servers)


@pytest.fixture
def running() -> Iterator[Running]:
    served = Running()
    served.thread.start()
    wait_until(lambda: served.server.started, timeout=30, message="the server started")
    try:
        yield served
    finally:
        served.server.should_exit = True
        served.thread.join(30)
        served.listener.close()
        assert not served.thread.is_alive()


def answer(client: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while chunk := client.recv(4096):
        received += chunk
    return received


def test_a_request_sent_on_an_accepted_connection_after_the_stop_began_is_answered(running: Running) -> None:
    client = running.connect()
    wait_until(lambda: running.unread() == 1, timeout=10, message="the server accepted the connection")
    running.server.should_exit = True
    wait_until(running.stopping, timeout=10, message="the server stopped listening")
    client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    reply = answer(client)  # without FinishingServer: b"" or ConnectionResetError
    client.close()
    assert reply.startswith(b"HTTP/1.1 200"), reply
    assert reply.endswith(b"hello")
    running.thread.join(30)
    assert not running.thread.is_alive()


def test_an_idle_kept_alive_connection_does_not_hold_the_stop(running: Running,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a connection with no request read yet is waited for: one that has had its
    answer is closed by uvicorn as before, so the stop is not held ``FIRST_REQUEST_WAIT``."""
    monkeypatch.setattr(_process, "FIRST_REQUEST_WAIT", 600.0)
    client = running.connect()
    client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    first = b""
    while not first.endswith(b"hello"):
        first += client.recv(4096)
    assert first.startswith(b"HTTP/1.1 200")
    assert running.unread() == 0
    running.server.should_exit = True
    running.thread.join(60)  # held for the idle connection, it would take 600 s
    assert not running.thread.is_alive()
    assert answer(client) == b""  # closed by the server
    client.close()


def test_a_connection_that_never_sends_is_closed_after_the_wait(running: Running,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_process, "FIRST_REQUEST_WAIT", 0.2)
    client = running.connect()
    wait_until(lambda: running.unread() == 1, timeout=10, message="the server accepted the connection")
    running.server.should_exit = True
    running.thread.join(60)
    assert not running.thread.is_alive()
    assert answer(client) == b""
    client.close()
