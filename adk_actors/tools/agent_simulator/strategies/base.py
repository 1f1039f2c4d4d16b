"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.strategies.base``, now
:mod:`adk_actors.tools.environment_simulation.strategies.base`. Importing this module warns
(``DeprecationWarning``) and gives the same class as there."""

from __future__ import annotations

import warnings

from ...environment_simulation.strategies.base import MockStrategy

__all__ = ["MockStrategy"]

warnings.warn("adk_actors.tools.agent_simulator.strategies.base is deprecated: import from "
              "adk_actors.tools.environment_simulation.strategies.base", DeprecationWarning, stacklevel=2)
