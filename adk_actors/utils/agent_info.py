"""google-adk's ``google.adk.utils.agent_info``: an agent tree described for a UI
(each agent's name, description, instruction, tool declarations, sub-agents).
The declarations are google-genai's ``types.Tool`` (the ``genai`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic

from .. import types
from ..agents.base_agent import BaseAgent
from ..agents.llm_agent import LlmAgent
from ..tools.base_tool import BaseTool
from ..tools.base_toolset import BaseToolset
from ..tools.function_tool import FunctionTool

__all__ = ["AgentInfo", "get_agents_dict", "get_tools_info"]


class AgentInfo(pydantic.BaseModel):
    """One agent as :func:`get_agents_dict` describes it. An instruction given as a
    function is described by its name (``<InstructionProvider: name>``), never called."""

    name: str
    description: str
    instruction: str
    tools: list[types.Tool]
    sub_agents: list[str]

    @pydantic.field_validator("instruction", mode="before")
    @classmethod
    def _provider_by_name(cls, value: Any) -> Any:
        if callable(value):
            return f"<InstructionProvider: {getattr(value, '__name__', None) or type(value).__name__}>"
        return value


async def get_tools_info(tools: Sequence[Any]) -> list[Any]:
    """Each tool's declaration as a one-declaration ``types.Tool``, in order: a tool as
    it is, a toolset as the tools it lists now, a plain function as a
    ``FunctionTool``; a tool without a declaration (a model's built-in) is left out.
    An agent among them is a ValueError (agents are sub-agents, not tools)."""
    found: list[BaseTool] = []
    for tool in tools:
        if isinstance(tool, BaseTool):
            found.append(tool)
        elif isinstance(tool, BaseToolset):
            found.extend(await tool.get_tools())
        elif isinstance(tool, BaseAgent):
            raise ValueError(f"agent {tool.name!r} is not a tool: give it as a sub-agent, or wrap it in an AgentTool")
        else:
            found.append(FunctionTool(tool))
    declarations = [tool._get_declaration() for tool in found]
    return [types.Tool.model_validate({"function_declarations": [declaration.model_dump(exclude_none=True)]})
            for declaration in declarations if declaration]


async def get_agents_dict(agent: LlmAgent) -> dict[str, AgentInfo]:
    """``agent`` and its ``LlmAgent`` sub-agents, depth first, each once by name, as
    :class:`AgentInfo` by name (a sub-agent of another kind is left out, with its own
    sub-agents)."""
    found: dict[str, AgentInfo] = {}

    async def visit(current: LlmAgent) -> None:
        if current.name in found:
            return
        children = []
        for sub in current.sub_agents:
            if isinstance(sub, LlmAgent):
                await visit(sub)
                children.append(sub.name)
        found[current.name] = AgentInfo(name=current.name, description=current.description,
                                        instruction=current.instruction,
                                        tools=await get_tools_info(current.tools), sub_agents=children)

    await visit(agent)
    return found
