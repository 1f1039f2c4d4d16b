"""google-adk's ``google.adk.utils.env_utils``: reading on/off environment variables."""

from __future__ import annotations

import os
import warnings

__all__ = ["is_enterprise_mode_enabled", "is_env_enabled"]

_TRUE = frozenset({"1", "true", "yes", "on"})
_GENAI_TRUE = frozenset({"1", "true"})


def is_env_enabled(env_var_name: str, default: str = "0") -> bool:
    """Whether ``env_var_name`` (or ``default`` when it is unset), stripped and
    lower-cased, is ``1``, ``true``, ``yes`` or ``on``."""
    return os.environ.get(env_var_name, default).strip().lower() in _TRUE


def is_enterprise_mode_enabled() -> bool:
    """Whether google-genai's enterprise (Vertex AI) mode is on, read as google-genai
    reads it (``1`` or ``true``, case-insensitive, nothing stripped):
    ``GOOGLE_GENAI_USE_ENTERPRISE`` when set; else the deprecated
    ``GOOGLE_GENAI_USE_VERTEXAI`` (with a ``DeprecationWarning``) when set; else False."""
    if "GOOGLE_GENAI_USE_ENTERPRISE" in os.environ:
        return os.environ["GOOGLE_GENAI_USE_ENTERPRISE"].lower() in _GENAI_TRUE
    if "GOOGLE_GENAI_USE_VERTEXAI" in os.environ:
        warnings.warn("GOOGLE_GENAI_USE_VERTEXAI is deprecated; set GOOGLE_GENAI_USE_ENTERPRISE",
                      DeprecationWarning, stacklevel=2)
        return os.environ["GOOGLE_GENAI_USE_VERTEXAI"].lower() in _GENAI_TRUE
    return False
