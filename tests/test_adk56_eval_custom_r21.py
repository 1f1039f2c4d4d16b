"""Issue 56, what was left of evaluation as google-adk's: custom metrics, the multi-turn
metric a judge model scores, and the metrics only Vertex AI's eval service scores.

1. Custom metrics (an eval config's ``custom_metrics``): the same agent package, with
   its scoring functions in it, as google-adk's source and as ours (its imports
   rewritten), evaluated by google-adk's ``AgentEvaluator`` and by ours with the same
   eval set and the same ``test_config.json`` (but for the package's name in each
   ``code_config.name``), the agent's model a Gemini REST stand-in on 127.0.0.1.
   Compared: the summaries both print, the failure lines both raise, and the results
   both hand an ``eval_set_results_manager`` (score and status per metric, overall and
   per invocation). The functions: one that passes or fails per invocation, an
   ``async`` one where lower is better (an answer's length), one that says whether it
   was shown a threshold (google-adk hides it), one that raises. Then ours alone: a
   bad code path is a typed error naming the metric before the agent runs, a result of
   the wrong shape is one too, and ``adk-actors eval AGENT_DIR`` runs a custom metric
   from the config beside the eval set and saves its results.
2. ``rubric_based_multi_turn_trajectory_quality_v1`` judged by a model from our
   registry (a scripted model behind ``LLMRegistry``): the prompt it gets holds the
   whole conversation, and the score is google-adk's rule (each rubric a majority of
   the samples, the mean of the rubrics on the last invocation, the others not
   evaluated, a pass at the threshold or above).
3. The Vertex-scored metrics: a typed error that says what they need, and google-adk
   does call the Vertex AI eval SDK for them (read off its evaluators).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator as TheirEvaluator
from google_adk_harness import agent_packages, on_stand_in, rewritten

from adk_actors.evals import (
    AgentEvaluator,
    CustomMetricError,
    EvalConfig,
    EvalError,
    EvalFailed,
    EvalMetric,
    Invocation,
    VertexEvalRequired,
    get_eval_metrics_from_config,
    metrics_info,
)
from adk_actors.evals._metrics import score
from adk_actors.models import BaseLlm, LLMRegistry, LlmRequest, LlmResponse, ScriptedModel
from adk_actors.testing import StubServer, gemini_answers, gemini_response
from adk_actors.types import Content

AGENT = '''
from google.adk.agents import Agent
from google.adk.evaluation.eval_metrics import EvalStatus
from google.adk.evaluation.evaluator import EvaluationResult, PerInvocationResult


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"weather": {"Paris": "sunny", "Oslo": "rainy", "Rome": "sunny"}.get(city, "unknown")}


root_agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer about the weather.",
                   tools=[get_weather])

CITIES = ("Paris", "Oslo", "Rome")


def _said(invocation):
    if invocation is None or invocation.final_response is None:
        return ""
    return " ".join(part.text for part in invocation.final_response.parts if part.text)


def _overall(rows, passed):
    scores = [row.score for row in rows if row.score is not None]
    overall = sum(scores) / len(scores) if scores else None
    status = EvalStatus.NOT_EVALUATED if overall is None else (
        EvalStatus.PASSED if passed(overall) else EvalStatus.FAILED)
    return EvaluationResult(overall_score=overall, overall_eval_status=status, per_invocation_results=rows)


def says_the_city(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """1.0 for a turn whose answer names every city the expected answer names."""
    threshold = eval_metric.criterion.threshold
    rows = []
    for actual, expected in zip(actual_invocations, expected_invocations):
        wanted = [city for city in CITIES if city in _said(expected)]
        score = 1.0 if all(city in _said(actual) for city in wanted) else 0.0
        rows.append(PerInvocationResult(actual_invocation=actual, expected_invocation=expected, score=score,
                                        eval_status=EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED))
    return _overall(rows, lambda overall: overall >= threshold)


async def answer_length(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """The words of each answer: lower is better, passing at or under the threshold."""
    threshold = eval_metric.criterion.threshold
    rows = []
    for actual in actual_invocations:
        words = float(len(_said(actual).split()))
        rows.append(PerInvocationResult(actual_invocation=actual, score=words,
                                        eval_status=EvalStatus.PASSED if words <= threshold else EvalStatus.FAILED))
    return _overall(rows, lambda overall: overall <= threshold)


def threshold_hidden(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """1.0 when the function is shown no threshold on the metric, only its criterion's."""
    score = 1.0 if eval_metric.threshold is None and eval_metric.criterion.threshold == 0.5 else 0.0
    rows = [PerInvocationResult(actual_invocation=actual, score=score,
                                eval_status=EvalStatus.PASSED if score >= 0.5 else EvalStatus.FAILED)
            for actual in actual_invocations]
    return _overall(rows, lambda overall: overall >= 0.5)


