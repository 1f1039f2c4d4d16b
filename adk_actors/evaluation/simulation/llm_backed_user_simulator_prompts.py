"""google-adk's ``google.adk.evaluation.simulation.llm_backed_user_simulator_prompts``
path: the user simulator's prompt, as our simulator writes it
(:mod:`adk_actors.evals._simulator`).

Templates are jinja, rendered in a sandbox, with ``stop_signal``,
``conversation_plan``, ``conversation_history`` and, when there is a persona,
``persona`` (a :class:`UserPersona`: ``persona.description``, ``persona.behaviors``,
each behaviour's ``name``, ``description`` and ``get_behavior_instructions_str()``).
A persona's texts may hold the same placeholders (the ``render_string_filter``
filter renders them)."""

from __future__ import annotations

from ...evals._simulator import UserPersona, is_valid_user_simulator_template, user_simulator_prompt

__all__ = ["get_llm_backed_user_simulator_prompt", "is_valid_user_simulator_template"]


def get_llm_backed_user_simulator_prompt(conversation_plan: str, conversation_history: str, stop_signal: str,
                                         custom_instructions: str | None = None,
                                         user_persona: UserPersona | None = None) -> str:
    """The simulator's prompt, in order: its template (ours, ours with the persona's
    description and behaviours, or ``custom_instructions``, which with a persona must
    use all four placeholders: a ValueError, an ``EvalError``, when it does not), then
    the values put in it."""
    return user_simulator_prompt(conversation_plan, conversation_history, stop_signal, custom_instructions,
                                 user_persona)
