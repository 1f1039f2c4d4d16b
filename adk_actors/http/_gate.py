"""Requests that need the host wait until the server process is attached to it.

Why: the server process ``serve`` forks ahead of the tree (``_standby``) has built its
app long before the host's tree has started (bench/first_hour.py: the tree is most of
``adk-actors web DIR``'s start once the web stack is imported). What it can answer
from its own process it answers from then on; the rest waits here, as it would have
waited in the listening socket's backlog for a server that starts with the tree.

Answered at once (GET and HEAD only; nothing in them asks an actor): google-adk's
``/list-apps`` (the app catalog of this process) and ``/version``, the console's page
(``/``, ``/console/<file>``, not ``/console/api/...``) and adk-web's files
(``/dev-ui/...``). Every other request, ``/health`` included (it still says that the
host serves), waits until :meth:`HostGate.open`; one still waiting ``WAIT`` seconds
after it came is answered 503 with ``Retry-After`` (a WebSocket is closed, 1013
"try again later"). A gate made open lets everything through (a server started by
its actor, attached before it serves).
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Receive, Scope, Send

from ._errors import HOST_UNAVAILABLE, RETRY_AFTER

__all__ = ["WAIT", "HostGate", "answers_alone"]

#: How long a request may wait for the host: as long as ``serve`` gives its tree to
#: start (``Host.start``'s root start deadline).
WAIT = 120.0

_ALONE = frozenset({"/list-apps", "/version", "/"})


def answers_alone(scope: Scope) -> bool:
    """Does the server answer this request with no host (see the module's list)?"""
    if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
        return False
    path: str = scope["path"]
    if path in _ALONE or path == "/dev-ui" or path.startswith("/dev-ui/"):
        return True
    return path.startswith("/console/") and not path.startswith("/console/api/")


class HostGate:
    """ASGI wrapper of the app: requests that need the host wait for :meth:`open`
    (at most ``wait`` seconds), the others go through at once."""

    def __init__(self, app: ASGIApp, *, opened: bool, wait: float = WAIT) -> None:
        self.app = app
        self._wait = wait
        self._opened = opened
        self._open: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._open is None:
            self._open = asyncio.Event()
            if self._opened:
                self._open.set()
        return self._open

    def open(self) -> None:
        """In the server's event loop: let every waiting and later request through."""
        self._opened = True
        self._event().set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._opened or scope["type"] not in ("http", "websocket") or answers_alone(scope):
            await self.app(scope, receive, send)
            return
        try:
            await asyncio.wait_for(self._event().wait(), self._wait)
        except TimeoutError:
            await _unavailable(scope, send)
            return
        await self.app(scope, receive, send)


async def _unavailable(scope: Scope, send: Send) -> None:
    """503 with ``Retry-After`` (the errors' usual body); a WebSocket is refused."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1013, "reason": HOST_UNAVAILABLE})
        return
    body = json.dumps({"detail": HOST_UNAVAILABLE}).encode()
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(RETRY_AFTER).encode())]})
    await send({"type": "http.response.body", "body": body})
