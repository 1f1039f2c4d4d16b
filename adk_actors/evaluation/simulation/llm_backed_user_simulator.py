"""google-adk's ``google.adk.evaluation.simulation.llm_backed_user_simulator`` path:
:class:`LlmBackedUserSimulatorConfig`, the settings of the user simulator that plays a
``conversation_scenario`` case (the model, its generation settings, the most
invocations, custom instructions, whether it sees the agent's tool calls), the same
class an eval config's ``user_simulator_config`` is read into."""

from __future__ import annotations

from ...evals._simulator import LlmBackedUserSimulatorConfig

__all__ = ["LlmBackedUserSimulatorConfig"]
