"""google-adk's ``google.adk.evaluation.simulation.per_turn_user_simulator_quality_prompts``
path: the prompt that asks a judge whether a simulated user's message keeps to its
conversation plan (and persona), from :mod:`adk_actors.evals._simulator`.

The template is jinja, with ``conversation_plan``, ``conversation_history``,
``generated_user_response``, ``stop_signal`` and, when there is a persona,
``persona`` (its description, and each behaviour's ``name``, ``description`` and
``get_violation_rubrics_str()``). It asks for the JSON verdict our
``per_turn_user_simulator_quality_v1`` reads: ``{"criteria": [...], "is_valid":
true|false}``."""

from __future__ import annotations

from ...evals._simulator import UserPersona, per_turn_quality_prompt

__all__ = ["get_per_turn_user_simulator_quality_prompt"]


def get_per_turn_user_simulator_quality_prompt(conversation_plan: str, conversation_history: str,
                                               generated_user_response: str, stop_signal: str,
                                               user_persona: UserPersona | None = None) -> str:
    """The judge's prompt for one simulated message (see the module)."""
    return per_turn_quality_prompt(conversation_plan, conversation_history, generated_user_response, stop_signal,
                                   user_persona)
