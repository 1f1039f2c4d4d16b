"""google-adk's OpenTelemetry provider setup (``google.adk.telemetry.setup``).

:func:`maybe_set_otel_providers` installs the global tracer, meter and logger
providers from the processors and readers it is given, plus OTLP-over-HTTP
exporters when the standard ``OTEL_EXPORTER_OTLP_*_ENDPOINT`` variables name an
endpoint. Needs the OpenTelemetry SDK; the OTLP exporters need
``opentelemetry-exporter-otlp-proto-http`` (without it, a warning and no export).
Spans reach these providers once :func:`adk_actors.otel.attach_opentelemetry` turns
the engine's telemetry into spans.
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

__all__ = ["OTelHooks", "maybe_set_otel_providers"]

_log = logging.getLogger("adk_actors.telemetry")
#: each signal's own endpoint variable, its OTLP/HTTP exporter (module, class)
_OTLP = {"traces": ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "opentelemetry.exporter.otlp.proto.http.trace_exporter",
                    "OTLPSpanExporter"),
         "metrics": ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "opentelemetry.exporter.otlp.proto.http.metric_exporter",
                     "OTLPMetricExporter"),
         "logs": ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "opentelemetry.exporter.otlp.proto.http._log_exporter",
                  "OTLPLogExporter")}


@dataclass
class OTelHooks:
    """What to add to each provider: span processors, metric readers, log record processors."""

    span_processors: list[SpanProcessor] = field(default_factory=list)
    metric_readers: list[MetricReader] = field(default_factory=list)
    log_record_processors: list[LogRecordProcessor] = field(default_factory=list)


def _otlp_exporter(signal: str) -> Any:
    """The OTLP/HTTP exporter of ``signal`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or the
    signal's own endpoint variable is set; None when neither is, or (with a warning)
    when the exporter package is not installed."""
    variable, module, name = _OTLP[signal]
    if not (os.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") or os.getenv(variable)):
        return None
    try:
        return getattr(importlib.import_module(module), name)()
    except (ImportError, AttributeError):
        _log.warning("no OTLP export of %s: opentelemetry-exporter-otlp-proto-http is not installed", signal)
        return None


def _environment_hooks() -> OTelHooks:
    """OTLP exporters for the signals whose endpoint the environment names."""
    hooks = OTelHooks()
    if (spans := _otlp_exporter("traces")) is not None:
        hooks.span_processors.append(BatchSpanProcessor(spans))
    if (points := _otlp_exporter("metrics")) is not None:
        hooks.metric_readers.append(PeriodicExportingMetricReader(points))
    if (records := _otlp_exporter("logs")) is not None:
        hooks.log_record_processors.append(BatchLogRecordProcessor(records))
    return hooks


def maybe_set_otel_providers(otel_hooks_to_setup: list[OTelHooks] | None = None,
                             otel_resource: Resource | None = None) -> None:
    """Install a global provider for each signal that has something to feed: the
    hooks given and the OTLP exporters the environment asks for (see the module),
    on ``otel_resource`` (else the one ``OTEL_SERVICE_NAME`` and
    ``OTEL_RESOURCE_ATTRIBUTES`` describe). A signal with no processor or reader
    gets no provider; where a global provider is set already, OpenTelemetry keeps it
    (and warns), so the user's own setup wins."""
    hooks = [*(otel_hooks_to_setup or ()), _environment_hooks()]
    resource = otel_resource or OTELResourceDetector().detect()
    processors = [p for h in hooks for p in h.span_processors]
    readers = [r for h in hooks for r in h.metric_readers]
    recorders = [r for h in hooks for r in h.log_record_processors]
    if processors:
        tracer_provider = TracerProvider(resource=resource)
        for processor in processors:
            tracer_provider.add_span_processor(processor)
        trace.set_tracer_provider(tracer_provider)
    if readers:
        metrics.set_meter_provider(MeterProvider(metric_readers=readers, resource=resource, shutdown_on_exit=False))
    if recorders:
        logger_provider = LoggerProvider(resource=resource)
        for recorder in recorders:
            logger_provider.add_log_record_processor(recorder)
        _logs.set_logger_provider(logger_provider)
