"""Issue 33: adk-fluent's ``E`` (evaluations of a builder's agent) on our eval kit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.eval_set import EvalSet as GoogleEvalSet

from adk_actors.evals import EvalError
from adk_actors.fluent import Agent, E, EvalReport, RegressionError
from adk_actors.models import ScriptedModel, call


def weather(city: str) -> str:
    return f"sunny in {city}"


def forecaster(calls: list[tuple[str, dict[str, Any]]] | None = None) -> Any:
    """An agent that calls ``calls`` (weather for Oslo by default), then answers."""
    plan = calls if calls is not None else [("weather", {"city": "Oslo"})]

    def answer(request: Any) -> Any:
        made = sum(1 for c in request.contents if c.function_responses)
        if made < len(plan):
            name, args = plan[made]
            return call(name, **args)
        return "It is sunny in Oslo."

    def log(note: str) -> str:
        return "noted"

    return Agent("forecaster", ScriptedModel(fallback=answer)).tool(weather).tool(log).writes("answer")


def run(suite: Any) -> EvalReport:
    return asyncio.run(suite.run())


def test_a_suite_scores_tools_answer_state_and_custom_metrics() -> None:
    report = run(E.suite(forecaster())
                 .case("weather in Oslo?", expect="It is sunny in Oslo.", tools=[("weather", {"city": "Oslo"})],
                       state={"answer": "It is sunny in Oslo."})
                 .criteria(E.trajectory() | E.response_match()
                           | E.custom("says_oslo", lambda actual, expected: float("Oslo" in actual.final_response.text))))
    assert report.scores == {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0, "says_oslo": 1.0,
                             "final_session_state_match": 1.0}
    assert report.ok and report.summary().endswith("Overall: PASSED")
    assert len(report.raw_results) == 2  # num_runs: 2, as adk-fluent's default


def test_a_suite_fails_what_does_not_match_and_says_by_how_much() -> None:
    report = run(E.suite(forecaster()).case("weather?", expect="It rains.",
                                            tools=[("weather", {"city": "Bergen"})], state={"answer": "rain"})
                 .criteria(E.trajectory() | E.response_match()))
    assert report.scores["tool_trajectory_avg_score"] == 0.0
    assert report.scores["response_match_score"] == pytest.approx(2 / 7)  # "it" of 5 words and of 2
    assert report.scores["final_session_state_match"] == 0.0
    assert not report.ok
    assert "response_match_score: 0.286 (threshold: 0.8) [FAIL]" in report.summary()


def test_trajectory_match_types_allow_other_calls_as_google_adks_do() -> None:
    agent = forecaster([("log", {"note": "start"}), ("weather", {"city": "Oslo"}), ("log", {"note": "end"})])
    wanted = [("weather", {"city": "Oslo"}), ("log", {"note": "end"})]

    def score(match: str, tools: list[tuple[str, dict[str, Any]]]) -> float:
        report = run(E.suite(agent).case("weather?", tools=tools).criteria(E.trajectory(match=match)).num_runs(1))
        return report.scores["tool_trajectory_avg_score"]

    assert score("exact", wanted) == 0.0
    assert score("in_order", wanted) == 1.0
    assert score("in_order", list(reversed(wanted))) == 0.0
    assert score("any_order", list(reversed(wanted))) == 1.0
    assert score("any_order", [*wanted, ("weather", {"city": "Oslo"})]) == 0.0  # asked twice, made once
    with pytest.raises(ValueError, match="exact, in_order, any_order"):
        E.trajectory(match="some")


def test_scores_are_the_mean_over_runs() -> None:
    answers = iter(["It is sunny in Oslo.", "No idea."] * 2)
    agent = Agent("moody", ScriptedModel(fallback=lambda request: next(answers)))
    report = run(E.suite(agent).case("weather?", expect="It is sunny in Oslo.").criteria(E.response_match())
                 .num_runs(2))
    assert report.scores["response_match_score"] == pytest.approx(0.5)


def test_metrics_that_need_a_judge_model_are_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    for factory in (E.semantic_match, E.hallucination, E.safety, E.rubric, E.tool_rubric, E.gate):
        with pytest.raises(EvalError, match="needs a judge model"):
            factory()
    with pytest.raises(EvalError, match="judge model"):
        E.suite(forecaster()).case("q", rubrics=["is polite"])
    unknown = E.suite(forecaster()).case("q", expect="a").threshold("safety_v1", 0.5)
    with pytest.raises(EvalError, match="not offered"):
        run(unknown)
    # final_response_match_v2 is offered (tests/test_evals_in_process.py): its judge needs a key
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    judged = run(E.suite(forecaster()).case("q", expect="a").threshold("final_response_match_v2", 0.5))
    assert not judged.ok and any("AuthenticationError" in line and "GEMINI_API_KEY" in line
                                 for line in judged.details)


def test_baselines_catch_a_regression(tmp_path: Path) -> None:
    good = run(E.suite(forecaster()).case("weather?", expect="It is sunny in Oslo.").criteria(E.response_match()))
    good.save_baseline(str(tmp_path / "baseline.json"))
    worse = run(E.suite(Agent("vague", ScriptedModel(fallback=lambda r: "Sunny, I think.")))
                .case("weather?", expect="It is sunny in Oslo.").criteria(E.response_match()))
    assert good.assert_no_regression(str(tmp_path / "baseline.json")).ok
    with pytest.raises(RegressionError, match=r"response_match_score: 1\.000 -> 0\.") as raised:
        worse.assert_no_regression(str(tmp_path / "baseline.json"))
    assert raised.value.result.regressions[0].metric == "response_match_score"
    assert worse.compare_to_baseline(good, tolerance=1.0).ok


def test_compare_ranks_agents_on_the_same_cases() -> None:
    vague = Agent("vague", ScriptedModel(fallback=lambda r: "Sunny, I think."))
    report = asyncio.run(E.compare(vague, forecaster()).case("weather?", expect="It is sunny in Oslo.")
                         .criteria(E.response_match()).num_runs(1).run())
    assert report.winner == "forecaster"
    assert [name for name, _ in report.ranked()] == ["forecaster", "vague"]


def test_an_inline_eval_and_the_file_google_adk_reads(tmp_path: Path) -> None:
    report = run(forecaster().eval("weather in Oslo?", expect="It is sunny in Oslo."))
    assert report.scores == {"response_match_score": 1.0}
    path = tmp_path / "weather.evalset.json"
    E.suite(forecaster()).case("weather in Oslo?", expect="It is sunny in Oslo.",
                               tools=[("weather", {"city": "Oslo"})]).name("weather").to_file(str(path))
    theirs = GoogleEvalSet.model_validate(json.loads(path.read_text()))
    (case,) = theirs.eval_cases
    assert case.conversation[0].user_content.parts[0].text == "weather in Oslo?"
    assert case.conversation[0].final_response.parts[0].text == "It is sunny in Oslo."
    assert case.conversation[0].intermediate_data.tool_uses[0].name == "weather"
    assert E.from_file(str(path)).eval_cases[0].conversation[0].user_content.text == "weather in Oslo?"
