"""google-adk's rubric evaluator classes and user simulator classes at google-adk's
paths (``adk_actors.evaluation.rubric_based_*``, ``adk_actors.evaluation.simulation.*``),
side by side with google-adk 2.13's own.

The same invocations and rubrics go through google-adk's evaluator and ours against one
Gemini REST stand-in whose judge answers are scripted per rubric id: both give the
same per-invocation and overall scores, statuses and rubric scores, and refuse the same
inputs.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from google.adk.evaluation import eval_case as their_case
from google.adk.evaluation import eval_metrics as their_metrics
from google_adk_harness import on_stand_in
from test_evals_in_process import answer

from adk_actors.evals import EvalError
from adk_actors.evaluation import eval_case as our_case
from adk_actors.evaluation import eval_metrics as our_metrics
from adk_actors.evaluation.eval_rubrics import RubricScore
from adk_actors.testing import StubServer, gemini_answers, gemini_response

DEADLINE = 120


def _judge(body: dict[str, Any]) -> dict[str, Any]:
    """``test_evals_in_process``'s stand-in, which answers rubrics listed as
    ``[id: r_x] text``; google-adk's multi-turn prompt lists them as JSON, answered
    here by the same verdicts (``r_sunny``: yes when the conversation has "It is sunny";
    ``r_vague``: a verdict that is neither; any other: no)."""
    contents = body.get("contents") or []
    prompt = "".join(part.get("text", "") for part in (contents[-1]["parts"] if contents else []))
    listed = re.findall(r'"id": "(r_\w+)",\s*"property": "(.*?)"', prompt)
    if listed and not body.get("tools") and "[id: r_" not in prompt:
        verdict = {"r_sunny": "yes" if "It is sunny" in prompt else "no", "r_vague": "maybe"}
        reply: dict[str, Any] = gemini_response("\n\n".join(
            f"ID: {rubric_id}\nProperty: {text}\nRationale: looked\nVerdict: {verdict.get(rubric_id, 'no')}"
            for rubric_id, text in listed)).json
        return reply
    return answer(body)


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(_judge)) as server:
        yield server.url


@pytest.fixture
def judge(stand_in: str, monkeypatch: pytest.MonkeyPatch) -> None:
    on_stand_in(stand_in, monkeypatch)


def _run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=DEADLINE))


def _rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    return {"rubric_id": rubric_id, "rubric_content": {"text_property": text}, **({"type": kind} if kind else {})}


SUNNY = _rubric("r_sunny", "The answer says it is sunny.")
PARIS = _rubric("r_called_paris", "The agent asked for the weather in Paris.")
VAGUE = _rubric("r_vague", "The answer is pleasant.")
JUDGE = {"threshold": 0.6, "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3}}


def _invocation(text: str, said: str, city: str, rubrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"invocation_id": f"i-{city}", "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": said}]},
            "intermediate_data": {"invocation_events": [
                {"author": "weather", "content": {"role": "model", "parts": [
                    {"function_call": {"id": "c0", "name": "get_weather", "args": {"city": city}}}]}},
                {"author": "weather", "content": {"role": "user", "parts": [
                    {"function_response": {"id": "c0", "name": "get_weather", "response": {"weather": "x"}}}]}}]},
            **({"rubrics": rubrics} if rubrics is not None else {})}


OTHER = _rubric("r_other", "Something else.")


def _invocations(kind: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Three invocations, each with the same rubrics of its own of the metric's type
    (which count) and the first with one of another type (which does not); expected
    invocations carrying a rubric that an evaluator called on its own does not read
    (an eval service copies it to the actual invocation first)."""
    other = "TOOL_USE_QUALITY" if kind != "TOOL_USE_QUALITY" else "FINAL_RESPONSE_QUALITY"
    own = [{**PARIS, "type": kind}, {**VAGUE, "type": kind}]
    actual = [
        _invocation("What is the weather in Paris?", "It is sunny in Paris.", "Paris", [*own, {**OTHER, "type": other}]),
        _invocation("What is the weather in Rome?", "It is cloudy in Rome.", "Rome", own),
        _invocation("What is the weather in Oslo?", "It is sunny in Oslo.", "Oslo", own),
    ]
    expected = [_invocation(one["user_content"]["parts"][0]["text"], "whatever", "Nowhere", [{**OTHER, "type": kind}])
                for one in actual]
    return actual, expected


