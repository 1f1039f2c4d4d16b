"""The user simulator: a model plays the user of a ``conversation_scenario`` case
(google-adk 2.13's ``LlmBackedUserSimulator``, with its config and its rules).

An eval config's ``user_simulator_config`` (``type`` ``llm_backed``, the default):
``model`` (default ``gemini-2.5-flash``, resolved by name from our model registry),
``model_configuration`` (the request's config), ``max_allowed_invocations`` (default
20, the first message included; -1: no limit), ``custom_instructions`` (the prompt, a
jinja template with ``{{ stop_signal }}``, ``{{ conversation_plan }}`` and ``{{
conversation_history }}`` in it, and ``{{ persona }}`` or ``{{ persona.<field> }}`` when
the scenario has a persona), ``include_function_calls`` (tool calls and answers in the
history).

The scenario's ``user_persona`` is google-adk's: a persona's fields, or the id of a
built-in persona (``EXPERT``, ``NOVICE``, ``EVALUATOR``: :func:`get_default_persona_registry`;
an unknown id is a NotFoundError). The personas and their behaviours
(``_simulator_personas``) and the prompt templates (``_simulator_prompts``) are one
copy each, for the simulator, its judge and google-adk's paths
(``adk_actors.evaluation.simulation``); this module re-exports their names.

For each next message of the user, in order:

1. past the invocation limit, the conversation ends;
2. the first message is the scenario's ``starting_prompt``, with no model call;
3. after it, the model is asked (:func:`user_simulator_prompt`) with the plan, the
   persona's description and behaviours, the conversation so far (``author: text``, a
   paragraph each) and the stop signal ``</finished>``; its text
   (thoughts left out) is the next message, unless it holds the stop signal (any
   case), which ends the conversation;
4. an answer with no text, or an error answer, is a :class:`EvalError` (the run of
   the case fails, as google-adk's ``RuntimeError`` fails it).

Any other ``type`` in a dict (google-adk's audio simulator) is an EvalError.

Which simulator plays a case (:func:`provide_user_simulator`, for every eval run of
ours: ``AgentEvaluator``, ``LocalEvalService``, the ``EvaluationGenerator``): a case
with a ``conversation`` is replayed by a :class:`StaticUserSimulator`; a
``conversation_scenario`` case by the :class:`UserSimulator` class registered
(:func:`register_user_simulator`) for the type of the eval's simulator config (the
llm-backed one, :class:`LlmBackedScenarioSimulator`, for an
:class:`LlmBackedUserSimulatorConfig` or none), so a simulator of the user's own, with
a config type of its own, plays the cases of an eval given that config.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from .. import models
from .._types import Content, Event, LlmRequest
from ._errors import EvalError
from ._models import ConversationScenario, EvalCase, Invocation
from ._simulator_personas import (
    PreBuiltBehaviors,
    UserBehavior,
    UserPersona,
    UserPersonaRegistry,
    get_default_persona_registry,
    persona_of,
    persona_text,
)
from ._simulator_prompts import (
    is_valid_user_simulator_template,
    per_turn_quality_prompt,
    render,
    user_simulator_prompt,
)

__all__ = ["STOP_SIGNAL", "BaseUserSimulatorConfig", "LlmBackedScenarioSimulator", "LlmBackedUserSimulator",
           "LlmBackedUserSimulatorConfig", "NextUserMessage", "PreBuiltBehaviors", "StaticUserSimulator", "Status",
           "UserBehavior", "UserPersona", "UserPersonaRegistry", "UserSimulator", "get_default_persona_registry",
           "is_valid_user_simulator_template", "per_turn_quality_prompt", "persona_of", "persona_text",
           "provide_user_simulator", "register_user_simulator", "render", "simulator_config",
           "user_simulator_config_of", "user_simulator_prompt"]

STOP_SIGNAL = "</finished>"
_PLACEHOLDER = re.compile(r"{{\s*([a-z_]+)(?:\.([a-z_]+))?\s*}}")
_REQUIRED = ("stop_signal", "conversation_plan", "conversation_history")


class LlmBackedUserSimulatorConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    type: Literal["llm_backed"] = "llm_backed"
    model: str = "gemini-2.5-flash"
    model_configuration: dict[str, Any] = Field(default_factory=dict)
    max_allowed_invocations: int = 20
    custom_instructions: str | None = None
    include_function_calls: bool = False


def simulator_config(given: dict[str, Any] | None) -> LlmBackedUserSimulatorConfig:
    """The config of an eval config's ``user_simulator_config`` (none: the defaults);
    EvalError when it is not a valid llm_backed one."""
    body = dict(given or {})
    if body.get("type") not in (None, "llm_backed"):
        raise EvalError(f"user simulator type {body['type']!r} is not offered here; the type is 'llm_backed'")
    try:
        config = LlmBackedUserSimulatorConfig.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise EvalError(f"user_simulator_config is not valid ({where}: {first['msg']})") from None
    if config.custom_instructions is not None:
        named = {match.group(1) for match in _PLACEHOLDER.finditer(config.custom_instructions)}
        missing = [name for name in _REQUIRED if name not in named]
        if missing:
            raise EvalError("custom_instructions must hold the placeholders {{ stop_signal }}, "
                            "{{ conversation_plan }} and {{ conversation_history }}; missing: " + ", ".join(missing))
    return config


class LlmBackedUserSimulator:
    """The simulated user of one case (see the module); ``resolve`` turns a model's
    name into a model."""

    def __init__(self, config: LlmBackedUserSimulatorConfig, scenario: ConversationScenario,
                 resolve: Callable[[str], Any]) -> None:
        self.config = config
        self.scenario = scenario
        self._model = resolve(config.model)
        self._count = 0

    def _history(self, turns: list[tuple[str, Content]]) -> str:
        said = []
        for author, content in turns:
            for part in content.parts:
                if part.text and not part.thought:
                    said.append(f"{author}: {part.text}")
                elif self.config.include_function_calls and part.function_call is not None:
                    said.append(f"{author} called tool {part.function_call.name!r} with args: "
                                f"{dict(part.function_call.args)}")
                elif self.config.include_function_calls and part.function_response is not None:
                    said.append(f"Tool {part.function_response.name!r} returned: "
                                f"{dict(part.function_response.response)}")
        return "\n\n".join(said)

    def _prompt(self, history: str) -> str:
        return user_simulator_prompt(self.scenario.conversation_plan, history, STOP_SIGNAL,
                                     self.config.custom_instructions, self.scenario.user_persona)

    def limit_reached(self) -> bool:
        """Whether the user already spoke ``max_allowed_invocations`` times (-1: no limit)."""
        return 0 <= self.config.max_allowed_invocations <= self._count

    async def next_message(self, turns: list[tuple[str, Content]]) -> Content | None:
        """The user's next message after ``turns`` (author, content), or None when the
        conversation is over (see the module)."""
        if self.limit_reached():
            return None
        if self._count == 0:
            self._count += 1
            return Content.user(self.scenario.starting_prompt)
        request = LlmRequest(model=self.config.model, contents=[Content.user(self._prompt(self._history(turns)))],
                             config=dict(self.config.model_configuration))
        text, error = "", ""
        async for response in self._model.generate(request, stream=False):
            if response.partial:
                continue
            if response.error_code:
                error = f"the model answered an error ({response.error_code})"
                break
            if response.content is not None:
                text += "".join(part.text for part in response.content.parts if part.text and not part.thought)
        self._count += 1
        if text and STOP_SIGNAL in text.lower():
            return None
        if not text:
            raise EvalError(f"the user simulator gave no message: {error or 'its model answered no text'}")
        return Content.user(text)


# -- which simulator plays a case (google-adk's user_simulator and user_simulator_provider) -------

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


class NextUserMessage(BaseModel):
    """The simulator's answer: a ``status``, and the ``user_message`` to send to the
    agent. A validation error (a ValueError) when there is a message and the status
    is not ``SUCCESS``, or none and it is."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid",
                              arbitrary_types_allowed=True)

    status: Status
    user_message: Content | None = None

    @model_validator(mode="after")
    def _message_iff_success(self) -> NextUserMessage:
        if (self.status == Status.SUCCESS) != (self.user_message is not None):
            raise ValueError("user_message is given exactly when the status is SUCCESS")
        return self


