"""google-adk's import path of ``BaseAgent``."""

from ._base import AgentBase

BaseAgent = AgentBase

__all__ = ["BaseAgent"]
