"""``M.trace`` and ``M.metrics``: OpenTelemetry at agent and model boundaries, adk-fluent's names.

Both need the ``opentelemetry`` API (``pip install 'adk-actors[otel]'``); without it
they raise ImportError saying so when made (adk-fluent's are silent no-ops then).
The spans and instruments are the OpenTelemetry tracer's and meter's given, else the
global ones (a host exports them when ``attach_opentelemetry`` or the OpenTelemetry
SDK's environment sets a provider).

* :class:`TraceMiddleware`: a span ``agent:{name}`` from ``before_agent`` to
  ``after_agent`` (``adk.agent.name``, ``adk.agent.latency_ms``), and a span
  ``model:{agent}`` per model call (``adk.agent.name``, ``adk.model.name``,
  ``adk.model.latency_ms``, ``adk.model.input_tokens`` / ``output_tokens`` from the
  answer's usage); a model call that fails ends its span with the error recorded.
  Open spans live in the run's ``TraceContext``, so concurrent runs never mix them.
* :class:`MetricsMiddleware`: counters ``adk.agent.calls`` and ``adk.agent.errors``
  (model errors), the histogram ``adk.agent.latency`` (ms), counters
  ``adk.model.input_tokens`` / ``adk.model.output_tokens``, each with the attribute
  ``agent``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ._middleware import TraceContext

__all__ = ["MetricsMiddleware", "TraceMiddleware"]

_HINT = "needs the OpenTelemetry API: pip install 'adk-actors[otel]'"


def _opentelemetry(what: str) -> Any:
    try:
        import opentelemetry.metrics
        import opentelemetry.trace
    except ImportError as error:  # an optional extra: made only when asked for
        raise ImportError(f"{what} {_HINT}") from error
    return opentelemetry


class TraceMiddleware:
    """See the module."""

    def __init__(self, exporter: Any = None, *, tracer: Any = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        otel = _opentelemetry("M.trace()")
        self._tracer = tracer if tracer is not None else otel.trace.get_tracer("adk_actors.fluent")
        self._status = otel.trace.Status
        self._error = otel.trace.StatusCode.ERROR
        self._clock = clock
        self.exporter = exporter  # adk-fluent's argument; spans go to the tracer's provider

    def before_agent(self, ctx: TraceContext, agent_name: str) -> None:
        span = self._tracer.start_span(f"agent:{agent_name}", attributes={"adk.agent.name": agent_name})
        ctx[f"_trace_agent_{agent_name}"] = (span, self._clock())

    def after_agent(self, ctx: TraceContext, agent_name: str) -> None:
        opened = ctx.pop(f"_trace_agent_{agent_name}", None)
        if opened is not None:
            span, began = opened
            span.set_attribute("adk.agent.latency_ms", (self._clock() - began) * 1000.0)
            span.end()

    def before_model(self, ctx: TraceContext, request: Any) -> None:
        agent = ctx.agent_name or "?"
        attributes = {"adk.agent.name": agent}
        model = getattr(request, "model", None)
        if model:
            attributes["adk.model.name"] = str(model)
        ctx[f"_trace_model_{agent}"] = (self._tracer.start_span(f"model:{agent}", attributes=attributes), self._clock())

    def after_model(self, ctx: TraceContext, response: Any) -> None:
        opened = ctx.pop(f"_trace_model_{ctx.agent_name or '?'}", None)
        if opened is None:
            return
        span, began = opened
        span.set_attribute("adk.model.latency_ms", (self._clock() - began) * 1000.0)
        usage = getattr(response, "usage_metadata", None)
        if usage is not None:
            span.set_attribute("adk.model.input_tokens", usage.prompt_token_count or 0)
            span.set_attribute("adk.model.output_tokens", usage.candidates_token_count or 0)
        span.end()

    def on_model_error(self, ctx: TraceContext, request: Any, error: BaseException) -> None:
        opened = ctx.pop(f"_trace_model_{ctx.agent_name or '?'}", None)
        if opened is not None:
            span, _ = opened
            span.record_exception(error)
            span.set_status(self._status(self._error, f"{type(error).__name__}: {error}"))
            span.end()


class MetricsMiddleware:
    """See the module. ``collector``: an object with ``increment(name)`` (adk-fluent's
    older form), told of each agent call and model error too."""

    def __init__(self, collector: Any = None, *, meter: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        otel = _opentelemetry("M.metrics()")
        meter = meter if meter is not None else otel.metrics.get_meter("adk_actors.fluent")
        self._collector = collector
        self._clock = clock
        self._calls = meter.create_counter("adk.agent.calls", unit="1", description="Agent invocations")
        self._errors = meter.create_counter("adk.agent.errors", unit="1", description="Model errors per agent")
        self._latency = meter.create_histogram("adk.agent.latency", unit="ms", description="Agent invocation latency")
        self._input = meter.create_counter("adk.model.input_tokens", unit="1", description="Prompt tokens consumed")
        self._output = meter.create_counter("adk.model.output_tokens", unit="1", description="Answer tokens made")

    def before_agent(self, ctx: TraceContext, agent_name: str) -> None:
        ctx[f"_metrics_agent_{agent_name}"] = self._clock()

    def after_agent(self, ctx: TraceContext, agent_name: str) -> None:
        attributes = {"agent": agent_name}
        self._calls.add(1, attributes)
        began = ctx.pop(f"_metrics_agent_{agent_name}", None)
        if began is not None:
            self._latency.record((self._clock() - began) * 1000.0, attributes)
        if self._collector is not None:
            self._collector.increment(f"agent:{agent_name}")

    def after_model(self, ctx: TraceContext, response: Any) -> None:
        usage = getattr(response, "usage_metadata", None)
        if usage is not None:
            attributes = {"agent": ctx.agent_name or "?"}
            self._input.add(usage.prompt_token_count or 0, attributes)
            self._output.add(usage.candidates_token_count or 0, attributes)

    def on_model_error(self, ctx: TraceContext, request: Any, error: BaseException) -> None:
        self._errors.add(1, {"agent": ctx.agent_name or "?"})
        if self._collector is not None:
            self._collector.increment(f"error:{ctx.agent_name or '?'}")