class UserSimulator:
    """A user simulator, one per eval case: it says the user's next message after the
    conversation so far. The eval runs (``AgentEvaluator``, ``LocalEvalService``, the
    ``EvaluationGenerator``) send each ``SUCCESS`` message as a turn and stop at the
    first answer of another status."""

    def __init__(self, config: BaseModel | dict[str, Any], config_type: type[BaseModel]) -> None:
        """Keep ``config`` read as ``config_type`` (its fields, as given); a ValueError
        when they are not valid for that type."""
        given = config.model_dump() if isinstance(config, BaseModel) else dict(config)
        try:
            self._config = config_type.model_validate(given)
        except ValidationError as exc:
            raise ValueError(f"the config is not a valid {config_type.__name__}: {exc.errors()[0]['msg']}") from None

    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """The user's next message after the conversation so far (``events``: each
        turn's user message as an event of author ``user``, then the agent's events);
        NotImplementedError here."""
        raise NotImplementedError

    def get_simulation_evaluator(self) -> Any:
        """An evaluator of whether the simulation went well, or None;
        NotImplementedError here."""
        raise NotImplementedError


class StaticUserSimulator(UserSimulator):
    """The user of a case with a fixed ``conversation``
    (``StaticUserSimulator(static_conversation=[...])``)."""

    def __init__(self, *, static_conversation: list[Invocation]) -> None:
        super().__init__(BaseUserSimulatorConfig(), config_type=BaseUserSimulatorConfig)
        self.static_conversation = static_conversation
        self.invocation_idx = 0

    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """The next invocation's ``user_content`` (``SUCCESS``), whatever ``events``
        holds; after the last one, ``STOP_SIGNAL_DETECTED`` with no message, on every
        later call too."""
        if self.invocation_idx >= len(self.static_conversation):
            return NextUserMessage(status=Status.STOP_SIGNAL_DETECTED)
        message = self.static_conversation[self.invocation_idx].user_content
        self.invocation_idx += 1
        return NextUserMessage(status=Status.SUCCESS, user_message=message)

    def get_simulation_evaluator(self) -> Any:
        """None: a fixed conversation needs no evaluator of its own."""
        return None


