"""google-adk's ``google.adk.tools.environment_simulation``: tools answered by a
simulator instead of run, from canned answers (errors, responses, latency, at a
probability) or from results a model invents from the tool's declaration, kept
consistent across calls by a map of how the tools share identifiers.

Make a plugin (or an agent's ``before_tool_callback``) from an
:class:`~.environment_simulation_config.EnvironmentSimulationConfig` with
:class:`EnvironmentSimulationFactory`."""

from .environment_simulation_factory import EnvironmentSimulationFactory

__all__ = ["EnvironmentSimulationFactory"]
