"""``build_request``: definition + snapshot -> ``LlmRequest``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._schema import output_schema_json
from .._tree import inherited_model
from .._types import Content, LlmRequest, Part, model_name
from ..planners._apply import without_thought_marks
from ._compressors import Summarize
from ._contents import build_contents
from ._context import CompileContext
from ._instructions import agent_instruction, compile, labelled_instruction, static_parts
from ._tools import effective_tools, uses_response_tool

__all__ = ["build_request", "history", "with_instruction_message"]


def history(agent: Any, ctx: CompileContext) -> list[Any]:
    """The request contents before compression (what a Summarize plan looks at)."""
    return build_contents(
        agent.name,
        ctx.events,
        branch=ctx.branch,
        include_contents=getattr(agent, "include_contents", "default"),
        new_message=ctx.new_message,
        include_thoughts=ctx.run_config.include_thoughts_from_other_agents,
    )


def _turn_boundary(contents: list[Content]) -> int:
    """Where the run of plain user messages that ends the contents begins (a model's
    message or a tool's results ends a run); the end when the last message is a
    model's or a tool's results."""
    index = len(contents)
    for position in range(len(contents) - 1, -1, -1):
        content = contents[position]
        if content.role != "user" or any(p.function_response is not None for p in content.parts):
            return position + 1
        index = position
    return index


def with_instruction_message(agent: Any, ctx: CompileContext, contents: list[Content]) -> list[Content]:
    """An agent with a ``static_instruction`` (google-adk 2.x's placement): its
    instruction (when it has one) as a user message, :func:`labelled_instruction`,
    before the turn's last run of user messages; when the static instruction has
    non-text parts, their messages and then the instruction's come first instead (a
    prefix that stays the same across turns). Other agents: ``contents`` as they are."""
    if not getattr(agent, "static_instruction", None):
        return contents
    _, carried = static_parts(agent)
    added = list(carried)
    if getattr(agent, "instruction", None):
        text = labelled_instruction(agent_instruction(agent, ctx))
        added.append(Content(role="user", parts=(Part(text=text),)))
    at = 0 if carried else _turn_boundary(contents)
    return [*contents[:at], *added, *contents[at:]]


def build_request(agent: Any, ctx: CompileContext,
                  planning: Callable[[LlmRequest], str | None] | None = None) -> LlmRequest:
    """Compile one request, in order: history (then the agent's compressor; then, with
    a ``static_instruction``, the instruction as a message:
    :func:`with_instruction_message`), the config (the agent's ``generate_config``
    overlaid key by key with the RunConfig's; an output schema also sets
    ``response_schema`` and ``response_mime_type``, unless it travels in the
    ``set_model_response`` tool), the system instruction, then the tools.

    ``planning`` (the flow gives it for an agent whose planner plans in the request,
    ``planners._apply``) is called once, while the system instruction is compiled,
    with the request as google-adk's planner reads it: its model, config, contents
    and the system instruction up to the agent's identity, no tools yet; the text it
    returns joins the system instruction there (``compile``), and then every thought
    mark of the contents is cleared (copies: the session's events keep theirs). What
    ``planning`` raises is raised."""
    contents = history(agent, ctx)
    compressor = getattr(agent, "context_compressor", None)
    if compressor is not None and not isinstance(compressor, Summarize):
        contents = compressor.compress(contents)
    contents = with_instruction_message(agent, ctx, list(contents))
    config: dict[str, Any] = {**(getattr(agent, "generate_config", None) or {}), **ctx.run_config.generate_config}
    schema = getattr(agent, "output_schema", None)
    if schema is not None and not uses_response_tool(agent, ctx):
        config["response_schema"] = output_schema_json(schema)
        config["response_mime_type"] = "application/json"
    request = LlmRequest(model=model_name(inherited_model(agent, ctx.root_agent or agent)),
                         contents=list(contents), config=config)
    if planning is None:
        request.system_instruction = compile(agent, ctx)
    else:
        def planned(so_far: str) -> str | None:
            request.system_instruction = so_far
            return planning(request)

        request.system_instruction = compile(agent, ctx, planned)
        request.contents = without_thought_marks(request.contents)
    request.tools = list(effective_tools(agent, ctx))
    return request
