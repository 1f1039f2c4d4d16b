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
an unknown id is a NotFoundError). The personas, their behaviours and the prompt
templates live here, one copy, for the simulator, its judge and google-adk's paths
(``adk_actors.evaluation.simulation``).

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
import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from jinja2 import TemplateSyntaxError, meta, pass_context
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from .. import models
from .._exceptions import NotFoundError
from .._types import Content, Event, LlmRequest
from ._errors import EvalError
from ._models import ConversationScenario, EvalCase, Invocation

__all__ = ["STOP_SIGNAL", "BaseUserSimulatorConfig", "LlmBackedScenarioSimulator", "LlmBackedUserSimulator",
           "LlmBackedUserSimulatorConfig", "NextUserMessage", "PreBuiltBehaviors", "StaticUserSimulator", "Status",
           "UserBehavior", "UserPersona", "UserPersonaRegistry", "UserSimulator", "get_default_persona_registry",
           "is_valid_user_simulator_template", "per_turn_quality_prompt", "persona_of", "persona_text",
           "provide_user_simulator", "register_user_simulator", "render", "simulator_config",
           "user_simulator_config_of", "user_simulator_prompt"]

logger = logging.getLogger(__name__)

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


# -- personas (google-adk's user_simulator_personas and pre_built_personas) ----------------------

class UserBehavior(BaseModel):
    """One way the simulated user acts: its ``name``, a ``description`` (given to the
    simulator and to the judge of its turns), the ``behavior_instructions`` the
    simulator follows, and the ``violation_rubrics`` the judge fails a turn on."""

    name: str = Field(description="The behaviour's name.")
    description: str = Field(description="What the behaviour is, for the simulator and its judge.")
    behavior_instructions: list[str] = Field(description="What the simulated user does, for the simulator.")
    violation_rubrics: list[str] = Field(description="What breaks the behaviour, for the judge of the turns.")

    def get_behavior_instructions_str(self) -> str:
        """The instructions, one ``  * <instruction>`` line each."""
        return "\n".join(f"  * {line}" for line in self.behavior_instructions)

    def get_violation_rubrics_str(self) -> str:
        """The violation rubrics, one ``  * <rubric>`` line each."""
        return "\n".join(f"  * {line}" for line in self.violation_rubrics)


class UserPersona(BaseModel):
    """A simulated user: its ``id`` (what registries and scenarios name it by), a
    ``description`` and its ``behaviors``, all given to the simulator and its judge."""

    id: str = Field(description="The persona's id, as registries name it.")
    description: str = Field(description="Who the persona is.")
    behaviors: Sequence[UserBehavior] = Field(description="How the persona acts.")


class UserPersonaRegistry:
    """Personas by id."""

    def __init__(self) -> None:
        self._registry: dict[str, UserPersona] = {}

    def get_persona(self, persona_id: str) -> UserPersona:
        """The persona registered as ``persona_id``; NotFoundError when there is none."""
        if persona_id not in self._registry:
            raise NotFoundError(f"no user persona {persona_id!r} is registered; the ids are "
                                f"{', '.join(self._registry) or 'none'}")
        return self._registry[persona_id]

    def register_persona(self, persona_id: str, user_persona: UserPersona) -> None:
        """Register ``user_persona`` as ``persona_id``, replacing (and logging) one
        registered before under that id."""
        if persona_id in self._registry:
            logger.info("user persona %r replaced", persona_id)
        self._registry[persona_id] = user_persona

    def get_registered_personas(self) -> list[UserPersona]:
        """The personas registered, in the order first registered."""
        return list(self._registry.values())


_STOP = "`{{ stop_signal }}`"


