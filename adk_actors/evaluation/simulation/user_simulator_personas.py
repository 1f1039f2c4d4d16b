"""google-adk's ``google.adk.evaluation.simulation.user_simulator_personas`` path: who
the simulated user is (:class:`UserPersona`), made of behaviours
(:class:`UserBehavior`), and a registry of personas by id
(:class:`UserPersonaRegistry`; the built-in ones: ``pre_built_personas``). They live
in :mod:`adk_actors.evals._simulator`, which the user simulator and its judge read.

A behaviour's texts go into prompts as jinja text: they may hold ``{{ stop_signal }}``
and the other placeholders of the prompt they are put in."""

from ...evals._simulator import UserBehavior, UserPersona, UserPersonaRegistry

__all__ = ["UserBehavior", "UserPersona", "UserPersonaRegistry"]
