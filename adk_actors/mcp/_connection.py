"""One open connection to an MCP server, on the ``mcp`` SDK's ``Client``.

``await McpConnection.open(params)`` starts the server (stdio: through
``_guard``, so it and every process it starts die with the thread that started it)
or connects to it (SSE, streamable HTTP), does the protocol's handshake and lists
the tools, all within ``params.timeout``; then :meth:`McpConnection.call_tool` calls
one with a deadline, :meth:`McpConnection.list_resources` and
:meth:`McpConnection.read_resource` list and read the server's resources (each with a
deadline too), :meth:`McpConnection.answer` does any of the three for a host's toolset
actor (a resource request is named :data:`RESOURCES_LIST` or :data:`RESOURCES_READ`,
MCP's method names, which no tool's name can be: MCP tool names have no ``/``), and
:meth:`McpConnection.close` ends it (a stdio server is stopped). Failures are
typed: :class:`McpUnavailable` (the server cannot be reached, or the connection
ended), :class:`McpCallTimeout` (the call's deadline fired; the connection stays),
:class:`McpError` (the server refused a resource request; the connection stays).
A stdio server's process id (its guardian's, which exits when the server does) is
:attr:`McpConnection.server_pid`, for a monitor.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import BlobResourceContents, TextResourceContents
from pydantic import TypeAdapter

from supervision.lowlevel import load_scaled

from .._exceptions import McpCallTimeout, McpError, McpUnavailable
from ._params import ConnectionParams, SseConnectionParams, StdioConnectionParams
from ._progress import ProgressFnT

__all__ = ["RESOURCES_LIST", "RESOURCES_READ", "McpConnection", "resource_contents", "tool_info"]

#: The name a resource listing travels under to a host's toolset actor (:meth:`McpConnection.answer`).
RESOURCES_LIST = "resources/list"
#: The name a resource read travels under (its one argument: ``uri``).
RESOURCES_READ = "resources/read"

_CONTENTS: TypeAdapter[list[TextResourceContents | BlobResourceContents]] = TypeAdapter(
    list[TextResourceContents | BlobResourceContents])


def resource_contents(dumped: list[dict[str, Any]]) -> list[TextResourceContents | BlobResourceContents]:
    """The SDK's resource contents (text or blob) that :meth:`McpConnection.read_resource`
    dumped as JSON (pydantic's ValidationError for anything else)."""
    return _CONTENTS.validate_python(dumped)


def tool_info(tool: Any) -> dict[str, Any]:
    """What the model needs of a listed tool: its name, description and JSON schemas as
    the server gave them (its input's; its output's, ``outputSchema``, when it has one);
    and whether the server says a call may be repeated (``idempotentHint`` or
    ``readOnlyHint``: a resumed run reruns such a call)."""
    hints = getattr(tool, "annotations", None)
    repeatable = hints is not None and bool(getattr(hints, "idempotent_hint", False) or
                                            getattr(hints, "read_only_hint", False))
    return {"name": tool.name, "description": tool.description or "",
            "input_schema": dict(tool.input_schema or {"type": "object", "properties": {}}),
            "output_schema": dict(tool.output_schema) if getattr(tool, "output_schema", None) else None,
            "idempotent": repeatable}


def _guarded(params: StdioServerParameters) -> StdioServerParameters:
    """The same server (environment, working directory and stderr unchanged), started
    through ``_guard``: the server's whole process group, a launcher's children
    included, is killed when the thread that starts it ends."""
    return params.model_copy(update={
        "command": sys.executable,
        "args": ["-m", "adk_actors.mcp._guard", str(os.getpid()), "--", params.command, *params.args]})


async def _transport(params: ConnectionParams, stack: AsyncExitStack) -> Any:
    """The SDK's transport for ``params`` (an HTTP client it needs is closed with ``stack``)."""
    if isinstance(params, StdioConnectionParams):
        return _guarded(params.server_params)
    if isinstance(params, SseConnectionParams):
        return sse_client(params.url, headers=params.headers, timeout=params.timeout,
                          sse_read_timeout=params.sse_read_timeout)
    http = await stack.enter_async_context(httpx2.AsyncClient(
        headers=params.headers or {}, timeout=httpx2.Timeout(params.timeout, read=params.sse_read_timeout)))
    return streamable_http_client(params.url, http_client=http, terminate_on_close=params.terminate_on_close)


class McpConnection:
    def __init__(self, params: ConnectionParams, client: Client, stack: AsyncExitStack, tools: list[dict[str, Any]],
                 server_pid: int | None) -> None:
        self.params = params
        self.tools = tools
        self.server_pid = server_pid
        self.closed = False
        self._client = client
        self._stack = stack

    @classmethod
    async def open(cls, params: ConnectionParams) -> McpConnection:
        """Connect, shake hands and list the tools within ``params.timeout``, stretched
        by this machine's load (``load_scaled``: this process and the server get only
        their share of the CPUs); McpUnavailable otherwise, with nothing left running."""
        stack = AsyncExitStack()
        before = _children() if isinstance(params, StdioConnectionParams) else set()
        limit = load_scaled(params.timeout)
        try:
            async with asyncio.timeout(limit):
                client = await stack.enter_async_context(Client(await _transport(params, stack)))
                listed = await client.list_tools()
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                async with asyncio.timeout(2.0):
                    await stack.aclose()
            if isinstance(exc, asyncio.CancelledError):
                raise
            why = f"no answer within {limit:.3g} s" if isinstance(exc, TimeoutError) else _reason(exc)
            raise McpUnavailable(f"the MCP server could not be reached: {why}") from None
        started = sorted(_children() - before)
        return cls(params, client, stack, [tool_info(t) for t in listed.tools], started[0] if started else None)

    async def call_tool(self, name: str, args: dict[str, Any], timeout: float,
                        progress_callback: ProgressFnT | None = None) -> dict[str, Any]:
        """The tool's result as google-adk gives it to the model (the ``CallToolResult``
        as JSON: ``content``, ``structuredContent``, ``isError``). With
        ``progress_callback``, the call asks the server for progress reports and each
        one the server sends while the call is pending is awaited with it
        (``progress``, ``total``, ``message``) on this connection's event loop; the
        deadline covers the callbacks too."""
        if self.closed:
            raise McpUnavailable("the connection to the MCP server is closed")
        try:
            async with asyncio.timeout(timeout):
                result = await self._client.call_tool(name, args, progress_callback=progress_callback)
        except TimeoutError:
            raise McpCallTimeout(f"the MCP tool {name!r} did not answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.closed = True
            raise McpUnavailable(f"the MCP server failed during the call to {name!r}: {_reason(exc)}") from None
        answer = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {key: answer[key] for key in ("content", "structuredContent", "isError") if key in answer}

    async def list_resources(self, timeout: float) -> list[dict[str, Any]]:
        """The server's resources (its first page of ``resources/list``, as google-adk
        reads it), each as JSON with MCP's key names (``name``, ``uri``, ``mimeType``,
        ...; ``meta`` for ``_meta``, as google-adk spells it), within ``timeout`` (else
        McpCallTimeout); McpError when the server refuses, McpUnavailable when the
        connection fails."""
        result = await self._resource_request("list the resources", timeout, self._client.list_resources)
        return [_dumped(resource) for resource in result.resources]

    async def read_resource(self, uri: str, timeout: float) -> list[dict[str, Any]]:
        """The contents of the resource at ``uri`` (each text or base64 ``blob``, as
        JSON like :meth:`list_resources`; :func:`resource_contents` makes them the SDK's
        again), with the same deadline and errors."""
        result = await self._resource_request(f"read the resource {uri!r}", timeout,
                                              lambda: self._client.read_resource(uri))
        return [_dumped(content) for content in result.contents]

    async def answer(self, name: str, args: dict[str, Any], timeout: float,
                     progress_callback: ProgressFnT | None = None) -> dict[str, Any]:
        """A host toolset actor's request: ``RESOURCES_LIST`` is answered
        ``{"resources": [...]}`` (:meth:`list_resources`), ``RESOURCES_READ``
        ``{"contents": [...]}`` (:meth:`read_resource` of ``args["uri"]``; McpError
        without a string ``uri``), unless the server has a tool of that name; any other
        name is the tool's call (:meth:`call_tool`, with ``progress_callback``)."""
        if name not in (RESOURCES_LIST, RESOURCES_READ) or any(tool["name"] == name for tool in self.tools):
            return await self.call_tool(name, args, timeout, progress_callback)
        if name == RESOURCES_LIST:
            return {"resources": await self.list_resources(timeout)}
        uri = args.get("uri")
        if not isinstance(uri, str):
            raise McpError("reading an MCP resource needs its uri (a string)")
        return {"contents": await self.read_resource(uri, timeout)}

    async def _resource_request(self, what: str, timeout: float, send: Any) -> Any:
        if self.closed:
            raise McpUnavailable("the connection to the MCP server is closed")
        try:
            async with asyncio.timeout(timeout):
                return await send()
        except TimeoutError:
            raise McpCallTimeout(f"the MCP server did not {what} within {timeout:g} s") from None
        except asyncio.CancelledError:
            raise
        except MCPError as exc:
            raise McpError(f"the MCP server could not {what}: {exc}") from None
        except Exception as exc:
            self.closed = True
            raise McpUnavailable(f"the MCP server failed to {what}: {_reason(exc)}") from None

    async def close(self, timeout: float = 5.0) -> None:
        """End the connection (a stdio server is asked to stop, then killed)."""
        self.closed = True
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(timeout):
                await self._stack.aclose()


def _dumped(model: Any) -> dict[str, Any]:
    """An SDK model as JSON with MCP's key names, ``_meta`` spelled ``meta`` (at its top)."""
    answer: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    if "_meta" in answer:
        answer["meta"] = answer.pop("_meta")
    return answer


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]


def _children() -> set[int]:
    """This process's child processes (from /proc)."""
    me = str(os.getpid())
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{me}/task")
    except OSError:
        return found
    for task in tasks:
        with contextlib.suppress(OSError), open(f"/proc/{me}/task/{task}/children") as handle:
            found.update(int(pid) for pid in handle.read().split())
    return found
