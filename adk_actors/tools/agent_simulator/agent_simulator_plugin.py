"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.agent_simulator_plugin``, now
:mod:`adk_actors.tools.environment_simulation.environment_simulation_plugin`. Importing this module warns
(``DeprecationWarning``) and gives the same class (as ``AgentSimulatorPlugin``) as there."""

from __future__ import annotations

import warnings

from ..environment_simulation.environment_simulation_plugin import (
    EnvironmentSimulationPlugin as AgentSimulatorPlugin,
)

__all__ = ["AgentSimulatorPlugin"]

warnings.warn("adk_actors.tools.agent_simulator.agent_simulator_plugin is deprecated: import from "
              "adk_actors.tools.environment_simulation.environment_simulation_plugin", DeprecationWarning, stacklevel=2)
