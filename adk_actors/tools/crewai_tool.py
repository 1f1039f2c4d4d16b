"""google-adk's old path of ``CrewaiTool`` and ``CrewaiToolConfig``, kept for programs
that still import them from here; importing it warns ``DeprecationWarning``: they
live in :mod:`adk_actors.integrations.crewai`."""

from __future__ import annotations

import warnings

from ..integrations.crewai import CrewaiTool, CrewaiToolConfig

warnings.warn("adk_actors.tools.crewai_tool is deprecated: import CrewaiTool and CrewaiToolConfig from "
              "adk_actors.integrations.crewai", DeprecationWarning, stacklevel=2)

__all__ = ["CrewaiTool", "CrewaiToolConfig"]
