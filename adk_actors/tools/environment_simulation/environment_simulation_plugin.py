"""The simulator as a plugin (google-adk's ``EnvironmentSimulationPlugin``): before
any agent's tool runs, :meth:`EnvironmentSimulationEngine.simulate` is asked; a dict
it gives is the call's result and the tool does not run, None lets the tool run."""

from __future__ import annotations

from typing import Any

from ...plugins.base_plugin import BasePlugin
from .environment_simulation_engine import EnvironmentSimulationEngine

__all__ = ["EnvironmentSimulationPlugin"]


class EnvironmentSimulationPlugin(BasePlugin):
    """A plugin named ``EnvironmentSimulation`` over ``simulator_engine`` (see the module)."""

    def __init__(self, simulator_engine: EnvironmentSimulationEngine) -> None:
        super().__init__(name="EnvironmentSimulation")
        self._simulator_engine = simulator_engine

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                   tool_context: Any) -> dict[str, Any] | None:
        """The simulated result of this call, or None to run the tool."""
        return await self._simulator_engine.simulate(tool, tool_args, tool_context)
