"""Agent definitions."""

from ._llm_agent import LlmAgent

__all__ = ["LlmAgent"]
