"""A loop: a drafter improves a draft until a critic approves and calls ``exit_loop``."""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent, LlmRequest, LoopAgent
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext, exit_loop


def save_draft(text: str, tool_context: ToolContext) -> dict[str, Any]:
    """Save the current draft."""
    version = int(tool_context.state.get("version", 0)) + 1
    tool_context.state["draft"] = text
    tool_context.state["version"] = version
    return {"version": version}


def _drafter(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return f"draft v{last.function_responses[0].response['version']} saved"
    version = sum(1 for c in request.contents if any(p.function_call and p.function_call.name == "save_draft"
                                                     for p in c.parts)) + 1
    return call("save_draft", text="A haiku" + "!" * version)


def _critic(request: LlmRequest) -> Any:
    if request.contents[-1].function_responses:
        return "approved"
    if "!!!" in request.system_instruction:
        return call("exit_loop")
    return "needs more enthusiasm"


root_agent = LoopAgent(name="refine_loop", max_iterations=10, sub_agents=[
    LlmAgent(name="drafter", model=ScriptedModel(fallback=_drafter), tools=[save_draft]),
    LlmAgent(name="critic", model=ScriptedModel(fallback=_critic), instruction="Judge the draft: {draft?}",
             tools=[exit_loop]),
])
