"""The setup of a live conversation: the request a live model's connection opens with.

:func:`live_setup`, in order: resolves the agent's tools (a toolset that fails is an
error event, given back with the request); compiles the request from the session as a
turn does (system instruction, tools, history, memories; with a planner that plans in
the request, its planning instruction, ``planners._apply``), without the
``set_model_response`` tool (:func:`without_response_tool`); lets a built-in code
executor add Gemini's code-execution tool, then the tools' and toolsets' hooks
(toolsets first) change the request, as in a turn; writes the history's code parts as
text (``engine._live_code``); marks the declarations of the tools that answer later
``NON_BLOCKING`` (:func:`with_behaviors`); and asks for
``RunConfig.response_modalities``. What a hook or the compiler raises is raised.
"""

from __future__ import annotations

from typing import Any

from .._types import Behavior, Event, LlmRequest
from ..compiler import CompileContext, build_request
from ..compiler._instructions import output_schema_instruction
from ..compiler._providers import await_instruction_providers
from ..compiler._tools import SET_MODEL_RESPONSE
from ..planners._apply import planning_call
from ..tools._base import ToolContext
from ..tools._classes import BaseToolset, process_request
from ._context import CallbackContext, InvocationContext
from ._flow import preload_memories, resolve_tools, template_artifacts
from ._live_code import code_setup, history_as_text
from ._live_tools import is_non_blocking, is_streaming

__all__ = ["live_setup", "with_behaviors", "without_response_tool"]


async def live_setup(agent: Any, ctx: InvocationContext) -> tuple[LlmRequest, dict[str, Any], list[Event]]:
    """The setup request, the agent's tools by name, and the error events of its
    toolsets that failed (see the module)."""
    tools, extra_tools, problems = await resolve_tools(agent, ctx)
    memories = await preload_memories(agent, ctx)
    compile_context = await await_instruction_providers(CompileContext(
        state=ctx.session.state, events=ctx.session.events, run_config=ctx.run_config,
        root_agent=ctx.root_agent, branch=ctx.branch, invocation_id=ctx.invocation_id, extra_tools=extra_tools,
        memories=memories, artifacts=template_artifacts(agent, ctx)), agent)
    request = build_request(agent, compile_context, planning=planning_call(agent, lambda: CallbackContext(ctx)))
    request = without_response_tool(agent, tools, request)
    code_setup(agent, request)
    await process_request([*(t for t in agent.tools if isinstance(t, BaseToolset)), *tools.values()],
                          lambda: ToolContext(ctx, None), request)
    history_as_text(agent, request)
    request = with_behaviors(request, tools)
    modalities = ctx.run_config.response_modalities
    if modalities:
        request = request.model_copy(update={"config": {**request.config, "response_modalities": list(modalities)}})
    return request, tools, list(problems)


def without_response_tool(agent: Any, tools: dict[str, Any], request: LlmRequest) -> LlmRequest:
    """A live conversation has no ``set_model_response`` (as google-adk, which skips its
    output-schema step when live): the tool is taken out of ``tools`` (so a call of it
    is an unknown tool's), its declaration out of the request's, and the sentence the
    compiler adds about it out of the system instruction (the schema's own stays). A
    request without it is returned as is."""
    if tools.pop(SET_MODEL_RESPONSE, None) is None and all(d.name != SET_MODEL_RESPONSE for d in request.tools):
        return request
    instruction = request.system_instruction.replace(
        output_schema_instruction(agent, True), output_schema_instruction(agent, False))
    return request.model_copy(update={
        "tools": [d for d in request.tools if d.name != SET_MODEL_RESPONSE], "system_instruction": instruction})


def with_behaviors(request: LlmRequest, tools: dict[str, Any]) -> LlmRequest:
    """``request`` with each declaration's ``behavior`` as google-adk's live flow sets it
    (the Live API takes a later result only for a ``NON_BLOCKING`` function):
    ``NON_BLOCKING`` for a streaming or non-blocking tool (``engine._live_tools``),
    ``BLOCKING`` for a tool that says so; the others' declarations as they are."""
    declarations = []
    for declaration in request.tools:
        tool = tools.get(declaration.name)
        if is_streaming(tool) or is_non_blocking(tool):
            declaration = declaration.model_copy(update={"behavior": Behavior.NON_BLOCKING})
        elif tool is not None and getattr(tool, "behavior", None) == Behavior.BLOCKING:
            declaration = declaration.model_copy(update={"behavior": Behavior.BLOCKING})
        declarations.append(declaration)
    return request.model_copy(update={"tools": declarations})
