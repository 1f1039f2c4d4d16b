"""google-adk's ``google.adk.evaluation.simulation`` path: the user simulators
(``user_simulator``'s base and status types, ``static_user_simulator``,
``llm_backed_user_simulator`` and its config, on ``adk_actors.evals._simulator``) and
the provider that carries a config to ``LocalEvalService`` (``user_simulator_provider``).
A simulator of the user's own (``register_user_simulator``) plays the scenario cases
of our eval runs given its config. Not built: google-adk's audio simulator."""
