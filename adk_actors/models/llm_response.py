"""google-adk's import path of ``LlmResponse``."""

from .._types import LlmResponse

__all__ = ["LlmResponse"]
