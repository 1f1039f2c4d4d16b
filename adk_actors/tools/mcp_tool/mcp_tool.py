"""google-adk's import path of ``McpTool`` and of its progress callback types
(``ProgressFnT``, ``ProgressCallbackFactory``): :mod:`adk_actors.mcp`'s."""

from ...mcp import McpTool, ProgressCallbackFactory, ProgressFnT

#: google-adk's older spelling.
MCPTool = McpTool

__all__ = ["MCPTool", "McpTool", "ProgressCallbackFactory", "ProgressFnT"]
