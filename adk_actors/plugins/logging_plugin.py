"""google-adk's built-in ``LoggingPlugin`` (``google.adk.plugins.logging_plugin``).

It prints to standard output, at each hook, a headline (``[<name>] USER MESSAGE
RECEIVED``, ``INVOCATION STARTING``, ``EVENT YIELDED``, ``INVOCATION COMPLETED``,
``AGENT STARTING`` / ``COMPLETED``, ``LLM REQUEST`` / ``RESPONSE`` / ``ERROR``,
``TOOL STARTING`` / ``COMPLETED`` / ``ERROR``, the headlines google-adk's prints) and
indented detail lines under it: ids, agent and tool names, arguments and results,
texts cut at 200 characters. It never answers, so it changes nothing of the run.

A tool that raised is logged as ``TOOL ERROR`` once: when another plugin's answer to
that error comes back as the call's result, it is not logged again. A result that
reports a failure without raising (a ``ReflectAndRetryToolPlugin`` answer, an MCP
result with ``isError``, or what ``tool_result_classifier`` calls one: see
:class:`adk_actors.plugins.ToolResultClassifier`) is logged as ``TOOL ERROR`` too,
with the result and the error, instead of ``TOOL COMPLETED``.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from .._types import Content, Event, LlmRequest, LlmResponse
from ._callback_helpers import (
    ToolResultClassifier,
    classify_tool_result_error,
    validate_tool_result_classifier,
)
from .base_plugin import BasePlugin

__all__ = ["LoggingPlugin"]

_CUT = 200

logger = logging.getLogger("adk_actors.plugins.logging")


def _short(text: str, limit: int = _CUT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _content(content: Any) -> str:
    """What a Content holds, one item per part: text, a call or a response by name."""
    parts = getattr(content, "parts", None) if content is not None else None
    if not parts:
        return "None"
    shown = []
    for part in parts:
        if part.text:
            shown.append(f"text: '{_short(part.text)}'")
        elif part.function_call is not None:
            shown.append(f"function_call: {part.function_call.name}")
        elif part.function_response is not None:
            shown.append(f"function_response: {part.function_response.name}")
        else:
            shown.append("other part")
    return " | ".join(shown)


def _name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or "Unknown")


class LoggingPlugin(BasePlugin):
    """Prints each step of every run (see the module); ``name`` prefixes each line.
    ``tool_result_classifier`` that is not a sync callable taking its four keywords is a
    ``ValueError``."""

    def __init__(self, name: str = "logging_plugin", *,
                 tool_result_classifier: ToolResultClassifier | None = None) -> None:
        super().__init__(name)
        validate_tool_result_classifier(tool_result_classifier)
        self._tool_result_classifier = tool_result_classifier
        #: the tool calls whose error on_tool_error_callback logged (by their context)
        self._errors_logged: weakref.WeakSet[Any] = weakref.WeakSet()

    def _log(self, headline: str, **details: Any) -> None:
        print(f"\033[90m[{self.name}] {headline}\033[0m")
        for label, value in details.items():
            print(f"\033[90m[{self.name}]    {label.replace('_', ' ').title()}: {value}\033[0m")

    async def on_user_message_callback(self, *, invocation_context: Any, user_message: Content) -> Content | None:
        session = invocation_context.session
        self._log("🚀 USER MESSAGE RECEIVED", invocation_id=invocation_context.invocation_id, session_id=session.id,
                  user_id=session.user_id, app_name=session.app_name, root_agent=_name(invocation_context.agent),
                  user_content=_content(user_message))
        return None

    async def before_run_callback(self, *, invocation_context: Any) -> Content | None:
        self._log("🏃 INVOCATION STARTING", invocation_id=invocation_context.invocation_id,
                  starting_agent=_name(invocation_context.agent))
        return None

    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> Event | None:
        details: dict[str, Any] = {"event_id": event.id, "author": event.author, "content": _content(event.content),
                                   "final_response": event.is_final_response()}
        if event.get_function_calls():
            details["function_calls"] = [c.name for c in event.get_function_calls()]
        if event.get_function_responses():
            details["function_responses"] = [r.name for r in event.get_function_responses()]
        if event.long_running_tool_ids:
            details["long_running_tools"] = sorted(event.long_running_tool_ids)
        self._log("📢 EVENT YIELDED", **details)
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        self._log("✅ INVOCATION COMPLETED", invocation_id=invocation_context.invocation_id,
                  final_agent=_name(invocation_context.agent))

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> Content | None:
        self._log("🤖 AGENT STARTING", agent_name=callback_context.agent_name,
                  invocation_id=callback_context.invocation_id)
        return None

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> Content | None:
        self._log("🤖 AGENT COMPLETED", agent_name=callback_context.agent_name,
                  invocation_id=callback_context.invocation_id)
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        details: dict[str, Any] = {"model": llm_request.model or "default", "agent": callback_context.agent_name}
        instruction = getattr(llm_request.config, "system_instruction", None)
        if instruction:
            details["system_instruction"] = f"'{_short(str(instruction))}'"
        tools = getattr(llm_request, "tools_dict", None)
        if tools:
            details["available_tools"] = list(tools)
        self._log("🧠 LLM REQUEST", **details)
        return None

    async def after_model_callback(self, *, callback_context: Any, llm_response: LlmResponse) -> LlmResponse | None:
        details: dict[str, Any] = {"agent": callback_context.agent_name}
        if llm_response.error_code and not llm_response.partial:
            details["error_code"] = llm_response.error_code
            details["error_message"] = llm_response.error_message
        else:
            details["content"] = _content(llm_response.content)
        usage = llm_response.usage_metadata
        if usage is not None:
            details["token_usage"] = f"input {usage.prompt_token_count}, output {usage.candidates_token_count}"
        self._log("🧠 LLM RESPONSE", **details)
        return None

    async def on_model_error_callback(self, *, callback_context: Any, llm_request: LlmRequest,
                                      error: Exception) -> LlmResponse | None:
        self._log("🧠 LLM ERROR", agent=callback_context.agent_name, error=error)
        return None

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                   tool_context: Any) -> dict[str, Any] | None:
        self._log("🔧 TOOL STARTING", tool_name=tool.name, agent=tool_context.agent_name,
                  function_call_id=tool_context.function_call_id, arguments=tool_args)
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: dict[str, Any]) -> dict[str, Any] | None:
        if tool_context in self._errors_logged:  # the answer to an error logged when it was raised
            self._errors_logged.discard(tool_context)
            return None
        error = classify_tool_result_error(tool=tool, tool_args=tool_args, tool_context=tool_context, result=result,
                                           tool_result_classifier=self._tool_result_classifier, log=logger)
        if error is not None:
            self._log("🔧 TOOL ERROR", tool_name=tool.name, agent=tool_context.agent_name,
                      function_call_id=tool_context.function_call_id, arguments=tool_args, result=result, error=error)
            return None
        self._log("🔧 TOOL COMPLETED", tool_name=tool.name, agent=tool_context.agent_name,
                  function_call_id=tool_context.function_call_id, result=result)
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                     error: Exception) -> dict[str, Any] | None:
        try:
            self._errors_logged.add(tool_context)
        except TypeError:  # a context that cannot be weakly referenced: an answer to it may be logged too
            pass
        self._log("🔧 TOOL ERROR", tool_name=tool.name, agent=tool_context.agent_name,
                  function_call_id=tool_context.function_call_id, arguments=tool_args, error=error)
        return None
