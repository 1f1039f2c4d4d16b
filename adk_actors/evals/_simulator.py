"""The user simulator: a model plays the user of a ``conversation_scenario`` case
(google-adk 2.13's ``LlmBackedUserSimulator``, with its config and its rules).

An eval config's ``user_simulator_config`` (``type`` ``llm_backed``, the default):
``model`` (default ``gemini-2.5-flash``, resolved by name from our model registry),
``model_configuration`` (the request's config), ``max_allowed_invocations`` (default
20, the first message included; -1: no limit), ``custom_instructions`` (the prompt,
with ``{{ stop_signal }}``, ``{{ conversation_plan }}`` and ``{{ conversation_history
}}`` in it, and ``{{ persona }}`` or ``{{ persona.<field> }}`` when the scenario has a
persona), ``include_function_calls`` (tool calls and answers in the history).

For each next message of the user, in order:

1. past the invocation limit, the conversation ends;
2. the first message is the scenario's ``starting_prompt``, with no model call;
3. after it, the model is asked with the plan, the persona, the conversation so far
   (``author: text``, a paragraph each) and the stop signal ``</finished>``; its text
   (thoughts left out) is the next message, unless it holds the stop signal (any
   case), which ends the conversation;
4. an answer with no text, or an error answer, is a :class:`EvalError` (the run of
   the case fails, as google-adk's ``RuntimeError`` fails it).

Any other ``type`` (google-adk's audio simulator, a custom one) is an EvalError.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from .._types import Content, LlmRequest
from ._errors import EvalError
from ._models import ConversationScenario

__all__ = ["STOP_SIGNAL", "LlmBackedUserSimulator", "LlmBackedUserSimulatorConfig", "persona_text", "simulator_config"]

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


def persona_text(persona: dict[str, Any] | str | None) -> str:
    if persona is None:
        return ""
    return persona if isinstance(persona, str) else json.dumps(persona, ensure_ascii=False, indent=2)


def _default_prompt(plan: str, history: str, persona: str) -> str:
    lines = [
        "You play a person talking with an AI agent, to test the agent. Write the person's next message, "
        "and nothing else: no quotes, no name before it.",
        f"What the person wants, step by step:\n<plan>\n{plan}\n</plan>",
    ]
    if persona:
        lines.append(f"Who the person is and how they talk:\n<persona>\n{persona}\n</persona>")
    lines += [
        f"The conversation so far:\n<conversation>\n{history}\n</conversation>",
        "Follow the plan in order, one step at a time; answer the agent's questions as the person would; do not "
        "make up wants that are not in the plan. When every step of the plan is done, or the agent cannot go "
        f"on, answer only {STOP_SIGNAL}.",
    ]
    return "\n\n".join(lines)


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
        persona = self.scenario.user_persona
        custom = self.config.custom_instructions
        if custom is None:
            return _default_prompt(self.scenario.conversation_plan, history, persona_text(persona))
        values = {"stop_signal": STOP_SIGNAL, "conversation_plan": self.scenario.conversation_plan,
                  "conversation_history": history}

        def fill(match: re.Match[str]) -> str:
            name, attribute = match.group(1), match.group(2)
            if name == "persona":
                if attribute and isinstance(persona, dict):
                    return str(persona.get(attribute, ""))
                return persona_text(persona)
            return values.get(name, match.group(0))

        return _PLACEHOLDER.sub(fill, custom)

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
