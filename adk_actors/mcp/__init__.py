"""MCP, both ways, on the ``mcp`` SDK (``pip install 'adk-actors[mcp]'``).

* :class:`McpToolset`: an MCP server's tools in an agent's ``tools`` (stdio, SSE,
  streamable HTTP), as google-adk names it; on a host, the connection lives in a
  supervised actor per toolset (``runtime._mcp``);
* :func:`apps_server`: a host's apps as MCP tools (``adk-actors mcp`` on stdio, and
  the host's ``/mcp`` over streamable HTTP).
"""

from .._exceptions import McpCallTimeout, McpError, McpUnavailable
from ._connection import McpConnection
from ._params import (
    ConnectionParams,
    SseConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    StreamableHTTPConnectionParams,
    connection_params,
    toolset_key,
)
from ._server import AgentAnswer, apps_server
from ._toolset import McpService, McpTool, McpToolset, McpToolsetSpec

#: google-adk's older spelling.
MCPToolset = McpToolset

__all__ = [
    "AgentAnswer",
    "ConnectionParams",
    "MCPToolset",
    "McpCallTimeout",
    "McpConnection",
    "McpError",
    "McpService",
    "McpTool",
    "McpToolset",
    "McpToolsetSpec",
    "McpUnavailable",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StdioServerParameters",
    "StreamableHTTPConnectionParams",
    "apps_server",
    "connection_params",
    "toolset_key",
]
