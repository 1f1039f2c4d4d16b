"""McpToolset: an MCP server's tools in an agent's ``tools``, as google-adk names it.

``McpToolset(connection_params=..., tool_filter=[...], tool_name_prefix=...)`` is a
toolset (``adk_actors.tools.Toolset``): for each model request it gives the server's
tools (those ``tool_filter`` keeps: a list of names, or a predicate on a tool's
name), each with its description and JSON schema as the server listed them; in a model
request, as google-adk 2.13 sends them, that text is fenced as untrusted (see
:meth:`McpTool.process_llm_request`). A call
returns the server's ``CallToolResult`` as JSON (``content``, ``structuredContent``,
``isError``), as google-adk's ``MCPTool`` does, and has a deadline
(``call_timeout``); a server that cannot be reached or dies fails the call with a
typed error (:class:`McpUnavailable`, :class:`McpCallTimeout`), which the run turns
into the tool's error response: the run goes on.

Resources, as google-adk 2.13 has them: :meth:`McpToolset.list_resources` (the
resources' names), :meth:`McpToolset.get_resource_info` (one's metadata, as the server
listed it) and :meth:`McpToolset.read_resource` (one's contents, the SDK's text and
blob contents); each with the parameters' ``timeout`` as its deadline. With
``use_mcp_resources=True``, :meth:`McpToolset.get_tools` adds a ``load_mcp_resource``
tool (:class:`adk_actors.tools.load_mcp_resource_tool.LoadMcpResourceTool`) after the
server's tools, which offers them to the model.

Progress, as google-adk 2.13 has it: ``progress_callback`` is a
:class:`~adk_actors.mcp.ProgressFnT` (awaited with ``progress``, ``total``,
``message`` for each progress report the server sends while a call of any of the
toolset's tools is pending) or a :class:`~adk_actors.mcp.ProgressCallbackFactory`
(called for each call with the tool's name and ``callback_context=`` the call's tool
context, giving the callback of that call, or None); ``McpTool(...,
progress_callback=...)`` overrides the toolset's for one tool. The callback runs where
the call's user code is: with this object's own connection (the engine alone, tests),
on the run's event loop as each report comes; on a host, where the call runs in the
toolset's actor, in the run worker, on the run's loop too: the actor keeps the call's
reports, which the run's side asks for while the call is pending (every 0.25 s) and
once after it (``_services_client._RemoteMcp.call_tool``), so each comes within about
that, and every one before the call's result.

Where the connection lives: on a host, in the host's toolset actor for these
parameters (the invocation's ``mcp`` service: one connection per toolset and host,
restarted with backoff, never one per run); elsewhere (the engine alone, tests), in
this object, one per event loop, until :meth:`McpToolset.close`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .._exceptions import McpError
from .._types import FunctionDeclaration, LlmRequest
from ..agents._fencing import (
    TOOL_DESCRIPTION_PREAMBLE,
    fence_schema_descriptions,
    fence_tool_description,
)
from ..tools.load_mcp_resource_tool import LoadMcpResourceTool
from ._connection import RESOURCES_LIST, RESOURCES_READ, McpConnection, resource_contents
from ._params import (
    ConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    toolset_arguments,
    toolset_key,
)
from ._progress import ProgressCallbackFactory, ProgressFnT, resolve_progress_callback

__all__ = ["McpService", "McpTool", "McpToolset", "McpToolsetSpec"]

_log = logging.getLogger("adk_actors.mcp")


@dataclass(frozen=True)
class McpToolsetSpec:
    """What a host's toolset actor needs to know of a toolset (sent to it as plain
    strings, the key and the parameters' class name and JSON: ``runtime._mcp``, whose
    supervisor never imports the mcp SDK; :func:`connection_params` reads them back)."""

    key: str
    params: ConnectionParams


class McpService(Protocol):
    """The host's MCP toolsets, as a run sees them (``InvocationContext.mcp``).
    ``call_tool`` carries the resource requests too: a name :data:`RESOURCES_LIST` or
    :data:`RESOURCES_READ` (``McpConnection.answer``, in the toolset actor)."""

    async def list_tools(self, toolset: McpToolsetSpec) -> list[dict[str, Any]]: ...

    async def call_tool(self, toolset: McpToolsetSpec, name: str, args: dict[str, Any],
                        timeout: float, progress: ProgressFnT | None = None) -> dict[str, Any]: ...


class McpToolset:
    def __init__(self, *, connection_params: ConnectionParams | StdioServerParameters,
                 tool_filter: Sequence[str] | Callable[[str], bool] | None = None,
                 tool_name_prefix: str | None = None, call_timeout: float = 60.0, name: str | None = None,
                 use_mcp_resources: bool | None = False,
                 progress_callback: ProgressFnT | ProgressCallbackFactory | None = None) -> None:
        if isinstance(connection_params, StdioServerParameters):  # google-adk takes it bare too
            connection_params = StdioConnectionParams(server_params=connection_params)
        self.spec = McpToolsetSpec(toolset_key(connection_params), connection_params)
        self.name = name or f"mcp_{self.spec.key[:8]}"
        self.tool_filter = tool_filter
        self.tool_name_prefix = tool_name_prefix
        self.call_timeout = call_timeout
        self.use_mcp_resources = bool(use_mcp_resources)
        self.progress_callback = progress_callback
        self._local: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[McpConnection]] = (
            weakref.WeakKeyDictionary())

    def __repr__(self) -> str:
        return f"McpToolset({self.name!r}, {type(self.spec.params).__name__})"

    @classmethod
    def from_config(cls, config: Any, config_abs_path: str) -> McpToolset:
        """The toolset an agent file's ``McpToolset`` entry describes: its ``args``
        (``config``) read by :func:`toolset_arguments` (which raises, as described
        there, for args that do not fit); ``config_abs_path`` is not used."""
        return cls(**toolset_arguments(config))

    async def get_tools(self, ctx: Any = None) -> list[McpTool | LoadMcpResourceTool]:
        """The server's tools that the filter keeps, sorted by their server's name (as
        google-adk 2.13 sorts them: the order the server lists them in is not part of
        the protocol, and a request's tools stay in the same order turn after turn),
        then, with ``use_mcp_resources``, a ``load_mcp_resource`` tool of this toolset
        (named with ``tool_name_prefix`` too, as google-adk's prefixing names it; the
        filter does not apply to it). McpError when the server cannot be reached."""
        service = _service(ctx)
        listed = await service.list_tools(self.spec) if service is not None else (await self._connection()).tools
        kept = sorted((McpTool(self, info) for info in listed if self._keeps(info["name"])),
                      key=lambda tool: tool.server_name)
        tools: list[McpTool | LoadMcpResourceTool] = list(kept)
        if self.use_mcp_resources:
            loader = LoadMcpResourceTool(mcp_toolset=self)
            if self.tool_name_prefix:
                loader.name = f"{self.tool_name_prefix}_{loader.name}"
            tools.append(loader)
        return tools

    async def list_resources(self, readonly_context: Any = None) -> list[str]:
        """The names of the server's resources, in the server's order (its first page,
        as google-adk lists them). The server is asked through the host's toolset actor
        when ``readonly_context`` is a run's context on a host, else through this
        object's own connection (opened on first use). Errors: McpUnavailable (the
        server cannot be reached or its connection ended), McpCallTimeout (no answer
        within the parameters' ``timeout``), McpError (the server refused)."""
        return [str(resource.get("name")) for resource in await self._resources(readonly_context)]

    async def get_resource_info(self, name: str, readonly_context: Any = None) -> dict[str, Any]:
        """The first resource named ``name`` as the server lists it (``name``, ``uri``,
        ``mimeType``, ``description``, ...; what the server left out is absent), asked
        as :meth:`list_resources` asks, with its errors; ValueError when the server has
        no resource of that name."""
        for resource in await self._resources(readonly_context):
            if resource.get("name") == name:
                return resource
        raise ValueError(f"the MCP server has no resource named {name!r}")

    async def read_resource(self, name: str, readonly_context: Any = None) -> Any:
        """The contents of the resource named ``name``, as the SDK gives them (a list of
        ``TextResourceContents`` and ``BlobResourceContents``): its URI is found
        (:meth:`get_resource_info`, whose errors it raises; ValueError when the resource
        has none), then read from the server the same way, with the same deadline and
        errors."""
        info = await self.get_resource_info(name, readonly_context)
        if "uri" not in info:
            raise ValueError(f"the MCP resource {name!r} has no URI")
        uri, timeout, service = str(info["uri"]), self._resource_timeout(), _service(readonly_context)
        if service is not None:
            dumped = _field(await service.call_tool(self.spec, RESOURCES_READ, {"uri": uri}, timeout), "contents")
        else:
            dumped = await (await self._connection()).read_resource(uri, timeout)
        return resource_contents(dumped)

    async def _resources(self, ctx: Any) -> list[dict[str, Any]]:
        timeout, service = self._resource_timeout(), _service(ctx)
        if service is not None:
            return _field(await service.call_tool(self.spec, RESOURCES_LIST, {}, timeout), "resources")
        return await (await self._connection()).list_resources(timeout)

    def _resource_timeout(self) -> float:
        return float(self.spec.params.timeout)

    async def call(self, ctx: Any, name: str, args: dict[str, Any],
                   progress_callback: ProgressFnT | None = None) -> dict[str, Any]:
        """Call the server's tool ``name`` (see the module): through the host's toolset
        actor when ``ctx`` has one, else on this object's connection; either way with
        ``progress_callback`` awaited for each progress report of the call, on this
        event loop."""
        service = _service(ctx)
        if service is not None:
            if progress_callback is None:
                return await service.call_tool(self.spec, name, args, self.call_timeout)
            return await service.call_tool(self.spec, name, args, self.call_timeout, progress=progress_callback)
        return await (await self._connection()).call_tool(name, args, self.call_timeout,
                                                          progress_callback=progress_callback)

    async def close(self) -> None:
        """End this object's own connections (a host's toolset actor keeps its own)."""
        tasks, self._local = list(self._local.values()), weakref.WeakKeyDictionary()
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is None:
                await task.result().close()

    def _keeps(self, name: str) -> bool:
        if self.tool_filter is None:
            return True
        if callable(self.tool_filter):
            return bool(self.tool_filter(name))
        return name in self.tool_filter

    async def _connection(self) -> McpConnection:
        """This loop's own connection, opened on first use and again after it failed."""
        loop = asyncio.get_running_loop()
        task = self._local.get(loop)
        if task is not None and task.done() and (task.cancelled() or task.exception() is not None
                                                 or task.result().closed):
            task = None
        if task is None:
            task = self._local[loop] = loop.create_task(McpConnection.open(self.spec.params))
        return await asyncio.shield(task)


def _field(answer: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The list under ``key`` of a host toolset actor's answer to a resource request;
    McpError when there is none (the actor took the request for a tool call: the
    server's tool result, an error, comes back instead)."""
    found = answer.get(key)
    if not isinstance(found, list):
        raise McpError(f"the host's MCP toolset did not answer the resource request: {str(answer)[:300]}")
    return found


def _service(ctx: Any) -> McpService | None:
    """The host's MCP service of ``ctx`` (a run's context, or a tool's or callback's,
    whose run's it is); None elsewhere (no context, the engine alone)."""
    service: McpService | None = getattr(ctx, "mcp", None)
    if service is None:
        service = getattr(getattr(ctx, "invocation", None), "mcp", None)
    return service


class McpTool:
    """One tool of an MCP server (see :class:`McpToolset`)."""

    is_long_running = False

    def __init__(self, toolset: McpToolset, info: dict[str, Any], *,
                 progress_callback: ProgressFnT | ProgressCallbackFactory | None = None) -> None:
        self.toolset = toolset
        self.progress_callback = progress_callback if progress_callback is not None else toolset.progress_callback
        self.server_name: str = info["name"]
        self.name = f"{toolset.tool_name_prefix}_{self.server_name}" if toolset.tool_name_prefix else self.server_name
        self.description: str = info["description"]
        self.input_schema: dict[str, Any] = info["input_schema"]
        self.output_schema: dict[str, Any] | None = info.get("output_schema")
        self.idempotent = bool(info.get("idempotent", False))

    def declaration(self) -> FunctionDeclaration:
        """The server's schemas as given: its input's as the parameters, its output's
        (when it has one) as ``response_json_schema`` (google-adk's McpTool's
        ``_get_declaration``: the server's own text, for listings; a model request gets
        :meth:`fenced_declaration` instead)."""
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema=self.input_schema,
                                   response_json_schema=self.output_schema)

    def fenced_declaration(self) -> FunctionDeclaration:
        """:meth:`declaration` with the server's text fenced as untrusted, as google-adk
        2.13 sends it: the description between the untrusted tool-description markers
        (an empty one as it is), and every ``description`` in the input and output
        schemas too (not the values under ``default``, ``enum``, ``examples``,
        ``example``, ``const``), markers found in any string or key elided
        (``agents._fencing.fence_schema_descriptions``). New objects: the tool's own
        schemas are not changed."""
        return FunctionDeclaration(
            name=self.name, description=fence_tool_description(self.description),
            parameters_json_schema=fence_schema_descriptions(self.input_schema),
            response_json_schema=None if self.output_schema is None else fence_schema_descriptions(self.output_schema))

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        """Before the model sees a request (google-adk's hook, run by the flow for each
        tool of the step), in order: the last declaration of this tool's name in
        ``llm_request.tools`` is replaced by :meth:`fenced_declaration` (none there: an
        error is logged, as google-adk logs it, and nothing replaced); then
        :data:`TOOL_DESCRIPTION_PREAMBLE` is added to the system instruction, after a
        blank line, unless the instruction holds it already (once per request, however
        many MCP tools it has)."""
        for index in range(len(llm_request.tools) - 1, -1, -1):
            if llm_request.tools[index].name == self.name:
                llm_request.tools[index] = self.fenced_declaration()
                break
        else:
            _log.error("Failed to find function declaration for tool %r in LlmRequest to apply fencing.", self.name)
        if TOOL_DESCRIPTION_PREAMBLE not in llm_request.system_instruction:
            llm_request.append_instructions([TOOL_DESCRIPTION_PREAMBLE])

    async def run(self, tool_context: Any, args: dict[str, Any]) -> dict[str, Any]:
        """Call the server's tool with ``args``, its progress reports given to the
        callback :func:`resolve_progress_callback` makes of :attr:`progress_callback`
        for this tool's name and ``tool_context`` (see :meth:`McpToolset.call`)."""
        callback = resolve_progress_callback(self.progress_callback, self.name, tool_context)
        return await self.toolset.call(tool_context.invocation, self.server_name, args, callback)
