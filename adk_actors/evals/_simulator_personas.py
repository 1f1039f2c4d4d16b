"""The simulated user's personas (google-adk 2.13's ``user_simulator_personas`` and
``pre_built_personas``): a :class:`UserBehavior` (what the user does, and what breaks
it for the judge of its turns), a :class:`UserPersona` (an id, a description, its
behaviours), a :class:`UserPersonaRegistry` of personas by id, the behaviours to build
personas from (:class:`PreBuiltBehaviors`) and the built-in personas (``EXPERT``,
``NOVICE``, ``EVALUATOR``: :func:`get_default_persona_registry`).

A scenario's ``user_persona`` is read by :func:`persona_of` (a persona, a built-in's
id, or a dict) for the simulator's prompt and its judge's (``_simulator_prompts``);
one copy, also behind google-adk's paths (``adk_actors.evaluation.simulation``).
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from .._exceptions import NotFoundError

__all__ = ["PreBuiltBehaviors", "UserBehavior", "UserPersona", "UserPersonaRegistry", "get_default_persona_registry",
           "persona_of", "persona_text"]

logger = logging.getLogger(__name__)

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
