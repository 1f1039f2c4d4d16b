"""A host serving an agents folder (``adk-actors web DIR``) at ``/mcp``, used by the
official ``mcp`` client: each agent folder that loads is a tool, one that does not
load is left out (the others still listed), and an agent folder added while the host
runs is listed on the next request (the SDK's app is made again when the apps are)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import Client
from test_agent_folders import _serving, _source, agents, gemini  # noqa: F401 (fixtures)


def _tools(url: str) -> set[str]:
    async def listed() -> set[str]:
        async with Client(f"{url}/mcp") as client:
            return {tool.name for tool in (await client.list_tools()).tools}
    return asyncio.run(asyncio.wait_for(listed(), 60))


def test_the_folders_apps_are_tools_and_a_new_folder_is_listed(agents: Path, tmp_path: Path) -> None:  # noqa: F811
    with _serving("web", agents, tmp_path) as served:
        url: Any = served["url"]
        assert _tools(url) == {"hello", "greeter"}  # "broken" does not load
        (agents / "second").mkdir()
        (agents / "second" / "__init__.py").write_text("from . import agent\n")
        (agents / "second" / "agent.py").write_text(_source("v2").replace('name="hello"',
                                                                                       'name="second"'))
        assert _tools(url) == {"hello", "greeter", "second"}
