"""The OpenTelemetry bridge: spans with gen_ai.* attributes for agents, model calls and tools."""

from __future__ import annotations

from typing import Any

from engine_helpers import run
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_actors import LlmAgent
from adk_actors.models import ScriptedModel, ServerError, call
from adk_actors.otel import attach_opentelemetry, detach_opentelemetry


def lookup(city: str) -> dict[str, Any]:
    return {"city": city}


def test_spans_follow_the_genai_conventions() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    attach_opentelemetry(provider.get_tracer("test"))
    try:
        run(LlmAgent(name="bot", model=ScriptedModel([call("lookup", city="Oslo"), "done"], name="m-1"),
                     tools=[lookup]), "go")
        run(LlmAgent(name="bot", model=ScriptedModel([ServerError("503")], name="m-1")), "go")
    finally:
        detach_opentelemetry()
    spans = exporter.get_finished_spans()
    names = [s.name for s in spans]
    assert names[:4] == ["chat m-1", "execute_tool lookup", "chat m-1", "invoke_agent bot"]
    chat = spans[0]
    assert chat.attributes["gen_ai.operation.name"] == "chat" and chat.attributes["gen_ai.request.model"] == "m-1"
    assert chat.attributes["gen_ai.agent.name"] == "bot" and "gen_ai.usage.output_tokens" in chat.attributes
    tool = spans[1]
    assert tool.attributes["gen_ai.tool.name"] == "lookup" and tool.attributes["gen_ai.tool.call.id"]
    failed = next(s for s in spans[4:] if s.name == "chat m-1")
    assert failed.attributes["error.type"] == "server_error" and not failed.status.is_ok
