"""google-adk's import path of ``LlmRequest``."""

from .._types import LlmRequest

__all__ = ["LlmRequest"]