def _rows(result: Any) -> Any:
    """What a user reads of an EvaluationResult: overall and per-invocation scores,
    statuses and rubric scores (the overall ones without a rationale: google-adk
    writes a fixed sentence there, ours none). Ours keeps rubric scores as dicts,
    read here as ``RubricScore`` the way our docs say."""
    def scores(rubric_scores: Any, rationale: bool = True) -> Any:
        read = [RubricScore.model_validate(s) if isinstance(s, dict) else s for s in rubric_scores or []]
        return None if rubric_scores is None else sorted(
            (s.rubric_id, s.score, s.rationale if rationale else None) for s in read)

    return (result.overall_score, result.overall_eval_status.name, scores(result.overall_rubric_scores, False),
            [(row.score, row.eval_status.name, scores(row.rubric_scores),
              row.expected_invocation.invocation_id if row.expected_invocation else None)
             for row in result.per_invocation_results])


_CLASSES = {"rubric_based_final_response_quality_v1": "RubricBasedFinalResponseQualityV1Evaluator",
            "rubric_based_tool_use_quality_v1": "RubricBasedToolUseV1Evaluator",
            "rubric_based_multi_turn_trajectory_evaluator": "RubricBasedMultiTurnTrajectoryEvaluator"}


def _pair(name: str) -> tuple[Any, Any]:
    """google-adk's evaluator class of module ``name`` and ours, at the same path."""
    return tuple(getattr(importlib.import_module(f"{root}.evaluation.{name}"), _CLASSES[name])
                 for root in ("google.adk", "adk_actors"))


def _both(name: str, criterion: dict[str, Any], actual: list[dict[str, Any]],
          expected: list[dict[str, Any]] | None) -> tuple[Any, Any]:
    """The evaluation of ``actual`` (and ``expected``) by google-adk's evaluator and by
    ours, each an EvaluationResult or the exception raised."""
    theirs_kind, ours_kind = _pair(name)
    metric = name.replace("_evaluator", "_quality_v1")  # the multi-turn module's metric

    def their_run() -> Any:
        evaluator = theirs_kind(their_metrics.EvalMetric(
            metric_name=metric, criterion=their_metrics.RubricsBasedCriterion.model_validate(criterion)))
        return _run(evaluator.evaluate_invocations(
            [their_case.Invocation.model_validate(one) for one in actual],
            None if expected is None else [their_case.Invocation.model_validate(one) for one in expected]))

    def our_run() -> Any:
        evaluator = ours_kind(our_metrics.EvalMetric(metric_name=metric, criterion=criterion))
        return _run(evaluator.evaluate_invocations(
            [our_case.Invocation.model_validate(one) for one in actual],
            None if expected is None else [our_case.Invocation.model_validate(one) for one in expected]))

    results = []
    for run in (their_run, our_run):
        try:
            results.append(run())
        except ValueError as exc:
            results.append(exc)
    return results[0], results[1]


@pytest.mark.parametrize(("name", "kind"), [
    ("rubric_based_final_response_quality_v1", "FINAL_RESPONSE_QUALITY"),
    ("rubric_based_tool_use_quality_v1", "TOOL_USE_QUALITY"),
])
@pytest.mark.parametrize("with_expected", [True, False])
def test_a_rubric_evaluator_scores_each_invocation_as_google_adks(judge: None, name: str, kind: str,
                                                                   with_expected: bool) -> None:
    """The criterion's rubric and each actual invocation's own of the metric's type
    are judged; the expected invocations' rubrics are not; a rubric with no verdict
    is left out of the means; overall, the mean of every rubric score."""
    actual, expected = _invocations(kind)
    theirs, ours = _both(name, {**JUDGE, "rubrics": [SUNNY]}, actual, expected if with_expected else None)
    assert _rows(ours) == _rows(theirs)
    if name == "rubric_based_final_response_quality_v1":
        # sunny, called Paris (vague unscored): Paris yes yes; Rome no no; Oslo yes no
        assert [(row[0], row[1]) for row in _rows(ours)[3]] == [(1.0, "PASSED"), (0.0, "FAILED"), (0.5, "FAILED")]
        assert _rows(ours)[:2] == (0.5, "FAILED")


def test_each_invocation_is_judged_by_its_own_rubrics(judge: None) -> None:
    """Invocations with different rubrics of their own: each one's verdicts are read
    against its own rubrics. (google-adk 2.13 reads every invocation's verdicts
    against the last invocation's rubrics, dropping the others' own: a known
    divergence, so not side by side.)"""
    from adk_actors.evaluation.rubric_based_final_response_quality_v1 import (
        RubricBasedFinalResponseQualityV1Evaluator,
    )

    kind = "FINAL_RESPONSE_QUALITY"
    actual = [_invocation("What is the weather in Paris?", "It is sunny in Paris.", "Paris", [{**PARIS, "type": kind}]),
              _invocation("What is the weather in Rome?", "It is cloudy in Rome.", "Rome", [{**VAGUE, "type": kind}])]
    evaluator = RubricBasedFinalResponseQualityV1Evaluator(our_metrics.EvalMetric(
        metric_name="rubric_based_final_response_quality_v1", criterion={**JUDGE, "rubrics": [SUNNY]}))
    rows = _rows(_run(evaluator.evaluate_invocations([our_case.Invocation.model_validate(one) for one in actual])))
    assert rows[3] == [(1.0, "PASSED", [("r_called_paris", 1.0, "looked"), ("r_sunny", 1.0, "looked")], None),
                       (0.0, "FAILED", [("r_sunny", 0.0, "looked"), ("r_vague", None, "looked")], None)]
    assert rows[:3] == (2 / 3, "PASSED", [("r_called_paris", 1.0, None), ("r_sunny", 0.5, None), ("r_vague", None, None)])


