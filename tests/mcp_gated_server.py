"""A stand-in stdio MCP server for ``test_mcp_concurrent_start``, with no SDK (it
starts in milliseconds): ``python mcp_gated_server.py NAME DIR``.

On ``initialize`` it writes ``DIR/NAME.arrived`` (its pid), then waits for the gate
``DIR/open`` (at most 300 s) before it answers; if ``DIR/NAME.fail`` exists then, it
exits with status 3 instead. It lists one tool, ``whoami`` (its pid), and answers
calls of it. Newline-delimited JSON-RPC on stdin and stdout, as MCP's stdio transport.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def main(name: str, folder: Path) -> None:
    for line in sys.stdin:
        message: dict[str, Any] = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue  # a notification (initialized, cancelled)
        if method == "initialize":
            (folder / f"{name}.arrived").write_text(str(os.getpid()))
            deadline = time.monotonic() + 300
            while not (folder / "open").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            if (folder / f"{name}.fail").exists():
                sys.exit(3)
            result: dict[str, Any] = {"protocolVersion": message["params"]["protocolVersion"],
                                      "capabilities": {"tools": {}}, "serverInfo": {"name": name, "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "description": "this server's pid",
                                 "inputSchema": {"type": "object", "properties": {}}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": str(os.getpid())}], "isError": False}
        else:
            print(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": method}}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
