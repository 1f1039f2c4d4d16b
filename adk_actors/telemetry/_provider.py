"""The ``gen_ai.provider.name`` of a model, as google-adk 2.13 names it: used by the
OpenTelemetry bridge (:mod:`adk_actors.otel`, which exports it) and by google-adk's
tracing helpers here (:mod:`.tracing`)."""

from __future__ import annotations

import os
import re

__all__ = ["provider_name"]


#: a model path's collection words: not a provider when a name starts with one
_RESOURCE_WORDS = frozenset({"endpoints", "locations", "models", "projects", "publishers", "tunedmodels"})


def _enabled(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _bare_model(model: str) -> str:
    """A model's own name out of a path or prefix, as google-adk reads it: a Vertex AI
    publisher path's last part, an Apigee path's after up to two segments, a
    ``models/`` name without it, a ``projects/`` path as it is, and a ``x/.../gemini-*``
    name's last part; anything else as it is."""
    for pattern in (r"projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/(.+)$",
                    r"apigee/(?:[^/]+/)?(?:[^/]+/)?(.+)$"):
        found = re.match(pattern, model)
        if found:
            return found.group(1)
    if model.startswith("models/"):
        return model.removeprefix("models/")
    if model.startswith("projects/"):
        return model
    last = model.rsplit("/", 1)[-1]
    return last if "/" in model and last.startswith("gemini-") else model


def provider_name(model: str | None) -> str:
    """``gen_ai.provider.name`` for ``model``, as google-adk 2.13 names it (its telemetry
    schema 2): of the model's own name (:func:`_bare_model`), in order, Gemini's for no
    model or a ``gemini-`` name (``gcp.vertex_ai`` when ``GOOGLE_GENAI_USE_ENTERPRISE``,
    or without it ``GOOGLE_GENAI_USE_VERTEXAI``, is on; else ``gcp.gemini``);
    ``anthropic`` for a ``claude-`` or ``claude.`` name; the first part of a
    ``provider/model`` name, lower case, unless it is a path's collection word
    (``projects``, ``models``, ...); else Gemini's."""
    if os.environ.get("GOOGLE_GENAI_USE_ENTERPRISE") is not None:
        gemini = "gcp.vertex_ai" if _enabled("GOOGLE_GENAI_USE_ENTERPRISE") else "gcp.gemini"
    else:
        gemini = "gcp.vertex_ai" if _enabled("GOOGLE_GENAI_USE_VERTEXAI") else "gcp.gemini"
    name = _bare_model(model) if model else ""
    if not name or name.startswith("gemini-"):
        return gemini
    if re.match(r"claude[-.]", name, re.IGNORECASE):
        return "anthropic"
    provider, slash, _ = name.partition("/")
    if slash and provider and provider.lower() not in _RESOURCE_WORDS:
        return provider.lower()
    return gemini


def system_name(model: str | None) -> str:
    """The older ``gen_ai.system`` of ``model``: :func:`provider_name`, with Google's two
    names without their ``gcp.`` prefix (``gemini``, ``vertex_ai``)."""
    provider = provider_name(model)
    return provider.removeprefix("gcp.") if provider in ("gcp.gemini", "gcp.vertex_ai") else provider
