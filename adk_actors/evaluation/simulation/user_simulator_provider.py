"""google-adk's ``google.adk.evaluation.simulation.user_simulator_provider`` path:
:class:`UserSimulatorProvider`, which carries the user simulator's config to
``LocalEvalService(user_simulator_provider=...)`` and gives a case its simulator
(:meth:`UserSimulatorProvider.provide`, by the classes ``register_user_simulator``
registered; the llm-backed one is registered here)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ...evals import EvalCase
from ...evals._simulator import LlmBackedUserSimulatorConfig, simulator_config
from .llm_backed_user_simulator import LlmBackedUserSimulator
from .static_user_simulator import StaticUserSimulator
from .user_simulator import _SIMULATOR_BY_CONFIG_TYPE, UserSimulator, register_user_simulator

__all__ = ["UserSimulatorProvider"]

register_user_simulator(LlmBackedUserSimulatorConfig, LlmBackedUserSimulator)


class UserSimulatorProvider:
    """The user simulator's config for the ``conversation_scenario`` cases of an eval
    (a case with a ``conversation`` replays its own user messages and reads none of
    it). Only google-adk's ``llm_backed`` simulator is offered."""

    def __init__(self, user_simulator_config: LlmBackedUserSimulatorConfig | dict[str, Any] | None = None) -> None:
        """Keep the config, checked: None gives the defaults; a dict or a config is
        read as an eval config's ``user_simulator_config`` (an ``EvalError``, a
        ValueError, for another type of simulator, bad fields, or custom instructions
        without the placeholders the simulator fills)."""
        if (isinstance(user_simulator_config, BaseModel) and type(user_simulator_config) in _SIMULATOR_BY_CONFIG_TYPE
                and not isinstance(user_simulator_config, LlmBackedUserSimulatorConfig)):
            self._user_simulator_config: BaseModel = user_simulator_config  # a registered simulator's own config
            return
        given = (user_simulator_config.model_dump(exclude_none=True)
                 if isinstance(user_simulator_config, LlmBackedUserSimulatorConfig) else user_simulator_config)
        self._user_simulator_config = simulator_config(given)

    @property
    def user_simulator_config(self) -> Any:
        return self._user_simulator_config

    def provide(self, eval_case: EvalCase) -> UserSimulator:
        """The simulator of ``eval_case``, in order: a :class:`StaticUserSimulator` of
        its ``conversation`` when it has one; a ValueError when it has no
        ``conversation_scenario`` either; else the class registered for the config's
        type, made with ``config=`` and ``conversation_scenario=`` (a ValueError when
        none is registered)."""
        if eval_case.conversation is not None:
            return StaticUserSimulator(static_conversation=list(eval_case.conversation))
        if eval_case.conversation_scenario is None:
            raise ValueError(f"eval case {eval_case.eval_id!r} has neither a conversation nor a "
                             "conversation_scenario: give exactly one")
        simulator = _SIMULATOR_BY_CONFIG_TYPE.get(type(self._user_simulator_config))
        if simulator is None:
            registered = sorted(kind.__name__ for kind in _SIMULATOR_BY_CONFIG_TYPE)
            raise ValueError(f"no user simulator is registered for {type(self._user_simulator_config).__name__}; "
                             f"register one with register_user_simulator() (registered: {', '.join(registered)})")
        return simulator(config=self._user_simulator_config,  # type: ignore[call-arg]
                         conversation_scenario=eval_case.conversation_scenario)
