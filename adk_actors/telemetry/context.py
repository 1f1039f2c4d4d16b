"""google-adk's per-run telemetry settings (``google.adk.telemetry.context``).

:class:`TelemetryConfig` decides what the tracing helpers (:mod:`.tracing`) put on a
span: message content or not, the experimental GenAI conventions or not, which of
google-adk's experimental features. Each field left None falls back to google-adk's
environment variable for it, read once, when the config is made:

* ``OTEL_SEMCONV_STABILITY_OPT_IN`` (``gen_ai_latest_experimental`` among its
  comma-separated words: the experimental conventions; without it, they are on
  under google-adk's telemetry schema 2, the default, and off under schema 1,
  ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`` or ``otel_semconv_1_36``);
* ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (one of the
  :class:`ContentCapturingMode` values in any case; ``true`` or ``1`` is
  ``EVENT_ONLY``; anything else ``NO_CONTENT``);
* ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS`` (content on google-adk's own spans; on
  unless ``false`` or ``0``);
* ``ADK_EXPERIMENTAL_TELEMETRY`` (every experimental feature; ``true`` or ``1``) and
  ``ADK_EXPERIMENTAL_TELEMETRY_FEATURES`` (comma-separated feature names);
* ``ADK_TELEMETRY_IGNORE_RUN_CONFIG`` (``true`` or ``1``: the fields are ignored, the
  environment decides).
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr, StrictBool, field_validator

__all__ = ["ContentCapturingMode", "TelemetryConfig", "schema_version"]

_log = logging.getLogger("adk_actors.telemetry")

#: the features google-adk's ``ADK_EXPERIMENTAL_TELEMETRY_FEATURES`` may name
FEATURES = frozenset({"skills", "workflow", "context_cache", "grounding", "mcp", "token_usage", "compaction"})
_ON = frozenset({"1", "true"})
_OFF = frozenset({"0", "false"})
_warned: set[str] = set()


def schema_version() -> int:
    """google-adk's telemetry schema: 1 when ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN``
    is ``1`` or ``otel_semconv_1_36``, else 2 (its default)."""
    pinned = os.environ.get("ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", "").strip()
    return 1 if pinned in ("1", "otel_semconv_1_36") else 2


class ContentCapturingMode(enum.Enum):
    """Where a model call's messages may be recorded: nowhere, on the log record
    only, on the span only, or on both (the values of
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``)."""

    NO_CONTENT = "NO_CONTENT"
    EVENT_ONLY = "EVENT_ONLY"
    SPAN_ONLY = "SPAN_ONLY"
    SPAN_AND_EVENT = "SPAN_AND_EVENT"


def _on_span(mode: ContentCapturingMode) -> bool:
    return mode in (ContentCapturingMode.SPAN_ONLY, ContentCapturingMode.SPAN_AND_EVENT)


def _env_flag(name: str, default: str) -> str:
    return os.getenv(name, default).strip().lower()


def _env_mode() -> ContentCapturingMode:
    text = os.getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip()
    if text.lower() in _ON:
        return ContentCapturingMode.EVENT_ONLY
    try:
        return ContentCapturingMode(text.upper())
    except ValueError:
        return ContentCapturingMode.NO_CONTENT


def _known_features(names: Iterable[str] | None) -> frozenset[str] | None:
    """The known feature names among ``names`` (trimmed, lower case); an unknown one
    is logged once, as a warning, and left out. None when none is left (or for None)."""
    if names is None:
        return None
    kept = set()
    for raw in names:
        name = raw.strip().lower()
        if not name:
            continue
        if name in FEATURES:
            kept.add(name)
        elif name not in _warned:
            _warned.add(name)
            _log.warning("unknown experimental telemetry feature %r left out", name)
    return frozenset(kept) or None


class TelemetryConfig(BaseModel):
    """What tracing records for one run (google-adk's ``RunConfig.telemetry``); frozen.
    The environment it falls back to is read when the config is made (see the
    module): a later change of the environment needs a new config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    genai_semconv_stability_opt_in: Literal["stable", "experimental"] | None = None
    capture_message_content: ContentCapturingMode | None = None
    adk_experimental_telemetry_opt_in: StrictBool | None = None
    experimental_features_opt_in: frozenset[str] | None = None

    _env: dict[str, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        """Read the environment's answers now."""
        semconv = os.getenv("OTEL_SEMCONV_STABILITY_OPT_IN") or ""
        self._env.update(
            experimental_semconv="gen_ai_latest_experimental" in (w.strip() for w in semconv.split(",")),
            mode=_env_mode(),
            legacy_content=_env_flag("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS", "true") not in _OFF,
            experimental=_env_flag("ADK_EXPERIMENTAL_TELEMETRY", "false") in _ON,
            features=_known_features(os.getenv("ADK_EXPERIMENTAL_TELEMETRY_FEATURES", "").split(",")) or frozenset(),
            locked=_env_flag("ADK_TELEMETRY_IGNORE_RUN_CONFIG", "") in _ON,
            schema=schema_version())

    def __eq__(self, other: object) -> bool:
        """Equal when the fields are (the environment read beside them aside)."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((self.__class__, tuple(self.__dict__.values())))

    @field_validator("experimental_features_opt_in", mode="after")
    @classmethod
    def _features(cls, value: frozenset[str] | None) -> frozenset[str] | None:
        return _known_features(value)

    def _field(self, name: str) -> Any:
        """A field's value, unless ``ADK_TELEMETRY_IGNORE_RUN_CONFIG`` locks them out (None)."""
        return None if self._env["locked"] else getattr(self, name)

    @property
    def should_use_experimental_genai_semconv(self) -> bool:
        """The field, else the environment's opt-in, else the schema's default (on under 2)."""
        chosen = self._field("genai_semconv_stability_opt_in")
        if chosen is not None:
            return bool(chosen == "experimental")
        return bool(self._env["experimental_semconv"]) or self._env["schema"] >= 2

    @property
    def resolved_content_capturing_mode(self) -> ContentCapturingMode:
        """The field, else the environment's mode."""
        chosen = self._field("capture_message_content")
        mode: ContentCapturingMode = chosen if chosen is not None else self._env["mode"]
        return mode

    @property
    def content_capturing_mode_value(self) -> str:
        """The mode as its environment value: ``""`` for ``NO_CONTENT``."""
        mode = self.resolved_content_capturing_mode
        return "" if mode is ContentCapturingMode.NO_CONTENT else mode.value

    @property
    def should_add_content_to_logs(self) -> bool:
        return self.resolved_content_capturing_mode in (ContentCapturingMode.EVENT_ONLY,
                                                        ContentCapturingMode.SPAN_AND_EVENT)

    @property
    def should_add_content_to_experimental_spans(self) -> bool:
        """Content on the conventions' spans: a mode that names the span."""
        return _on_span(self.resolved_content_capturing_mode)

    @property
    def should_add_content_to_legacy_spans(self) -> bool:
        """Content on google-adk's own span attributes: a mode set on the config that
        names the span, else ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS`` (on by default)."""
        chosen = self._field("capture_message_content")
        if chosen is not None:
            return _on_span(chosen)
        return bool(self._env["legacy_content"])

    @property
    def should_emit_experimental_telemetry(self) -> bool:
        """The blanket opt-in: the field, else ``ADK_EXPERIMENTAL_TELEMETRY``."""
        chosen = self._field("adk_experimental_telemetry_opt_in")
        return bool(chosen) if chosen is not None else bool(self._env["experimental"])

    def _experimental_feature_enabled(self, feature: str) -> bool:
        """One experimental feature: the blanket field, else the feature field, else
        either environment variable."""
        if not self._env["locked"]:
            if self.adk_experimental_telemetry_opt_in is not None:
                return self.adk_experimental_telemetry_opt_in
            if self.experimental_features_opt_in is not None:
                return feature in self.experimental_features_opt_in
        return feature in self._env["features"] or bool(self._env["experimental"])
