"""google-adk's import path of ``McpTool``: :mod:`adk_actors.mcp`'s."""

from ...mcp import McpTool

#: google-adk's older spelling.
MCPTool = McpTool

__all__ = ["MCPTool", "McpTool"]
