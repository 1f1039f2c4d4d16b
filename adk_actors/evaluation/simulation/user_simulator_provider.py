"""google-adk's ``google.adk.evaluation.simulation.user_simulator_provider`` path:
:class:`UserSimulatorProvider`, which carries the user simulator's config to
``LocalEvalService(user_simulator_provider=...)`` and gives a case its simulator
(:meth:`UserSimulatorProvider.provide`, by the classes ``register_user_simulator``
registered; the llm-backed one is registered here). The eval runs pick a case's
simulator the same way (``adk_actors.evals._simulator.provide_user_simulator``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ...evals import EvalCase
from ...evals._simulator import (
    LlmBackedUserSimulatorConfig,
    provide_user_simulator,
    user_simulator_config_of,
)
from .llm_backed_user_simulator import LlmBackedUserSimulator
from .user_simulator import UserSimulator, register_user_simulator

__all__ = ["UserSimulatorProvider"]

register_user_simulator(LlmBackedUserSimulatorConfig, LlmBackedUserSimulator)


class UserSimulatorProvider:
    """The user simulator's config for the ``conversation_scenario`` cases of an eval
    (a case with a ``conversation`` replays its own user messages and reads none of
    it): google-adk's ``llm_backed`` simulator's, or that of a simulator registered
    with ``register_user_simulator``."""

    def __init__(self, user_simulator_config: BaseModel | dict[str, Any] | None = None) -> None:
        """Keep the config, checked: None gives the llm-backed defaults; a config
        object whose type has a registered simulator is kept as it is; a dict, or
        another config, is read as an eval config's ``user_simulator_config`` (an
        ``EvalError``, a ValueError, for another type of simulator, bad fields, or
        custom instructions without the placeholders the simulator fills)."""
        self._user_simulator_config: BaseModel = user_simulator_config_of(user_simulator_config)

    @property
    def user_simulator_config(self) -> Any:
        return self._user_simulator_config

    def provide(self, eval_case: EvalCase) -> UserSimulator:
        """The simulator of ``eval_case``, in order: a ``StaticUserSimulator`` of
        its ``conversation`` when it has one; a ValueError when it has no
        ``conversation_scenario`` either; else the class registered for the config's
        type, made with ``config=`` and ``conversation_scenario=`` (a ValueError when
        none is registered)."""
        return provide_user_simulator(self._user_simulator_config, eval_case)
