"""Built-in tools: exit_loop, load_memory, load_artifacts, AgentTool.

``transfer_to_agent`` is declared by the compiler and handled by the flow itself.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .._types import Content, FunctionDeclaration, Part
from ._base import ToolContext
from ._function import FunctionTool, LongRunningFunctionTool

__all__ = ["AgentTool", "LongRunningFunctionTool", "PreloadMemoryTool", "exit_loop", "load_artifacts", "load_memory",
           "preload_memory"]


def _exit_loop(tool_context: ToolContext) -> None:
    """Stop the loop this agent runs in. Call it only when the task is complete."""
    tool_context.actions.escalate = True
    tool_context.actions.skip_summarization = True


def _load_memory(query: str, tool_context: ToolContext) -> dict[str, Any]:
    """Search what this user said in earlier conversations.

    Args:
        query: Words or a phrase to look for.
    """
    found = tool_context.search_memory(query)
    return {"result": {"memories": [entry.to_dict() for entry in found.memories]}}  # google-adk's shape


def _load_artifacts(tool_context: ToolContext, artifact_names: list[str] | None = None) -> dict[str, Any]:
    """List this session's artifacts, and read the text of the ones named.

    Args:
        artifact_names: Names of artifacts to read; leave empty to only list them.
    """
    result: dict[str, Any] = {"artifacts": tool_context.list_artifacts()}
    loaded: dict[str, Any] = {}
    for name in artifact_names or []:
        part = tool_context.load_artifact(name)
        loaded[name] = None if part is None else (part.text if part.text is not None else "<binary content>")
    if loaded:
        result["contents"] = loaded
    return result


class PreloadMemoryTool:
    """google-adk's ``preload_memory`` tool: not a call the model makes, but the
    agent's ``preload_memory`` switch. An agent given it in ``tools`` has it taken out
    of its tools and ``preload_memory`` set: before each model call, the user's
    memories that match their latest message are put in the instruction."""

    name = "preload_memory"
    preloads_memory = True


exit_loop = FunctionTool(_exit_loop, name="exit_loop")
preload_memory = PreloadMemoryTool()
load_memory = FunctionTool(_load_memory, name="load_memory")
load_artifacts = FunctionTool(_load_artifacts, name="load_artifacts")


class AgentTool:
    """An agent used as a tool: it runs in an isolated child session and its final
    answer (JSON-decoded when it has an output schema) is the tool's result."""

    is_long_running = False

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name: str = agent.name
        self.description: str = agent.description or f"Ask the {agent.name} agent."

    def declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters={"type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"]},
        )

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any:
        parent = tool_context.invocation
        child_session = dataclasses.replace(
            parent.session, session_id=f"{parent.session.session_id}/{self.name}", events=[],
            state={k: v for k, v in parent.session.state.items() if not k.startswith("temp:")})
        final = ""
        request = Content(role="user", parts=(Part(text=str(args.get("request", ""))),))
        async for event in parent.run_isolated(self.agent, child_session, request):
            if event.error_code:
                return {"error": f"{self.name} failed: {event.error_message}"}
            if event.author != "user" and event.content is not None and event.content.text:
                final = event.content.text
        if getattr(self.agent, "output_schema", None) is not None:
            try:
                return json.loads(final)
            except ValueError:
                pass
        return {"result": final}
