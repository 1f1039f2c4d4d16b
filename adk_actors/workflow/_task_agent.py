"""How a parent LlmAgent delegates to a sub-agent of ``mode="task"`` (google-adk
2.x's task delegation), single-turn tasks only.

The parent's model sees the task sub-agent as a tool named after it: its
parameters are the sub-agent's ``input_schema`` (else one string, ``request``,
described as google-adk describes it), a plain JSON schema under
``parameters_json_schema`` as google-adk 2.13 declares it, its description the sub-agent's description
followed by google-adk's sentence that the tool delegates and must not be called
in parallel with other tools. :func:`delegate_tools` gives, in the sub-agents'
order, that tool for each task sub-agent and a
:class:`~adk_actors.tools._single_turn.SingleTurnAgentTool` for each single-turn one.

A call, in order: the sub-agent runs in a child session (as an AgentTool's child
runs) with ``finish_task`` added to its tools (``_task.FinishTaskTool``, from its
``output_schema``; its ``output_schema`` and ``output_key`` are not used otherwise),
its one message the call's arguments as JSON; its events are shown in the parent's
stream on the branch ``<sub-agent>@<call id>`` as they come (as a single-turn
sub-agent's are), its state changes going with them (none is added to the call's
response, as in google-adk). A ``finish_task`` call is
remembered; the response that accepts it ends the run (the sub-agent's model is not
asked again), that event carries the task's output (:func:`_task.task_output`,
also set under the sub-agent's ``output_key``), and the output is the tool's result
(a dict as it is, anything else as ``{"output": value}``). The flow answers the call
with a user-authored response event, as google-adk's synthesized one
(:func:`delegates`).

Not done: google-adk's task sub-agent may ask the user and wait across turns until it
calls ``finish_task``. Here a sub-agent whose run ends without an accepted
``finish_task`` (a question in text, an error) gives an ``{"error": ...}`` result
naming it, and the parent's model goes on.
"""

from __future__ import annotations

import dataclasses
import json
from contextlib import aclosing
from typing import Any

from pydantic import TypeAdapter

from .._types import Content, FunctionDeclaration, Part
from ..tools._agent_tool import _input_schema
from ..tools._base import ToolContext
from ..tools._single_turn import SingleTurnAgentTool
from ._task import FinishTaskTool, finish_call_args, finished, task_output

__all__ = ["TaskAgentTool", "delegate_tools", "delegates"]

_REQUEST = "Detailed instructions or context for the task sub-agent."
_DELEGATES = ("\nIMPORTANT: This tool delegates execution to a specialized agent. "
              "Do NOT call this tool in parallel with any other tools.")


class TaskAgentTool(SingleTurnAgentTool):
    """A task sub-agent as its parent's tool (see the module)."""

    def _get_declaration(self) -> FunctionDeclaration:
        """google-adk 2.13's declaration: the input schema's JSON schema as pydantic makes
        it (titles kept), else the default one-string ``request`` object (its title
        google-adk's model's), under ``parameters_json_schema``."""
        schema = _input_schema(self.agent)
        if schema is not None:
            parameters = TypeAdapter(schema).json_schema()
        else:
            parameters = {"type": "object", "title": "_DefaultTaskInput", "required": ["request"],
                          "properties": {"request": {"type": "string", "title": "Request", "description": _REQUEST}}}
        description = f"{self.description}{_DELEGATES}".strip()
        return FunctionDeclaration(name=self.name, description=description, parameters_json_schema=parameters)

    def _message(self, args: dict[str, Any]) -> Content:
        return Content(role="user", parts=(Part(text=json.dumps(args, ensure_ascii=False)),))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        agent = self.agent
        tool = FinishTaskTool(getattr(agent, "output_schema", None), agent.name)
        output_key = getattr(agent, "output_key", None)
        runner = agent.model_copy(update={"tools": [*agent.tools, tool], "output_schema": None, "output_key": None})
        parent = tool_context.invocation
        state = {k: v for k, v in dict(tool_context.state).items() if not k.startswith("_adk")}
        child = dataclasses.replace(parent.session, events=[], state=state)
        pending: dict[str, Any] | None = None
        error: str | None = None
        async with aclosing(parent.run_isolated(runner, child, self._message(args))) as events:
            async for event in events:
                if event.error_message:
                    error = event.error_message
                called = finish_call_args(event)
                if called is not None:
                    pending = called
                elif pending is not None and finished(event):
                    output = task_output(tool, pending)
                    update: dict[str, Any] = {"output": output}
                    if output_key:
                        update["actions"] = event.actions.model_copy(update={
                            "state_delta": {**event.actions.state_delta, output_key: output}})
                    self._child_event(event.model_copy(update=update), tool_context)
                    return output if isinstance(output, dict) else {"output": output}
                self._child_event(event, tool_context)
        why = f" ({error})" if error else ""
        return {"error": f"task agent {agent.name!r} ended without finishing its task with `finish_task`{why}; "
                         f"a task that waits for the user across turns is not supported here."}


def delegate_tools(agent: Any) -> list[SingleTurnAgentTool]:
    """A tool for each sub-agent of ``agent`` (an LlmAgent) whose ``mode`` is
    ``single_turn`` or ``task``, in the sub-agents' order; none for another kind of agent."""
    if not hasattr(agent, "tools"):
        return []
    found: list[SingleTurnAgentTool] = []
    for sub in getattr(agent, "sub_agents", ()) or ():
        mode = getattr(sub, "mode", None)
        if mode == "single_turn":
            found.append(SingleTurnAgentTool(sub))
        elif mode == "task":
            found.append(TaskAgentTool(sub))
    return found


def delegates(tool: Any) -> bool:
    """Is ``tool`` a task sub-agent's (its call answered by a user-authored event)?"""
    return isinstance(tool, TaskAgentTool)
