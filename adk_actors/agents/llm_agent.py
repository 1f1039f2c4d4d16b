"""google-adk's import path of ``LlmAgent`` and ``Agent``."""

from ._llm_agent import LlmAgent

#: google-adk's alias: ``Agent(...)`` is an LlmAgent.
Agent = LlmAgent

__all__ = ["Agent", "LlmAgent"]
