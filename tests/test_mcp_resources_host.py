"""MCP resources on a host (issue 52): an app whose agent has an
``McpToolset(use_mcp_resources=True)`` (``tests/mcp_resource_agents.py``, on the real
MCP server ``tests/mcp_resource_server.py``) runs on a Host, where the connection is the
host's toolset actor's and a run worker's toolset asks it.

Checked: the model is offered ``load_mcp_resource`` after the server's tool and told
the resources' names; loading ``notes`` and ``logo`` reads their contents into the next
request (text, and the PNG bytes with their MIME type; a name the server lacks is
skipped); the toolset's own ``read_resource``, called from a tool in the run, gives
the SDK's contents, a ValueError for an unknown name; a toolset whose server cannot
start answers ``list_resources`` with McpUnavailable, and the run goes on.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
sys.path.insert(0, str(Path(__file__).parent))

from mcp_resource_server import LOGO

from adk_actors.runtime import Host, HostConfig

pytestmark = pytest.mark.timeout(180)

APP = "mcp_resources"


@pytest.fixture
def resource_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    with Host(HostConfig(apps={APP: "mcp_resource_agents:root_agent"}, data_dir=str(tmp_path / "data")),
              system=actor_system) as running:
        yield running


def ask(host: Host, text: str, session: str = "s1") -> str:
    """One turn of user ``ann``: the final answer's text."""
    runner = host.runner(APP, timeout=60.0)
    try:
        runner.create_session("ann", session)
    except Exception:  # (created by an earlier turn)
        pass
    events = list(runner.run("ann", session, text))
    answers = [e.content.text for e in events if e.author != "user" and e.content is not None and e.content.text]
    assert answers, [e.error_message for e in events]
    return str(answers[-1])


def said(answer: str) -> dict[str, Any]:
    response: dict[str, Any] = json.loads(answer.split(" said: ", 1)[1])
    return response


def test_an_app_loads_mcp_resources_through_the_hosts_toolset_actor(resource_host: Host) -> None:
    assert ask(resource_host, "tools?") == "read_resource, dead_resources, ping, load_mcp_resource"
    answer = ask(resource_host, "load notes,logo,missing")
    assert answer.startswith("read: "), answer
    loaded = json.loads(answer.removeprefix("read: "))
    assert loaded["listed"] is True
    assert [row[1:] for row in loaded["read"]] == [["Meeting at noon. Bring the budget."],
                                                   ["image/png", base64.b64encode(LOGO).decode()]]
    assert "notes" in loaded["read"][0][0] and "logo" in loaded["read"][1][0]


def test_the_toolsets_own_resource_api_on_a_host(resource_host: Host) -> None:
    notes = said(ask(resource_host, "read notes"))
    assert notes == {"contents": [["TextResourceContents", {"uri": "notes://today", "mimeType": "text/plain",
                                                            "text": "Meeting at noon. Bring the budget."}]]}
    logo = said(ask(resource_host, "read logo"))["contents"]
    assert logo == [["BlobResourceContents", {"uri": "images://logo", "mimeType": "image/png",
                                              "blob": base64.b64encode(LOGO).decode()}]]
    assert said(ask(resource_host, "read missing"))["error"] == "ValueError"
    dead = said(ask(resource_host, "dead", session="s2"))
    assert dead["error"] == "McpUnavailable", dead
    assert said(ask(resource_host, "read notes", session="s2"))["contents"][0][0] == "TextResourceContents"
