"""What a model's name says about it, by google-adk's rules: whether it is a Gemini
model (which alone takes Gemini's own tools), and whether it takes those tools in the
same request as function declarations (Gemini 3 and later).

A name is read without its path: ``models/gemini-2.5-flash``, a Vertex AI
``projects/.../models/gemini-2.5-flash`` and a provider-prefixed
``gemini/gemini-2.5-flash`` are all ``gemini-2.5-flash``. Setting
``ADK_DISABLE_GEMINI_MODEL_ID_CHECK`` (``1``, ``true``, ``yes``, ``on``) makes every
name count as a Gemini model, as in google-adk.
"""

from __future__ import annotations

import os
import re

__all__ = ["bare_model_name", "gemini_check_disabled", "is_gemini_model", "takes_builtin_tools_with_functions"]

_VERTEX = re.compile(r"^projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/(.+)$")
_APIGEE = re.compile(r"^apigee/(?:[^/]+/)?(?:[^/]+/)?(.+)$")
_MAJOR = re.compile(r"^gemini-(\d+)(?:\.\d+)*(?:-|$)")


def gemini_check_disabled() -> bool:
    """Whether ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK`` is set to a true value."""
    return os.environ.get("ADK_DISABLE_GEMINI_MODEL_ID_CHECK", "0").strip().lower() in ("1", "true", "yes", "on")


def bare_model_name(model: str) -> str:
    """``model`` without a Vertex AI, Apigee, ``models/`` or ``gemini/`` path."""
    for pattern in (_VERTEX, _APIGEE):
        found = pattern.match(model)
        if found:
            return found.group(1)
    if model.startswith("models/"):
        return model[len("models/"):]
    if "/" in model and not model.startswith("projects/"):
        last = model.rsplit("/", 1)[1]
        if last.startswith("gemini-"):
            return last
    return model


def is_gemini_model(model: str | None) -> bool:
    """Whether ``model`` names a Gemini model (``gemini-...``, with any path)."""
    return bool(model) and bare_model_name(model or "").startswith("gemini-")


def takes_builtin_tools_with_functions(model: str | None) -> bool:
    """Whether ``model`` takes Gemini's search tools in a request that also declares
    functions: Gemini 3 and later do; earlier ones answer 400 (``Tool use with
    function calling is unsupported``); any other name counts as not."""
    found = _MAJOR.match(bare_model_name(model or ""))
    return found is not None and int(found.group(1)) >= 3
