"""``python -m adk_actors.mcp._guard PARENT_PID COMMAND [ARGS...]``: become COMMAND, to
die with our parent.

A stdio MCP server is started through this launcher: it asks Linux to kill it when
the thread that started it ends (``PR_SET_PDEATHSIG``: the toolset actor's event loop
thread), checks that its parent is still ``PARENT_PID`` (else that parent died before
the request took effect, and it exits), then replaces itself with COMMAND (same pid).
So a server process never outlives the host: not after ``kill -9`` of its actor, nor of
``adk-actors serve`` (each actor dies with its supervisor in the same way).
"""

from __future__ import annotations

import os
import sys

from supervision import set_parent_death_signal


def main(argv: list[str]) -> None:
    if len(argv) < 2 or not argv[0].isdigit():
        sys.exit("usage: python -m adk_actors.mcp._guard PARENT_PID COMMAND [ARGS...]")
    set_parent_death_signal()
    if os.getppid() != int(argv[0]):
        sys.exit(1)  # the parent is gone already
    os.execvp(argv[1], argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
