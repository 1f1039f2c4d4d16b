"""The host's MCP toolsets: one supervised actor per toolset (its connection
parameters), shared by every run of the host.

    services
    └── mcp             one_for_one (``McpSupervisor``); children on first use; it never
        │               imports the mcp SDK
        ├── mcp-<key>   one MCP server's connection (McpToolsetActor)
        └── ...

A run that needs toolset ``key`` asks the actor registered as ``mcp:<key>``; when
there is none, it asks the ``mcp`` supervisor to start it (``StartChild`` of
:func:`~adk_actors.runtime._services_client.mcp_toolset_child`; one already there is
as good) and asks again (``_services_client``).

This module imports nothing of the mcp SDK, and the toolset's start arguments
(:class:`McpToolsetStart`) are plain strings: the supervisor imports this module to
start a child, and unpickles the arguments, on its message loop, which must stay free
to answer its own health checks; the SDK's import (~0.5 s of CPU idle, many seconds
under load) is the toolset actor's, in its own process, during its ``init``. The cost:
every start of a toolset actor, restarts included, imports the SDK again (it is not
forked from an image that has it).

The actor:

1. on ``init``, imports the SDK (``adk_actors.mcp``, by :data:`MCP_CLIENT`), reads its
   connection parameters from the start arguments (a bad one: no start, with the
   reason), and opens the connection (``McpConnection.open``: the stdio server is
   started, the tools listed) on an event loop thread of its own, within the
   parameters' ``timeout``; failing that, it does not start (the run's tool call gets
   the reason); the ``mcp`` supervisor waits for all this without blocking (its
   ``start_timeout``, stretched with the load);
2. answers ``ListMcpTools`` from the list it got, and runs each ``CallMcpTool`` on
   its loop without blocking its messages (the answer comes back through a pipe it
   watches), with the call's deadline: a timeout is answered ``mcp_timeout``;
3. crashes (let it crash) when the connection ends: a call that finds it ended, or
   the stdio server's process exiting (a pidfd monitor). Callers waiting get an
   error reply at once (``mcp_unavailable``), and the supervisor restarts it with
   backoff, which starts a new server process;
4. on shutdown, stops the server (the stdio one is asked to stop, then killed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import os
import queue
import threading
from typing import TYPE_CHECKING, Any, Final

from supervision import NO_REPLY, CallerRef, CallError, GenServer

from .._exceptions import McpCallTimeout, McpError
from .._validate import check_message
from ._service_calls import CallMcpTool, ListMcpTools, McpToolsetStart

if TYPE_CHECKING:  # (for the annotations only: the actor imports it in ``init``)
    from ..mcp import McpConnection

__all__ = ["MCP_CLIENT", "McpToolsetActor"]

#: The module a toolset actor imports in its ``init`` (and the mcp SDK with it).
MCP_CLIENT: Final = "adk_actors.mcp"


class McpToolsetActor(GenServer):
    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: McpToolsetStart) -> None:
        """Import the SDK, read the parameters, open the connection (see the module)."""
        client = importlib.import_module(MCP_CLIENT)  # here, in this actor's process: the SDK
        params = client.connection_params(args.kind, args.params)  # ValueError: no start
        self.toolset = args
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-connection", daemon=True)
        self._thread.start()
        self._done: queue.SimpleQueue[tuple[CallerRef, concurrent.futures.Future[Any]]] = queue.SimpleQueue()
        self._bell_read, self._bell_write = os.pipe()
        os.set_blocking(self._bell_read, False)
        self.watch_fds([self._bell_read])
        self.connection: McpConnection | None = None
        self._in_flight: dict[str, CallerRef] = {}
        opening = asyncio.run_coroutine_threadsafe(client.McpConnection.open(params), self._loop)
        self.connection = opening.result(params.timeout + 5.0)  # McpUnavailable: no start
        if self.connection.server_pid is not None:
            self.monitor_process(self.connection.server_pid, "server")

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        assert self.connection is not None
        if isinstance(request, ListMcpTools):
            return self.connection.tools
        if isinstance(request, CallMcpTool):
            if not isinstance(request.args, dict) or not isinstance(request.name, str):
                raise CallError("a tool call needs a name and a dict of arguments", code="invalid_request")
            future = asyncio.run_coroutine_threadsafe(
                self.connection.call_tool(request.name, request.args, max(0.001, float(request.timeout))), self._loop)
            self._in_flight[caller.ref] = caller
            future.add_done_callback(lambda done: self._answer_soon(caller, done))
            return NO_REPLY
        return super().handle_call(request, caller)

    def _answer_soon(self, caller: CallerRef, done: concurrent.futures.Future[Any]) -> None:
        """(On the connection's thread.) Hand the answer to the actor's own thread."""
        self._done.put((caller, done))
        try:
            os.write(self._bell_write, b"x")
        except OSError:  # the actor is ending
            pass

    def handle_watch(self, ready: list[int]) -> None:
        """Answer the calls that ended; crash after answering if the connection ended."""
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
            if self._in_flight.pop(caller.ref, None) is None:
                continue  # answered already (its server's process exited)
            error = done.exception()
            if error is None:
                self.reply(caller, done.result())
            elif isinstance(error, McpError):
                code = "mcp_timeout" if isinstance(error, McpCallTimeout) else "mcp_unavailable"
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
