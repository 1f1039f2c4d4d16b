"""The answer of a route whose extra is not installed (``/a2a`` without a2a-sdk):
HTTP 501 with the pip command, and a warning in the host's log, never a bare 404.
"""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from .._extras import extra_hint

__all__ = ["MissingExtra"]

_log = logging.getLogger("adk_actors.http")


class MissingExtra:
    """An ASGI app mounted where ``extra``'s routes would be (``what``: what they
    serve, e.g. "A2A"). Every request is answered 501 ``{"detail": "... pip install
    'adk-actors[EXTRA]'"}``; the first one (and every 100th after it) is logged as a
    warning with the path asked, so an operator sees why clients fail."""

    def __init__(self, extra: str, what: str) -> None:
        self.detail = f"{what} is not served by this host: {extra_hint(extra)}"
        self._asked = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if self._asked % 100 == 0:
            _log.warning("%s (asked for %s; %d such requests so far)", self.detail, scope["path"], self._asked + 1)
        self._asked += 1
        await JSONResponse({"detail": self.detail}, status_code=501)(scope, receive, send)
