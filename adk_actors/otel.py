"""An optional OpenTelemetry bridge (``pip install 'adk-actors[otel]'``).

``attach_opentelemetry(tracer)`` turns the telemetry events into spans: an agent run
is ``invoke_agent <agent>``, a model call ``generate_content <model>`` (its operation
``generate_content``, as google-adk's), a tool call ``execute_tool <tool>``, with the
OpenTelemetry GenAI attributes (``gen_ai.*``): operation, agent, model, tool,
conversation (the session; an ``AgentTool``'s child run's own, as google-adk's; none on
a tool call's span, as google-adk's), token usage, and the error type when one ends
badly; a model call's also google-adk's ``gcp.vertex.agent.invocation_id``; a
graph workflow's run is ``invoke_workflow <workflow>`` (google-adk's: its
``gen_ai.workflow.name``, ``gen_ai.workflow.nested`` when inside another span of the
turn; in place of the workflow's ``invoke_agent`` span, which the engine opens inside
it and this takes as it); an attempt of a workflow's function node is ``invoke_node
<node>`` (google-adk's: under its workflow's span, no agent, and the ids of the events
it made, ``gcp.vertex.agent.associated_event_ids``); an attempt of a background job is
``execute_job <function or app>`` (``adk.job.id``, ``adk.job.queue``,
``adk.job.attempt``), in the jobs actor's process. As google-adk 2.13's runner (its
telemetry schema 2, the default), an invocation whose root is not a graph workflow
is an ``invoke_workflow <root agent>`` span around its outermost agent's span (the
root's, or the agent answering the turn), with ``gen_ai.workflow.name``, the
conversation, and ``gen_ai.workflow.nested`` when it runs inside another span (an
``AgentTool``'s run); it ends with that agent's span, failed when it failed. A live
conversation's agents get none (google-adk's ``run_live`` opens none), and google-adk's
schema 1 (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``: an ``invocation`` span) is not
followed. The spans of one invocation form one trace: each
span's parent is the span it ran inside (a model or tool call's, its agent's), in
the run worker's process where the invocation runs. Attach it in the host process
before the host starts, so every actor has it.

Metrics, as google-adk records them for a model call (each ``llm`` span's stop or
exception) and for each attempt of ``ModelConsultTool``'s advisor call (the
``consult`` event, :mod:`adk_actors.tools.model_consult._advisor`): the duration in
seconds on ``gen_ai.client.operation.duration``, and the input tokens (prompt and
tool-use prompt) and output tokens (candidates and thoughts) on
``gen_ai.client.token.usage`` (``gen_ai.token.type`` ``input`` / ``output``; a count
of zero or none is not recorded), each with ``gen_ai.agent.name`` (the advisor's:
the tool's name), ``gen_ai.operation.name`` ``generate_content``,
``gen_ai.provider.name`` (:func:`provider_name`), ``gen_ai.request.model``,
``gen_ai.response.model`` (the version the model reported, else the model asked)
and, on a failed call's duration, ``error.type`` (the error's type as the spans
name it: a model error's own type, such as ``server_error``, where google-adk puts a
google-genai error's HTTP status).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any

from . import telemetry
from .telemetry._provider import provider_name

__all__ = ["A2A_SPANS_SWITCH", "attach_opentelemetry", "detach_opentelemetry", "provider_name",
           "quiet_unused_a2a_spans"]

#: a2a-sdk's switch for its own spans (read once, when it is imported).
A2A_SPANS_SWITCH = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"

HANDLER_ID = "adk-actors-opentelemetry"
_log = logging.getLogger("adk_actors.otel")
_KINDS = {"agent": "invoke_agent", "llm": "generate_content", "tool": "execute_tool", "job": "execute_job",
          "workflow": "invoke_workflow", "node": "invoke_node"}


def _client_metrics(meter: Any) -> Any:
    """A recorder of google-adk's client metrics on ``meter`` (see the module):
    ``record(kind, measurements, metadata)`` for an ``llm`` stop or exception or a
    ``consult`` stop."""
    durations = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                       description="GenAI operation duration.")
    tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                    description="Number of input and output tokens used.")

    def record(phase: str, measurements: dict[str, Any], metadata: dict[str, Any]) -> None:
        model = metadata.get("model") or None
        attributes: dict[str, Any] = {"gen_ai.agent.name": metadata.get("agent") or "",
                                      "gen_ai.operation.name": "generate_content",
                                      "gen_ai.provider.name": provider_name(model)}
        if model:
            attributes["gen_ai.request.model"] = model
        response_model = metadata.get("model_version") or model
        if response_model:
            attributes["gen_ai.response.model"] = str(response_model)
        error = metadata.get("error") or (metadata.get("kind") if phase == "exception" else None)
        timed = {**attributes, "error.type": str(error)} if error else attributes
        durations.record(float(measurements.get("duration", 0.0)), attributes=timed)
        usage = metadata.get("usage") or {}
        spent = {"input": int(usage.get("prompt_token_count") or 0) + int(usage.get("tool_use_prompt_token_count") or 0),
                 "output": int(usage.get("candidates_token_count") or 0) + int(usage.get("thoughts_token_count") or 0)}
        for kind, count in spent.items():
            if count > 0:
                tokens.record(count, attributes={**attributes, "gen_ai.token.type": kind})

    return record


def quiet_unused_a2a_spans() -> bool:
    """Turn a2a-sdk's own spans off (``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false``) for
    this process and the processes it starts, when nothing would receive them; True if
    it did. In order: a switch the user set, or ``OTEL_PYTHON_TRACER_PROVIDER``, is left
    as it is; a tracer provider set already (``opentelemetry.trace.set_tracer_provider``,
    before the host starts) keeps them on; else they go off.

    a2a-sdk wraps every call of its request handler, event queue and task manager in a
    span, and OpenTelemetry without a provider still builds each one through its proxy
    (and reads the environment for a provider on every call): 14% of the HTTP
    process's CPU under 100 A2A streams, where that process is what limits them
    (docs/benchmarks.md). A process that imported a2a-sdk before this keeps its spans."""
    if A2A_SPANS_SWITCH in os.environ or os.environ.get("OTEL_PYTHON_TRACER_PROVIDER"):
        return False
    trace = sys.modules.get("opentelemetry.trace")
    if trace is not None and not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False
    os.environ[A2A_SPANS_SWITCH] = "false"
    return True


def attach_opentelemetry(tracer: Any = None, meter: Any = None) -> None:
    """Attach the bridge's telemetry handler (a ValueError when it is attached already):
    from then on, in this process and those forked from it, each span start starts a
    span of ``tracer`` (the global provider's when None) under its parent's, if that is
    open, and each stop or exception sets the usage, the model and the error, and ends
    it. The engine's agent span right inside a workflow's span of the same workflow
    and invocation starts nothing: its children go under the workflow's span. A model
    call's stop or exception and an advisor call's attempt also record the client
    metrics (see the module) on ``meter`` (the global provider's when None). A
    handler that raises is detached (:mod:`adk_actors.telemetry`)."""
    from opentelemetry import metrics, trace
    from opentelemetry.trace import Status, StatusCode

    tracer = tracer or trace.get_tracer("adk_actors")
    record_metrics = _client_metrics(meter or metrics.get_meter("adk_actors"))
    open_spans: dict[str, Any] = {}
    kinds: dict[str, str] = {}  # an open span's id -> its kind
    wrappers: dict[str, Any] = {}  # an invocation's outermost agent span id -> its invoke_workflow span
    workflows: dict[str, tuple[Any, Any]] = {}  # a workflow's span id -> (its name, its invocation)
    same: dict[str, str] = {}  # a workflow's agent span id -> its workflow's span id (no span of its own)
    lock = threading.Lock()

    def handle(event: tuple[str, ...], measurements: dict[str, Any], metadata: dict[str, Any]) -> None:
        _, kind, phase = event
        if kind == "consult" or (kind == "llm" and phase != "start"):
            try:
                record_metrics(phase, measurements, metadata)
            except Exception:  # a metric refused (a bad attribute): logged; the spans go on
                _log.exception("the OpenTelemetry bridge could not record a model call's metrics")
            if kind == "consult":
                return
        span_id = metadata.get("span_id")
        if span_id is None:
            return
        if phase == "start":
            operation = _KINDS[kind]
            target = metadata.get("model") if kind == "llm" else metadata.get("tool") if kind == "tool" \
                else (metadata.get("function") or metadata.get("app")) if kind == "job" \
                else metadata.get("workflow") if kind == "workflow" else metadata.get("node") if kind == "node" \
                else metadata.get("agent")
            with lock:
                parent_id = metadata.get("parent_span_id") or ""
                parent_id = same.get(parent_id, parent_id)
                parent = open_spans.get(parent_id)
                if kind == "agent" and workflows.get(parent_id) == (metadata.get("agent"),
                                                                    metadata.get("invocation_id")):
                    same[span_id] = parent_id  # the engine's span of a workflow's run: the workflow's
                    return
            attributes = {"gen_ai.operation.name": operation, "gen_ai.agent.name": metadata.get("agent", ""),
                          "adk.invocation_id": metadata.get("invocation_id", ""),
                          "adk.app": metadata.get("app", ""), "adk.session": metadata.get("session", "")}
            if kind in ("workflow", "node"):
                del attributes["gen_ai.agent.name"]
            if kind == "workflow":
                attributes["gen_ai.workflow.name"] = target or ""
                if parent is not None:
                    attributes["gen_ai.workflow.nested"] = True
            if kind == "llm":
                attributes["gen_ai.request.model"] = metadata.get("model", "")
                attributes["gcp.vertex.agent.invocation_id"] = metadata.get("invocation_id", "")  # google-adk's
            if kind == "tool":
                attributes["gen_ai.tool.name"] = metadata.get("tool", "")
                attributes["gen_ai.tool.call.id"] = metadata.get("function_call_id") or ""
            if metadata.get("session") and kind != "tool":  # google-adk's tool span names no conversation
                attributes["gen_ai.conversation.id"] = metadata["session"]
            if kind == "job":
                attributes.update({"adk.job.id": metadata.get("job_id", ""), "adk.job.queue": metadata.get("queue", ""),
                                   "adk.job.attempt": int(metadata.get("attempt", 0))})
            wrapper = None
            if kind == "agent" and metadata.get("root") and (parent is None or kinds.get(parent_id) == "tool"):
                wrapper = _invocation_span(tracer, trace, parent, metadata)
                parent = wrapper
            context = trace.set_span_in_context(parent) if parent is not None else None
            span = tracer.start_span(f"{operation} {target}", context=context, attributes=attributes)
            with lock:
                open_spans[span_id] = span
                kinds[span_id] = kind
                if wrapper is not None:
                    wrappers[span_id] = wrapper
                if kind == "workflow":
                    workflows[span_id] = (target, metadata.get("invocation_id"))
            return
        with lock:
            if same.pop(span_id, None) is not None:
                return  # a workflow's agent span: the workflow's span ends on its own
            workflows.pop(span_id, None)
            kinds.pop(span_id, None)
            wrapper = wrappers.pop(span_id, None)
            span = open_spans.pop(span_id, None)
        if span is None:
            return
        usage = metadata.get("usage") or {}
        if usage.get("prompt_token_count") is not None:
            span.set_attribute("gen_ai.usage.input_tokens", int(usage["prompt_token_count"]))
        if usage.get("candidates_token_count") is not None:
            span.set_attribute("gen_ai.usage.output_tokens", int(usage["candidates_token_count"]))
        if kind == "node" and metadata.get("event_ids"):
            span.set_attribute("gcp.vertex.agent.associated_event_ids", [str(i) for i in metadata["event_ids"]])
        if metadata.get("model_version"):
            span.set_attribute("gen_ai.response.model", str(metadata["model_version"]))
        error = metadata.get("error") or (metadata.get("kind") if phase == "exception" else None)
        for ending in (span, wrapper):
            if ending is None:
                continue
            if error:
                ending.set_attribute("error.type", str(error))
                ending.set_status(Status(StatusCode.ERROR, str(metadata.get("reason") or error)))
            ending.end()

    events = [("adk", kind, phase) for kind in _KINDS for phase in ("start", "stop", "exception")]
    events.append(("adk", "consult", "stop"))
    telemetry.attach(HANDLER_ID, events, handle)


def _invocation_span(tracer: Any, trace: Any, parent: Any, metadata: dict[str, Any]) -> Any:
    """The ``invoke_workflow <root>`` span of the invocation whose outermost agent span
    ``metadata`` starts (see the module), under ``parent`` (None: a trace's root)."""
    root = str(metadata["root"])
    attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": root,
                                  "adk.invocation_id": metadata.get("invocation_id", ""),
                                  "adk.app": metadata.get("app", ""), "adk.session": metadata.get("session", "")}
    if parent is not None:
        attributes["gen_ai.workflow.nested"] = True
    if metadata.get("session"):
        attributes["gen_ai.conversation.id"] = metadata["session"]
    context = trace.set_span_in_context(parent) if parent is not None else None
    return tracer.start_span(f"invoke_workflow {root}", context=context, attributes=attributes)


def detach_opentelemetry() -> None:
    telemetry.detach(HANDLER_ID)
