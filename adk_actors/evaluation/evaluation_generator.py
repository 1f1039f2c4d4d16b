"""google-adk's ``google.adk.evaluation.evaluation_generator`` path: :class:`EvalCaseResponses`,
a case and the invocations of each of its runs, and :class:`EvaluationGenerator`'s
``generate_responses``, which makes them by running an agent module on an eval set in
this process (as :class:`~adk_actors.evals.AgentEvaluator` runs one; live mode and
google-adk's session-file helpers are not offered), and its
``convert_events_to_eval_invocations``, a session's events as the invocations an eval
records (``adk_actors.evals.invocations_of``)."""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel

from .._types import Event
from ..evals import AgentEvaluator, AppDetails, EvalCase, EvalSet, Invocation, invocations_of
from ..sessions import InMemorySessionService
from .local_eval_service import _simulator_of

__all__ = ["EvalCaseResponses", "EvaluationGenerator"]


class EvalCaseResponses(BaseModel):
    """A case, and per run of it the invocations the agent made."""

    eval_case: EvalCase
    responses: list[list[Invocation]]


class EvaluationGenerator:
    """Runs an agent module on eval sets (see the module)."""

    @staticmethod
    async def generate_responses(eval_set: EvalSet, agent_module_path: str, repeat_num: int = 3,
                                 agent_name: str | None = None,
                                 user_simulator_config: Any = None) -> list[EvalCaseResponses]:
        """Each case of ``eval_set``, in order, run ``repeat_num`` times, one run after
        the other: the agent of ``agent_module_path`` found as AgentEvaluator finds it
        (its ``agent`` member's ``root_agent`` or ``get_agent_async()``, its ``app``'s
        plugins; ``agent_name`` a sub-agent: ValueError when there is none), the
        module's ``agent.reset_data()`` called (when it has one) before each run, each
        run in a session service of its own, a ``conversation_scenario`` case played by
        the user simulator of ``user_simulator_config`` (None: the defaults; an
        ``EvalError`` for one that is not valid). The first run that raises stops it
        all with a RuntimeError naming the case and the error."""
        simulated = _simulator_of(user_simulator_config)
        agent, app = await AgentEvaluator._get_agent_for_eval(agent_module_path, agent_name)
        holder = getattr(importlib.import_module(agent_module_path), "agent", None)
        reset = getattr(holder, "reset_data", None)
        if reset is not None and not callable(reset):
            raise TypeError("agent.reset_data must be callable when given")
        results = []
        for case in eval_set.eval_cases:
            responses = []
            for _ in range(repeat_num):
                if reset is not None:
                    reset()
                run = await AgentEvaluator._infer(agent, app, case, InMemorySessionService(), None, simulated,
                                                  quiet=True)
                if run.actual is None:
                    raise RuntimeError(f"eval case {case.eval_id!r} failed to run: {run.error}")
                responses.append(run.actual)
            results.append(EvalCaseResponses(eval_case=case, responses=responses))
        return results

    @staticmethod
    def convert_events_to_eval_invocations(
            events: list[Event], app_details_per_invocation: dict[str, AppDetails] | None = None,
            durations_per_invocation: dict[str, float] | None = None, *,
            model_durations_per_invocation: dict[str, float] | None = None,
            tool_durations_per_invocation: dict[str, float] | None = None) -> list[Invocation]:
        """``events`` (of one or more invocations, the user's messages among them) as
        invocations, as an eval run records them (``invocations_of``: per invocation
        id, the user's message, the final response, the events in between with their
        grounding), then each given its app details and durations from the maps,
        by its invocation id (None where a map has no entry)."""
        return [invocation.model_copy(update={
            "app_details": (app_details_per_invocation or {}).get(invocation.invocation_id),
            "duration": (durations_per_invocation or {}).get(invocation.invocation_id),
            "model_duration": (model_durations_per_invocation or {}).get(invocation.invocation_id),
            "tool_duration": (tool_durations_per_invocation or {}).get(invocation.invocation_id)})
            for invocation in invocations_of(events)]
