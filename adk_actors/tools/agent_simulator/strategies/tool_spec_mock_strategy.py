"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.strategies.tool_spec_mock_strategy``, now
:mod:`adk_actors.tools.environment_simulation.strategies.tool_spec_mock_strategy`. Importing this module warns
(``DeprecationWarning``) and gives the same class as there."""

from __future__ import annotations

import warnings

from ...environment_simulation.strategies.tool_spec_mock_strategy import ToolSpecMockStrategy

__all__ = ["ToolSpecMockStrategy"]

warnings.warn("adk_actors.tools.agent_simulator.strategies.tool_spec_mock_strategy is deprecated: import from "
              "adk_actors.tools.environment_simulation.strategies.tool_spec_mock_strategy", DeprecationWarning, stacklevel=2)
