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

As in google-adk, the sub-agent's own events (not its message) show in the caller's
stream while it runs, on the branch ``<sub-agent>@<function call id>``: each is put on
the queue that :data:`SUB_EVENTS` holds in the calling tool step (the flow's tool step
sets it when a call goes to such a tool, relays the events as they come, and leaves
them out of its own agent's model requests); with no queue set they are not shown.
"""

from __future__ import annotations

import asyncio
import json
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .._types import Content, Event, Part
from ._agent_tool import AgentTool, _input_schema
from ._base import ToolContext

__all__ = ["SUB_EVENTS", "SingleTurnAgentTool", "single_turn_tools", "sub_branch"]

#: the calling tool step's queue of sub-agent events to show (None: not shown)
SUB_EVENTS: ContextVar[asyncio.Queue[Event] | None] = ContextVar("adk_sub_events", default=None)


def sub_branch(branch: str | None) -> bool:
    """Is ``branch`` a sub-agent's run as a tool (``<name>@<call id>``, at any depth)?"""
    return bool(branch) and "@" in (branch or "")


class SingleTurnAgentTool(AgentTool):
    """A single-turn sub-agent as its parent's tool (see the module)."""

    def _child_event(self, event: Event, tool_context: ToolContext) -> None:
        queue = SUB_EVENTS.get()
        if queue is None or event.author == "user":
            return
        here = f"{self.agent.name}@{tool_context.function_call_id}"
        outer = tool_context.invocation.branch
        branch = f"{outer}.{here}" if outer else here
        if sub_branch(event.branch):  # a deeper single-turn sub-agent's, relayed by the child
            branch = f"{branch}.{event.branch}"
        queue.put_nowait(event.model_copy(update={"branch": branch}))

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
