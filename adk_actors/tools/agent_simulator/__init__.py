"""Deprecated: google-adk's ``google.adk.tools.agent_simulator``, the earlier name of
:mod:`adk_actors.tools.environment_simulation`. Importing it warns
(``DeprecationWarning``); ``AgentSimulatorFactory`` is ``EnvironmentSimulationFactory``,
and the old module paths below give the new classes under their old names (the
config as :class:`~.agent_simulator_config.AgentSimulatorConfig`, which still takes
``tracing_path``)."""

import warnings

from ..environment_simulation import EnvironmentSimulationFactory as AgentSimulatorFactory

__all__ = ["AgentSimulatorFactory"]

warnings.warn("adk_actors.tools.agent_simulator is deprecated: import from "
              "adk_actors.tools.environment_simulation", DeprecationWarning, stacklevel=2)
