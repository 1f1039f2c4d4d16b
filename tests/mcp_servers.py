"""MCP servers for the tests, written with the ``mcp`` SDK's MCPServer (FastMCP).

``python tests/mcp_servers.py stdio`` serves on stdin/stdout;
``python tests/mcp_servers.py http PORT`` serves streamable HTTP at ``/mcp`` and SSE
at ``/sse`` on 127.0.0.1. Its tools: ``add``, ``shout``, ``whoami`` (its pid),
``crash`` (the process exits mid-call), ``hang`` (never answers) and ``linger``
(the process stays after its stdin closes).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("test-tools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.tool()
def whoami() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Exit the server's process in the middle of the call."""
    os._exit(3)


@server.tool()
def linger() -> str:
    """Start a thread that keeps the process alive for an hour after its stdin closes
    (a server that would outlive its client, were it not killed with it)."""
    threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
    return "lingering"


@server.tool()
def hang() -> str:
    """Never answer."""
    time.sleep(3600)
    return "too late"


def main(argv: list[str]) -> None:
    if argv[:1] == ["stdio"]:
        server.run("stdio")
        return
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    port = int(argv[1])
    http = server.streamable_http_app(streamable_http_path="/mcp")
    sse = server.sse_app()
    app = Starlette(routes=[Mount("/sse-server", app=sse), Mount("/", app=http)], lifespan=http.router.lifespan_context)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