def broken(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    raise RuntimeError("the metric broke")


def too_few(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    return EvaluationResult(overall_score=1.0, overall_eval_status=EvalStatus.PASSED, per_invocation_results=[])


NOT_A_FUNCTION = 42
'''


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in parts)


def answer(body: dict[str, Any]) -> Any:
    """The agent's model: asked about the weather in a city, a get_weather call; after
    the tool's answer, the weather in words; else a greeting."""
    contents = body.get("contents") or []
    last = contents[-1]["parts"] if contents else []
    results = [part["functionResponse"] for part in last if "functionResponse" in part]
    if results:
        asked = [part["functionCall"] for part in contents[-2]["parts"] if "functionCall" in part]
        return gemini_response(f"It is {results[0]['response']['weather']} in {asked[0]['args']['city']}.").json
    city = re.search(r"weather in (\w+)", _text(last))
    if city is None:
        return gemini_response("Hello! Ask me about the weather.").json
    return gemini_response(function_calls=[("get_weather", {"city": city.group(1)})]).json


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StubServer]:
    with StubServer(gemini_answers(answer)) as server:
        yield server


@pytest.fixture
def agents(stand_in: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``their_custom21`` (google-adk's source) and ``our_custom21`` (rewritten),
    importable, on the stand-in."""
    on_stand_in(stand_in.url, monkeypatch)
    yield from agent_packages(tmp_path, AGENT, "their_custom21", "our_custom21", monkeypatch)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _turn(n: int, text: str, response: str, city: str | None) -> dict[str, Any]:
    return {"invocation_id": f"t{n}", "user_content": _user(text),
            "final_response": {"role": "model", "parts": [{"text": response}]},
            "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": city}}] if city else []}}


#: the agent answers turn 2 with a greeting, which names no city: says_the_city gives it 0.0
CASE = {"eval_id": "paris_then_hello", "session_input": {"app_name": "weather", "user_id": "tia", "state": {}},
        "conversation": [_turn(1, "What is the weather in Paris?", "It is sunny in Paris.", "Paris"),
                         _turn(2, "hello", "Hello! Ask me about the weather in Oslo.", None)]}


def _config(package: str, criteria: dict[str, Any]) -> dict[str, Any]:
    return {"criteria": criteria,
            "custom_metrics": {name: {"code_config": {"name": f"{package}.agent.{name}"},
                                      "description": f"{name}, the user's function"} for name in criteria}}


def _write(folder: Path, package: str, criteria: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_config.json").write_text(json.dumps(_config(package, criteria)))
    path = folder / "custom.test.json"
    path.write_text(json.dumps({"eval_set_id": "custom", "eval_cases": [CASE]}))
    return path


class Kept:
    """An ``eval_set_results_manager`` both evaluators accept: it keeps what it is given."""

    def __init__(self) -> None:
        self.results: list[Any] = []

    def save_eval_set_result(self, app_name: str, eval_set_id: str, eval_case_results: list[Any]) -> None:
        self.results += eval_case_results


def _row(result: Any, package: str) -> tuple[Any, ...]:
    return (result.metric_name, result.score, result.eval_status.name, result.threshold,
            (result.custom_function_path or "").replace(package, "<package>"))


def _evaluate(evaluator: Any, package: str, path: Path, names: list[str], capsys: pytest.CaptureFixture[str],
              num_runs: int = 2) -> dict[str, Any]:
    """One evaluation: the summaries printed and failure lines raised for ``names``
    (the package's name taken out), and the kept results' rows."""
    capsys.readouterr()
    kept = Kept()
    failures: list[str] = []
    try:
        asyncio.run(asyncio.wait_for(evaluator.evaluate(package, str(path), num_runs=num_runs, app_name="weather",
                                                        eval_set_results_manager=kept), timeout=120))
    except AssertionError as failed:
        failures = [line.replace(package, "<agent>").split(" See the logs")[0].split(" Why:")[0]
                    for line in str(failed).splitlines()[1:]]
    printed = capsys.readouterr().out
    results = [{"overall": [_row(m, package) for m in case.overall_eval_metric_results if m.metric_name in names],
                "per_invocation": [[_row(m, package) for m in row.eval_metric_results if m.metric_name in names]
                                   for row in case.eval_metric_result_per_invocation]}
               for case in kept.results]
    return {"summaries": sorted(line for line in printed.splitlines() if line.startswith("Summary:")
                                and any(f"`{name}`" in line for name in names)),
            "failures": sorted(failures), "results": results}


@pytest.mark.parametrize("criteria", [
    {"says_the_city": 0.5},
    {"says_the_city": {"threshold": 0.8}},
    {"answer_length": 6.0},  # lower is better: 5 and 6 words pass
    {"answer_length": 5.0},  # 6 words fail; the mean, 5.5, is over it
    {"threshold_hidden": 0.5, "says_the_city": 0.4},
    {"broken": 0.5, "says_the_city": 0.5},  # the function raises: not evaluated
    {"response_match_score": 0.5},  # a custom metric of a built-in's name replaces it
], ids=["passes", "fails", "lower_passes", "lower_fails", "no_threshold_shown", "raises", "replaces_built_in"])
def test_custom_metrics_score_as_google_adks(criteria: dict[str, Any], agents: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    if "response_match_score" in criteria:  # its function: says_the_city, under the built-in's name
        def config(package: str) -> dict[str, Any]:
            return {"criteria": criteria, "custom_metrics": {"response_match_score": {
                "code_config": {"name": f"{package}.agent.says_the_city"}}}}
    else:
        def config(package: str) -> dict[str, Any]:
            return _config(package, criteria)
    paths = {}
    for package in ("their_custom21", "our_custom21"):
        paths[package] = _write(agents / "evals" / package, package, criteria)
        (agents / "evals" / package / "test_config.json").write_text(json.dumps(config(package)))
    names = list(criteria)
    theirs = _evaluate(TheirEvaluator, "their_custom21", paths["their_custom21"], names, capsys)
    ours = _evaluate(AgentEvaluator, "our_custom21", paths["our_custom21"], names, capsys)
    assert theirs["summaries"] and theirs["results"], "google-adk reported nothing for the custom metrics"
    assert ours == theirs


def test_what_the_custom_results_are(agents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The side-by-side cases, as a user reads them: the scores per invocation, a
    lower-is-better metric failing over its threshold, a raising function named."""
    path = _write(agents / "ours", "our_custom21", {"says_the_city": 0.8, "answer_length": 5.0, "broken": 0.5})
    got = _evaluate(AgentEvaluator, "our_custom21", path, ["says_the_city", "answer_length", "broken"], capsys,
                    num_runs=1)
    [case] = got["results"]
    assert [row[:3] for row in case["overall"]] == [("says_the_city", 0.5, "FAILED"),
                                                    ("answer_length", 5.5, "FAILED"),
                                                    ("broken", None, "NOT_EVALUATED")]
    assert [[row[1:3] for row in turn[:2]] for turn in case["per_invocation"]] == [
        [(1.0, "PASSED"), (5.0, "PASSED")], [(0.0, "FAILED"), (6.0, "FAILED")]]
    assert case["overall"][0][4] == "<package>.agent.says_the_city"  # custom_function_path, as google-adk's
    assert got["failures"] == ["answer_length for <agent> Failed. Expected 5.0, but got 5.5.",
                               "broken for <agent> was not evaluated. No score was produced, so the threshold of "
                               "0.5 was never checked and this is not a score regression.",
                               "says_the_city for <agent> Failed. Expected 0.8, but got 0.5."]
    with pytest.raises(EvalFailed, match=r"Why: the custom metric's function our_custom21\.agent\.broken raised "
                                         r"RuntimeError: the metric broke"):
        asyncio.run(AgentEvaluator.evaluate("our_custom21", str(path), num_runs=1, print_detailed_results=False))


@pytest.mark.parametrize(("name", "message"), [
    ("our_custom21.agent.no_such_function", r"custom metric 'm21': module 'our_custom21\.agent' has no "
                                            r"'no_such_function'"),
    ("no_such_package_r21.metrics.fn", r"custom metric 'm21': cannot import module 'no_such_package_r21\.metrics' "
                                       r"of its function 'no_such_package_r21\.metrics\.fn' \(ModuleNotFoundError"),
    ("our_custom21.agent.NOT_A_FUNCTION", r"custom metric 'm21': 'our_custom21\.agent\.NOT_A_FUNCTION' is not a "
                                          r"function \(its type is int\)"),
    ("says_the_city", r"custom metric 'm21': its code_config.name 'says_the_city' is not a dotted path"),
])
def test_a_bad_code_path_is_a_typed_error_before_the_agent_runs(name: str, message: str, agents: Path,
                                                                stand_in: StubServer) -> None:
    folder = agents / "bad"
    path = _write(folder, "our_custom21", {"m21": 0.5})
    (folder / "test_config.json").write_text(json.dumps({"criteria": {"m21": 0.5}, "custom_metrics": {
        "m21": {"code_config": {"name": name}}}}))
    before = len(stand_in.requests)
    with pytest.raises(CustomMetricError, match=message) as raised:
        asyncio.run(AgentEvaluator.evaluate("our_custom21", str(path), num_runs=1))
    assert isinstance(raised.value, EvalError)
    assert len(stand_in.requests) == before  # the agent never ran


def test_a_config_that_misdeclares_a_custom_metric_names_it(tmp_path: Path) -> None:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps({"criteria": {"m21": 0.5}, "custom_metrics": {"m21": {"code": "x.y"}}}))
    with pytest.raises(EvalError, match=r"not an eval config \(custom_metrics\.m21\.codeConfig: Field required"):
        AgentEvaluator.find_config_for_test_file(str(tmp_path / "x.test.json"))


def test_a_result_of_the_wrong_shape_is_a_typed_error(agents: Path) -> None:
    path = _write(agents / "shape", "our_custom21", {"too_few": 0.5})
    with pytest.raises(CustomMetricError, match=r"custom metric 'too_few': its function returned 0 per-invocation "
                                                r"results for 2 invocations"):
        asyncio.run(AgentEvaluator.evaluate("our_custom21", str(path), num_runs=1))


def test_a_function_path_comes_only_from_the_config() -> None:
    """A metric built from a request (its public custom_function_path set) runs no code:
    it is an unknown metric; the same path from a config's custom_metrics is run, by
    score() too (the host's eval runs), with a dict for a result."""
    said = Invocation(user_content=Content.user("hi"), final_response=Content.model("It is sunny in Rome."))
    sent = EvalMetric(metric_name="m21", threshold=0.5, custom_function_path=f"{__name__}.as_a_dict")
    with pytest.raises(EvalError, match="'m21' is not offered here"):
        score(sent, [(said, None)])
    [metric, *_efficiency] = get_eval_metrics_from_config(EvalConfig.model_validate(
        {"criteria": {"m21": 0.5}, "custom_metrics": {"m21": {"code_config": {"name": f"{__name__}.as_a_dict"}}}}))
    total, [one] = score(metric, [(said, None)])
    assert (total.score, total.eval_status.name, one.score, one.eval_status.name) == (0.25, "FAILED", 0.25, "FAILED")
    assert total.custom_function_path == f"{__name__}.as_a_dict"


def as_a_dict(eval_metric: Any, actual: list[Invocation], expected: Any, scenario: Any) -> dict[str, Any]:
    return {"overall_score": 0.25, "overall_eval_status": 2,
            "per_invocation_results": [{"actual_invocation": a.model_dump(), "score": 0.25, "eval_status": 2}
                                       for a in actual]}


def test_metrics_info_lists_the_configs_custom_metrics() -> None:
    config = EvalConfig.model_validate({"custom_metrics": {
        "m21": {"code_config": {"name": "x.y"}, "description": "mine"},
        "ranged": {"code_config": {"name": "x.z"}, "metric_info": {
            "metric_name": "other", "description": "from -10 to 10",
            "metric_value_info": {"interval": {"min_value": -10.0, "max_value": 10.0}}}}}})
    listed = {info.metric_name: info for info in metrics_info(config.custom_metrics)}
    assert listed["m21"].description == "mine"
    assert listed["m21"].metric_value_info.interval is not None
    assert (listed["m21"].metric_value_info.interval.min_value,
            listed["m21"].metric_value_info.interval.max_value) == (0.0, 1.0)
    assert listed["ranged"].description == "from -10 to 10"  # its metric_info, under the config's name
    assert listed["ranged"].metric_value_info.interval is not None
    assert listed["ranged"].metric_value_info.interval.min_value == -10.0
    assert "tool_trajectory_avg_score" in listed and "other" not in listed


# -- adk-actors eval AGENT_DIR ------------------------------------------------------------------


def test_adk_actors_eval_runs_a_custom_metric_from_the_config(stand_in: StubServer, tmp_path: Path) -> None:
    folder = tmp_path / "weather"
    folder.mkdir()
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(rewritten(AGENT))
    (folder / ".env").write_text(f"GOOGLE_API_KEY=test-key-not-a-secret\nGOOGLE_GEMINI_BASE_URL={stand_in.url}\n"
                                 "ADK_DISABLE_TELEMETRY=1\n")
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "custom.evalset.json").write_text(json.dumps({"eval_set_id": "custom", "eval_cases": [CASE]}))
    (evals / "test_config.json").write_text(json.dumps(_config("weather", {"says_the_city": 0.5})))
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "adk_actors.cli", "eval", str(folder), *args],
                              cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)

    ran = cli(str(evals / "custom.evalset.json"), "--print_detailed_results")
    assert ran.returncode == 0, ran.stderr
    assert "PASS custom/paris_then_hello: says_the_city 0.50" in ran.stdout
    assert "  metric says_the_city: PASSED, score 0.5, threshold 0.5\n" in ran.stdout
    [saved] = (folder / ".adk" / "eval_history").glob("*.evalset_result.json")
    [case] = json.loads(saved.read_text())["eval_case_results"]
    [custom] = [m for m in case["overall_eval_metric_results"] if m["metric_name"] == "says_the_city"]
    assert (custom["score"], custom["eval_status"], custom["custom_function_path"]) == (
        0.5, 1, "weather.agent.says_the_city")
    assert [[m["score"] for m in row["eval_metric_results"] if m["metric_name"] == "says_the_city"]
            for row in case["eval_metric_result_per_invocation"]] == [[1.0], [0.0]]

    (evals / "test_config.json").write_text(json.dumps({"criteria": {"says_the_city": 0.5}, "custom_metrics": {
        "says_the_city": {"code_config": {"name": "weather.agent.nothing_here"}}}}))
    bad = cli(str(evals / "custom.evalset.json"))
    assert bad.returncode == 2
    assert "custom metric 'says_the_city': module 'weather.agent' has no 'nothing_here'" in bad.stderr
    assert "Traceback" not in bad.stderr and "PASS" not in bad.stdout


# -- 2. the multi-turn trajectory metric, judged by a model of our registry ------------------------


def _judge(request: LlmRequest) -> str:
    """The judge's answer: per rubric of the prompt, a verdict: r_all_cities yes when
    the conversation shows a call for each of the three cities; r_no_rome no (Rome is
    asked about); r_split yes on two samples of three, no on the third."""
    prompt = request.contents[-1].text
    sample = sum(1 for asked in JUDGE.requests if asked.contents[-1].text == prompt)
    verdicts = {"r_all_cities": all(f'get_weather({{"city": "{city}"}})' in prompt for city in ("Paris", "Oslo", "Rome")),
                "r_no_rome": "Rome" not in prompt.split("<properties>")[0],
                "r_split": sample % 3 != 0}
    return "\n\n".join(f"ID: {rubric_id}\nProperty: {text}\nRationale: read it\n"
                       f"Verdict: {'yes' if verdicts.get(rubric_id) else 'no'}"
                       for rubric_id, text in re.findall(r"\[id: (\w+)\] (.*)", prompt))


JUDGE = ScriptedModel(fallback=_judge, name="r21-scripted-judge")


class ScriptedJudge(BaseLlm):
    """Our scripted model, served by our LLMRegistry under ``r21-scripted-judge``."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"r21-scripted-judge"]

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        async for response in JUDGE.generate(llm_request, stream=stream):
            yield response


THREE_TURNS = {"eval_id": "three_cities", "session_input": {"app_name": "weather", "user_id": "tia", "state": {}},
               "conversation": [_turn(1, "What is the weather in Paris?", "It is sunny in Paris.", "Paris"),
                                _turn(2, "And the weather in Oslo?", "It is rainy in Oslo.", "Oslo"),
                                _turn(3, "And the weather in Rome?", "It is sunny in Rome.", "Rome")]}


def _rubric(rubric_id: str, text: str) -> dict[str, Any]:
    return {"rubric_id": rubric_id, "rubric_content": {"text_property": text}}


def test_the_multi_turn_judge_reads_the_whole_conversation(agents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    LLMRegistry.register(ScriptedJudge)
    JUDGE.requests.clear()
    folder = agents / "judged"
    folder.mkdir()
    path = folder / "three.test.json"
    path.write_text(json.dumps({"eval_set_id": "three", "eval_cases": [THREE_TURNS]}))
    criterion = {"threshold": 0.6, "judge_model_options": {"judge_model": "r21-scripted-judge", "num_samples": 3},
                 "rubrics": [_rubric("r_all_cities", "The agent looks up each city the user asks about."),
                             _rubric("r_no_rome", "The agent never talks about Rome."),
                             _rubric("r_split", "The agent is brief.")]}
    name = "rubric_based_multi_turn_trajectory_quality_v1"
    (folder / "test_config.json").write_text(json.dumps({"criteria": {name: criterion}}))
    got = _evaluate(AgentEvaluator, "our_custom21", path, [name], capsys, num_runs=1)

    assert len(JUDGE.requests) == 3  # num_samples calls, once for the whole conversation
    prompt = JUDGE.requests[0].contents[-1].text
    said = [line for line in prompt.splitlines() if "turn " in line]
    for turn, city, weather in ((1, "Paris", "sunny"), (2, "Oslo", "rainy"), (3, "Rome", "sunny")):
        asked = next(i for i, line in enumerate(said) if line.startswith(f"USER, turn {turn}:"))
        called = next(i for i, line in enumerate(said) if f'get_weather({{"city": "{city}"}})' in line)
        answered = next(i for i, line in enumerate(said) if f'get_weather -> {{"weather": "{weather}"}}' in line
                        and f"turn {turn}" in line)
        replied = next(i for i, line in enumerate(said) if line.endswith(f"It is {weather} in {city}."))
        assert asked < called < answered < replied, said  # each turn in order, all in the one prompt
    # what the agent was told, as google-adk's prompt has it (from the turns' app_details)
    assert "<agent_instructions>\nAgent weather instructions:\n" in prompt
    assert "Answer about the weather." in prompt.split("</agent_instructions>")[0]
    assert "<agent_tools>\nAgent: weather\n- get_weather: The weather in a city.\n</agent_tools>" in prompt
    assert [line for line in said if line.startswith("USER")] == [
        "USER, turn 1: What is the weather in Paris?", "USER, turn 2: And the weather in Oslo?",
        "USER, turn 3: And the weather in Rome?"]

    # google-adk's rule: per rubric the samples' majority (r_split: 2 yes of 3), the mean
    # of the rubrics on the last invocation, the earlier ones not evaluated
    [case] = got["results"]
    assert [turn[0][1:3] for turn in case["per_invocation"]] == [(None, "NOT_EVALUATED"), (None, "NOT_EVALUATED"),
                                                                 (pytest.approx(2 / 3), "PASSED")]
    assert case["overall"][0][1:4] == (pytest.approx(2 / 3), "PASSED", 0.6)
    assert got["failures"] == []
    criterion["threshold"] = 0.7
    (folder / "test_config.json").write_text(json.dumps({"criteria": {name: criterion}}))
    raised = _evaluate(AgentEvaluator, "our_custom21", path, [name], capsys, num_runs=1)
    assert raised["failures"] == [f"{name} for <agent> Failed. Expected 0.7, but got 0.6666666666666666."]


# -- 3. the metrics only Vertex AI's eval service scores --------------------------------------------


VERTEX_SCORED = {"safety_v1": "safety_evaluator", "response_evaluation_score": "response_evaluator",
                 "multi_turn_task_success_v1": "multi_turn_task_success_evaluator",
                 "multi_turn_trajectory_quality_v1": "multi_turn_trajectory_quality_evaluator",
                 "multi_turn_tool_use_quality_v1": "multi_turn_tool_use_quality_evaluator"}


@pytest.mark.parametrize("name", list(VERTEX_SCORED))
def test_vertex_scored_metrics_say_what_they_need(name: str, agents: Path) -> None:
    """google-adk's evaluator of each calls the Vertex AI eval SDK (its facade); ours is
    a typed error naming the metric, the service and what it needs, not an unknown
    metric."""
    import google.adk.evaluation as theirs

    source = (Path(theirs.__file__).parent / f"{VERTEX_SCORED[name]}.py").read_text()
    assert "VertexAiEvalFacade" in source or "vertexai" in source
    folder = agents / name
    folder.mkdir()
    path = folder / "one.test.json"
    path.write_text(json.dumps({"eval_set_id": "one", "eval_cases": [CASE]}))
    (folder / "test_config.json").write_text(json.dumps({"criteria": {name: 0.5}}))
    with pytest.raises(VertexEvalRequired, match=rf"'{name}'.*Vertex AI's Gen AI evaluation service.*"
                                                 r"GOOGLE_CLOUD_PROJECT.*GOOGLE_CLOUD_LOCATION") as raised:
        asyncio.run(AgentEvaluator.evaluate("our_custom21", str(path), num_runs=1))
    assert "not offered here; the metrics are" not in str(raised.value)
