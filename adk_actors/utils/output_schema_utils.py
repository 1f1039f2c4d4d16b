"""google-adk's ``google.adk.utils.output_schema_utils`` (deprecated there: a model's
``capabilities.output_schema_and_tools`` answers instead)."""

from __future__ import annotations

from typing import Any

from typing_extensions import deprecated

from .model_name_utils import is_gemini_model
from .variant_utils import GoogleLLMVariant, get_google_llm_variant

__all__ = ["can_use_output_schema_with_tools"]


@deprecated("read model.capabilities.output_schema_and_tools instead")
def can_use_output_schema_with_tools(model: str | Any) -> bool:
    """Can ``model`` take an output schema and tools in one request? A model object
    that reports ``capabilities`` answers with its ``output_schema_and_tools``; for a
    model name (or a model object without them, by its ``model`` name): a Gemini
    model on Vertex AI (:func:`~adk_actors.utils.variant_utils.get_google_llm_variant`)."""
    if not isinstance(model, str):
        capabilities = getattr(model, "capabilities", None)
        if capabilities is not None:
            return bool(capabilities.output_schema_and_tools)
        model = str(getattr(model, "model", "") or "")
    return get_google_llm_variant() == GoogleLLMVariant.VERTEX_AI and is_gemini_model(model)
