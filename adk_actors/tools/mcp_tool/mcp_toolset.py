"""google-adk's import path of ``McpToolset`` (and of the names its samples import
with it): :mod:`adk_actors.mcp`'s."""

from ...mcp import (
    MCPToolset,
    McpToolset,
    SseConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    StreamableHTTPConnectionParams,
)

__all__ = [
    "MCPToolset",
    "McpToolset",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StdioServerParameters",
    "StreamableHTTPConnectionParams",
]
