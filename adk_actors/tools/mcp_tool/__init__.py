"""google-adk's import path of its MCP tools (``google.adk.tools.mcp_tool``): the
toolset, its tool and its connection parameters, which are :mod:`adk_actors.mcp`'s
(the one implementation; these are names, not copies), with ``to_mcp_server`` and the
conversions ``adk_to_mcp_tool_type`` and ``gemini_to_json_schema``. Needs the ``mcp``
extra."""

from ...mcp import (
    McpTool,
    MCPToolset,
    McpToolset,
    SseConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
    adk_to_mcp_tool_type,
    gemini_to_json_schema,
    to_mcp_server,
)

#: google-adk's older spelling.
MCPTool = McpTool

__all__ = [
    "MCPTool",
    "MCPToolset",
    "McpTool",
    "McpToolset",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "adk_to_mcp_tool_type",
    "gemini_to_json_schema",
    "to_mcp_server",
]
