"""What a model step asks: its tools and its request.

In order, as the model step (``_flow_model_step``) uses them:

1. :func:`resolve_tools`: the step's tools by name (toolsets listed now; a toolset of
   ours that fails gives an error event and the step goes on without it);
2. :func:`summarize_if_due`: with a ``Summarize`` compressor whose limit the history
   passed, the older messages summarized by the agent's own model (a compaction
   event, committed before the request is built, which then reads it);
3. :func:`step_request`: memories preloaded (``preload_memory``), the request built by
   the pure compiler (with the ``{artifact.NAME}`` artifacts of
   :func:`template_artifacts`; with a planner that plans in the request, its planning
   instruction in the system instruction and the contents' thought marks cleared),
   the App's context cache applied; when code other than
   the engine's will see the request before the model does, it gets copies of the
   session's contents (:func:`own_contents`); then a built-in code executor's, the
   tools' and toolsets' ``process_llm_request`` hooks, and code parts as text.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from .._cache_types import cache_state
from .._callables import is_plain_function
from .._exceptions import AdkError
from .._tree import inherited_model
from .._types import Compaction, Content, Event, EventActions, LlmRequest, Part, ToolsDict
from ..compiler import CompileContext, Summarize, build_request, history, referenced_artifacts
from ..compiler._providers import await_instruction_providers
from ..compiler._tools import SET_MODEL_RESPONSE, canonical_tools, is_toolset, uses_response_tool
from ..models._base import model_name
from ..planners._apply import planning_call
from ..tools._base import ToolContext
from ..tools._classes import BaseTool, BaseToolset, process_request
from ..tools._function import FunctionTool, in_daemon_thread
from ..tools._set_model_response import SetModelResponseTool
from ..tools.transfer_to_agent_tool import add_transfer_tool
from ..workflow._task_agent import delegate_tools
from ._code_execution import code_request
from ._compaction_adk import request_events
from ._confirmation import request_history
from ._context import CallbackContext, InvocationContext
from ._credential_request import without_requests
from ._flow_model import one_model

__all__ = [
    "SUMMARY_INSTRUCTION",
    "own_contents",
    "preload_memories",
    "resolve_tools",
    "step_request",
    "summarize_if_due",
    "template_artifacts",
]

_log = logging.getLogger("adk_actors.flow")


async def _listed(tool: Any, agent: Any, ctx: InvocationContext, problems: list[Event]) -> list[Any]:
    """The tools a toolset gives now; none when it fails (an error event in
    ``problems`` for a toolset of ours; google-adk's is only logged, as google-adk does)."""
    try:
        if isinstance(tool, BaseToolset):  # google-adk's: a readonly context, its prefix applied
            return list(await tool.get_tools_with_prefix(CallbackContext(ctx)))
        return list(await tool.get_tools(ctx))
    except Exception as exc:
        _log.error("toolset %s of agent %s failed: %s", getattr(tool, "name", tool), agent.name, exc)
        if not isinstance(tool, BaseToolset):  # google-adk's are left out silently, as google-adk does
            problems.append(ctx.event(error_code="toolset_error",
                                      error_message=f"toolset {getattr(tool, 'name', tool)!r} failed: {exc}"))
        return []


async def resolve_tools(agent: Any, ctx: InvocationContext) -> tuple[dict[str, Any], list[Any], list[Event]]:
    """The step's tools by name (plain functions wrapped), the tools its toolsets gave
    and a tool per ``single_turn`` sub-agent (``tools._single_turn``), and an error
    event per toolset of ours that failed to list its tools (the step goes
    on without them; a google-adk ``BaseToolset`` that fails is only logged, as
    google-adk does). An agent whose structured answer comes through
    ``set_model_response`` (an ``output_schema`` and tools) has that tool too."""
    tools: dict[str, Any] = {}
    extra: list[Any] = []
    problems: list[Event] = []
    for tool in canonical_tools(agent, ctx.root_agent):  # google_search with bypass_multi_tools_limit replaced
        if is_toolset(tool):
            provided = await _listed(tool, agent, ctx, problems)
            extra.extend(provided)
            for item in provided:
                tools[item.name] = item
            continue
        if is_plain_function(tool):
            tool = FunctionTool(tool)  # cheap: the description is cached per function
        name = getattr(tool, "name", None)
        if name is not None:
            tools[name] = tool
    for delegate in delegate_tools(agent):  # google-adk 2.x: a single_turn or task sub-agent is a tool, after the rest
        extra.append(delegate)
        tools[delegate.name] = delegate
    if getattr(agent, "output_schema", None) is not None and uses_response_tool(  # (no schema: no context built)
            agent, CompileContext(root_agent=ctx.root_agent, extra_tools=extra)):
        tools[SET_MODEL_RESPONSE] = SetModelResponseTool(agent.output_schema)  # declared by the compiler
    return tools, extra, problems


SUMMARY_INSTRUCTION = (
    "Summarize the conversation below for the assistant who will continue it: keep every fact, "
    "decision, name, number and open question; drop small talk. Write plain prose."
)


def _transcript(messages: Any) -> str:
    lines = []
    for message in messages:
        for part in message.parts:
            if part.text and not part.thought:
                lines.append(f"{message.role}: {part.text}")
            elif part.function_call is not None:
                lines.append(f"{message.role} called {part.function_call.name} with {part.function_call.args}")
            elif part.function_response is not None:
                lines.append(f"{part.function_response.name} returned {part.function_response.response}")
    return "\n".join(lines)


async def summarize_if_due(agent: Any, ctx: InvocationContext) -> Event | None:
    """With a ``Summarize`` compressor: once the history is past its limit, summarize the
    older messages with the agent's own model and return the compaction event (message
    count + summary). The compiler stays pure: it only reads such events. A failed
    summary is logged and the agent answers with the full history."""
    compressor = getattr(agent, "context_compressor", None)
    if not isinstance(compressor, Summarize):
        return None
    plan = compressor.plan(history(agent, CompileContext(events=ctx.session.events, branch=ctx.branch)))
    if plan is None:
        return None
    request = LlmRequest(model=model_name(inherited_model(agent, ctx.root_agent)), system_instruction=SUMMARY_INSTRUCTION,
                         contents=[Content.user(_transcript(plan.messages))])
    ctx.counters["llm_calls"] += 1
    summary = ""
    try:
        async for response in one_model(inherited_model(agent, ctx.root_agent), agent, ctx).generate(request):
            if not response.partial and response.content is not None:
                summary = response.content.text
    except Exception as exc:
        _log.warning("summarizing the history of %s failed: %s", agent.name, exc)
        return None
    if not summary:
        return None
    return ctx.event(actions=EventActions(compaction=Compaction(message_count=plan.message_count, summary=summary)))


async def preload_memories(agent: Any, ctx: InvocationContext) -> list[Any]:
    """Memories matching the user's latest message, for agents with ``preload_memory``."""
    if not getattr(agent, "preload_memory", False):
        return []
    query = next((e.content.text for e in reversed(ctx.session.events)
                  if e.author == "user" and e.content is not None and e.content.text), "")
    if not query:
        return []
    session = ctx.session
    try:
        found: list[Any] = await in_daemon_thread(ctx.memory.search, session.app_name, session.user_id, query, 5)
    except Exception as exc:
        _log.warning("preloading memory for %s failed: %s", agent.name, exc)
        return []
    return found


def template_artifacts(agent: Any, ctx: InvocationContext) -> dict[str, Part]:
    """The artifacts that ``{artifact.NAME}`` placeholders of the agent's instruction
    and the root's global instruction name: the latest version of each, through the
    invocation's artifact service (in a host, the artifact actor). One that does not
    exist, or cannot be loaded, is left out: its placeholder then stays as written (or
    goes, with ``?``). Instruction providers (callables) name none that can be known."""
    names: set[str] = set()
    for template in (getattr(agent, "instruction", None), getattr(ctx.root_agent, "global_instruction", None)):
        if isinstance(template, str):
            names |= referenced_artifacts(template)
    loaded: dict[str, Part] = {}
    session = ctx.session
    for name in sorted(names):
        try:
            part = ctx.artifacts.load(session.app_name, session.user_id, session.session_id, name)
        except AdkError:
            continue
        if part is not None:
            loaded[name] = part
    return loaded


#: ``process_llm_request`` as google-adk's base classes define it (a tool with it has no hook)
_NO_REQUEST_HOOK = (None, BaseTool.process_llm_request, BaseToolset.process_llm_request)


def _foreign_request_hook(tool: Any) -> bool:
    """Whether ``tool`` has a ``process_llm_request`` hook that is not ours (our own
    tools' hooks, Gemini's built-in tools and ``load_artifacts``, edit no content in
    place)."""
    hook = getattr(type(tool), "process_llm_request", None)
    return hook not in _NO_REQUEST_HOOK and not str(getattr(hook, "__module__", "")).startswith("adk_actors.")


def _others_see_request(agent: Any, ctx: InvocationContext, hooked: list[Any]) -> bool:
    """Whether code other than the engine's may see this step's request before the model
    has answered: an agent's before-model or model-error callback, a plugin's (see
    ``PluginManager.see_requests``), a tool's or toolset's ``process_llm_request`` hook
    not of ours, or a model object that is not ours."""
    model = inherited_model(agent, ctx.root_agent)
    return bool(getattr(agent, "before_model_callback", None) or getattr(agent, "on_model_error_callback", None)
                or (ctx.plugins is not None and ctx.plugins.see_requests())
                or any(_foreign_request_hook(tool) for tool in hooked)
                or not (isinstance(model, str) or type(model).__module__.startswith("adk_actors.")))


def own_contents(request: LlmRequest) -> None:
    """Give ``request`` its own objects where the compiler shares the session's or the
    agent's, as google-adk's request is made of copies: each content and each of its
    parts copied (shallow, as google-adk's: assigning ``part.text`` or
    ``part.function_response`` changes the request only, the session's events keep
    theirs), the tool declarations and the config's containers copied deep (the agent's
    definition keeps its own)."""
    request.contents = [content.model_copy(update={"parts": [part.model_copy() for part in content.parts]})
                        for content in request.contents]
    request.tools = [declaration.model_copy(deep=True) for declaration in request.tools]
    for key, value in list(request.config.items()):
        if isinstance(value, dict | list):
            request.config[key] = copy.deepcopy(value)


async def step_request(agent: Any, ctx: InvocationContext, tools: dict[str, Any], extra_tools: list[Any]) -> LlmRequest:
    """The request of this step, in order: memories preloaded; the compiler's request
    (state, events with google-adk's summaries applied (``_compaction_adk``), tools,
    artifacts; a planner's instruction, and the contents' thought marks cleared:
    :func:`~adk_actors.planners._apply.planning_call`); the context cache; copies of the contents when
    others will see it; a built-in code executor's hook, then the tools' and toolsets'
    ``process_llm_request`` hooks (toolsets first); code parts as text."""
    memories = await preload_memories(agent, ctx)
    events = request_events(ctx.session.events, agent.name)  # google-adk's summaries applied (or the list itself)
    compile_context = await await_instruction_providers(CompileContext(
        state=ctx.session.state,
        events=without_requests(events, request_history(events, ctx.branch)),
        run_config=ctx.run_config,
        root_agent=ctx.root_agent, branch=ctx.branch, invocation_id=ctx.invocation_id, extra_tools=extra_tools,
        memories=memories, artifacts=template_artifacts(agent, ctx)), agent)
    request = build_request(agent, compile_context, planning=planning_call(agent, lambda: CallbackContext(ctx)))
    request.tools_dict = ToolsDict(tools)  # google-adk's name -> tool map, for callbacks (and append_tools)
    add_transfer_tool(request)  # google-adk's map holds its transfer tool too
    if ctx.context_cache_config is not None:  # the App's context caching: the last call's cache
        request.cache_config = ctx.context_cache_config
        request.cache_metadata, request.cacheable_contents_token_count = cache_state(
            ctx.session.events, agent.name, ctx.invocation_id)
    hooked = [*(t for t in agent.tools if isinstance(t, BaseToolset)), *tools.values()]  # toolsets first
    if _others_see_request(agent, ctx, hooked):
        own_contents(request)  # what they change in place stays in this request
    executor = getattr(agent, "code_executor", None)
    if executor is not None and getattr(executor, "runs_in_model", False):  # BuiltInCodeExecutor
        executor.process_llm_request(request)
    await process_request(hooked, lambda: ToolContext(ctx, None), request)  # google-adk tools' hooks
    code_request(agent, request)  # an agent with a code_executor: code parts as text
    return request
