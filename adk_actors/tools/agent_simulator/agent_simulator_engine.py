"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.agent_simulator_engine``, now
:mod:`adk_actors.tools.environment_simulation.environment_simulation_engine`. Importing this module warns
(``DeprecationWarning``) and gives the same class (as ``AgentSimulatorEngine``) as there."""

from __future__ import annotations

import warnings

from ..environment_simulation.environment_simulation_engine import (
    EnvironmentSimulationEngine as AgentSimulatorEngine,
)

__all__ = ["AgentSimulatorEngine"]

warnings.warn("adk_actors.tools.agent_simulator.agent_simulator_engine is deprecated: import from "
              "adk_actors.tools.environment_simulation.environment_simulation_engine", DeprecationWarning, stacklevel=2)
