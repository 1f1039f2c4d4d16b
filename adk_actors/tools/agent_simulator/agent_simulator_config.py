"""Deprecated: google-adk's ``google.adk.tools.agent_simulator.agent_simulator_config``,
now :mod:`adk_actors.tools.environment_simulation.environment_simulation_config`.
Importing this module warns (``DeprecationWarning``). :class:`AgentSimulatorConfig`
is the new config that also takes the old ``tracing_path`` key: its value moves to
``tracing`` (with a ``DeprecationWarning``), unless ``tracing`` is given too, which
then wins and ``tracing_path`` is dropped."""

from __future__ import annotations

import warnings
from typing import Any

from pydantic import model_validator

from ..environment_simulation.environment_simulation_config import (
    EnvironmentSimulationConfig,
    InjectedError,
    InjectionConfig,
    MockStrategy,
    ToolSimulationConfig,
)

__all__ = ["AgentSimulatorConfig", "InjectedError", "InjectionConfig", "MockStrategy", "ToolSimulationConfig"]

warnings.warn("adk_actors.tools.agent_simulator.agent_simulator_config is deprecated: import from "
              "adk_actors.tools.environment_simulation.environment_simulation_config", DeprecationWarning,
              stacklevel=2)


class AgentSimulatorConfig(EnvironmentSimulationConfig):
    """:class:`EnvironmentSimulationConfig` under its old name, ``tracing_path`` read
    as ``tracing`` (see the module)."""

    @model_validator(mode="before")
    @classmethod
    def _tracing_path_as_tracing(cls, data: Any) -> Any:
        """Move a dict's ``tracing_path`` to ``tracing`` (warning), or drop it when
        ``tracing`` is there too."""
        if isinstance(data, dict) and "tracing_path" in data:
            warnings.warn("AgentSimulatorConfig's tracing_path is deprecated: give the text as tracing",
                          DeprecationWarning, stacklevel=2)
            data = dict(data)
            path = data.pop("tracing_path")
            data.setdefault("tracing", path)
        return data
