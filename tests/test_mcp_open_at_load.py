"""An MCP connection's opening at load (a CI failure beside two CPU burners: a host's
toolset on another host's ``/mcp`` did not open within its 5 s, and the turn went on
without the tools). The opening's ``timeout`` is stretched by the machine's load per
CPU, as the project's other deadlines of work that must be done whatever the load:
here a stdio server that takes 1.5 s to start, with ``timeout=1``, fails idle and
opens at a load of 10 per CPU (the load read through ``os.getloadavg``, set by the
test)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from adk_actors.mcp import (
    McpConnection,
    McpUnavailable,
    StdioConnectionParams,
    StdioServerParameters,
)

SERVER = str(Path(__file__).with_name("mcp_servers.py"))
SLOW_START = f"import time, runpy, sys; time.sleep(1.5); sys.argv = [{SERVER!r}, 'stdio']; runpy.run_path({SERVER!r}, run_name='__main__')"


def _params() -> StdioConnectionParams:
    return StdioConnectionParams(server_params=StdioServerParameters(command=sys.executable, args=["-c", SLOW_START]),
                                 timeout=1.0)


async def _open_and_list() -> list[str]:
    connection = await McpConnection.open(_params())
    try:
        return sorted(tool["name"] for tool in connection.tools)
    finally:
        await connection.close()


def test_a_slow_server_fails_to_open_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    with pytest.raises(McpUnavailable, match=r"no answer within 1 s"):
        asyncio.run(_open_and_list())


def test_the_same_server_opens_when_the_machine_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    cpus = os.cpu_count() or 1
    # at the stretch's cap (ten times): the server's start (its own imports, ~3 s idle)
    # shares the real machine with the suite's other workers, which the fake load hides
    monkeypatch.setattr(os, "getloadavg", lambda: (10.0 * cpus, 10.0 * cpus, 10.0 * cpus))
    assert "add" in asyncio.run(_open_and_list())
