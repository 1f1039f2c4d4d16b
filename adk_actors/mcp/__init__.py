"""MCP, both ways, on the ``mcp`` SDK (``pip install 'adk-actors[mcp]'``).

* :class:`McpToolset`: an MCP server's tools in an agent's ``tools`` (stdio, SSE,
  streamable HTTP), as google-adk names it; on a host, the connection lives in a
  supervised actor per toolset (``runtime._mcp``);
* :func:`to_mcp_server`: one agent as an MCP server (google-adk's);
  :func:`adk_to_mcp_tool_type` and :func:`gemini_to_json_schema`, a tool and a schema
  as MCP and JSON schema see them; :class:`McpToolsetConfig`, an agent file's
  ``McpToolset`` args;
* :func:`apps_server`: a host's apps as MCP tools (``adk-actors mcp`` on stdio, and
  the host's ``/mcp`` over streamable HTTP);
* :class:`McpInstructionProvider`: an agent's instruction from a server's prompt;
  :class:`ProgressFnT` and :class:`ProgressCallbackFactory`, a toolset's progress
  callbacks; :class:`MCPSessionManager`, :class:`SessionContext`,
  :func:`create_mcp_http_client`: google-adk's SDK session helpers.
"""

from .._exceptions import McpCallTimeout, McpError, McpUnavailable
from ._agent_server import to_mcp_server
from ._connection import McpConnection
from ._conversion import adk_to_mcp_tool_type, gemini_to_json_schema
from ._params import (
    ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR,
    ConnectionParams,
    McpToolsetConfig,
    SseConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    StreamableHTTPConnectionParams,
    connection_params,
    toolset_arguments,
    toolset_key,
)
from ._progress import ProgressCallbackFactory, ProgressFnT
from ._prompts import EmptyMcpPrompt, McpInstructionProvider
from ._server import AgentAnswer, apps_server
from ._sessions import (
    CheckableMcpHttpClientFactory,
    McpSessionError,
    MCPSessionManager,
    SessionContext,
    create_mcp_http_client,
)
from ._toolset import McpService, McpTool, McpToolset, McpToolsetSpec

#: google-adk's older spelling.
MCPToolset = McpToolset

__all__ = [
    "ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR",
    "AgentAnswer",
    "CheckableMcpHttpClientFactory",
    "ConnectionParams",
    "EmptyMcpPrompt",
    "MCPSessionManager",
    "MCPToolset",
    "McpCallTimeout",
    "McpConnection",
    "McpError",
    "McpInstructionProvider",
    "McpService",
    "McpSessionError",
    "McpTool",
    "McpToolset",
    "McpToolsetConfig",
    "McpToolsetSpec",
    "McpUnavailable",
    "ProgressCallbackFactory",
    "ProgressFnT",
    "SessionContext",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StdioServerParameters",
    "StreamableHTTPConnectionParams",
    "adk_to_mcp_tool_type",
    "apps_server",
    "connection_params",
    "create_mcp_http_client",
    "gemini_to_json_schema",
    "to_mcp_server",
    "toolset_arguments",
    "toolset_key",
]