class LlmBackedScenarioSimulator(UserSimulator):
    """A model plays the user of one ``conversation_scenario``
    (:class:`LlmBackedUserSimulator` behind google-adk's interface)."""

    def __init__(self, *, config: BaseModel | dict[str, Any], conversation_scenario: ConversationScenario) -> None:
        """Read ``config`` (its fields, as given) as an llm-backed simulator's config
        (an EvalError, a ValueError, for another ``type``, bad fields, or custom
        instructions without the placeholders the simulator fills), then resolve its
        model by name from our model registry (that registry's error when it cannot)."""
        given = config.model_dump(exclude_none=True) if isinstance(config, BaseModel) else config
        checked = simulator_config(given)
        super().__init__(checked, config_type=LlmBackedUserSimulatorConfig)
        self._simulator = LlmBackedUserSimulator(checked, conversation_scenario, models.resolve_model)

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
        turns = [(event.author, event.content) for event in events if event.content is not None]
        message = await self._simulator.next_message(turns)
        if message is None:
            return NextUserMessage(status=Status.STOP_SIGNAL_DETECTED)
        return NextUserMessage(status=Status.SUCCESS, user_message=message)

    def get_simulation_evaluator(self) -> Any:
        """NotImplementedError, as in google-adk: the simulator's quality is the
        ``per_turn_user_simulator_quality_v1`` metric."""
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


register_user_simulator(LlmBackedUserSimulatorConfig, LlmBackedScenarioSimulator)


def user_simulator_config_of(given: Any) -> BaseModel:
    """The config the user simulator of an eval is made from, in order: a config
    object whose type has a registered simulator (other than the llm-backed one) as
    it is; None, a dict, or an llm-backed config read as an llm-backed config
    (:func:`simulator_config`: an EvalError, a ValueError, for another ``type``, bad
    fields or custom instructions without their placeholders); any other config
    object by its fields, the same way."""
    if (isinstance(given, BaseModel) and type(given) in _SIMULATOR_BY_CONFIG_TYPE
            and not isinstance(given, LlmBackedUserSimulatorConfig)):
        return given
    if given is None or isinstance(given, dict):
        return simulator_config(given)
    if isinstance(given, BaseModel):
        return simulator_config(given.model_dump(exclude_none=True))
    raise EvalError(f"user_simulator_config must be a config or a dict, got {type(given).__name__}")


def provide_user_simulator(config: BaseModel | None, case: EvalCase) -> UserSimulator:
    """The simulator that plays ``case``, in order: a :class:`StaticUserSimulator` of
    its ``conversation`` when it has one; a ValueError when it has no
    ``conversation_scenario`` either; else the class registered for the type of
    ``config`` (None: the llm-backed defaults), made with ``config=`` and
    ``conversation_scenario=`` (a ValueError when none is registered)."""
    if case.conversation is not None:
        return StaticUserSimulator(static_conversation=list(case.conversation))
    if case.conversation_scenario is None:
        raise ValueError(f"eval case {case.eval_id!r} has neither a conversation nor a "
                         "conversation_scenario: give exactly one")
    chosen = config if config is not None else simulator_config(None)
    simulator = _SIMULATOR_BY_CONFIG_TYPE.get(type(chosen))
    if simulator is None:
        registered = sorted(kind.__name__ for kind in _SIMULATOR_BY_CONFIG_TYPE)
        raise ValueError(f"no user simulator is registered for {type(chosen).__name__}; "
                         f"register one with register_user_simulator() (registered: {', '.join(registered)})")
    return simulator(config=chosen, conversation_scenario=case.conversation_scenario)  # type: ignore[call-arg]