class PreBuiltBehaviors(enum.Enum):
    """Behaviours to build personas from."""

    # moving through the plan
    ADVANCE_DETAIL_ORIENTED = UserBehavior(
        name="Advance in the Agent succeeds",
        description="The user follows the Conversation Plan and, when asking for something new, gives at once "
                    "every detail the Agent needs for it.",
        behavior_instructions=["Once the Agent has done what you asked, ask for the next thing in the "
                               "Conversation Plan.",
                               "Do not ask again for what the Agent has already done.",
                               "With each new request, give all the details of the plan it needs."],
        violation_rubrics=["The user asks again for something the Agent already did.",
                           "The user asks for something that is neither in the Conversation Plan nor offered by "
                           "the Agent.",
                           "The user makes up a detail (a name, a number, an address) the plan does not give.",
                           "A new request leaves out a detail of the plan the Agent will need for it.",
                           "The user asks for two or more things of the plan in one message."],
    )
    ADVANCE_GOAL_ORIENTED = UserBehavior(
        name="Advance if the Agent succeeds",
        description="The user follows the Conversation Plan, stating each goal in broad terms and leaving the "
                    "Agent to ask for the details.",
        behavior_instructions=["Once the Agent has done what you asked, ask for the next thing in the "
                               "Conversation Plan.",
                               "Do not ask again for what the Agent has already done.",
                               "State only the goal of a new request, in broad terms.",
                               "Give a detail of the plan only when the Agent asks for it."],
        violation_rubrics=["The user asks again for a goal the Agent already reached.",
                           "The user gives details for a goal that was already reached.",
                           "The user asks for something that is neither in the Conversation Plan nor offered by "
                           "the Agent.",
                           "The user makes up a detail (a name, a number, an address) the plan does not give.",
                           "The user gives details of a goal before the Agent asked for them.",
                           "The user pursues two or more goals of the plan in one message."],
    )
    # answering the agent
    ANSWER_RELEVANT_ONLY = UserBehavior(
        name="Answer only relevant questions",
        description="The user answers the Agent's questions that concern the Conversation Plan, and declines "
                    "the others.",
        behavior_instructions=["Answer a question of the Agent when the Conversation Plan bears on it.",
                               "Say you do not know, or decline, when it asks something the plan does not cover."],
        violation_rubrics=["The user makes up an answer to a question the Conversation Plan does not cover.",
                           "The user ignores or declines a question the Conversation Plan answers."],
    )
    ANSWER_ALL = UserBehavior(
        name="Answer all questions",
        description="The user answers every question the Agent asks, as best they can.",
        behavior_instructions=["Answer every question of the Agent, from the Conversation Plan where it says.",
                               "Where the plan says nothing, give a short answer that fits the plan and does "
                               "not change its goals."],
        violation_rubrics=["The user leaves a question of the Agent unanswered.",
                           "An answer contradicts the Conversation Plan or adds a goal to it."],
    )
    # mistakes of the agent
    CORRECT_AGENT = UserBehavior(
        name="Correct the Agent if it makes a mistake",
        description="When the Agent gets something of the Conversation Plan wrong, the user points it out.",
        behavior_instructions=["When the Agent says or does something that contradicts the Conversation Plan, "
                               "say what is wrong and what is right."],
        violation_rubrics=["The user lets pass a statement or action of the Agent that contradicts the "
                           "Conversation Plan."],
    )
    DO_NOT_CORRECT_AGENT = UserBehavior(
        name="Do not correct the Agent",
        description="The user does not notice, or does not point out, the Agent's mistakes.",
        behavior_instructions=["Do not point out the Agent's mistakes; go on as if what it said were right."],
        violation_rubrics=["The user points out a mistake of the Agent or corrects what it said."],
    )
    TROUBLESHOOT_ONCE = UserBehavior(
        name="Troubleshoot once (if necessary)",
        description="The user helps the Agent past a failure once in the conversation, no more. A failure is "
                    "an action the Agent could not carry out, or an answer the plan expected that did not come; "
                    "answering a question of the Agent is not troubleshooting. Count the failures in the "
                    "conversation so far.",
        behavior_instructions=["The first time the Agent fails, help it: say again, or differently, what is "
                               "needed.",
                               "Help only once in the whole conversation: not again if you already did."],
        violation_rubrics=["The user ends the conversation at the Agent's first failure.",
                           f"At the Agent's second failure, the user goes on without {_STOP}.",
                           f"After the Agent's second failure, the user keeps trying without {_STOP}."],
    )
    # ending the conversation
    END_LIMITED_TROUBLESHOOTING = UserBehavior(
        name="End the conversation appropriately",
        description="The conversation is over when the Agent has confirmed that every goal of the Conversation "
                    "Plan is done, when it has handed the user over to a person, or when it has failed twice. "
                    "A failure is an action it could not carry out, or an answer the plan expected that did not "
                    "come; a question back is not a failure.",
        behavior_instructions=["End the conversation only when one of these conditions holds, never before.",
                               f"To end it, answer {_STOP} alone, with nothing else."],
        violation_rubrics=[f"The user answers {_STOP} while none of the conditions holds.",
                           f"One of the conditions holds and the user goes on without {_STOP}.",
                           f"The user's message has words besides {_STOP}."],
    )
    END_NO_TROUBLESHOOTING = UserBehavior(
        name="End the conversation appropriately",
        description="The conversation is over when the Agent has confirmed that every goal of the Conversation "
                    "Plan is done, when it has handed the user over to a person, or at its first failure. A "
                    "failure is an action it could not carry out, or an answer the plan expected that did not "
                    "come; a question back is not a failure.",
        behavior_instructions=["End the conversation only when one of these conditions holds, never before.",
                               "Do not help the Agent past a failure: end the conversation.",
                               f"To end it, answer {_STOP} alone, with nothing else."],
        violation_rubrics=[f"The user answers {_STOP} while none of the conditions holds.",
                           f"One of the conditions holds and the user goes on without {_STOP}.",
                           "The user tries to help the Agent past a failure.",
                           f"The user's message has words besides {_STOP}."],
    )
    # tone
    TONE_PROFESSIONAL = UserBehavior(
        name="Professional tone",
        description="The user writes briefly and to the point, politely, without small talk.",
        behavior_instructions=["Write short, direct messages.", "Leave out greetings, thanks and small talk "
                                                                 "unless the Agent's message calls for them."],
        violation_rubrics=["The message is chatty, or longer than it needs to be.",
                           "The message is rude, or far too formal for a chat."],
    )
    TONE_CONVERSATIONAL = UserBehavior(
        name="Conversational tone",
        description="The user writes as people chat: plainly, in full sentences, friendly.",
        behavior_instructions=["Write as a person chatting with a helpful assistant would.",
                               "Keep each message short; a friendly word is fine."],
        violation_rubrics=["The message reads like a form, a command line or a machine.",
                           "The message is rude, or far longer than a chat message."],
    )


