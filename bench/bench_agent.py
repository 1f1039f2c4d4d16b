"""The agent both sides of bench/turns.py run: an echo for text turns, one tool for tool
turns; and, on our side only, a tool not declared idempotent ("charge" turns), whose
call is stored before it runs (durable runs: docs/durable-runs.md)."""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext, idempotent


@idempotent  # its one effect is the state change stored with its result: a repeat is harmless
def bump(tool_context: ToolContext) -> dict[str, Any]:
    """Count a tool turn."""
    count = int(tool_context.state.get("count", 0)) + 1
    tool_context.state["count"] = count
    return {"count": count}


def charge(tool_context: ToolContext) -> dict[str, Any]:
    """Charge a card (not idempotent: its call is stored before it runs)."""
    return {"charged": True}


def _answer(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return "counted"
    if last.text.startswith("tool"):
        return call("bump")
    if last.text.startswith("charge"):
        return call("charge")
    return f"echo: {last.text}"


agent = LlmAgent(name="bench", model=ScriptedModel(fallback=_answer), tools=[bump, charge])
