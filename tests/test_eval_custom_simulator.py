"""A user simulator of the user's own, registered with ``register_user_simulator`` for a
config type of its own, plays a ``conversation_scenario`` case through ``AgentEvaluator``
and through ``LocalEvalService``, side by side with google-adk 2.13's.

The simulator is scripted: it says the scenario's starting prompt, then the lines of
its config, then stops (``STOP_SIGNAL_DETECTED``). Both sides run the same weather agent
(google-adk's source, and the same rewritten for ours) against one Gemini REST
stand-in (``test_evals_in_process``'s). Compared: what the simulator was shown before
each message (the conversation's events, by author and text), the invocations recorded,
and the scores of a judged metric and of one that needs expected invocations (not
evaluated there).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator as TheirEvaluator
from google.adk.evaluation.base_eval_service import EvaluateConfig as TheirEvaluateConfig
from google.adk.evaluation.base_eval_service import EvaluateRequest as TheirEvaluateRequest
from google.adk.evaluation.base_eval_service import InferenceConfig as TheirInferenceConfig
from google.adk.evaluation.base_eval_service import InferenceRequest as TheirInferenceRequest
from google.adk.evaluation.eval_config import EvalConfig as TheirEvalConfig
from google.adk.evaluation.eval_config import get_eval_metrics_from_config as their_metrics_of
from google.adk.evaluation.eval_set import EvalSet as TheirEvalSet
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager as TheirSets
from google.adk.evaluation.local_eval_service import LocalEvalService as TheirService
from google.adk.evaluation.simulation import user_simulator as their_simulation
from google.adk.evaluation.simulation.user_simulator_provider import (
    UserSimulatorProvider as TheirProvider,
)
from google_adk_harness import agent_packages, on_stand_in
from test_evals_in_process import AGENT, answer

from adk_actors.evals import AgentEvaluator, EvalSet
from adk_actors.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
)
from adk_actors.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
from adk_actors.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from adk_actors.evaluation.local_eval_service import LocalEvalService
from adk_actors.evaluation.simulation import user_simulator as our_simulation
from adk_actors.evaluation.simulation.user_simulator_provider import UserSimulatorProvider
from adk_actors.testing import StubServer, gemini_answers

DEADLINE = 120
JUDGE = {"threshold": 0.5, "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3}}
SUNNY = {"rubric_id": "r_sunny", "rubric_content": {"text_property": "The answer says it is sunny."}}
CRITERIA: dict[str, Any] = {"tool_trajectory_avg_score": 1.0,
                            "rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [SUNNY]}}
SCRIPT = ["hello", "What is the weather in Oslo?"]
EVAL_SET = {"eval_set_id": "scripted_set", "eval_cases": [
    {"eval_id": "scripted", "session_input": {"app_name": "weather", "user_id": "tia", "state": {}},
     "conversation_scenario": {"starting_prompt": "What is the weather in Paris?",
                               "conversation_plan": "Ask about Paris, say hello, ask about Oslo, then stop."}}]}


def _scripted(side: Any) -> tuple[type[Any], type[Any], list[list[tuple[str, str]]]]:
    """A config type and a simulator class of one side's interface (``side``: google-adk's
    ``user_simulator`` module or ours), registered there; and the list each simulator
    appends what it was shown to (a (author, text) per event with text), call by call."""
    shown: list[list[tuple[str, str]]] = []

    class ScriptedConfig(side.BaseUserSimulatorConfig):  # type: ignore[name-defined,misc]
        type: Literal["scripted"] = "scripted"
        lines: tuple[str, ...] = ()

    class ScriptedSimulator(side.UserSimulator):  # type: ignore[name-defined,misc]
        def __init__(self, *, config: Any, conversation_scenario: Any) -> None:
            super().__init__(config, config_type=ScriptedConfig)
            self._said = [conversation_scenario.starting_prompt, *self._config.lines]

        async def get_next_user_message(self, events: list[Any]) -> Any:
            shown.append([(event.author, "".join(part.text or "" for part in event.content.parts or []))
                          for event in events if event.content is not None
                          and any(part.text for part in event.content.parts or [])])
            if not self._said:
                return side.NextUserMessage(status=side.Status.STOP_SIGNAL_DETECTED)
            content = {"role": "user", "parts": [{"text": self._said.pop(0)}]}
            return side.NextUserMessage.model_validate({"status": side.Status.SUCCESS, "user_message": content})

        def get_simulation_evaluator(self) -> Any:
            return None

    side.register_user_simulator(ScriptedConfig, ScriptedSimulator)
    return ScriptedConfig, ScriptedSimulator, shown


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(answer)) as server:
        yield server.url


@pytest.fixture
def agents(stand_in: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The two agent packages on the stand-in; both sides' simulator registries as
    they were once the test is over (its scripted simulators forgotten)."""
    on_stand_in(stand_in, monkeypatch)
    registries = [(side._SIMULATOR_BY_CONFIG_TYPE, dict(side._SIMULATOR_BY_CONFIG_TYPE))
                  for side in (their_simulation, our_simulation)]
    yield from agent_packages(tmp_path, AGENT, "their_scripted", "our_scripted", monkeypatch)
    for registry, before in registries:
        registry.clear()
        registry.update(before)


class _Kept:
    """An eval set results manager that keeps the case results it is given."""

    def __init__(self) -> None:
        self.results: list[Any] = []

    def save_eval_set_result(self, app_name: str, eval_set_id: str, eval_case_results: list[Any]) -> None:
        self.results += eval_case_results


