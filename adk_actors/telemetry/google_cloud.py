"""google-adk's Google Cloud telemetry exporters (``google.adk.telemetry.google_cloud``).

They send spans, metrics and logs to Google Cloud's telemetry endpoints with the
project's Google credentials, which this project has no client for: asking for
them (:func:`get_gcp_exporters`, :class:`GCPBatchLogRecordProcessor`) raises
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``)
naming what to use instead. An OTLP endpoint of the user's (a collector that
forwards to Google Cloud, say) is :func:`.setup.maybe_set_otel_providers`'s
``OTEL_EXPORTER_OTLP_ENDPOINT``.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ..errors._unavailable import ServiceUnavailableError, unavailable

__all__ = ["GCPBatchLogRecordProcessor", "ServiceUnavailableError", "get_gcp_exporters"]

_INSTEAD = ("maybe_set_otel_providers() from adk_actors.telemetry.setup with OTEL_EXPORTER_OTLP_ENDPOINT naming "
            "an OpenTelemetry collector, or your own span processors in its OTelHooks")


def _refuse(what: str) -> NoReturn:
    raise ServiceUnavailableError(unavailable(what, "Google Cloud's telemetry API and google-auth credentials",
                                              _INSTEAD))


def get_gcp_exporters(enable_cloud_tracing: bool = False, enable_cloud_metrics: bool = False,
                      enable_cloud_logging: bool = False, google_auth: Any = None) -> Any:
    """Refused when called (see the module); its arguments are google-adk's."""
    _refuse("get_gcp_exporters")


class GCPBatchLogRecordProcessor:
    """Refused when made (see the module); its arguments are google-adk's."""

    def __init__(self, exporter: Any, project_id: str) -> None:
        _refuse("GCPBatchLogRecordProcessor")
