"""google-adk's ``google.adk.evaluation.simulation`` path: the user simulators
(``user_simulator``'s base and status types, ``static_user_simulator``,
``llm_backed_user_simulator`` and its config, on ``adk_actors.evals._simulator``) and
the provider that carries a config to ``LocalEvalService`` (``user_simulator_provider``).
Not built: google-adk's audio simulator, personas and ``register_user_simulator`` (the
service runs the LLM-backed simulator only)."""
