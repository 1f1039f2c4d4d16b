"""google-adk's import path of the MCP connection parameters: :mod:`adk_actors.mcp`'s."""

from ...mcp import (
    SseConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    StreamableHTTPConnectionParams,
)

__all__ = ["SseConnectionParams", "StdioConnectionParams", "StdioServerParameters", "StreamableHTTPConnectionParams"]
