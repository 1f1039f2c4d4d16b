"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.tool_connection_analyzer``, now
:mod:`adk_actors.tools.environment_simulation.tool_connection_analyzer`. Importing this module warns
(``DeprecationWarning``) and gives the same class as there."""

from __future__ import annotations

import warnings

from ..environment_simulation.tool_connection_analyzer import ToolConnectionAnalyzer

__all__ = ["ToolConnectionAnalyzer"]

warnings.warn("adk_actors.tools.agent_simulator.tool_connection_analyzer is deprecated: import from "
              "adk_actors.tools.environment_simulation.tool_connection_analyzer", DeprecationWarning, stacklevel=2)
