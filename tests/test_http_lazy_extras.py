"""The A2A and MCP routes import their SDKs on their first request (``http._lazy``):
a server that no client asks for them starts without a2a-sdk's and the mcp SDK's
imports (most of its start otherwise), serves them once asked, and answers 501 with
the pip command when the extra is missing.

Each case runs in a process of its own, so that what it imports is its own; a
missing extra is made missing honestly (a ``sitecustomize`` puts ``None`` in
``sys.modules``: ``import mcp`` fails with ``ModuleNotFoundError`` as without the
package).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import asyncio, json, sys
import httpx
from adk_actors.config import HttpSection
from adk_actors.engine import AppCatalog
from adk_actors.http import create_app
from adk_actors.runtime import Host, HostConfig

app = create_app(Host(HostConfig(apps={})), AppCatalog({"weather_bot": "examples.weather_bot.agent:root_agent"}, None),
                 HttpSection())
built = sorted(name for name in ("a2a", "mcp") if sys.modules.get(name) is not None)


async def ask():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        listed = await client.get("/list-apps")
        card = await client.get("/a2a/weather_bot/.well-known/agent-card.json")
        mcp = await client.post("/mcp", headers={"accept": "application/json, text/event-stream"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        return listed, card, mcp

listed, card, mcp = asyncio.run(ask())
print(json.dumps({"built": built, "listed": listed.json(), "card": [card.status_code, card.json()],
                  "mcp": [mcp.status_code, mcp.json()]}))
"""


def _probe(tmp_path: Path, missing: str | None = None) -> dict[str, Any]:
    env = {**os.environ}
    if missing is not None:
        (tmp_path / "sitecustomize.py").write_text(f"import sys\nsys.modules[{missing!r}] = None\n")
        env["PYTHONPATH"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_server_imports_a2a_and_mcp_only_when_asked_and_then_serves_both(tmp_path: Path) -> None:
    result = _probe(tmp_path)
    assert result["built"] == []  # the app is built, /list-apps can answer: neither SDK is loaded
    assert result["listed"] == ["weather_bot"]
    status, card = result["card"]
    assert status == 200 and card["name"] == "weather_bot"
    assert card["supportedInterfaces"][0]["url"] == "http://127.0.0.1/a2a/weather_bot"
    status, answer = result["mcp"]
    assert status == 200 and answer["id"] == 1 and "tools" in answer["result"]["capabilities"]


def test_without_the_mcp_extra_mcp_is_a_501_naming_the_pip_command_and_a2a_still_serves(tmp_path: Path) -> None:
    result = _probe(tmp_path, missing="mcp")
    status, answer = result["mcp"]
    assert status == 501
    assert answer["detail"] == ("MCP is not served by this host: the mcp extra (mcp) is not installed: "
                                "pip install 'adk-actors[mcp]'")
    assert result["card"][0] == 200


def test_the_mcp_route_is_mounted_where_its_module_expects_it() -> None:
    """``_app`` mounts ``/mcp`` before the module is imported; the module rewrites the
    paths it serves from its own ``PATH``: the two must be one place."""
    from adk_actors.http import _app, _mcp

    assert _app.MCP_PATH == _mcp.PATH
