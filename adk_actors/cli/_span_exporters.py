"""google-adk's two in-memory span exporters of its API server
(``google.adk.cli.api_server``), on the OpenTelemetry SDK.

Both are plain ``SpanExporter`` objects: give them to a ``SimpleSpanProcessor`` of a
``TracerProvider`` in the process whose spans they are to keep.

* :class:`ApiServerSpanExporter` files the attributes of each model-call and tool-call
  span (named ``call_llm``, ``send_data``, ``generate_content ...`` or
  ``execute_tool ...``) under the id of the event it made
  (``gcp.vertex.agent.event_id``), with the span's ``trace_id`` and ``span_id`` added.
* :class:`InMemoryExporter` keeps every span, notes each span's trace under its session
  (``gcp.vertex.agent.session_id``, else ``gen_ai.conversation.id``), and gives back a
  session's spans: those of every trace noted for it.

The host's own spans (:mod:`adk_actors.otel`) name their session in
``gen_ai.conversation.id``, so :class:`InMemoryExporter` groups them; they carry no
``gcp.vertex.agent.event_id``, so :class:`ApiServerSpanExporter` files only the spans
that google-adk's tracing helpers (:mod:`adk_actors.telemetry.tracing`) annotate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["ApiServerSpanExporter", "InMemoryExporter"]

_EVENT_ID = "gcp.vertex.agent.event_id"
_SESSION_KEYS = ("gcp.vertex.agent.session_id", "gen_ai.conversation.id")


def _is_call_span(name: str) -> bool:
    """A span of a model call or a tool call, by google-adk's span names."""
    return name in ("call_llm", "send_data") or name.startswith(("execute_tool", "generate_content"))


class ApiServerSpanExporter(SpanExporter):
    """Model- and tool-call spans' attributes by event id, in ``trace_dict`` (see the module)."""

    def __init__(self, trace_dict: dict[str, dict[str, Any]]) -> None:
        self.trace_dict = trace_dict

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """For each call span, in order: its attributes copied, its trace and span ids
        added, the copy stored under its event id (a later span of the same event
        replaces an earlier one); a span without an event id is skipped. A span
        without a context is a ``ValueError``."""
        for span in spans:
            if not _is_call_span(span.name):
                continue
            attributes: dict[str, Any] = dict(span.attributes or {})
            context = span.get_span_context()
            if context is None:
                raise ValueError(f"span {span.name!r} carries no span context")
            attributes["trace_id"] = context.trace_id
            attributes["span_id"] = context.span_id
            event_id = attributes.get(_EVENT_ID)
            if event_id:
                self.trace_dict[str(event_id)] = attributes
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class InMemoryExporter(SpanExporter):
    """Every span kept; session id -> its trace ids in ``trace_dict`` (see the module)."""

    def __init__(self, trace_dict: dict[str, list[int]]) -> None:
        super().__init__()
        self._spans: list[ReadableSpan] = []
        self.trace_dict = trace_dict

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Note each span's trace id under the session it names (once per trace), then
        keep the spans."""
        for span in spans:
            attributes = span.attributes or {}
            session = next((attributes[key] for key in _SESSION_KEYS if attributes.get(key)), None)
            if session and span.context is not None:
                traces = self.trace_dict.setdefault(str(session), [])
                if span.context.trace_id not in traces:
                    traces.append(span.context.trace_id)
        self._spans.extend(spans)
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def get_finished_spans(self, session_id: str) -> list[ReadableSpan]:
        """The kept spans of every trace noted for ``session_id`` (none for a session never seen)."""
        traces = self.trace_dict.get(session_id) or []
        return [span for span in self._spans if span.context is not None and span.context.trace_id in traces]

    def clear(self) -> None:
        """Forget the kept spans (the session -> traces notes stay)."""
        self._spans.clear()