class _PreBuiltPersonas(enum.Enum):
    """The built-in personas (see the module)."""

    EXPERT = UserPersona(
        id="EXPERT",
        description="Knows what they want and uses the Agent as a tool to get it done quickly; has little "
                    "patience for small talk or needless questions.",
        behaviors=[PreBuiltBehaviors.ADVANCE_DETAIL_ORIENTED.value, PreBuiltBehaviors.ANSWER_RELEVANT_ONLY.value,
                   PreBuiltBehaviors.CORRECT_AGENT.value, PreBuiltBehaviors.TROUBLESHOOT_ONCE.value,
                   PreBuiltBehaviors.END_LIMITED_TROUBLESHOOTING.value, PreBuiltBehaviors.TONE_PROFESSIONAL.value],
    )
    NOVICE = UserPersona(
        id="NOVICE",
        description="Has a problem they only half understand and leans on the Agent to guide them; patient "
                    "with its questions, but unable to spot or fix its mistakes.",
        behaviors=[PreBuiltBehaviors.ADVANCE_GOAL_ORIENTED.value, PreBuiltBehaviors.DO_NOT_CORRECT_AGENT.value,
                   PreBuiltBehaviors.ANSWER_ALL.value, PreBuiltBehaviors.END_NO_TROUBLESHOOTING.value,
                   PreBuiltBehaviors.TONE_CONVERSATIONAL.value],
    )
    EVALUATOR = UserPersona(
        id="EVALUATOR",
        description="Checks whether the Agent can carry out the goals of the Conversation Plan.",
        behaviors=[PreBuiltBehaviors.ADVANCE_DETAIL_ORIENTED.value, PreBuiltBehaviors.ANSWER_RELEVANT_ONLY.value,
                   PreBuiltBehaviors.END_NO_TROUBLESHOOTING.value, PreBuiltBehaviors.DO_NOT_CORRECT_AGENT.value,
                   PreBuiltBehaviors.TONE_CONVERSATIONAL.value],
    )


