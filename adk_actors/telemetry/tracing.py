"""google-adk's tracing helpers (``google.adk.telemetry.tracing``) on OpenTelemetry.

Code written for google-adk calls these around its own spans (a custom flow, a
tool wrapper, an exporter's test): each sets google-adk's attributes on the span it
is given, else on the current one, and does nothing on a span that is not
recording. :data:`tracer` is a tracer of google-adk's instrumentation scope
(``gcp.vertex.agent``), so spans started on it reach an exporter under the same
scope name as google-adk's.

The engine's own spans are not made here: :mod:`adk_actors.otel` turns the
engine's telemetry events into ``invoke_agent``, ``generate_content`` and
``execute_tool`` spans. What these helpers record follows google-adk 2.13's
telemetry schema 2 (its default) unless ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN`` pins
schema 1, where the legacy ``gcp.vertex.agent.*`` content attributes are written
too. Not recorded: google-adk's GenAI log records (its ``gen_ai.*.message`` and
``gen_ai.choice`` events, its experimental operation details), its MCP HTTP
exchange records and its grounding attributes.

The arguments are read by their attributes (an invocation context's
``invocation_id``, ``session.id``, ``agent.name``, ``run_config.telemetry``; a
tool's ``name``, ``description``, ``custom_metadata``; an event's ``id`` and
``content``; a request's ``model``, ``config``, ``contents``; a response's
``finish_reason``, ``usage_metadata``, ``partial``, ``cache_metadata``), so
google-adk's objects and this project's both do.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode
from pydantic import BaseModel

from .._secrets import redact_json
from ._provider import provider_name, system_name
from .context import TelemetryConfig, schema_version

__all__ = ["GenerateContentSpan", "resolve_error_type", "trace_agent_invocation", "trace_call_llm",
           "trace_generate_content_result", "trace_inference_result", "trace_merged_tool_calls", "trace_send_data",
           "trace_tool_call", "tracer", "use_generate_content_span", "use_inference_span"]

#: google-adk's instrumentation scope: the spans started on it are reported under that name
tracer = trace.get_tracer("gcp.vertex.agent")
_log = logging.getLogger("adk_actors.telemetry")
_MCP_DESTINATION = "gcp.mcp.server.destination.id"
_NOT_SERIALIZABLE = "<not serializable>"
_UNSPECIFIED = "<not specified>"


def _json(value: Any) -> str:
    """``value`` as JSON text (pydantic models by their JSON dump, other unknown values
    as ``<not serializable>``), through the kit's secret redaction; the whole value as
    ``<not serializable>`` when even that fails."""
    def fallback(item: Any) -> Any:
        return item.model_dump(mode="json") if isinstance(item, BaseModel) else _NOT_SERIALIZABLE

    try:
        return redact_json(json.dumps(value, ensure_ascii=False, default=fallback))
    except (TypeError, ValueError, OverflowError, RecursionError):
        return _NOT_SERIALIZABLE


def _config_of(invocation_context: Any) -> TelemetryConfig:
    """The run's ``run_config.telemetry``, else a config of the environment's answers."""
    run_config = getattr(invocation_context, "run_config", None)
    chosen = getattr(run_config, "telemetry", None)
    return chosen if isinstance(chosen, TelemetryConfig) else TelemetryConfig()


def resolve_error_type(error: BaseException) -> str:
    """The ``error.type`` for ``error``: its own ``error_type`` when it has one, else a
    google-genai API error's HTTP status code, else its class name."""
    own = getattr(error, "error_type", None)
    if own is not None:
        return str(own)
    genai_errors = sys.modules.get("google.genai.errors")  # loaded whenever one of its errors exists
    if genai_errors is not None and isinstance(error, genai_errors.APIError):
        return str(error.code)
    return type(error).__name__


def trace_agent_invocation(span: Span, agent: Any, ctx: Any) -> None:
    """Mark ``span`` as an agent's run: operation ``invoke_agent``, the agent's
    description and name, the session as the conversation."""
    span.set_attribute("gen_ai.operation.name", "invoke_agent")
    span.set_attribute("gen_ai.agent.description", agent.description)
    span.set_attribute("gen_ai.agent.name", agent.name)
    span.set_attribute("gen_ai.conversation.id", ctx.session.id)


