"""What each agent of the app was told, per invocation: google-adk's ``AppDetails``,
for the judge metrics that read an agent's instructions and tools
(``hallucinations_v1``, ``rubric_based_final_response_quality_v1``,
``rubric_based_tool_use_quality_v1``, ``rubric_based_multi_turn_trajectory_quality_v1``).

google-adk (``EvaluationGenerator``) takes them from the model requests themselves: a
plugin keeps every request as a model call starts, and of each turn's events, the
first event of each author that a model call made gives that author's
``AgentDetails``: the request's ``config.system_instruction`` and ``config.tools``
(the request object as it went on to the model: later changes to it count). We give
the same values, taken the same way, wherever the turn runs:

* in this process (``AgentEvaluator``): :class:`AppDetailsRecorder`, a plugin added
  after the app's own. On every model call it keeps the request (the object, not a
  copy), under the call's invocation id and the calling agent's name, the first of
  each agent in the invocation. :meth:`~AppDetailsRecorder.details_of` reads them
  when the turn has ended: the system instruction, and the tools as Gemini ``Tool``
  entries (``{"function_declarations": [...]}``, then each of Gemini's own tools,
  ``{"google_search": {}}``, as google-adk's ``config.tools`` has them). It never
  answers, so the call goes on as it would without it; a model call that an earlier
  plugin answered is not seen (nor is it by google-adk's plugin).
* on a host (``run_eval_set``: ``adk-actors eval APP``, the HTTP eval routes, a host's
  Runner): :func:`details_from_trace`, from the session's trace, which the host's run
  worker recorded as the turn ran: each ``generate_content`` span carries the id of
  the event its call made and the request as it went to the model
  (``gcp.vertex.agent.llm_request``: its config with ``system_instruction`` and
  ``tools``). Of the turn's events, in order, the first of each author whose id a
  span names gives that author's details: google-adk's rule, on google-adk's values.

Why the trace and not the agent definitions the host loads (compiled again here by
the request compiler): the instruction a model got is the definition's only when
nothing happened on the way. A ``{state}`` placeholder is filled from the session
(the case's state), an instruction provider runs with the turn's context, and a
``before_model`` callback or a plugin may add to the request; a tool set resolves its
tools per call. google-adk's judge reads what the model got; so does the trace. It
also needs no copy of the app's code where the eval runs (an ``HttpRunner``).

What the trace cannot give, and what then happens:

* a host that keeps no trace (``[host] trace_turns = 0``; an embedded ``HostConfig``'s
  default), a trace that cannot be read, or a turn with no model call recorded: the
  invocation has no ``app_details`` (None) and the judge prompts say that no tools
  were declared, as google-adk's do for an invocation without them;
* the recorded request is redacted (secrets in an instruction are masked) and cut
  at ``tracing.MAX_CHARS`` characters; its ``config`` comes first, so it is read
  even when the contents after it were cut; an agent whose config itself was cut is
  left out of the details;
* the trace records function declarations only: Gemini's own tools
  (``google_search``...) of a host-run turn are not in its details (an entry the
  trace may hold in Gemini's camelCase, ``googleSearch``, is read as google-adk's
  snake_case, ``google_search``).

For the judge prompts: :func:`instructions_of_agents` (every agent's, named),
:func:`instructions_of_responder` (the agent that answered the turn) and
:func:`tool_declarations_text` (each agent's tools, as JSON, keyed by agent).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from .._types import Event, LlmRequest, LlmResponse
from ..plugins.base_plugin import BasePlugin
from ..tracing import EVENT_ID, TraceSpan
from ._models import AgentDetails, AppDetails, Invocation, InvocationEvents

__all__ = ["NO_TOOLS", "AppDetailsRecorder", "details_from_trace", "instructions_of_agents", "instructions_of_responder",
           "tool_declarations_text"]

_REQUEST = "gcp.vertex.agent.llm_request"
#: what a judge prompt says in place of the tools when an invocation has no details
NO_TOOLS = "(no tools were declared to the agent)"
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _tool_entries(declarations: list[dict[str, Any]], builtin: Iterable[dict[str, Any]] = ()) -> list[Any]:
    """Gemini ``Tool`` entries as google-adk's ``config.tools`` holds them: the function
    declarations as one entry, then each of Gemini's own tools (its key in snake_case,
    as google-genai's model dumps it)."""
    entries: list[Any] = [{"function_declarations": declarations}] if declarations else []
    for entry in builtin:
        entries.append({_CAMEL.sub("_", key).lower(): value for key, value in entry.items()})
    return entries


