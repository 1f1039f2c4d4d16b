"""google-adk's ``google.adk.evaluation.simulation.llm_backed_user_simulator`` path:
:class:`LlmBackedUserSimulatorConfig`, the settings of the user simulator that plays a
``conversation_scenario`` case (the model, its generation settings, the most
invocations, custom instructions, whether it sees the agent's tool calls), the same
class an eval config's ``user_simulator_config`` is read into; and
:class:`LlmBackedUserSimulator`, that simulator called directly (the one our eval
services play a scenario with, ``adk_actors.evals._simulator``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ... import models
from ..._types import Content, Event
from ...evals import ConversationScenario
from ...evals._simulator import LlmBackedUserSimulator as _Simulator
from ...evals._simulator import LlmBackedUserSimulatorConfig, simulator_config
from .user_simulator import NextUserMessage, Status, UserSimulator

__all__ = ["LlmBackedUserSimulator", "LlmBackedUserSimulatorConfig"]


class LlmBackedUserSimulator(UserSimulator):
    """A model plays the user of one ``conversation_scenario`` (see
    ``adk_actors.evals._simulator`` for its rules)."""

    config_type = LlmBackedUserSimulatorConfig

    def __init__(self, *, config: BaseModel | dict[str, Any], conversation_scenario: ConversationScenario) -> None:
        """Read ``config`` (its fields, as given) as an llm-backed simulator's config
        (an EvalError, a ValueError, for another ``type``, bad fields, or custom
        instructions without the placeholders the simulator fills), then resolve its
        model by name from our model registry (that registry's error when it cannot)."""
        given = config.model_dump(exclude_none=True) if isinstance(config, BaseModel) else config
        checked = simulator_config(given)
        super().__init__(checked, config_type=LlmBackedUserSimulatorConfig)
        self._simulator = _Simulator(checked, conversation_scenario, models.resolve_model)

    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """In order: past ``max_allowed_invocations`` (-1: no limit), a
        ``TURN_LIMIT_REACHED`` answer with no model call; the first message is the
        scenario's ``starting_prompt``; after it the model is asked with the plan,
        the persona and ``events`` (each one's author and text, and its tool calls
        and answers with ``include_function_calls``), and its answer is the next
        message (``SUCCESS``), or ``STOP_SIGNAL_DETECTED`` when it holds the stop
        signal. A model answer with no text, or an error answer, raises an EvalError
        (a ValueError; google-adk raises a RuntimeError)."""
        if self._simulator.limit_reached():
            return NextUserMessage(status=Status.TURN_LIMIT_REACHED)
        turns: list[tuple[str, Content]] = [(event.author, event.content) for event in events
                                            if event.content is not None]
        message = await self._simulator.next_message(turns)
        if message is None:
            return NextUserMessage(status=Status.STOP_SIGNAL_DETECTED)
        return NextUserMessage(status=Status.SUCCESS, user_message=message)

    def get_simulation_evaluator(self) -> Any:
        """NotImplementedError, as in google-adk: the simulator's quality is the
        ``per_turn_user_simulator_quality_v1`` metric
        (``per_turn_user_simulator_quality_v1.PerTurnUserSimulatorQualityV1``)."""
        raise NotImplementedError
