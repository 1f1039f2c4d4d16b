"""google-adk's import path of ``AgentTool``."""

from ._builtins import AgentTool

__all__ = ["AgentTool"]