def _details_of_request(name: str, request: LlmRequest) -> AgentDetails:
    declarations = [tool.model_dump(mode="json", exclude_none=True) for tool in request.tools]
    return AgentDetails(name=name, instructions=request.system_instruction,
                        tool_declarations=_tool_entries(declarations, request.builtin_tools))


class AppDetailsRecorder(BasePlugin):
    """Keeps the first model request of each agent in each invocation (see the module)."""

    def __init__(self) -> None:
        super().__init__(name="adk_actors_eval_app_details")
        self._seen: dict[str, dict[str, LlmRequest]] = {}

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        kept = self._seen.setdefault(callback_context.invocation_id, {})
        kept.setdefault(callback_context.agent_name, llm_request)
        return None

    def details_of(self, invocation_id: str) -> AppDetails | None:
        """The invocation's app details, read off the kept requests now (after the
        turn: as they went to the model); None when no model call of it was seen."""
        kept = self._seen.get(invocation_id)
        if kept is None:
            return None
        return AppDetails(agent_details={name: _details_of_request(name, request) for name, request in kept.items()})


def _config_of(recorded: Any) -> dict[str, Any] | None:
    """The ``config`` of a recorded request (a JSON string); read from where it starts
    when the text was cut after it; None when it cannot be read."""
    if not isinstance(recorded, str):
        return None
    try:
        body = json.loads(recorded)
    except ValueError:
        at = recorded.find('"config":')
        if at < 0:
            return None
        start = at + len('"config":')
        start += len(recorded[start:]) - len(recorded[start:].lstrip())
        try:
            config, _ = json.JSONDecoder().raw_decode(recorded, start)
        except ValueError:
            return None
    else:
        config = body.get("config") if isinstance(body, dict) else None
    return config if isinstance(config, dict) else None


def _instruction_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):  # a Content
        return "".join(str(part.get("text") or "") for part in value.get("parts") or [] if isinstance(part, dict))
    return ""


def details_from_trace(spans: Iterable[TraceSpan], events: Iterable[Event]) -> AppDetails | None:
    """A turn's app details from a session's trace ``spans`` and the turn's ``events``
    (see the module); None when no event of the turn has its model call's request in
    the trace."""
    configs: dict[str, dict[str, Any]] = {}
    for span in spans:
        event_id = span.attributes.get(EVENT_ID)
        if isinstance(event_id, str) and event_id not in configs:
            config = _config_of(span.attributes.get(_REQUEST))
            if config is not None:
                configs[event_id] = config
    found: dict[str, AgentDetails] = {}
    for event in events:
        config = configs.get(event.id)
        if config is None or event.author == "user" or event.author in found:
            continue
        tools = config.get("tools")
        entries = [{_CAMEL.sub("_", key).lower(): value for key, value in tool.items()} if isinstance(tool, dict)
                   else tool for tool in (tools if isinstance(tools, list) else [])]
        found[event.author] = AgentDetails(name=event.author,
                                           instructions=_instruction_text(config.get("system_instruction")),
                                           tool_declarations=entries)
    return AppDetails(agent_details=found) if found else None


def instructions_of_agents(details: AppDetails | None) -> str:
    """Every agent's instructions, in the order the agents first called a model, each
    as its name, a colon, and its instructions on the next line, a blank line between
    (where google-adk's ``hallucinations_v1`` puts them); agents told nothing are left
    out; "" without details."""
    if details is None:
        return ""
    return "\n\n".join(f"{name}:\n{agent.instructions}" for name, agent in details.agent_details.items()
                       if agent.instructions)


def instructions_of_responder(invocation: Invocation) -> str:
    """The instructions of the agent that answered ``invocation`` (the author of its
    first intermediate event; with none, the first agent in its details), as google-adk's
    ``rubric_based_final_response_quality_v1`` picks it; "" without details, or when
    that agent called no model (google-adk raises there)."""
    details = invocation.app_details
    if details is None:
        return ""
    data = invocation.intermediate_data
    name: str | None = None
    if isinstance(data, InvocationEvents) and data.invocation_events:
        name = data.invocation_events[0].author
    elif details.agent_details:
        name = next(iter(details.agent_details))
    agent = details.agent_details.get(name or "")
    return agent.instructions if agent is not None else ""


def tool_declarations_text(details: AppDetails | None) -> str | None:
    """Each agent's tools as JSON, ``{"tool_declarations": {agent: [Tool entries]}}``
    (the data google-adk's judge prompts carry), indented by 2; None without details."""
    if details is None:
        return None
    return json.dumps({"tool_declarations": details.get_tools_by_agent_name()}, indent=2, ensure_ascii=False,
                      default=str)
