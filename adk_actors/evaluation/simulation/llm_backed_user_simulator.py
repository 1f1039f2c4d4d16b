"""google-adk's ``google.adk.evaluation.simulation.llm_backed_user_simulator`` path:
:class:`LlmBackedUserSimulatorConfig`, the settings of the user simulator that plays a
``conversation_scenario`` case (the model, its generation settings, the most
invocations, custom instructions, whether it sees the agent's tool calls), the same
class an eval config's ``user_simulator_config`` is read into; and
:class:`LlmBackedUserSimulator`, that simulator called directly (the one our eval
runs play a scenario with by default, ``adk_actors.evals._simulator``)."""

from __future__ import annotations

from ...evals._simulator import LlmBackedScenarioSimulator, LlmBackedUserSimulatorConfig

__all__ = ["LlmBackedUserSimulator", "LlmBackedUserSimulatorConfig"]


class LlmBackedUserSimulator(LlmBackedScenarioSimulator):
    """A model plays the user of one ``conversation_scenario``
    (``LlmBackedUserSimulator(config=..., conversation_scenario=...)``; see
    ``adk_actors.evals._simulator`` for its rules: ``LlmBackedScenarioSimulator``).
    The provider registers this class for :class:`LlmBackedUserSimulatorConfig`; it
    plays a case as the class our eval runs register there themselves does."""

    config_type = LlmBackedUserSimulatorConfig
