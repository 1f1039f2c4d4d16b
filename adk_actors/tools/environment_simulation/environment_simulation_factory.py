"""Makes the simulator (google-adk's ``EnvironmentSimulationFactory``): as a plugin
for an app or runner, or as a ``before_tool_callback`` for one agent. Each call makes
its own :class:`EnvironmentSimulationEngine` (its own analysis, state store and random
generators); an unknown model name in the config is a ``ValueError`` here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .environment_simulation_config import EnvironmentSimulationConfig
from .environment_simulation_engine import EnvironmentSimulationEngine
from .environment_simulation_plugin import EnvironmentSimulationPlugin

__all__ = ["EnvironmentSimulationFactory"]

SimulationCallback = Callable[[Any, dict[str, Any], Any], Awaitable[dict[str, Any] | None]]


class EnvironmentSimulationFactory:
    """The two ways to add the simulator (see the module)."""

    @staticmethod
    def create_callback(config: EnvironmentSimulationConfig) -> SimulationCallback:
        """An async ``(tool, args, tool_context)`` callback for an agent's
        ``before_tool_callback``: the simulated result of a call, or None to run the tool."""
        engine = EnvironmentSimulationEngine(config)

        async def simulate_tool(tool: Any, args: dict[str, Any], tool_context: Any) -> dict[str, Any] | None:
            return await engine.simulate(tool, args, tool_context)

        return simulate_tool

    @staticmethod
    def create_plugin(config: EnvironmentSimulationConfig) -> EnvironmentSimulationPlugin:
        """A plugin that simulates the configured tools of every agent it runs with."""
        return EnvironmentSimulationPlugin(EnvironmentSimulationEngine(config))
