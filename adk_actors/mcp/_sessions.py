"""google-adk's MCP session names (``google.adk.tools.mcp_tool.mcp_session_manager`` and
``session_context``), on the ``mcp`` SDK's ``Client``, for code that opens an SDK
session itself.

* :func:`create_mcp_http_client`: an ``httpx2.AsyncClient`` with the MCP transports'
  default timeouts, as the SDK's function makes it (google-adk's also adds
  OpenTelemetry tracing, which with SDK 2.x it leaves off too);
* :class:`CheckableMcpHttpClientFactory`: the shape of such a factory (a runtime
  checkable protocol);
* :class:`SessionContext`: one SDK session kept open by a task of its own (the SDK's
  cancel scopes must be entered and left by one task): :meth:`SessionContext.start`
  gives the ``ClientSession``, :meth:`SessionContext.close` ends it;
* :class:`MCPSessionManager`: the sessions to one server, one per set of headers and
  event loop: :meth:`MCPSessionManager.create_session` gives a ready ``ClientSession``
  (the one already open when it still runs), :meth:`MCPSessionManager.close` ends them.

What differs from google-adk's: a stdio server is started through ``_guard`` (it and
every process it starts die with the thread that started it, as our toolsets' servers
do); the connection parameters have no ``httpx_client_factory`` field (an HTTP session
gets :func:`create_mcp_http_client`'s client); sessions are not closed after an idle
time, mTLS is not probed, and HTTP exchanges are not recorded for debugging; a session
that cannot be opened raises :class:`McpSessionError`, which is a ``ConnectionError``
(google-adk's type) and our :class:`McpUnavailable`. Our toolsets do not use these
sessions: their connection is an ``McpConnection`` (on a host, in the toolset's actor).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, Protocol, TextIO, runtime_checkable

import httpx2
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from .._exceptions import McpUnavailable
from ._connection import _guarded, _reason
from ._params import ConnectionParams, SseConnectionParams, StdioConnectionParams

__all__ = ["CheckableMcpHttpClientFactory", "MCPSessionManager", "McpSessionError", "SessionContext",
           "create_mcp_http_client"]

_log = logging.getLogger("adk_actors.mcp")

#: How long closing a session may take when it has no timeout of its own.
_CLOSE_SECONDS = 5.0


class McpSessionError(McpUnavailable, ConnectionError):
    """An MCP session could not be opened, or its task ended (google-adk raises a
    ``ConnectionError``; this is one, and our :class:`McpUnavailable` too)."""


@runtime_checkable
class CheckableMcpHttpClientFactory(Protocol):
    """A callable making the HTTP client of an MCP transport, as the SDK calls one:
    ``headers``, ``timeout`` and ``auth``, each optional, give an ``httpx2.AsyncClient``."""

    def __call__(self, headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                 auth: httpx2.Auth | None = None) -> httpx2.AsyncClient: ...


def create_mcp_http_client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                           auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    """An HTTP client for an MCP transport, as the SDK makes one: ``headers`` sent with
    every request, ``timeout`` (when None, the SDK's defaults: 30 s, and 300 s for
    reading, as a server may hold a stream open), ``auth``; redirects not followed
    (the SDK's transports follow those within the server's origin themselves). Use it
    as an ``async with`` context, which closes it."""
    return httpx2.AsyncClient(headers=headers, timeout=timeout or httpx2.Timeout(30.0, read=300.0), auth=auth)


class SessionContext:
    """One SDK session, opened, used and closed by a task of its own.

    ``client`` is a transport: an async context manager giving the read and write
    streams (the SDK's ``stdio_client(...)``, ``sse_client(...)``,
    ``streamable_http_client(...)``). ``timeout`` bounds opening (connecting and the
    handshake together) and closing; each request of the session has
    ``sse_read_timeout`` as its deadline, or ``timeout`` when ``is_stdio``. The
    sampling and elicitation callbacks are the SDK client's. Usable as
    ``async with SessionContext(...) as session``.
    """

    def __init__(self, client: Any, timeout: float | None, sse_read_timeout: float | None, is_stdio: bool = False,
                 *, sampling_callback: Any = None, sampling_capabilities: Any = None,
                 elicitation_callback: Any = None) -> None:
        self._client = client
        self._timeout = timeout
        self._read_timeout = timeout if is_stdio else sse_read_timeout
        self._callbacks = {"sampling_callback": sampling_callback, "sampling_capabilities": sampling_capabilities,
                           "elicitation_callback": elicitation_callback}
        self._session: ClientSession | None = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def session(self) -> ClientSession | None:
        """The open session (None before :meth:`start` gave it, and after it ended)."""
        return self._session

    @property
    def alive(self) -> bool:
        """Whether the session's task runs (started, not ended)."""
        return self._task is not None and not self._task.done()

    async def start(self) -> ClientSession:
        """The open session, in order: the one already open, if any; McpSessionError once
        :meth:`close` was called; otherwise the session's task is started (once) and
        waited for until the session is ready, within ``timeout`` (past it the task is
        cancelled and McpSessionError raised); a task that failed or ended raises
        McpSessionError with its reason."""
        if self._session is not None and self.alive:
            return self._session
        if self._closing.is_set():
            raise McpSessionError("the MCP session is closed")
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        try:
            async with asyncio.timeout(self._timeout):
                await self._ready.wait()
        except TimeoutError:
            await self._stop(self._task)
            raise McpSessionError(f"the MCP session was not ready within {self._timeout:g} s") from None
        if self._session is None or self._task.done():
            failure = None if self._task.cancelled() or not self._task.done() else self._task.exception()
            why = _reason(failure) if failure is not None else "its task ended"
            raise McpSessionError(f"could not open the MCP session: {why}") from failure
        return self._session

    async def close(self) -> None:
        """End the session: its task is told to leave the session and transport (a stdio
        server is stopped) and waited for within ``timeout`` (5 s without one); one
        not ready yet, or past that time, is cancelled. Errors of the ending are
        logged, not raised. Closing twice, or before :meth:`start`, does nothing more."""
        self._closing.set()
        task = self._task
        if task is None or task.done():
            return
        if not self._ready.is_set():
            await self._stop(task)
            return
        try:
            async with asyncio.timeout(self._timeout or _CLOSE_SECONDS):
                await asyncio.shield(task)
        except TimeoutError:
            _log.warning("closing an MCP session took too long; its task is cancelled")
            await self._stop(task)
        except Exception as exc:
            _log.warning("closing an MCP session failed: %s", _reason(exc))

    async def __aenter__(self) -> ClientSession:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _stop(self, task: asyncio.Task[None]) -> None:
        """Cancel ``task`` and wait (at most 2 s) for it to end."""
        task.cancel()
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(2.0):
                await asyncio.wait({task})

    async def _run(self) -> None:
        try:
            async with Client(self._client, read_timeout_seconds=self._read_timeout, **self._callbacks) as client:
                self._session = client.session
                self._ready.set()
                await self._closing.wait()
        finally:
            self._session = None
            self._ready.set()