def get_default_persona_registry() -> UserPersonaRegistry:
    """A new registry of the built-in personas: EXPERT, NOVICE, EVALUATOR."""
    registry = UserPersonaRegistry()
    for persona in _PreBuiltPersonas:
        registry.register_persona(persona.value.id, persona.value)
    return registry


def persona_of(given: Any) -> UserPersona | None:
    """A scenario's ``user_persona`` as a :class:`UserPersona`, in order: None as None;
    a persona as it is; an id (a str) as the default registry's persona of that id
    (NotFoundError when there is none, as google-adk's scenario raises); a dict of a
    persona's fields as that persona; any other dict as a persona whose description
    is its JSON, with no behaviour."""
    if given is None or isinstance(given, UserPersona):
        return given
    if isinstance(given, str):
        return get_default_persona_registry().get_persona(given)
    if isinstance(given, BaseModel):
        given = given.model_dump()
    try:
        return UserPersona.model_validate(given)
    except ValidationError:
        return UserPersona(id="", description=json.dumps(given, ensure_ascii=False, indent=2, default=str),
                           behaviors=[])


def persona_text(persona: Any) -> str:
    """The scenario's persona (see :func:`persona_of`) as indented JSON; "" for none."""
    found = persona_of(persona)
    return "" if found is None else json.dumps(found.model_dump(mode="json"), ensure_ascii=False, indent=2)


# -- the simulator's prompt (google-adk's llm_backed_user_simulator_prompts) --------------------

_DEFAULT_TEMPLATE = """You play a person talking with an AI agent, to test the agent. Write the person's next \
message, and nothing else: no quotes, no name before it.

What the person wants, step by step:
<plan>
{{ conversation_plan }}
</plan>

The conversation so far:
<conversation>
{{ conversation_history }}
</conversation>

Follow the plan in order, one step at a time; answer the agent's questions as the person would; do not make up \
wants that are not in the plan. When every step of the plan is done, or the agent cannot go on, answer only \
{{ stop_signal }}."""

_PERSONA_TEMPLATE = """You play a person talking with an AI agent, to test the agent. Write the person's next \
message, and nothing else: no quotes, no name before it. Answer only {{ stop_signal }} to end the conversation.

Who the person is:
<persona>
{{ persona.description }}
</persona>

How the person acts:
{% for b in persona.behaviors %}
## {{ b.name | render_string_filter }}
{{ b.description | render_string_filter }}
What to do:
{{ b.get_behavior_instructions_str() | render_string_filter }}
{% endfor %}

What the person wants, step by step:
<plan>
{{ conversation_plan }}
</plan>

The conversation so far:
<conversation>
{{ conversation_history }}
</conversation>

Where the plan and the persona disagree, the plan wins. Do not make up wants or details the plan does not give."""

#: the placeholders custom instructions need when the scenario has a persona
_PERSONA_REQUIRED = ["stop_signal", "conversation_plan", "conversation_history", "persona"]


