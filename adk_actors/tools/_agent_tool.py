"""``AgentTool``: an agent used as a tool, with google-adk's semantics.

Declared as the agent's name and description; its parameters are the agent's
``input_schema`` when it has one, else one string, ``request``. A call, in order:
sets ``skip_summarization`` on the call's actions when asked (the tool's result then
ends the caller's turn); builds the child's message (the request, or the arguments
validated by ``input_schema`` as JSON, or, with neither, the arguments as JSON); runs
the agent in a child session of its own (the caller's state copied in, google-adk's
internal ``_adk`` keys left out; the caller's run config, services and cancel token;
the caller's artifacts, as google-adk forwards them; with ``include_plugins`` (the
default) the caller's plugins, each with a state of its own for the child's run, so
their hooks see the child's invocation as google-adk's child runner shows it to them; its telemetry spans, which
join the caller's trace under the tool's span, name a session id of its own, a new
UUID per call, as google-adk's child run in a new in-memory session does);
copies each state change the child makes back into the caller's state as it happens;
and returns the text of the child's last event with content (an ``output_schema``'s
JSON validated into a dict). With ``propagate_grounding_metadata``, that event's
``grounding_metadata`` (its JSON) is set in the caller's state under
:data:`GROUNDING_KEY`, and the caller's next answer carries it. A child that ends on an error returns the error's message;
one that ends waiting on a long-running call returns a message saying so (it cannot be
resumed: its session is discarded) and the turn is not skipped.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

from pydantic import BaseModel, TypeAdapter

from .. import telemetry
from .._grounding import GroundingMetadata
from .._types import Content, Event, FunctionDeclaration, Part
from ..agents._llm_agent import LlmAgent
from ._base import ToolContext
from ._classes import BaseTool

__all__ = ["GROUNDING_KEY", "AgentTool"]

#: where an AgentTool with ``propagate_grounding_metadata`` leaves its agent's last
#: grounding for the caller's next answer (google-adk's key: invocation state)
GROUNDING_KEY = "temp:_adk_grounding_metadata"


def _input_schema(agent: Any) -> Any:
    """The schema the agent's input follows: an LlmAgent's ``input_schema``, a
    workflow's first sub-agent's (google-adk's rule)."""
    if isinstance(agent, LlmAgent):
        return getattr(agent, "input_schema", None)
    subs = getattr(agent, "sub_agents", None) or []
    return _input_schema(subs[0]) if subs else None


def _output_schema(agent: Any) -> Any:
    """The schema the agent's answer follows: an LlmAgent's ``output_schema``, a
    workflow's last sub-agent's (google-adk's rule)."""
    if isinstance(agent, LlmAgent):
        return agent.output_schema
    subs = getattr(agent, "sub_agents", None) or []
    return _output_schema(subs[-1]) if subs else None


def _without_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_without_titles(v) for v in schema]
    return schema


def _structured(schema: Any, text: str) -> Any:
    """``text`` (JSON, perhaps in a code fence) validated by ``schema``: a model as a
    dict of its set fields, a list of models as a list of them, anything else decoded."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate_json(text).model_dump(exclude_none=True)
    validated = TypeAdapter(schema).validate_json(text)
    if isinstance(validated, list):
        return [v.model_dump(exclude_none=True) if isinstance(v, BaseModel) else v for v in validated]
    return json.loads(text)


class AgentTool(BaseTool):
    """An agent as a tool (google-adk's ``AgentTool``). ``skip_summarization``: the
    agent's answer is the caller's final response, the caller's model not asked again.
    ``include_plugins``: the child runs with the caller's plugins (else with none).
    ``propagate_grounding_metadata`` is google-adk's; the child runs with the caller's
    services here whatever they say."""

    def __init__(self, agent: Any, skip_summarization: bool = False, *, include_plugins: bool = True,
                 propagate_grounding_metadata: bool = False) -> None:
        super().__init__(name=agent.name, description=getattr(agent, "description", "") or "")
        self.agent = agent
        self.skip_summarization = skip_summarization
        self.include_plugins = include_plugins
        self.propagate_grounding_metadata = propagate_grounding_metadata

    def _get_declaration(self) -> FunctionDeclaration:
        schema = _input_schema(self.agent)
        if schema is not None:
            parameters = TypeAdapter(schema).json_schema()  # titles kept, as google-adk sends it
        else:
            parameters = {"type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"]}
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema=parameters)

    def _message(self, args: dict[str, Any]) -> Content:
        schema = _input_schema(self.agent)
        if schema is not None:
            text = TypeAdapter(schema).validate_python(args)
            text = text.model_dump_json(exclude_none=True) if isinstance(text, BaseModel) else json.dumps(text)
        elif "request" in args:
            text = str(args["request"])
        else:
            text = json.dumps(args, ensure_ascii=False, sort_keys=True)
        return Content(role="user", parts=(Part(text=text),))

    def _child_event(self, event: Event, tool_context: ToolContext) -> None:
        """Each event of the child's run, as it comes; an AgentTool keeps them to itself
        (google-adk's shows none in the caller's stream)."""

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        if self.skip_summarization:
            tool_context.actions.skip_summarization = True
        parent = tool_context.invocation
        state = {k: v for k, v in dict(tool_context.state).items() if not k.startswith("_adk")}
        # the caller's session id, so that the child's artifacts are the caller's (google-adk
        # forwards them); its events and state stay in this copy
        child = dataclasses.replace(parent.session, events=[], state=state)
        last: Content | None = None
        grounding: GroundingMetadata | None = None
        error: str | None = None
        pending: set[str] = set()
        # its spans' session (gen_ai.conversation.id): google-adk's child session's, a new UUID
        with telemetry.in_session(str(uuid.uuid4())):
            plugins = parent.plugins if self.include_plugins and parent.plugins is not None else ()
            async for event in parent.run_isolated(self.agent, child, self._message(args), plugins=plugins):
                self._child_event(event, tool_context)
                for key, value in event.actions.state_delta.items():
                    tool_context.state[key] = value
                if event.error_message:
                    error = event.error_message
                pending |= set(event.long_running_tool_ids or ())
                if event.content is not None and event.author != "user":
                    last = event.content
                    grounding = event.grounding_metadata
                    pending -= {p.function_response.id for p in event.content.parts
                                if p.function_response is not None}
        if self.propagate_grounding_metadata and grounding is not None:  # for the caller's next answer
            tool_context.state[GROUNDING_KEY] = grounding.model_dump(mode="json", by_alias=True, exclude_none=True)
        if pending:
            tool_context.actions.skip_summarization = False
            return (f"Error: agent {self.agent.name!r} stopped waiting on unresolved long-running tool call(s) "
                    f"(pending call ids: {sorted(pending)}), which AgentTool cannot resume.")
        texts = [p.text for p in (last.parts if last is not None else ()) if p.text and not p.thought]
        merged = "\n".join(texts)
        if not merged:
            return error or ""
        schema = _output_schema(self.agent)
        return merged if schema is None else _structured(schema, merged)
