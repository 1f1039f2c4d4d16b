"""A stand-in for Gemini's Live API (``BidiGenerateContent`` over a WebSocket) on
127.0.0.1: it checks every client message against google-genai's own
``LiveClientMessage`` and answers with messages its ``LiveServerMessage`` takes. Used by
our connector's tests and, served from a thread, by google-adk's own ``api_server``
in the side-by-side test of ``/run_live``."""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from google.genai import types as genai_types
from websockets.asyncio.server import ServerConnection, serve

__all__ = ["LiveServer", "live_server", "live_server_in_thread", "snake"]


class LiveServer:
    """A Live API stand-in: checks every client message against google-genai's
    ``LiveClientMessage`` and answers with messages google-genai's ``LiveServerMessage``
    takes. ``script(message)`` gives the answers to each message after the setup."""

    def __init__(self, script: Callable[[dict[str, Any]], list[dict[str, Any]]],
                 *, refuse: int | None = None, close_with: tuple[int, str] | None = None) -> None:
        self.script, self.refuse, self.close_with = script, refuse, close_with
        self.received: list[dict[str, Any]] = []
        self.headers: dict[str, str] = {}
        self.path = ""

    async def handle(self, socket: ServerConnection) -> None:
        assert socket.request is not None
        self.headers = dict(socket.request.headers.raw_items())
        self.path = socket.request.path
        async for raw in socket:
            message = json.loads(raw)
            genai_types.LiveClientMessage.model_validate(snake(message))  # google-genai takes it
            self.received.append(message)
            if "setup" in message:
                await socket.send(json.dumps({"setupComplete": {}}))
                continue
            if self.close_with is not None:
                await socket.close(*self.close_with)
                return
            for answer in self.script(message):
                genai_types.LiveServerMessage.model_validate(snake(answer))
                await socket.send(json.dumps(answer).encode())  # the Live API sends binary frames

    def process_request(self, connection: Any, request: Any) -> Any:
        if self.refuse is not None:
            return connection.respond(self.refuse, "API key not valid\n")
        return None


def snake(value: Any) -> Any:
    """camelCase keys as snake_case, as google-genai's types name them."""
    if isinstance(value, dict):
        return {"".join("_" + c.lower() if c.isupper() else c for c in k): snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake(v) for v in value]
    return value


@asynccontextmanager
async def live_server(server: LiveServer, tls: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    """``server`` on a free port of 127.0.0.1, over TLS with ``tls``: its base URL."""
    async with serve(server.handle, "127.0.0.1", 0, process_request=server.process_request, ssl=tls) as running:
        port = running.sockets[0].getsockname()[1]
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"


@contextmanager
def live_server_in_thread(server: LiveServer, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """``live_server`` on its own event loop in a thread, for callers in other
    processes; stopped (its loop closed) on exit, also when the body raised."""
    started: list[str] = []
    ready = threading.Event()
    stop: list[asyncio.Event] = []

    async def main() -> None:
        stop.append(asyncio.Event())
        async with live_server(server, tls) as url:
            started.append(url)
            ready.set()
            await stop[0].wait()

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the Live API stand-in did not start")
    try:
        yield started[0]
    finally:
        loop.call_soon_threadsafe(stop[0].set)
        thread.join(10)
        loop.close()
