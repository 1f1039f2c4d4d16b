"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.agent_simulator_factory``, now
:mod:`adk_actors.tools.environment_simulation.environment_simulation_factory`. Importing this module warns
(``DeprecationWarning``) and gives the same class (as ``AgentSimulatorFactory``) as there."""

from __future__ import annotations

import warnings

from ..environment_simulation.environment_simulation_factory import (
    EnvironmentSimulationFactory as AgentSimulatorFactory,
)

__all__ = ["AgentSimulatorFactory"]

warnings.warn("adk_actors.tools.agent_simulator.agent_simulator_factory is deprecated: import from "
              "adk_actors.tools.environment_simulation.environment_simulation_factory", DeprecationWarning, stacklevel=2)
