"""google-adk's ``google.adk.integrations.crewai``: :class:`CrewaiTool` (a CrewAI tool
as an agent's tool) and :class:`CrewaiToolConfig` (its ``args`` in an agent file).
Importing this package needs no CrewAI; making a ``CrewaiTool`` needs ``crewai``
(``pip install 'adk-actors[crewai]'``) and says so when it is missing."""

from .crewai_tool import CrewaiTool, CrewaiToolConfig

__all__ = ["CrewaiTool", "CrewaiToolConfig"]
