"""The OpenTelemetry bridge: spans with gen_ai.* attributes for agents, model calls and tools."""

from __future__ import annotations

import os
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
    # a model call's span and operation are google-adk's: generate_content
    assert names[:4] == ["generate_content m-1", "execute_tool lookup", "generate_content m-1", "invoke_agent bot"]
    model = spans[0]
    assert model.attributes["gen_ai.operation.name"] == "generate_content"
    assert model.attributes["gen_ai.request.model"] == "m-1"
    assert model.attributes["gen_ai.agent.name"] == "bot" and "gen_ai.usage.output_tokens" in model.attributes
    tool = spans[1]
    assert tool.attributes["gen_ai.tool.name"] == "lookup" and tool.attributes["gen_ai.tool.call.id"]
    # as google-adk's: the tool call's span names no conversation; the others name the session
    assert "gen_ai.conversation.id" not in tool.attributes
    assert model.attributes["gen_ai.conversation.id"] == spans[3].attributes["gen_ai.conversation.id"] != ""
    failed = next(s for s in spans[4:] if s.name == "generate_content m-1")
    assert failed.attributes["error.type"] == "server_error" and not failed.status.is_ok


def test_the_spans_of_one_invocation_form_one_trace_with_the_right_parents() -> None:
    """Issue 19 item 5: before, one invocation gave four root spans and four traces."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    attach_opentelemetry(provider.get_tracer("test"))
    try:
        helper = LlmAgent(name="helper", model=ScriptedModel([call("lookup", city="Oslo"), "done"], name="m-2"),
                          tools=[lookup])
        root = LlmAgent(name="root", model=ScriptedModel([call("transfer_to_agent", agent_name="helper")],
                                                         name="m-1"), sub_agents=[helper])
        run(root, "go")
        run(LlmAgent(name="other", model=ScriptedModel(["hi"], name="m-3")), "again")
    finally:
        detach_opentelemetry()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    first = [s for s in exporter.get_finished_spans()
             if s.name not in ("generate_content m-3", "invoke_agent other", "invoke_workflow other")]
    assert len({s.context.trace_id for s in first}) == 1  # one trace for the whole invocation
    roots = [s for s in first if s.parent is None]
    assert [s.name for s in roots] == ["invoke_workflow root"]  # google-adk's runner's span of the invocation
    by_id = {s.context.span_id: s for s in first}

    def parent_name(name: str) -> str:
        return by_id[spans[name].parent.span_id].name  # type: ignore[union-attr]

    assert parent_name("invoke_agent root") == "invoke_workflow root"
    assert parent_name("generate_content m-1") == "invoke_agent root"
    assert parent_name("invoke_agent helper") == "invoke_agent root"  # the transfer ran inside root's run
    assert parent_name("generate_content m-2") == "invoke_agent helper"
    assert parent_name("execute_tool lookup") == "invoke_agent helper"
    assert spans["invoke_agent other"].context.trace_id != roots[0].context.trace_id  # a new invocation, a new trace


class _FakeTrace:
    """opentelemetry.trace as far as quiet_unused_a2a_spans looks: a provider, or its proxy."""

    class ProxyTracerProvider:
        pass

    def __init__(self, provider: Any) -> None:
        self._provider = provider

    def get_tracer_provider(self) -> Any:
        return self._provider


def test_a2a_sdks_spans_go_off_only_when_nothing_would_receive_them(monkeypatch: Any) -> None:
    import sys

    from adk_actors.otel import A2A_SPANS_SWITCH, quiet_unused_a2a_spans

    monkeypatch.delenv(A2A_SPANS_SWITCH, raising=False)
    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER", raising=False)
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", _FakeTrace(TracerProvider()))
    assert quiet_unused_a2a_spans() is False  # a provider is set: its spans are wanted
    assert A2A_SPANS_SWITCH not in os.environ

    monkeypatch.setitem(sys.modules, "opentelemetry.trace", _FakeTrace(_FakeTrace.ProxyTracerProvider()))
    monkeypatch.setenv("OTEL_PYTHON_TRACER_PROVIDER", "sdk_tracer_provider")
    assert quiet_unused_a2a_spans() is False  # a provider will be made from the environment
    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER")

    monkeypatch.setenv(A2A_SPANS_SWITCH, "true")
    assert quiet_unused_a2a_spans() is False  # the user's own choice stays
    assert os.environ[A2A_SPANS_SWITCH] == "true"
    monkeypatch.delenv(A2A_SPANS_SWITCH)

    assert quiet_unused_a2a_spans() is True  # only the proxy: nothing would receive them
    assert os.environ[A2A_SPANS_SWITCH] == "false"
