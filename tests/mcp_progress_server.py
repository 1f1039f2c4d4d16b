"""An MCP server reporting progress and serving a prompt, for
tests/test_mcp_progress_host.py (the ``mcp`` SDK's MCPServer over stdio): the tool
``count`` reports ``step/steps`` at each step, then answers; the prompt ``greeting``
greets ``name``."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("test-progress")


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to steps, reporting progress at each."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


@server.prompt()
def greeting(name: str) -> str:
    """Greet someone."""
    return f"You talk to {name}, as {{style}}."


if __name__ == "__main__":
    server.run("stdio")
