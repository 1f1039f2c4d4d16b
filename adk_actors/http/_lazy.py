"""Routes whose module is imported on their first request, not at the server's start.

Why: the HTTP server's start is on the path of ``adk-actors web DIR``'s (the forked
server answers ``/list-apps`` once its app is built: ``_standby``, bench/first_hour.py).
a2a-sdk and the mcp SDK take 0.5-0.7 s each to import (``python -X importtime``:
protobuf types, SQLAlchemy, pydantic models); the eval routes bring in the whole eval
kit (its pydantic models, the metrics, ``AgentEvaluator`` and google-adk's ``Runner``
shape: about 0.1 s of the server's CPU with their own 22 routes); the console's, the
agent builder's, the trace and the job routes are smaller (10-15 ms each at most).
All of them serve routes that a start does not need to answer ``/list-apps`` or a
turn. This is the one place where the HTTP server imports a module later than at its
own start, on purpose; nothing else depends on it being late.

Two devices, both importing the module on a worker thread (so the server's event
loop goes on answering other requests meanwhile; concurrent first requests wait for
the same import):

* :class:`LazyExtra`, an ASGI app mounted where an optional extra's routes go (``/a2a``,
  ``/mcp``). On its first request the module named (``adk_actors.http._a2a``, whose own
  imports bring in the SDK) is imported; ``build`` makes the real ASGI app from it;
  that app serves this request and every later one.
* :class:`LazyRouter`, a route standing in the app's list of routes where a module's
  ``router`` (a FastAPI ``APIRouter``) would be included. Until its first request it
  claims every path under its ``prefixes`` (path templates such as
  ``/dev/apps/{app}/eval_sets``: the paths of all the router's routes, checked by
  tests). On that request, in order: the module is imported; its ``router`` is
  included in the app exactly as ``include_router`` would have at the start, and put
  where this stand-in was (so routes are matched in the same order as before); the
  stand-in is gone; the request is routed again from the app's first route, as if
  the router had been there all along (a path the router does not serve gets what it
  got before: another route's answer, a 405 or a 404). ``load_now`` does the same
  without a request, in the caller's thread: the OpenAPI schema loads every stand-in
  first, so that it lists the same routes as before.

Failures, the same for both: when the import fails because an optional extra's
package is missing (a ``ModuleNotFoundError`` naming the extra's module), every
request is answered as :class:`~adk_actors.http._missing_extra.MissingExtra` answers
(501 with the pip command, logged); any other import error, or an error of
``build``, fails the request (the app's handler answers a typed 500 and logs the
traceback) and the next request tries again.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import threading
from collections.abc import Callable, Collection, Sequence
from types import ModuleType
from typing import Any

from fastapi import FastAPI
from starlette.datastructures import URLPath
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Receive, Scope, Send

from .._extras import EXTRAS
from ._missing_extra import MissingExtra

__all__ = ["LazyExtra", "LazyRouter"]


def _import_unless_missing(module: str, packages: Collection[str]) -> tuple[ModuleType | None, str | None]:
    """``(module, None)`` once imported; ``(None, package)`` when the import failed for
    want of one of ``packages`` (an optional extra's top-level package); any other
    import error is raised."""
    try:
        return importlib.import_module(module), None
    except ModuleNotFoundError as missing:
        top = (missing.name or "").partition(".")[0]
        if top not in packages:
            raise
        return None, top


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
        module, _ = _import_unless_missing(self._module, {self._extra})
        return module


def _prefix_pattern(prefixes: Sequence[str]) -> re.Pattern[str]:
    """One regular expression for paths equal to, or below, one of ``prefixes`` (path
    templates: a ``{name}`` is one path segment; ``/`` is the root alone)."""
    alternatives = []
    for prefix in prefixes:
        if not prefix.startswith("/"):
            raise ValueError(f"a route prefix starts with '/': {prefix!r}")
        if prefix == "/":
            alternatives.append("/")
            continue
        parts = re.split(r"\{[^{}/]+\}", prefix.rstrip("/"))
        alternatives.append("[^/]+".join(re.escape(part) for part in parts) + "(?:/.*)?")
    return re.compile("(?:" + "|".join(alternatives) + ")", re.DOTALL)


class LazyRouter(BaseRoute):
    """A stand-in, in ``api``'s routes, for ``import_module(module).router`` included in
    ``api`` (with no arguments: its routes carry the app's own dependencies and response
    class, as they would have). ``prefixes`` are path templates every route of the
    router is at or below; ``what`` names what the routes serve (e.g. "The eval
    API"), for an extra's 501. It stands in until it is no longer in the app's routes."""

    def __init__(self, api: FastAPI, module: str, prefixes: Sequence[str], *, what: str) -> None:
        self.api = api
        self.module = module
        self.prefixes = tuple(prefixes)
        self._what = what
        self._pattern = _prefix_pattern(self.prefixes)
        self._loading: asyncio.Lock | None = None
        self._installing = threading.Lock()
        self._missing: MissingExtra | None = None

    @property
    def loaded(self) -> bool:
        """True once the router has taken this stand-in's place (or it was never put in)."""
        return self not in self.api.router.routes

    def claims(self, path: str) -> bool:
        """Is ``path`` (below the app's root) at or below one of the prefixes?"""
        return self._pattern.fullmatch(path) is not None

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return Match.NONE, {}
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        return (Match.FULL, {}) if self.claims(path) else (Match.NONE, {})

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Load the router (once), then route the request again from the app's first route."""
        if self._loading is None:
            self._loading = asyncio.Lock()
        async with self._loading:
            if not self.loaded and self._missing is None:
                module = await asyncio.to_thread(self._import)
                self._install(module)
        if self._missing is not None:
            await self._missing(scope, receive, send)
            return
        await self.api.router.app(scope, receive, send)

    def load_now(self) -> None:
        """Import and install the router in this thread (the server's loop thread: the
        app's list of routes is changed there only); nothing if it is there already."""
        if not self.loaded and self._missing is None:
            self._install(self._import())

    def _import(self) -> ModuleType | None:
        """The module, or None (and :class:`MissingExtra` to answer) when an optional
        extra's package is missing; any other error is raised."""
        module, missing = _import_unless_missing(self.module, EXTRAS)
        if missing is not None:
            self._missing = MissingExtra(EXTRAS[missing][0], self._what)
        return module

    def _install(self, module: ModuleType | None) -> None:
        """Include the module's router at this stand-in's place in the app's routes (in
        the loop's thread, between two requests' routing: nothing else iterates the
        list meanwhile), and forget the app's OpenAPI schema, made without it."""
        if module is None:
            return
        with self._installing:
            if self.loaded:
                return
            routes = self.api.router.routes
            self.api.include_router(module.router)
            included = routes.pop()  # include_router appends it
            routes[routes.index(self)] = included
            self.api.openapi_schema = None
