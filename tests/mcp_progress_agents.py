"""An agent with an ``McpToolset`` whose ``progress_callback`` is a factory, and an
``McpInstructionProvider``, both of ``tests/mcp_progress_server.py``, for
tests/test_mcp_progress_host.py (imported by path in the host's processes).

The factory's callback adds ``[tool name, progress, total, message]`` to the session's
``reports`` (through the call's context: it runs in the run worker). Its scripted
model: ``count N`` calls ``count``; a tool's response is answered with the system
instruction and the response's structured content, as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.agents.mcp_instruction_provider import McpInstructionProvider
from adk_actors.mcp import McpToolset, StdioConnectionParams, StdioServerParameters
from adk_actors.models import ScriptedModel, call

SERVER = str(Path(__file__).with_name("mcp_progress_server.py"))
PARAMS = StdioConnectionParams(server_params=StdioServerParameters(command=sys.executable, args=[SERVER]),
                               timeout=15.0)


def factory(tool_name: str, *, callback_context: Any = None, **kwargs: Any) -> Any:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        callback_context.state["reports"] = [*callback_context.state.get("reports", []),
                                             [tool_name, progress, total, message]]

    return report


toolset = McpToolset(connection_params=PARAMS, progress_callback=factory)


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0].response or {}
        return json.dumps({"instruction": request.system_instruction,
                           "result": response.get("structuredContent")})
    text = last.text or ""
    if text.startswith("count "):
        return call("count", steps=int(text[6:]))
    return f"unknown: {text}"


root_agent = LlmAgent(name="counter", model=ScriptedModel(fallback=_script),
                      instruction=McpInstructionProvider(PARAMS, "greeting"), tools=[toolset])
