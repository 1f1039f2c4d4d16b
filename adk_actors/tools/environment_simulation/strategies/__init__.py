"""The ways a simulated call with no injected answer is answered (google-adk's
``environment_simulation.strategies``): :mod:`.base` and :mod:`.tool_spec_mock_strategy`."""
