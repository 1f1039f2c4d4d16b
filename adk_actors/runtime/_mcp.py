"""The host's MCP toolsets: one supervised actor per toolset (its connection
parameters), shared by every run of the host.

    services
    └── mcp             one_for_one (``McpSupervisor``); children on first use; it never
        │               imports the mcp SDK
        ├── mcp-<key>   one MCP server's connection (McpToolsetActor)
        └── ...

A run that needs toolset ``key`` asks the actor registered as ``mcp:<key>``; when
there is none (or it still opens its connection), it asks the ``mcp`` supervisor to
start it (``StartChild`` of
:func:`~adk_actors.runtime._services_client.mcp_toolset_child`, answered when the
connection is open; one already there is as good) and asks again
(``_services_client``).

This module imports nothing of the mcp SDK, and the toolset's start arguments
(:class:`McpToolsetStart`) are plain strings: the supervisor imports this module to
start a child, and unpickles the arguments, on its message loop, which must stay free
to answer its own health checks; the SDK's import (~0.5 s of CPU idle, many seconds
under load) is the toolset actor's, in its own process, on its connection's thread. The cost:
every start of a toolset actor, restarts included, imports the SDK again (it is not
forked from an image that has it).

The actor:

1. on ``init``, starts an event loop thread of its own and, on it, the connection's
   opening: the SDK's import (``adk_actors.mcp``, by :data:`MCP_CLIENT`), the
   connection parameters read from the start arguments, and the connection opened
   (``McpConnection.open``: the stdio server is started, the tools listed) within the
   parameters' ``timeout``. ``init`` returns at once, so the ``mcp`` supervisor's start
   of this actor is over in milliseconds and the next toolset's start begins while
   this one opens (issue 53: toolsets open at the same time, not one after another);
   the actor's own thread stays free (its messages, a health check, are answered);
2. while the connection opens, answers every call ``not_running`` (as the registry
   does for a name with no actor: the caller asks its supervisor to start it, and is
   answered when it opened; or, during a restart, asks again shortly. A held call
   would outlast the caller's wait for it). Opened: it tells its supervisor
   (:class:`ToolsetOpened`, which answers the ``StartChild`` callers then) and serves.
   Failed (a bad parameter, the SDK missing, the server not starting or not
   answering): every call after is answered ``mcp_unavailable`` with the reason, and
   it tells its supervisor
   (:class:`ToolsetOpenFailed`), which stops it (a first start: the ``StartChild``
   callers get ``start_failed`` with the reason) or has it crash (:class:`OpenGiveUp`;
   a restart: restarted again with backoff, as a restart whose start failed);
3. answers ``ListMcpTools`` from the list it got, and runs each ``CallMcpTool`` on
   its loop without blocking its messages (the answer comes back through a pipe it
   watches), with the call's deadline: a timeout is answered ``mcp_timeout``. A call
   with a ``progress`` id keeps the server's progress reports of it (at most
   ``_MAX_REPORTS``, for at most ``_MAX_PROGRESS_CALLS`` calls, the oldest forgotten
   first), which ``McpCallProgress`` asks for while the call is pending and once after
   (the run's side gives them to the user's callback, in the run worker). A call
   named ``resources/list`` or ``resources/read`` (``McpConnection.answer``) lists or
   reads the server's resources instead, the same way; the server refusing one is
   answered ``mcp_error`` (the connection stays);
4. crashes (let it crash) when the connection ends: a call that finds it ended, or
   the stdio server's process exiting (a pidfd monitor). Callers waiting get an
   error reply at once (``mcp_unavailable``), and the supervisor restarts it with
   backoff, which starts a new server process;
5. on shutdown, stops the opening or the server (the stdio one is asked to stop, then
   killed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import os
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from supervision import CallerRef, CallError, GenServer, ServerNotRunning
from supervision.lowlevel import NO_REPLY, load_scaled
from supervision.protocol import Cast

from .._exceptions import McpCallTimeout, McpError, McpUnavailable
from .._validate import check_message
from ._service_calls import CallMcpTool, ListMcpTools, McpCallProgress, McpToolsetStart

if TYPE_CHECKING:  # (for the annotations only: the actor imports it in ``init``)
    from ..mcp import McpConnection

__all__ = ["MCP_CLIENT", "McpToolsetActor", "OpenGiveUp", "ToolsetOpenFailed", "ToolsetOpened"]

#: The module a toolset actor imports as its connection opens (and the mcp SDK with it).
MCP_CLIENT: Final = "adk_actors.mcp"
#: The calls whose progress reports a toolset actor keeps (the oldest forgotten first).
_MAX_PROGRESS_CALLS: Final = 256
#: The progress reports kept of one call (those after are dropped).
_MAX_REPORTS: Final = 1000


@dataclass(frozen=True)
class ToolsetOpened:
    """Cast by toolset actor ``child_id`` (process ``pid``) to its supervisor: its
    connection is open, it serves."""

    child_id: str
    pid: int


@dataclass(frozen=True)
class ToolsetOpenFailed:
    """Cast by toolset actor ``child_id`` (process ``pid``) to its supervisor: its
    connection could not be opened, for ``reason``; it serves nothing."""

    child_id: str
    pid: int
    reason: str


@dataclass(frozen=True)
class OpenGiveUp:
    """Cast by the supervisor to a toolset actor whose opening failed during a restart:
    crash with ``reason`` (and be restarted with backoff)."""

    reason: str


async def _open(args: McpToolsetStart) -> McpConnection:
    """(On the connection's thread.) Import the SDK, read the parameters, open."""
    client = importlib.import_module(MCP_CLIENT)  # here, in this actor's process: the SDK
    params = client.connection_params(args.kind, args.params)  # ValueError: no start
    connection: McpConnection = await asyncio.wait_for(client.McpConnection.open(params),
                                                       load_scaled(params.timeout) + 5.0)
    return connection


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "the MCP server did not answer in time"
    return f"{type(error).__name__}: {error}"


class McpToolsetActor(GenServer):
    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: McpToolsetStart) -> None:
        """Start the connection's thread and, on it, the opening (see the module); return."""
        self.toolset = args
        self.connection: McpConnection | None = None
        self.failure: str | None = None  # why the connection could not be opened
        self._in_flight: dict[str, CallerRef] = {}
        self._progress: dict[str, list[list[Any]]] = {}  # (appended on the connection's thread)
        self._done: queue.SimpleQueue[tuple[CallerRef | None, concurrent.futures.Future[Any]]] = queue.SimpleQueue()
        self._bell_read, self._bell_write = os.pipe()
        os.set_blocking(self._bell_read, False)
        self.watch_fds([self._bell_read])
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-connection", daemon=True)
        self._thread.start()
        self._opening = asyncio.run_coroutine_threadsafe(_open(args), self._loop)
        self._opening.add_done_callback(lambda done: self._answer_soon(None, done))

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, McpCallProgress):
            reports = self._progress.get(request.progress, [])
            kept = [list(report) for report in reports[max(0, request.after):]]
            if request.done:
                self._progress.pop(request.progress, None)
            return kept
        if isinstance(request, (ListMcpTools, CallMcpTool)):
            if self.failure is not None:
                raise CallError(f"the MCP server could not be started: {self.failure}", code="mcp_unavailable")
            if self.connection is None:
                raise ServerNotRunning("the MCP server's connection is still opening")
            return self._serve(request, caller)
        return super().handle_call(request, caller)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, OpenGiveUp):
            raise RuntimeError(f"the MCP server could not be started: {request.reason}")
        super().handle_cast(request)

    def _serve(self, request: ListMcpTools | CallMcpTool, caller: CallerRef) -> Any:
        assert self.connection is not None
        if isinstance(request, ListMcpTools):
            return self.connection.tools
        if not isinstance(request.args, dict) or not isinstance(request.name, str):
            raise CallError("a tool call needs a name and a dict of arguments", code="invalid_request")
        future = asyncio.run_coroutine_threadsafe(
            self.connection.answer(request.name, request.args, max(0.001, float(request.timeout)),
                                   self._progress_keeper(request.progress)), self._loop)
        self._in_flight[caller.ref] = caller
        future.add_done_callback(lambda done: self._answer_soon(caller, done))
        return NO_REPLY

    def _progress_keeper(self, progress: str) -> Any:
        """None without a ``progress`` id; else the callback keeping the call's reports
        under it (run on the connection's thread; the oldest call's forgotten when more
        than ``_MAX_PROGRESS_CALLS`` are kept)."""
        if not progress:
            return None
        reports = self._progress[progress] = []
        while len(self._progress) > _MAX_PROGRESS_CALLS:
            self._progress.pop(next(iter(self._progress)))

        async def keep(value: float, total: float | None, message: str | None) -> None:
            if len(reports) < _MAX_REPORTS:
                reports.append([value, total, message])

        return keep

    def _opened(self, done: concurrent.futures.Future[Any]) -> None:
        """The opening ended: serve from now on, and tell the supervisor; or fail every
        call from now on, and tell the supervisor (which decides what becomes of this
        actor)."""
        error = None if done.cancelled() else done.exception()
        if done.cancelled() or error is not None:
            self.failure = "the opening was cancelled" if error is None else _describe(error)
            if self.supervisor is None:  # (started alone: nobody to decide; crash)
                raise RuntimeError(f"the MCP server could not be started: {self.failure}")
            self.send(self.supervisor, Cast(ToolsetOpenFailed(self.child_id or "", os.getpid(), self.failure)))
            return
        self.connection = done.result()
        if self.connection.server_pid is not None:
            self.monitor_process(self.connection.server_pid, "server")
        if self.supervisor is not None:
            self.send(self.supervisor, Cast(ToolsetOpened(self.child_id or "", os.getpid())))

    def _answer_soon(self, caller: CallerRef | None, done: concurrent.futures.Future[Any]) -> None:
        """(On the connection's thread.) Hand the answer (None: the opening's end) to
        the actor's own thread."""
        self._done.put((caller, done))
        try:
            os.write(self._bell_write, b"x")
        except OSError:  # the actor is ending
            pass

    def handle_watch(self, ready: list[int]) -> None:
        """Act on the opening's end (:meth:`_opened`) and answer the calls that ended;
        crash after answering if the connection ended."""
        try:
            while os.read(self._bell_read, 4096):
                pass
        except BlockingIOError:
            pass
        ended: str | None = None
        while True:
            try:
                caller, done = self._done.get_nowait()
            except queue.Empty:
                break
            if caller is None:
                self._opened(done)
                continue
            if self._in_flight.pop(caller.ref, None) is None:
                continue  # answered already (its server's process exited)
            error = done.exception()
            if error is None:
                self.reply(caller, done.result())
            elif isinstance(error, McpError):
                code = ("mcp_timeout" if isinstance(error, McpCallTimeout) else
                        "mcp_unavailable" if isinstance(error, McpUnavailable) else "mcp_error")
                self.reply_error(caller, CallError(str(error), code=code))
                if code == "mcp_unavailable":
                    ended = str(error)
            else:
                self.reply_error(caller, CallError(f"{type(error).__name__}: {error}", code="mcp_unavailable"))
        if ended is not None:
            raise RuntimeError(f"the MCP server's connection ended: {ended}")

    def handle_process_down(self, tag: Any) -> None:
        """The stdio server's process exited: the calls in flight are answered, then crash."""
        for caller in self._in_flight.values():
            self.reply_error(caller, CallError("the MCP server's process exited during the call",
                                               code="mcp_unavailable"))
        self._in_flight.clear()
        raise RuntimeError("the MCP server's process exited")

    def terminate(self, reason: Any) -> None:
        connection, loop = getattr(self, "connection", None), getattr(self, "_loop", None)
        if loop is None:
            return
        self._opening.cancel()  # (still opening: the opening's own cleanup stops the server)
        if connection is not None:
            try:
                asyncio.run_coroutine_threadsafe(connection.close(3.0), loop).result(5.0)
            except Exception:  # the server is killed with this process's thread anyway (_guard)
                pass
        loop.call_soon_threadsafe(loop.stop)
        for fd in (self._bell_read, self._bell_write):
            try:
                os.close(fd)
            except OSError:
                pass
