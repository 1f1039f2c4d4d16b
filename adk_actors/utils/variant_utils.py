"""google-adk's ``google.adk.utils.variant_utils``: which Google backend Gemini runs on."""

from __future__ import annotations

from enum import Enum

from .env_utils import is_enterprise_mode_enabled

__all__ = ["GoogleLLMVariant", "get_google_llm_variant"]


class GoogleLLMVariant(Enum):
    """Gemini's two backends: Vertex AI (Google Cloud credentials) or the Gemini API
    (an API key from Google AI Studio)."""

    VERTEX_AI = "VERTEX_AI"
    GEMINI_API = "GEMINI_API"


def get_google_llm_variant() -> GoogleLLMVariant:
    """``VERTEX_AI`` when google-genai's enterprise mode is on
    (:func:`~adk_actors.utils.env_utils.is_enterprise_mode_enabled`), else ``GEMINI_API``."""
    return GoogleLLMVariant.VERTEX_AI if is_enterprise_mode_enabled() else GoogleLLMVariant.GEMINI_API
