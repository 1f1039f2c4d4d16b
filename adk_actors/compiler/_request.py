"""``build_request``: definition + snapshot -> ``LlmRequest``."""

from __future__ import annotations

from typing import Any

from .._schema import output_schema_json
from .._tree import inherited_model
from .._types import LlmRequest, model_name
from ._compressors import Summarize
from ._contents import build_contents
from ._context import CompileContext
from ._instructions import compile
from ._tools import effective_tools, uses_response_tool

__all__ = ["build_request", "history"]


def history(agent: Any, ctx: CompileContext) -> list[Any]:
    """The request contents before compression (what a Summarize plan looks at)."""
    return build_contents(
        agent.name,
        ctx.events,
        branch=ctx.branch,
        include_contents=getattr(agent, "include_contents", "default"),
        new_message=ctx.new_message,
    )


def build_request(agent: Any, ctx: CompileContext) -> LlmRequest:
    """Compile one request, in order: instruction, history (then the agent's
    compressor), tools, and the config: the agent's ``generate_config`` overlaid key by
    key with the RunConfig's; an output schema also sets ``response_schema`` and
    ``response_mime_type``, unless it travels in the ``set_model_response`` tool."""
    contents = history(agent, ctx)
    compressor = getattr(agent, "context_compressor", None)
    if compressor is not None and not isinstance(compressor, Summarize):
        contents = compressor.compress(contents)
    config: dict[str, Any] = {**(getattr(agent, "generate_config", None) or {}), **ctx.run_config.generate_config}
    schema = getattr(agent, "output_schema", None)
    if schema is not None and not uses_response_tool(agent, ctx):
        config["response_schema"] = output_schema_json(schema)
        config["response_mime_type"] = "application/json"
    return LlmRequest(
        model=model_name(inherited_model(agent, ctx.root_agent or agent)),
        system_instruction=compile(agent, ctx),
        contents=list(contents),
        tools=list(effective_tools(agent, ctx)),
        config=config,
    )