def _first_function_response(event: Any) -> Any:
    content = getattr(event, "content", None) if event is not None else None
    parts = getattr(content, "parts", None) or []
    return getattr(parts[0], "function_response", None) if parts else None


def trace_tool_call(tool: Any, args: dict[str, Any], function_response_event: Any, error: Exception | None = None,
                    span: Span | None = None, error_type: str | None = None,
                    invocation_context: Any = None) -> None:
    """Record a tool call on ``span`` (the current span when None), if it records: the
    operation ``execute_tool``, the tool's description, name and class, the agent's
    name, then on failure (``error`` raised, else an ``error_type`` the tool's answer
    reported) the error's type and an error status, the tool's MCP destination id
    when its ``custom_metadata`` has one, the call id and event id of the response
    event, and its arguments and response: under schema 2 as
    ``gen_ai.tool.call.arguments`` / ``.result`` when the config lets content onto
    the conventions' spans, under schema 1 as ``gcp.vertex.agent.tool_call_args`` /
    ``tool_response`` (``{}`` when content is off) with empty model request and
    response attributes."""
    span = span or trace.get_current_span()
    if not span.is_recording():
        return
    config = _config_of(invocation_context)
    span.set_attribute("gen_ai.operation.name", "execute_tool")
    span.set_attribute("gen_ai.tool.description", tool.description)
    span.set_attribute("gen_ai.tool.name", tool.name)
    span.set_attribute("gen_ai.tool.type", type(tool).__name__)
    agent = getattr(invocation_context, "agent", None) if invocation_context is not None else None
    if agent is not None:
        span.set_attribute("gen_ai.agent.name", agent.name)
    failure = resolve_error_type(error) if error is not None else error_type
    if error is not None:
        span.record_exception(error)
    if failure is not None:
        span.set_attribute("error.type", failure)
        span.set_status(Status(StatusCode.ERROR, failure))
    metadata = getattr(tool, "custom_metadata", None)
    if metadata and _MCP_DESTINATION in metadata:
        span.set_attribute(_MCP_DESTINATION, metadata[_MCP_DESTINATION])
    legacy = schema_version() < 2
    if legacy:
        span.set_attribute("gcp.vertex.agent.llm_request", "{}")
        span.set_attribute("gcp.vertex.agent.llm_response", "{}")
        span.set_attribute("gcp.vertex.agent.tool_call_args",
                           _json(args) if config.should_add_content_to_legacy_spans else "{}")
    answer = _first_function_response(function_response_event)
    call_id = getattr(answer, "id", None)
    response = getattr(answer, "response", None)
    span.set_attribute("gen_ai.tool.call.id", call_id if call_id is not None else _UNSPECIFIED)
    wrapped = response if isinstance(response, dict) else {"result": response if response is not None else _UNSPECIFIED}
    if function_response_event is not None:
        span.set_attribute("gcp.vertex.agent.event_id", function_response_event.id)
    if legacy:
        span.set_attribute("gcp.vertex.agent.tool_response",
                           _json(wrapped) if config.should_add_content_to_legacy_spans else "{}")
    elif config.should_add_content_to_experimental_spans:
        span.set_attribute("gen_ai.tool.call.arguments", _json(args))
        if response is not None:
            span.set_attribute("gen_ai.tool.call.result", _json(wrapped))


def trace_merged_tool_calls(response_event_id: str, function_response_event: Any,
                            invocation_context: Any = None) -> None:
    """Record on the current span (if it records) the one event that merged several
    tool calls' responses: operation ``execute_tool``, tool name and description
    ``(merged tools)``, the event's id as the call id and the event id; under schema
    1 also placeholder arguments, the responses (``{}`` when content is off) and empty
    model request and response attributes."""
    span = trace.get_current_span()
    if not span.is_recording():
        return
    config = _config_of(invocation_context)
    span.set_attribute("gen_ai.operation.name", "execute_tool")
    span.set_attribute("gen_ai.tool.name", "(merged tools)")
    span.set_attribute("gen_ai.tool.description", "(merged tools)")
    span.set_attribute("gen_ai.tool.call.id", response_event_id)
    if schema_version() >= 2:
        span.set_attribute("gcp.vertex.agent.event_id", response_event_id)
        return
    span.set_attribute("gcp.vertex.agent.tool_call_args", "N/A")
    span.set_attribute("gcp.vertex.agent.event_id", response_event_id)
    responses = "{}"
    if config.should_add_content_to_legacy_spans:
        content = getattr(function_response_event, "content", None)
        answers = [part.function_response for part in (getattr(content, "parts", None) or [])
                   if part.function_response is not None]
        try:
            responses = _json([answer.model_dump(exclude_none=True, mode="json") for answer in answers])
        except Exception:  # an answer that will not dump: as google-adk, the attribute says so
            responses = _NOT_SERIALIZABLE
    span.set_attribute("gcp.vertex.agent.tool_response", responses)
    span.set_attribute("gcp.vertex.agent.llm_request", "{}")
    span.set_attribute("gcp.vertex.agent.llm_response", "{}")


