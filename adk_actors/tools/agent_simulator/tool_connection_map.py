"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.tool_connection_map``, now
:mod:`adk_actors.tools.environment_simulation.tool_connection_map`. Importing this module warns
(``DeprecationWarning``) and gives the same classes as there."""

from __future__ import annotations

import warnings

from ..environment_simulation.tool_connection_map import StatefulParameter, ToolConnectionMap

__all__ = ["StatefulParameter", "ToolConnectionMap"]

warnings.warn("adk_actors.tools.agent_simulator.tool_connection_map is deprecated: import from "
              "adk_actors.tools.environment_simulation.tool_connection_map", DeprecationWarning, stacklevel=2)
