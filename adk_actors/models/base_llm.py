"""google-adk's import path of ``BaseLlm``."""

from ._llm_registry import BaseLlm

__all__ = ["BaseLlm"]
