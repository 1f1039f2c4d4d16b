"""google-adk's import path of ``AgentTool``."""

from ._agent_tool import AgentTool

__all__ = ["AgentTool"]
