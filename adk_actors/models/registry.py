"""google-adk's import path of ``LLMRegistry``."""

from ._llm_registry import LLMRegistry

__all__ = ["LLMRegistry"]