async def _collect(generator: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in generator]


def _run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=DEADLINE))


def _invocations(invocations: list[Any]) -> list[dict[str, Any]]:
    def text(content: Any) -> str | None:
        return None if content is None else "".join(part.text or "" for part in content.parts or [])

    return [{"user": text(i.user_content), "final": text(i.final_response),
             "calls": [(c.name, dict(c.args or {})) for c in (i.intermediate_data.tool_uses
                                                               if hasattr(i.intermediate_data, "tool_uses") else
                                                               [p.function_call for e in
                                                                i.intermediate_data.invocation_events
                                                                for p in (e.content.parts if e.content else [])
                                                                if p.function_call])]}
            for i in invocations]


def _scores(results: list[Any]) -> list[Any]:
    def rows(metric_results: list[Any]) -> list[tuple[Any, ...]]:
        return [(r.metric_name, r.score, r.eval_status.name) for r in metric_results
                if r.metric_name in CRITERIA]

    return [(result.eval_id, result.final_eval_status.name, rows(result.overall_eval_metric_results),
             [rows(row.eval_metric_results) for row in result.eval_metric_result_per_invocation])
            for result in results]


def _what_happened(results: list[Any]) -> dict[str, Any]:
    [result] = results
    return {"invocations": _invocations([row.actual_invocation for row in result.eval_metric_result_per_invocation]),
            "scores": _scores(results)}


def test_a_registered_simulator_drives_agent_evaluator_as_google_adks(agents: Path) -> None:
    their_config_type, _, their_shown = _scripted(their_simulation)
    our_config_type, _, our_shown = _scripted(our_simulation)

    async def evaluate(evaluator: Any, module: str, eval_set: Any, config: Any) -> list[Any]:
        kept = _Kept()
        try:
            await evaluator.evaluate_eval_set(module, eval_set, eval_config=config, num_runs=1, app_name="weather",
                                              eval_set_results_manager=kept, print_detailed_results=False)
        except AssertionError:
            pass  # the judged metric fails the case on both sides: compared below
        return kept.results

    their_config = TheirEvalConfig(criteria=CRITERIA)
    their_config.user_simulator_config = their_config_type(lines=SCRIPT)  # google-adk's union takes none of it
    our_config = EvalConfig(criteria=CRITERIA)
    our_config.user_simulator_config = our_config_type(lines=SCRIPT)  # type: ignore[assignment]
    theirs = _what_happened(_run(evaluate(TheirEvaluator, "their_scripted", TheirEvalSet.model_validate(EVAL_SET),
                                          their_config)))
    ours = _what_happened(_run(evaluate(AgentEvaluator, "our_scripted", EvalSet.model_validate(EVAL_SET),
                                        our_config)))
    assert ours == theirs
    assert [i["user"] for i in ours["invocations"]] == ["What is the weather in Paris?", *SCRIPT]
    assert our_shown == their_shown and len(our_shown) == 4  # three messages, then the stop
    assert our_shown[1] == [("user", "What is the weather in Paris?"), ("weather", "It is sunny in Paris.")]


def test_a_registered_simulator_drives_local_eval_service_as_google_adks(agents: Path) -> None:
    their_config_type, _, their_shown = _scripted(their_simulation)
    our_config_type, _, our_shown = _scripted(our_simulation)

    async def theirs() -> list[Any]:
        from their_scripted.agent import root_agent

        sets = TheirSets()
        sets.create_eval_set("weather", "scripted_set")
        sets.add_eval_case("weather", "scripted_set", TheirEvalSet.model_validate(EVAL_SET).eval_cases[0])
        service = TheirService(root_agent=root_agent, eval_sets_manager=sets,
                               user_simulator_provider=TheirProvider(user_simulator_config=their_config_type(
                                   lines=SCRIPT)))
        inferences = await _collect(service.perform_inference(TheirInferenceRequest(
            app_name="weather", eval_set_id="scripted_set", inference_config=TheirInferenceConfig())))
        return await _collect(service.evaluate(TheirEvaluateRequest(
            inference_results=inferences, evaluate_config=TheirEvaluateConfig(
                eval_metrics=their_metrics_of(TheirEvalConfig(criteria=CRITERIA))))))

    async def ours() -> list[Any]:
        from our_scripted.agent import root_agent

        sets = InMemoryEvalSetsManager()
        sets.create_eval_set("weather", "scripted_set")
        sets.add_eval_case("weather", "scripted_set", EvalSet.model_validate(EVAL_SET).eval_cases[0])
        service = LocalEvalService(root_agent=root_agent, eval_sets_manager=sets,
                                   user_simulator_provider=UserSimulatorProvider(user_simulator_config=(
                                       our_config_type(lines=SCRIPT))))
        inferences = await _collect(service.perform_inference(InferenceRequest(
            app_name="weather", eval_set_id="scripted_set", inference_config=InferenceConfig())))
        return await _collect(service.evaluate(EvaluateRequest(
            inference_results=inferences, evaluate_config=EvaluateConfig(
                eval_metrics=get_eval_metrics_from_config(EvalConfig(criteria=CRITERIA))))))

    their_results, our_results = _run(theirs()), _run(ours())
    assert _what_happened(our_results) == _what_happened(their_results)
    happened = _what_happened(our_results)
    assert [i["user"] for i in happened["invocations"]] == ["What is the weather in Paris?", *SCRIPT]
    assert ("tool_trajectory_avg_score", None, "NOT_EVALUATED") in happened["scores"][0][2]
    assert our_shown == their_shown and len(our_shown) == 4
