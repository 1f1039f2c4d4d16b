"""google-adk's ``google.adk.evaluation.simulation.user_simulator`` path: the interface
of a user simulator, which says the next message of the user an agent is evaluated
with (:class:`UserSimulator`), its answer (:class:`NextUserMessage`, with a
:class:`Status`) and the base of its configs (:class:`BaseUserSimulatorConfig`).

:func:`register_user_simulator` maps a config type to the simulator class that plays
it. Our eval runs (``AgentEvaluator``, ``LocalEvalService``, the
``EvaluationGenerator``) pick a ``conversation_scenario`` case's simulator by that
map, from the type of the eval's simulator config (``UserSimulatorProvider``'s, or the
eval config's ``user_simulator_config``), so a simulator of your own, registered with
its own config type, plays the cases of an eval given an instance of that type. All
of it lives in ``adk_actors.evals._simulator``.
"""

from __future__ import annotations

from ...evals._simulator import (
    _SIMULATOR_BY_CONFIG_TYPE as _SIMULATOR_BY_CONFIG_TYPE,  # google-adk's path has it
)
from ...evals._simulator import (
    BaseUserSimulatorConfig,
    NextUserMessage,
    Status,
    UserSimulator,
    register_user_simulator,
)

__all__ = ["BaseUserSimulatorConfig", "NextUserMessage", "Status", "UserSimulator", "register_user_simulator"]
