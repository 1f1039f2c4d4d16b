"""How a parent LlmAgent calls a sub-agent of ``mode="single_turn"`` (google-adk
2.x): as a tool named after it, declared as an :class:`AgentTool` is (its
``input_schema`` as the parameters, else one string, ``request``).

A call, in order: the arguments are checked against the sub-agent's ``input_schema``
(refused: the result is the text ``Error validating input: ...``, the sub-agent not
run); its message is the validated arguments as JSON (google-adk's node input: the
model dumped without None fields, ``json.dumps``'d), or without a schema the
``request`` text; the sub-agent runs as an AgentTool runs it (a child session
holding the caller's state, that message its only one, its state changes copied back);
its answer is the result; a run that fails gives the text ``Error running
sub-agent: ...`` as the result (google-adk's words), and the caller's model goes on.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .._types import Content, Part
from ._agent_tool import AgentTool, _input_schema
from ._base import ToolContext

__all__ = ["SingleTurnAgentTool", "single_turn_tools"]


class SingleTurnAgentTool(AgentTool):
    """A single-turn sub-agent as its parent's tool (see the module)."""

    def _message(self, args: dict[str, Any]) -> Content:
        schema = _input_schema(self.agent)
        value: Any = args.get("request") if schema is None else TypeAdapter(schema).validate_python(args)
        if isinstance(value, BaseModel):
            value = value.model_dump(exclude_none=True)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return Content(role="user", parts=(Part(text=text),))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        schema = _input_schema(self.agent)
        if schema is not None:
            try:
                TypeAdapter(schema).validate_python(args)
            except ValidationError as exc:
                return f"Error validating input: {exc}"
        try:
            return await super().run_async(args=args, tool_context=tool_context)
        except Exception as exc:
            return f"Error running sub-agent: {exc}"


def single_turn_tools(agent: Any) -> list[SingleTurnAgentTool]:
    """A tool for each sub-agent of ``agent`` (an LlmAgent) whose ``mode`` is
    ``single_turn``, in the sub-agents' order; none for another kind of agent."""
    if not hasattr(agent, "tools"):
        return []
    return [SingleTurnAgentTool(sub) for sub in getattr(agent, "sub_agents", ()) or ()
            if getattr(sub, "mode", None) == "single_turn"]
