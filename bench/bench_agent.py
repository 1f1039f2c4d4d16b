"""The agent both sides of bench/turns.py run: an echo for text turns, one tool for tool turns."""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext


def bump(tool_context: ToolContext) -> dict[str, Any]:
    """Count a tool turn."""
    count = int(tool_context.state.get("count", 0)) + 1
    tool_context.state["count"] = count
    return {"count": count}


def _answer(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return "counted"
    if last.text.startswith("tool"):
        return call("bump")
    return f"echo: {last.text}"


agent = LlmAgent(name="bench", model=ScriptedModel(fallback=_answer), tools=[bump])