def _usage_attributes(usage: Any) -> dict[str, int]:
    """A model's reported usage as the conventions' ``gen_ai.usage.*`` attributes:
    input (prompt and tool-use prompt), output (candidates and thoughts), cached
    input, reasoning output; a count the model did not report is left out."""
    if usage is None:
        return {}

    def count(name: str) -> int | None:
        value = getattr(usage, name, None)
        return int(value) if value is not None else None

    prompt, tools = count("prompt_token_count"), count("tool_use_prompt_token_count")
    candidates, thoughts = count("candidates_token_count"), count("thoughts_token_count")
    found = {"gen_ai.usage.input_tokens": None if prompt is None and tools is None else (prompt or 0) + (tools or 0),
             "gen_ai.usage.output_tokens": None if candidates is None and thoughts is None
             else (candidates or 0) + (thoughts or 0),
             "gen_ai.usage.cache_read.input_tokens": count("cached_content_token_count"),
             "gen_ai.usage.cache_creation.input_tokens": count("cache_creation_input_tokens"),
             "gen_ai.usage.reasoning.output_tokens": thoughts,
             "gen_ai.usage.experimental.system_instruction_tokens": count("system_instruction_tokens")}
    return {name: value for name, value in found.items() if value is not None}


def _finish_reason(response: Any) -> str | None:
    """The response's finish reason in lower case, unless it has none or the unset one."""
    reason = getattr(response, "finish_reason", None)
    if reason is None:
        return None
    text = str(getattr(reason, "value", reason))
    return None if text in ("", "FINISH_REASON_UNSPECIFIED") else text.lower()


def _cache_attributes(span: Span, config: TelemetryConfig, response: Any) -> None:
    """The response's context cache, when the ``context_cache`` experiment is on."""
    cache = getattr(response, "cache_metadata", None)
    if cache is None or not config._experimental_feature_enabled("context_cache"):
        return
    span.set_attribute("adk.experimental.context_cache.hit", cache.cache_name is not None)
    span.set_attribute("adk.experimental.context_cache.fingerprint", cache.fingerprint)
    span.set_attribute("adk.experimental.context_cache.contents_count", cache.contents_count)
    if cache.invocations_used is not None:
        span.set_attribute("adk.experimental.context_cache.invocations_used", cache.invocations_used)


def _request_for_trace(request: Any) -> dict[str, Any]:
    """A model request as a JSON-ready record: its model, its config without the
    response schema, and its contents without inline bytes."""
    config = getattr(request, "config", None)
    if isinstance(config, BaseModel):
        dumped = config.model_dump(exclude_none=True, mode="json", exclude={"response_schema"})
    else:
        dumped = dict(config or {})
    contents = [content.model_dump(exclude_none=True, mode="json") if isinstance(content, BaseModel) else content
                for content in getattr(request, "contents", None) or []]
    for content in contents:
        if isinstance(content, dict):
            content["parts"] = [part for part in content.get("parts") or [] if "inline_data" not in part]
    return {"model": getattr(request, "model", None), "config": dumped, "contents": contents}


