"""An MCP server with resources, for tests/test_adk52_mcp_resource_tool.py (the ``mcp``
SDK's MCPServer over stdio): a text resource ``notes``, a binary one ``logo`` (PNG
bytes, served base64 as a blob), and one tool, ``ping``."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("test-resources")

LOGO = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])


@server.resource("notes://today", name="notes", mime_type="text/plain")
def notes() -> str:
    return "Meeting at noon. Bring the budget."


@server.resource("images://logo", name="logo", mime_type="image/png")
def logo() -> bytes:
    return LOGO


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    server.run("stdio")
