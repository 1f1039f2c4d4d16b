"""An agent whose stdio MCP server is started through a launcher that forks, as
``npx`` and ``uv run`` do: ``sh -c "python tests/mcp_servers.py stdio; true"`` (the
``; true`` keeps ``sh`` as the server's parent, so the server is the launcher's child,
not the process the host started).

Its scripted model: ``call NAME {json args}`` calls that tool, then answers ``NAME
said: <its result as JSON>``. (Not built on ``mcp_agents``: importing that one fixes
its HTTP servers' URL, which ``test_mcp_client`` sets first.)
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.mcp import McpToolset, StdioConnectionParams, StdioServerParameters
from adk_actors.models import ScriptedModel, call

SERVER = str(Path(__file__).with_name("mcp_servers.py"))
LAUNCHER = f"{shlex.quote(sys.executable)} {shlex.quote(SERVER)} stdio; true"


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0]
        return f"{response.name} said: {json.dumps(response.response, sort_keys=True)}"
    name, _, args = (last.text or "").removeprefix("call ").partition(" ")
    return call(name, **(json.loads(args) if args else {}))


launched_params = StdioConnectionParams(server_params=StdioServerParameters(command="sh", args=["-c", LAUNCHER]),
                                        timeout=15.0)
launched_agent = LlmAgent(name="mcp_launched", model=ScriptedModel(fallback=_script),
                          tools=[McpToolset(connection_params=launched_params, call_timeout=2.0)])

APPS = {"mcp_launched": "mcp_group_agents:launched_agent"}
