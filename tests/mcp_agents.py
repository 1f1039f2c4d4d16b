"""Agents with MCP toolsets, for the tests (imported by path in the host's processes).

Their scripted model: ``tools?`` answers the names of the tools it was given;
``call NAME {json args}`` calls that tool, then answers ``NAME said: <its result as
JSON>``. The servers are ``tests/mcp_servers.py``: over stdio, and over HTTP at
``$ADK_TEST_MCP_URL`` (streamable HTTP at ``/mcp``, SSE at ``/sse-server/sse``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.mcp import (
    McpToolset,
    SseConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    StreamableHTTPConnectionParams,
)
from adk_actors.models import ScriptedModel, call

SERVER = str(Path(__file__).with_name("mcp_servers.py"))
URL = os.environ.get("ADK_TEST_MCP_URL", "http://127.0.0.1:9/")


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0]
        return f"{response.name} said: {json.dumps(response.response, sort_keys=True)}"
    text = last.text or ""
    if text == "tools?":
        return ", ".join(sorted(t.name for t in request.tools))
    if text.startswith("call "):
        _, name, *rest = text.split(" ", 2)
        return call(name, **(json.loads(rest[0]) if rest else {}))
    return f"unknown: {text}"


def _agent(name: str, toolset: McpToolset) -> LlmAgent:
    return LlmAgent(name=name, model=ScriptedModel(fallback=_script), tools=[toolset])


stdio_params = StdioConnectionParams(server_params=StdioServerParameters(command=sys.executable, args=[SERVER, "stdio"]),
                                     timeout=15.0)
stdio_agent = _agent("mcp_stdio", McpToolset(connection_params=stdio_params, call_timeout=2.0))
filtered_agent = _agent("mcp_filtered", McpToolset(connection_params=stdio_params, tool_filter=["add", "shout"],
                                                   tool_name_prefix="calc", call_timeout=2.0))
http_agent = _agent("mcp_http", McpToolset(connection_params=StreamableHTTPConnectionParams(url=f"{URL}mcp"),
                                           call_timeout=2.0))
sse_agent = _agent("mcp_sse", McpToolset(connection_params=SseConnectionParams(url=f"{URL}sse-server/sse"),
                                         call_timeout=2.0))
broken_agent = _agent("mcp_broken", McpToolset(connection_params=StdioConnectionParams(
    server_params=StdioServerParameters(command=sys.executable, args=["-c", "import sys; sys.exit(5)"]), timeout=3.0)))

APPS = {
    "mcp_stdio": "mcp_agents:stdio_agent",
    "mcp_filtered": "mcp_agents:filtered_agent",
    "mcp_http": "mcp_agents:http_agent",
    "mcp_sse": "mcp_agents:sse_agent",
    "mcp_broken": "mcp_agents:broken_agent",
}