@contextlib.asynccontextmanager
async def _streams(params: ConnectionParams, headers: dict[str, str] | None, errlog: TextIO) -> AsyncIterator[Any]:
    """The read and write streams of a transport to ``params``'s server (``headers`` for
    HTTP), closed when the context ends."""
    if isinstance(params, StdioConnectionParams):
        async with stdio_client(_guarded(params.server_params), errlog=errlog) as streams:
            yield streams
    elif isinstance(params, SseConnectionParams):
        async with sse_client(params.url, headers=headers, timeout=params.timeout,
                              sse_read_timeout=params.sse_read_timeout) as streams:
            yield streams
    else:
        timeout = httpx2.Timeout(params.timeout, read=params.sse_read_timeout)
        async with create_mcp_http_client(headers=headers, timeout=timeout) as http, \
                streamable_http_client(params.url, http_client=http,
                                       terminate_on_close=params.terminate_on_close) as streams:
            yield streams


class MCPSessionManager:
    """The SDK sessions to one MCP server (``connection_params``: our connection
    parameters, or the SDK's ``StdioServerParameters``, taken with a 5 s timeout);
    ``errlog`` gets a stdio server's stderr; the sampling and elicitation callbacks go
    to every session's client. See the module for what differs from google-adk's."""

    def __init__(self, connection_params: ConnectionParams | StdioServerParameters, errlog: TextIO = sys.stderr, *,
                 sampling_callback: Any = None, sampling_capabilities: Any = None,
                 elicitation_callback: Any = None) -> None:
        if isinstance(connection_params, StdioServerParameters):
            connection_params = StdioConnectionParams(server_params=connection_params, timeout=5.0)
        self._connection_params: ConnectionParams = connection_params
        self._errlog = errlog
        self._callbacks = {"sampling_callback": sampling_callback, "sampling_capabilities": sampling_capabilities,
                           "elicitation_callback": elicitation_callback}
        self._sessions: dict[str, tuple[SessionContext, asyncio.AbstractEventLoop]] = {}
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._locks_guard = threading.Lock()

    @property
    def connection_params(self) -> ConnectionParams:
        return self._connection_params

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._locks_guard:
            return self._locks.setdefault(loop, asyncio.Lock())

    def _merged_headers(self, headers: dict[str, str] | None) -> dict[str, str] | None:
        """The parameters' headers with ``headers`` over them (None for stdio, or none)."""
        if isinstance(self._connection_params, StdioConnectionParams):
            return None
        merged = {**(self._connection_params.headers or {}), **(headers or {})}
        return merged or None

    async def create_session(self, headers: dict[str, str] | None = None) -> ClientSession:
        """A ready SDK ``ClientSession`` to the server, in order: the parameters'
        headers with ``headers`` over them (HTTP only) name the session; the one of that
        name opened on this event loop is given while its task runs; one of another
        loop, or whose task ended, is closed (on its own loop) and forgotten; then a new
        one is opened (:meth:`SessionContext.start`: within the parameters' ``timeout``;
        McpSessionError, a ``ConnectionError``, when it cannot be) and kept. One
        session is opened at a time per event loop."""
        merged = self._merged_headers(headers)
        key = hashlib.sha256(json.dumps(merged or {}, sort_keys=True).encode()).hexdigest()
        loop = asyncio.get_running_loop()
        async with self._lock():
            kept = self._sessions.get(key)
            if kept is not None:
                context, owner = kept
                if owner is loop and context.alive and context.session is not None:
                    return context.session
                del self._sessions[key]
                await _close_on(context, owner)
            params = self._connection_params
            context = SessionContext(_streams(params, merged, self._errlog), params.timeout,
                                     getattr(params, "sse_read_timeout", None),
                                     isinstance(params, StdioConnectionParams), **self._callbacks)
            session = await context.start()
            self._sessions[key] = (context, loop)
            return session

    async def close(self) -> None:
        """End every session: those of this event loop are closed and waited for (each
        within its timeout, :meth:`SessionContext.close`); those of another running loop
        are closed on it, without waiting; the rest (a loop that ended) are forgotten."""
        async with self._lock():
            kept, self._sessions = list(self._sessions.values()), {}
            for context, owner in kept:
                await _close_on(context, owner)


async def _close_on(context: SessionContext, owner: asyncio.AbstractEventLoop) -> None:
    """Close ``context`` on its loop ``owner``: awaited when that is the running loop,
    sent to it otherwise (when it still runs)."""
    if owner is asyncio.get_running_loop():
        await context.close()
    elif owner.is_running():
        asyncio.run_coroutine_threadsafe(context.close(), owner)
