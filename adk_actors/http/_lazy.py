"""The routes of an optional extra, whose SDK is imported on their first request.

Why: a2a-sdk and the mcp SDK take 0.5-0.7 s each to import (``python -X importtime``:
protobuf types, SQLAlchemy, pydantic models), more than the rest of the web stack
together. Imported when the app was built, they were most of the HTTP server's start,
and so of ``adk-actors web DIR``'s (bench/first_hour.py), for routes most hosts never
serve a request. This is the one place where the HTTP server imports a module later
than at its own start, on purpose; nothing else depends on it being late.

A :class:`LazyExtra` is mounted where the extra's routes go (``/a2a``, ``/mcp``). On
its first request, in order: the module named (``adk_actors.http._a2a``, whose own
imports bring in the SDK) is imported on a worker thread, so the server's event loop
goes on answering other requests meanwhile (concurrent first requests wait for the
same import); ``build`` makes the real ASGI app from the module; that app serves this
request and every later one. When the import fails because the extra's package is
missing (a ``ModuleNotFoundError`` naming it), every request is answered as
:class:`~adk_actors.http._missing_extra.MissingExtra` answers (501 with the pip
command, logged); any other import error, or an error of ``build``, fails the request
(500, in the server's log) and the next request tries again.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from types import ModuleType

from starlette.types import ASGIApp, Receive, Scope, Send

from ._missing_extra import MissingExtra

__all__ = ["LazyExtra"]


class LazyExtra:
    """An ASGI app standing for ``build(import_module(module))``, made on the first
    request. ``extra`` is the top-level package the module needs (``a2a``, ``mcp``) and
    the extra that provides it; ``what`` names what the routes serve (e.g. "A2A")."""

    def __init__(self, module: str, build: Callable[[ModuleType], ASGIApp], *, extra: str, what: str) -> None:
        self._module = module
        self._build = build
        self._extra = extra
        self._what = what
        self._app: ASGIApp | None = None
        self._loading: asyncio.Lock | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app if self._app is not None else await self._load()
        await app(scope, receive, send)

    async def _load(self) -> ASGIApp:
        """The real app, imported and built once (a worker thread imports the module)."""
        if self._loading is None:
            self._loading = asyncio.Lock()
        async with self._loading:
            if self._app is None:
                module = await asyncio.to_thread(self._import)
                self._app = MissingExtra(self._extra, self._what) if module is None else self._build(module)
        return self._app

    def _import(self) -> ModuleType | None:
        """The module, or None when the extra's own package is missing."""
        try:
            return importlib.import_module(self._module)
        except ModuleNotFoundError as missing:
            if (missing.name or "").partition(".")[0] != self._extra:
                raise
            return None
