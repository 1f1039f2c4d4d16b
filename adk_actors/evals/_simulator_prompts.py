"""The user simulator's prompts (google-adk 2.13's ``llm_backed_user_simulator_prompts``):
the one that asks a model for the simulated user's next message
(:func:`user_simulator_prompt`: ours without a persona, ours with the persona's
description and behaviours, or the eval's ``custom_instructions``) and the one that
asks a judge whether such a message keeps to the plan (:func:`per_turn_quality_prompt`,
for ``per_turn_user_simulator_quality_v1``). Both are jinja templates rendered in a
sandbox (:func:`render`); a persona's texts may hold ``{{ stop_signal }}`` too.
"""

from __future__ import annotations

from typing import Any

from jinja2 import TemplateSyntaxError, meta, pass_context
from jinja2.sandbox import SandboxedEnvironment

from ._errors import EvalError
from ._simulator_personas import persona_of

__all__ = ["is_valid_user_simulator_template", "per_turn_quality_prompt", "render", "user_simulator_prompt"]

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