def test_the_multi_turn_evaluator_judges_the_conversation_on_its_last_invocation(judge: None) -> None:
    """Every invocation but the last is not evaluated; the last has the conversation's
    score, also the overall one; only the last invocation's own rubrics count."""
    actual, expected = _invocations("TRAJECTORY_QUALITY")
    actual[-1]["rubrics"] = [{**VAGUE, "type": "TRAJECTORY_QUALITY"}, _rubric("r_other", "Something else.",
                                                                              "TRAJECTORY_QUALITY")]
    theirs, ours = _both("rubric_based_multi_turn_trajectory_evaluator", {**JUDGE, "rubrics": [SUNNY]},
                         actual, expected)
    assert _rows(ours) == _rows(theirs)
    assert [(row[0], row[1]) for row in _rows(ours)[3]] == [
        (None, "NOT_EVALUATED"), (None, "NOT_EVALUATED"), (0.5, "FAILED")]
    assert _rows(ours)[:2] == (0.5, "FAILED")


@pytest.mark.parametrize("name", ["rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1",
                                  "rubric_based_multi_turn_trajectory_evaluator"])
def test_a_rubric_evaluator_refuses_as_google_adks(judge: None, name: str) -> None:
    """No rubric at all, a rubric id both in the criterion and on the invocation, or
    fewer expected invocations than actual ones: a ValueError on both sides (ours an
    EvalError where it is about rubrics), before any judge call."""
    kind = {"rubric_based_final_response_quality_v1": "FINAL_RESPONSE_QUALITY",
            "rubric_based_tool_use_quality_v1": "TOOL_USE_QUALITY"}.get(name, "TRAJECTORY_QUALITY")
    bare = [_invocation("What is the weather in Paris?", "It is sunny in Paris.", "Paris")]
    twice = [_invocation("What is the weather in Paris?", "It is sunny in Paris.", "Paris", [{**SUNNY, "type": kind}])]
    for criterion, actual, expected, ours_error in (
            (JUDGE, bare, None, EvalError),
            ({**JUDGE, "rubrics": [SUNNY]}, twice, None, EvalError),
            ({**JUDGE, "rubrics": [SUNNY]}, bare + bare, bare, ValueError)):
        theirs, ours = _both(name, criterion, actual, expected)
        assert isinstance(theirs, ValueError), theirs
        assert isinstance(ours, ours_error), ours


def _said(message: Any) -> Any:
    """(status, role, text) of a NextUserMessage, either side's."""
    content = message.user_message
    return (message.status.name, content.role if content else None,
            "".join(part.text or "" for part in content.parts) if content else None)


def _events(side: str, turns: list[tuple[str, str]]) -> list[Any]:
    """The conversation so far as ``side``'s events: (author, text) each."""
    if side == "theirs":
        from google.adk.events.event import Event as TheirEvent
        from google.genai import types

        return [TheirEvent(author=author, content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)])) for author, text in turns]
    from adk_actors._types import Content, Event

    return [Event(author=author, content=Content.model_validate(
        {"role": "user" if author == "user" else "model", "parts": [{"text": text}]})) for author, text in turns]


def test_the_static_simulator_says_each_message_then_stops_as_google_adks() -> None:
    """Each invocation's user message in order, whatever the events, then
    ``STOP_SIGNAL_DETECTED`` on every later call; no simulation evaluator."""
    from google.adk.evaluation.simulation.static_user_simulator import (
        StaticUserSimulator as TheirStatic,
    )

    from adk_actors.evaluation.simulation.static_user_simulator import StaticUserSimulator

    conversation, _ = _invocations("FINAL_RESPONSE_QUALITY")

    async def play(simulator: Any, side: str) -> list[Any]:
        return [_said(await simulator.get_next_user_message(_events(side, [("user", "hi")] * turn)))
                for turn in range(5)]

    theirs = TheirStatic(static_conversation=[their_case.Invocation.model_validate(one) for one in conversation])
    ours = StaticUserSimulator(static_conversation=[our_case.Invocation.model_validate(one) for one in conversation])
    said = _run(play(ours, "ours"))
    assert said == _run(play(theirs, "theirs"))
    assert said == [("SUCCESS", "user", "What is the weather in Paris?"), ("SUCCESS", "user", "What is the weather in Rome?"),
                    ("SUCCESS", "user", "What is the weather in Oslo?"), ("STOP_SIGNAL_DETECTED", None, None),
                    ("STOP_SIGNAL_DETECTED", None, None)]
    assert ours.get_simulation_evaluator() is None and theirs.get_simulation_evaluator() is None


