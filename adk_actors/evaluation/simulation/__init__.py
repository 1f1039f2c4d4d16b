"""google-adk's ``google.adk.evaluation.simulation`` path: the user simulator's config
(``llm_backed_user_simulator``) and the provider that carries it to
``LocalEvalService`` (``user_simulator_provider``). The simulator itself is
``adk_actors.evals._simulator``; google-adk's audio simulator is not built."""
