"""google-adk's ``google.adk.evaluation.simulation.user_simulator`` path: the interface
of a user simulator, which says the next message of the user an agent is evaluated
with (:class:`UserSimulator`), its answer (:class:`NextUserMessage`, with a
:class:`Status`) and the base of its configs (:class:`BaseUserSimulatorConfig`).

:func:`register_user_simulator` maps a config type to the simulator class that plays
it, for ``UserSimulatorProvider.provide`` (the llm-backed simulator is registered
there). Our eval services (``AgentEvaluator``, ``LocalEvalService``) still play a
``conversation_scenario`` case with the llm-backed simulator only: a simulator of your
own is picked by ``provide`` and can be called directly, not by them.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from ..._types import Content, Event
from ..common import EvalBaseModel

__all__ = ["BaseUserSimulatorConfig", "NextUserMessage", "Status", "UserSimulator", "register_user_simulator"]


class BaseUserSimulatorConfig(BaseModel):
    """The fields every user simulator's config has: ``type``, which names the kind
    of simulator (None here: a concrete config names its own); other fields are kept
    as given, read by snake_case names and camelCase aliases."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    type: str | None = None


class Status(enum.Enum):
    """Why :meth:`UserSimulator.get_next_user_message` gave, or did not give, a message."""

    SUCCESS = "success"
    TURN_LIMIT_REACHED = "turn_limit_reached"
    STOP_SIGNAL_DETECTED = "stop_signal_detected"
    NO_MESSAGE_GENERATED = "no_message_generated"


class NextUserMessage(EvalBaseModel):
    """The simulator's answer: a ``status``, and the ``user_message`` to send to the
    agent. A validation error (a ValueError) when there is a message and the status
    is not ``SUCCESS``, or none and it is."""

    status: Status
    user_message: Content | None = None

    @model_validator(mode="after")
    def _message_iff_success(self) -> NextUserMessage:
        if (self.status == Status.SUCCESS) != (self.user_message is not None):
            raise ValueError("user_message is given exactly when the status is SUCCESS")
        return self


class UserSimulator:
    """A user simulator, one per eval case (see the module)."""

    def __init__(self, config: BaseModel | dict[str, Any], config_type: type[BaseModel]) -> None:
        """Keep ``config`` read as ``config_type`` (its fields, as given); a ValueError
        when they are not valid for that type."""
        given = config.model_dump() if isinstance(config, BaseModel) else dict(config)
        try:
            self._config = config_type.model_validate(given)
        except ValidationError as exc:
            raise ValueError(f"the config is not a valid {config_type.__name__}: {exc.errors()[0]['msg']}") from None

    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """The user's next message after the conversation so far (``events``, as
        the agent's session has them); NotImplementedError here."""
        raise NotImplementedError

    def get_simulation_evaluator(self) -> Any:
        """An evaluator of whether the simulation went well, or None;
        NotImplementedError here."""
        raise NotImplementedError


#: each config type's simulator class (``register_user_simulator``)
_SIMULATOR_BY_CONFIG_TYPE: dict[type[BaseModel], type[UserSimulator]] = {}


def register_user_simulator(config_type: type[BaseModel], simulator_type: type[UserSimulator]) -> None:
    """Map ``config_type`` (a config class, google-adk's ``BaseUserSimulatorConfig``
    subclass) to ``simulator_type`` (a :class:`UserSimulator` subclass), replacing an
    earlier mapping; TypeError when either is not such a class."""
    if not (isinstance(config_type, type) and issubclass(config_type, BaseModel)):
        raise TypeError(f"config_type must be a config class (a BaseUserSimulatorConfig), got {config_type!r}")
    if not (isinstance(simulator_type, type) and issubclass(simulator_type, UserSimulator)):
        raise TypeError(f"simulator_type must be a subclass of UserSimulator, got {simulator_type!r}")
    _SIMULATOR_BY_CONFIG_TYPE[config_type] = simulator_type