def trace_call_llm(invocation_context: Any, event_id: str, llm_request: Any, llm_response: Any,
                   span: Span | None = None) -> None:
    """Record a model call on ``span`` (the current span when None), google-adk's
    ``call_llm`` span of schema 1. Under schema 2 (the default), which has no such
    span, nothing is recorded. Otherwise, if the span records: ``gen_ai.system``
    ``gcp.vertex.agent``, the request's model, the invocation, session and event ids,
    the request and response as JSON (``{}`` when content is off), top-p, the output
    token cap and the thinking budget when the request's config sets them, the token
    usage, the context cache (an opt-in experiment) and the finish reason."""
    if schema_version() >= 2:
        return
    span = span or trace.get_current_span()
    if not span.is_recording():
        return
    config = _config_of(invocation_context)
    content_on = config.should_add_content_to_legacy_spans
    span.set_attribute("gen_ai.system", "gcp.vertex.agent")
    if getattr(llm_request, "model", None) is not None:
        span.set_attribute("gen_ai.request.model", llm_request.model)
    span.set_attribute("gcp.vertex.agent.invocation_id", invocation_context.invocation_id)
    span.set_attribute("gcp.vertex.agent.session_id", invocation_context.session.id)
    span.set_attribute("gcp.vertex.agent.event_id", event_id)
    span.set_attribute("gcp.vertex.agent.llm_request", _json(_request_for_trace(llm_request)) if content_on else "{}")
    request_config = getattr(llm_request, "config", None)
    if request_config is not None:
        if getattr(request_config, "top_p", None):
            span.set_attribute("gen_ai.request.top_p", request_config.top_p)
        if getattr(request_config, "max_output_tokens", None):
            span.set_attribute("gen_ai.request.max_tokens", request_config.max_output_tokens)
        thinking = getattr(request_config, "thinking_config", None)
        if thinking is not None and getattr(thinking, "thinking_budget", None) is not None:
            span.set_attribute("gen_ai.usage.experimental.reasoning_tokens_limit", thinking.thinking_budget)
    answer = "{}"
    if content_on:
        try:
            answer = llm_response.model_dump_json(exclude_none=True)
        except Exception:  # a response that will not dump: the attribute says so
            answer = _NOT_SERIALIZABLE
    span.set_attribute("gcp.vertex.agent.llm_response", answer)
    span.set_attributes(_usage_attributes(getattr(llm_response, "usage_metadata", None)))
    _cache_attributes(span, config, llm_response)
    reason = _finish_reason(llm_response)
    if reason is not None:
        span.set_attribute("gen_ai.response.finish_reasons", [reason])


def trace_send_data(invocation_context: Any, event_id: str, data: list[Any]) -> None:
    """Record on the current span the contents sent to a live agent: the invocation
    and event ids, and the contents as JSON in ``gcp.vertex.agent.data`` (inline
    bytes as a note of their type and size; ``{}`` when content is off)."""
    config = _config_of(invocation_context)
    span = trace.get_current_span()
    span.set_attribute("gcp.vertex.agent.invocation_id", invocation_context.invocation_id)
    span.set_attribute("gcp.vertex.agent.event_id", event_id)
    if not config.should_add_content_to_legacy_spans:
        span.set_attribute("gcp.vertex.agent.data", "{}")
        return
    span.set_attribute("gcp.vertex.agent.data", _json([_content_for_trace(content) for content in data]))


def _content_for_trace(content: Any) -> Any:
    """A content as JSON-ready data: an inline-bytes part as a text part naming its
    type and size, a thought signature left out."""
    if not isinstance(content, BaseModel):
        return content
    parts = []
    for part in getattr(content, "parts", None) or []:
        blob = getattr(part, "inline_data", None)
        if blob is not None:
            parts.append({"text": f"<inline_data: {blob.mime_type or 'unknown'}, {len(blob.data or b'')} bytes>"})
        else:
            parts.append(part.model_dump(exclude_none=True, mode="json", exclude={"thought_signature"}))
    dumped: dict[str, Any] = {"parts": parts}
    role = getattr(content, "role", None)
    if role is not None:
        dumped["role"] = role
    return dumped


class GenerateContentSpan:
    """A model call's ``generate_content`` span, as :func:`use_inference_span` gives
    it: the span, and the operation details google-adk collects beside it (kept
    here, not recorded)."""

    def __init__(self, span: Span) -> None:
        self.span = span
        self.operation_details_attributes: dict[str, Any] = {}
        self.operation_details_common_attributes: dict[str, Any] = {}
        self._exit_stack: ExitStack | None = None


