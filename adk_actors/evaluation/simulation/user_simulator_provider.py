"""google-adk's ``google.adk.evaluation.simulation.user_simulator_provider`` path:
:class:`UserSimulatorProvider`, which carries the user simulator's config to
``LocalEvalService(user_simulator_provider=...)``."""

from __future__ import annotations

from typing import Any

from ...evals._simulator import LlmBackedUserSimulatorConfig, simulator_config

__all__ = ["UserSimulatorProvider"]


class UserSimulatorProvider:
    """The user simulator's config for the ``conversation_scenario`` cases of an eval
    (a case with a ``conversation`` replays its own user messages and reads none of
    it). Only google-adk's ``llm_backed`` simulator is offered."""

    def __init__(self, user_simulator_config: LlmBackedUserSimulatorConfig | dict[str, Any] | None = None) -> None:
        """Keep the config, checked: None gives the defaults; a dict or a config is
        read as an eval config's ``user_simulator_config`` (an ``EvalError``, a
        ValueError, for another type of simulator, bad fields, or custom instructions
        without the placeholders the simulator fills)."""
        given = (user_simulator_config.model_dump(exclude_none=True)
                 if isinstance(user_simulator_config, LlmBackedUserSimulatorConfig) else user_simulator_config)
        self._user_simulator_config = simulator_config(given)

    @property
    def user_simulator_config(self) -> LlmBackedUserSimulatorConfig:
        return self._user_simulator_config
