"""Built-in tools: exit_loop, load_memory, load_artifacts, preload_memory.

``transfer_to_agent`` is declared by the compiler and handled by the flow itself.
"""

from __future__ import annotations

from typing import Any

from .._types import FunctionDeclaration, LlmRequest
from ._base import ToolContext
from ._classes import BaseTool
from ._function import FunctionTool, LongRunningFunctionTool
from ._load_artifacts import load_artifacts_tool

__all__ = ["LoadMemoryTool", "LongRunningFunctionTool", "PreloadMemoryTool", "exit_loop", "load_artifacts",
           "load_memory", "load_memory_tool", "preload_memory"]


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


class PreloadMemoryTool(BaseTool):
    """google-adk's ``preload_memory`` tool: not a call the model makes, but the
    agent's ``preload_memory`` switch. An agent given it in ``tools`` has it taken out
    of its tools and ``preload_memory`` set: before each model call, the user's
    memories that match their latest message are put in the instruction."""

    preloads_memory = True

    def __init__(self) -> None:
        super().__init__(name="preload_memory", description="preload_memory")


exit_loop = FunctionTool(_exit_loop, name="exit_loop")
preload_memory = PreloadMemoryTool()


class LoadMemoryTool(FunctionTool):
    """google-adk's ``LoadMemoryTool``: ``load_memory(query)``, declared as google-adk
    declares it (one required string, ``query``); before each model call of an agent
    that has it, the system instruction tells the model it has a memory to search."""

    def __init__(self) -> None:
        super().__init__(_load_memory, name="load_memory")

    def _get_declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema={
            "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        llm_request.append_instructions([
            "You have a memory of earlier conversations with this user. When a question needs it, "
            "search it by calling load_memory with a query."])


load_memory_tool = LoadMemoryTool()
load_memory = load_memory_tool
load_artifacts = load_artifacts_tool  # google-adk's LoadArtifactsTool
