"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.strategies``, now
:mod:`adk_actors.tools.environment_simulation.strategies`. Importing it warns
(``DeprecationWarning``)."""

import warnings

warnings.warn("adk_actors.tools.agent_simulator.strategies is deprecated: import from "
              "adk_actors.tools.environment_simulation.strategies", DeprecationWarning, stacklevel=2)
