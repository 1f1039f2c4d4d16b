"""google-adk's import path of ``adk_to_mcp_tool_type`` and ``gemini_to_json_schema``:
:mod:`adk_actors.mcp`'s."""

from ...mcp import adk_to_mcp_tool_type, gemini_to_json_schema

__all__ = ["adk_to_mcp_tool_type", "gemini_to_json_schema"]