@pytest.mark.parametrize("limit", [5, 2, 0])
def test_the_llm_backed_simulator_plays_a_scenario_as_google_adks(judge: None, limit: int) -> None:
    """The starting prompt with no model call, then the stand-in's model asks about
    Oslo, then says the stop signal; with a lower ``max_allowed_invocations`` the
    turn limit ends it first."""
    from google.adk.evaluation.conversation_scenarios import ConversationScenario as TheirScenario
    from google.adk.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulator as TheirSimulator,
    )
    from google.adk.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulatorConfig as TheirConfig,
    )

    from adk_actors.evaluation.conversation_scenarios import ConversationScenario
    from adk_actors.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulator,
        LlmBackedUserSimulatorConfig,
    )

    scenario = {"starting_prompt": "What is the weather in Paris?",
                "conversation_plan": "Ask for the weather in Paris, then in Oslo, then stop."}
    heard = [[], [("user", "What is the weather in Paris?"), ("weather", "It is sunny in Paris.")],
             [("user", "What is the weather in Paris?"), ("weather", "It is sunny in Paris."),
              ("user", "Thanks. And what is the weather in Oslo?"), ("weather", "It is rainy in Oslo.")]]

    async def play(simulator: Any, side: str) -> list[Any]:
        return [_said(await simulator.get_next_user_message(_events(side, turns))) for turns in heard]

    theirs = TheirSimulator(config=TheirConfig(model="gemini-2.5-flash", max_allowed_invocations=limit),
                            conversation_scenario=TheirScenario.model_validate(scenario))
    ours = LlmBackedUserSimulator(config=LlmBackedUserSimulatorConfig(model="gemini-2.5-flash",
                                                                      max_allowed_invocations=limit),
                                  conversation_scenario=ConversationScenario.model_validate(scenario))
    said = _run(play(ours, "ours"))
    assert said == _run(play(theirs, "theirs"))
    expected = [("SUCCESS", "user", "What is the weather in Paris?"),
                ("SUCCESS", "user", "Thanks. And what is the weather in Oslo?"), ("STOP_SIGNAL_DETECTED", None, None)]
    assert said == expected[:limit] + [("TURN_LIMIT_REACHED", None, None)] * (len(heard) - min(limit, 3))


def test_the_simulator_types_refuse_as_google_adks() -> None:
    """A message with a status other than SUCCESS, or none with SUCCESS, and an
    llm-backed config of another type: a ValueError on both sides."""
    from google.adk.evaluation.conversation_scenarios import ConversationScenario as TheirScenario
    from google.adk.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulator as TheirSimulator,
    )
    from google.adk.evaluation.simulation.user_simulator import (
        BaseUserSimulatorConfig as TheirBase,
    )
    from google.adk.evaluation.simulation.user_simulator import NextUserMessage as TheirNext
    from google.adk.evaluation.simulation.user_simulator import Status as TheirStatus
    from google.genai import types

    from adk_actors._types import Content
    from adk_actors.evaluation.conversation_scenarios import ConversationScenario
    from adk_actors.evaluation.simulation.llm_backed_user_simulator import LlmBackedUserSimulator
    from adk_actors.evaluation.simulation.user_simulator import (
        BaseUserSimulatorConfig,
        NextUserMessage,
        Status,
    )

    assert [s.value for s in Status] == [s.value for s in TheirStatus]
    kinds: list[tuple[Any, Any, Any]] = [(TheirNext, TheirStatus, types.Content(role="user", parts=[types.Part(text="x")])),
                                         (NextUserMessage, Status, Content.user("x"))]
    for next_kind, status, content in kinds:
        with pytest.raises(ValueError):
            next_kind(status=status.STOP_SIGNAL_DETECTED, user_message=content)
        with pytest.raises(ValueError):
            next_kind(status=status.SUCCESS)
    scenario = {"starting_prompt": "hi", "conversation_plan": "Say hi."}
    with pytest.raises(ValueError):
        TheirSimulator(config=TheirBase(type="audio"), conversation_scenario=TheirScenario.model_validate(scenario))
    with pytest.raises(ValueError):
        LlmBackedUserSimulator(config=BaseUserSimulatorConfig(type="audio"),
                               conversation_scenario=ConversationScenario.model_validate(scenario))
