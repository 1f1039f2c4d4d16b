"""google-adk's import path of ``McpToolset`` (and of the names its samples import
with it, the progress callback types, and ``McpToolsetConfig``, an agent file's
``McpToolset`` args):
:mod:`adk_actors.mcp`'s."""

from ...mcp import (
    ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR,
    MCPToolset,
    McpToolset,
    McpToolsetConfig,
    ProgressCallbackFactory,
    ProgressFnT,
    SseConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    StreamableHTTPConnectionParams,
)

__all__ = [
    "ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR",
    "MCPToolset",
    "McpToolset",
    "McpToolsetConfig",
    "ProgressCallbackFactory",
    "ProgressFnT",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StdioServerParameters",
    "StreamableHTTPConnectionParams",
]
