"""google-adk's ``google.adk.evaluation.simulation.pre_built_personas`` path: the
built-in behaviours of a simulated user (:class:`PreBuiltBehaviors`) and the registry
of the three built-in personas, ``EXPERT``, ``NOVICE`` and ``EVALUATOR``
(:func:`get_default_persona_registry`), from :mod:`adk_actors.evals._simulator`.

The members, the behaviours' names, the persona ids and which behaviours each persona
has are google-adk's (code and saved eval sets refer to them); the descriptions,
instructions and violation rubrics are our own words."""

from ...evals._simulator import PreBuiltBehaviors, get_default_persona_registry

__all__ = ["PreBuiltBehaviors", "get_default_persona_registry"]