@contextmanager
def _generate_content_span(llm_request: Any, invocation_context: Any, model_response_event: Any,
                           naming: str | None) -> Iterator[Span]:
    """The ``generate_content`` span (see :func:`use_inference_span`); ``naming`` says
    which of the provider's attributes it gets: ``gen_ai.provider.name``, the older
    ``gen_ai.system``, or neither (None)."""
    agent = getattr(invocation_context, "agent", None)
    if agent is None:
        raise ValueError("use_inference_span needs an invocation context with an agent")
    model = getattr(llm_request, "model", None)
    with tracer.start_as_current_span(f"generate_content {model or ''}".strip()) as span:
        if naming == "gen_ai.system":
            span.set_attribute("gen_ai.system", system_name(model))
        span.set_attribute("gen_ai.operation.name", "generate_content")
        span.set_attribute("gen_ai.request.model", model or "")
        request_config = getattr(llm_request, "config", None)
        top_p = getattr(request_config, "top_p", None)
        if top_p is not None:
            span.set_attribute("gen_ai.request.top_p", top_p)
        cap = getattr(request_config, "max_output_tokens", None)
        if cap is not None:
            span.set_attribute("gen_ai.request.max_tokens", cap)
        span.set_attribute("gen_ai.agent.name", agent.name)
        span.set_attribute("gen_ai.conversation.id", invocation_context.session.id)
        span.set_attribute("gcp.vertex.agent.event_id", model_response_event.id)
        span.set_attribute("gcp.vertex.agent.invocation_id", invocation_context.invocation_id)
        if naming == "gen_ai.provider.name":
            span.set_attribute("gen_ai.provider.name", provider_name(model))
        yield span


@contextmanager
def use_generate_content_span(llm_request: Any, invocation_context: Any,
                              model_response_event: Any) -> Iterator[Span | None]:
    """Deprecated in google-adk for :func:`use_inference_span`: the same span as under
    the stable conventions (``gen_ai.system``, no provider name), yielded as the bare
    span. A ValueError when the context has no agent."""
    with _generate_content_span(llm_request, invocation_context, model_response_event, "gen_ai.system") as span:
        yield span


@asynccontextmanager
async def use_inference_span(llm_request: Any, invocation_context: Any,
                             model_response_event: Any) -> AsyncIterator[GenerateContentSpan | None]:
    """Open a ``generate_content <model>`` span as the current span for one model
    call and yield it as a :class:`GenerateContentSpan`; it ends when the block does
    (an exception recorded on it, and raised on). Its attributes: the operation, the
    request's model, top-p and output token cap when set, the agent's name, the
    session as the conversation, the model's event id, the invocation id and the
    provider: under the experimental conventions (schema 2's default)
    ``gen_ai.provider.name`` (none under schema 1), under the stable ones
    ``gen_ai.system``. A ValueError, before any span, when the context has no agent."""
    naming: str | None = "gen_ai.system"
    if _config_of(invocation_context).should_use_experimental_genai_semconv:
        naming = "gen_ai.provider.name" if schema_version() >= 2 else None
    with _generate_content_span(llm_request, invocation_context, model_response_event, naming) as span:
        yield GenerateContentSpan(span)


def trace_generate_content_result(span: Span | None, llm_response: Any) -> None:
    """Deprecated in google-adk for :func:`trace_inference_result`: on ``span`` (none:
    nothing), for a response that is not partial, its finish reason and usage."""
    if span is None or getattr(llm_response, "partial", False):
        return
    reason = _finish_reason(llm_response)
    if reason is not None:
        span.set_attribute("gen_ai.response.finish_reasons", [reason])
    span.set_attributes(_usage_attributes(getattr(llm_response, "usage_metadata", None)))


def trace_inference_result(invocation_context: Any, span: Span | GenerateContentSpan | None,
                           llm_response: Any) -> None:
    """Record a model's answer on ``span`` (a :class:`GenerateContentSpan`'s span;
    none: nothing), partial or not: its finish reason, its token usage and, under
    the ``context_cache`` experiment, its context cache."""
    if isinstance(span, GenerateContentSpan):
        span = span.span
    if span is None:
        return
    reason = _finish_reason(llm_response)
    if reason is not None:
        span.set_attribute("gen_ai.response.finish_reasons", [reason])
    span.set_attributes(_usage_attributes(getattr(llm_response, "usage_metadata", None)))
    _cache_attributes(span, _config_of(invocation_context), llm_response)