_QUALITY_TEMPLATE = """You review a user simulator: a model that plays a person talking with an AI agent, to \
test the agent. It was given a plan (the person's goals, in order, with the details it may use) and wrote the \
person's next message. Say whether that message is a good next step. The conversation is over only when the \
person says {{ stop_signal }}.

<plan>
{{ conversation_plan }}
</plan>
{% if persona %}
Who the person is (where this and the plan disagree, the plan wins):
<persona>
{{ persona.description }}
</persona>
{% endif %}
<conversation_so_far>
{{ conversation_history }}
</conversation_so_far>

<next_user_message>
{{ generated_user_response }}
</next_user_message>

The message fails when any of these holds:
- it leaves the plan: it repeats a goal already done, invents a goal or a detail the plan does not give, or \
follows the agent onto another topic;
- it ends the conversation ({{ stop_signal }}) while the plan is unfinished and the agent has not failed, or goes \
on when the plan is done, when the agent handed the person to a human, or after the agent's second mistake;
- it hands over details before the agent asked for them, or tries two goals at once;
- it ignores a question of the agent, or makes up an answer the plan does not give;
{% if not persona %}- it lets an agent's mistake or risky assumption pass;
{% endif %}- it does not sound like a person (stiff, jargon, too formal, far too long){% if persona %} or breaks \
the persona{% endif %}.
{% if persona %}{% for b in persona.behaviors %}
## Criteria: {{ b.name | render_string_filter }}
{{ b.description | render_string_filter }}
It fails when:
{{ b.get_violation_rubrics_str() | render_string_filter }}
{% endfor %}{% endif %}
Otherwise it passes.

Answer with JSON alone: {"criteria": [{"name": "<what you checked>", "reasoning": "<why>", "passes": true or \
false}, ...], "is_valid": true or false}"""


def per_turn_quality_prompt(conversation_plan: str, conversation_history: str, generated_user_response: str,
                            stop_signal: str, user_persona: Any = None) -> str:
    """The prompt that asks a judge whether a simulated user's message keeps to its
    plan (and persona, with each behaviour's violation rubrics), for the verdict
    ``{"is_valid": ...}`` the per-turn metric reads; rendered by :func:`render`."""
    values: dict[str, Any] = {"conversation_plan": conversation_plan, "conversation_history": conversation_history,
                              "generated_user_response": generated_user_response, "stop_signal": stop_signal,
                              "persona": persona_of(user_persona)}
    return render(_QUALITY_TEMPLATE, values)


def render(template: str, values: dict[str, Any]) -> str:
    """``template`` rendered by a sandboxed jinja environment with ``values``; a text
    passed through ``render_string_filter`` (a persona's) is rendered with the same
    values first, so it may hold ``{{ stop_signal }}``."""
    environment = SandboxedEnvironment(autoescape=False)

    @pass_context
    def render_string_filter(context: Any, text: str) -> str:
        return environment.from_string(text).render(context.get_all()) if text else ""

    environment.filters["render_string_filter"] = render_string_filter
    return environment.from_string(template).render(values)


def is_valid_user_simulator_template(template_str: str, required_params: list[str]) -> bool:
    """Whether ``template_str`` is a jinja template that uses every name of
    ``required_params``; False for one that does not parse."""
    try:
        used = meta.find_undeclared_variables(SandboxedEnvironment().parse(template_str))
    except TemplateSyntaxError:
        return False
    return all(name in used for name in required_params)


def user_simulator_prompt(conversation_plan: str, conversation_history: str, stop_signal: str,
                          custom_instructions: str | None = None, user_persona: Any = None) -> str:
    """The simulator's prompt, in order: the template (ours without a persona, ours
    with its persona's description and behaviours, else ``custom_instructions``,
    which with a persona must use ``stop_signal``, ``conversation_plan``,
    ``conversation_history`` and ``persona``: EvalError, a ValueError, when it does
    not), rendered with those values (:func:`render`)."""
    persona = persona_of(user_persona)
    if custom_instructions is None:
        template = _DEFAULT_TEMPLATE if persona is None else _PERSONA_TEMPLATE
    else:
        if persona is not None and not is_valid_user_simulator_template(custom_instructions, _PERSONA_REQUIRED):
            raise EvalError("custom_instructions for a scenario with a persona must use the jinja placeholders "
                            "{{ stop_signal }}, {{ conversation_plan }}, {{ conversation_history }} and "
                            "{{ persona }} (or its fields, {{ persona.description }} ...)")
        template = custom_instructions
    values: dict[str, Any] = {"stop_signal": stop_signal, "conversation_plan": conversation_plan,
                              "conversation_history": conversation_history}
    if persona is not None:
        values["persona"] = persona
    return render(template, values)


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
