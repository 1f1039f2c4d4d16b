"""MCP progress and prompts on a host (issue 52): an app whose agent has an
``McpToolset`` with a ``progress_callback`` factory and an ``McpInstructionProvider``
(``tests/mcp_progress_agents.py``, on the real MCP server
``tests/mcp_progress_server.py``) runs on a Host, where the tool call runs in the
host's toolset actor.

Checked: every progress report of the call reaches the factory's callback in the run
worker, in order and before the call's result (the callback writes them to the
session's state through the call's context); the instruction is the server's prompt,
its argument from the state, its braces kept.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
sys.path.insert(0, str(Path(__file__).parent))

from adk_actors.runtime import Host, HostConfig

pytestmark = pytest.mark.timeout(180)

APP = "mcp_progress"


@pytest.fixture
def progress_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    with Host(HostConfig(apps={APP: "mcp_progress_agents:root_agent"}, data_dir=str(tmp_path / "data")),
              system=actor_system) as running:
        yield running


def test_progress_reaches_the_callback_in_the_run_worker(progress_host: Host) -> None:
    runner = progress_host.runner(APP, timeout=60.0)
    runner.create_session("ann", "s1", state={"name": "Ada"})
    events = list(runner.run("ann", "s1", "count 3"))
    answers = [e.content.text for e in events if e.author != "user" and e.content is not None and e.content.text]
    assert answers, [e.error_message for e in events]
    answer = json.loads(str(answers[-1]))
    assert answer["result"] == {"result": "counted to 3"}
    assert answer["instruction"].startswith("You talk to Ada, as {style}.")
    state = runner.get_state("ann", "s1")
    assert state["reports"] == [["count", float(step), 3.0, f"step {step}"] for step in (1, 2, 3)]
