"""google-adk's ``AgentEvaluator`` against ours, side by side: the same agent source
(google-adk's, and the same with its imports rewritten for ours), the same eval set
and ``test_config.json`` files, the same model: a Gemini REST stand-in on 127.0.0.1
that answers by what it is asked (so the order in which either side sends its calls
does not matter). It plays the agent's model (a weather tool, then an answer) and the
judge of ``final_response_match_v2`` (valid, invalid, or no verdict at all).

Compared: each metric's summary (status, threshold, score over the runs) as both
print it with ``print_detailed_results`` (the informational efficiency metrics, which
never pass or fail, too: all but the turn's duration, a clock's reading), and the
failure lines both raise.
"""

from __future__ import annotations

import asyncio
import csv
import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator as TheirEvaluator
from google_adk_harness import agent_packages, on_stand_in, rewritten

from adk_actors.evals import AgentEvaluator, EvalError, EvalFailed, EvalFiles, EvalSet
from adk_actors.models import BaseLlm, LLMRegistry, LlmResponse
from adk_actors.testing import StubServer, gemini_answers, gemini_response
from adk_actors.types import Content

AGENT = '''
from google.adk.agents import Agent


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"weather": {"Paris": "sunny", "Oslo": "rainy", "Rome": "sunny"}.get(city, "unknown")}


def get_time(city: str) -> dict:
    """The time in a city."""
    return {"time": "noon"}


root_agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer about the weather.",
                   tools=[get_weather, get_time])
'''


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in parts)


_EXAMPLES = ("Apples", "Bananas", "Pears", "Enjoy your fruit", "...")  # google-adk's prompts' own examples


def _sentences(prompt: str) -> list[str]:
    found = re.findall(r"<sentence>(.*?)</sentence>", prompt, re.DOTALL)
    return list(dict.fromkeys(said for said in found if not said.startswith(_EXAMPLES)))


def _label(sentence: str) -> str:
    if "sunny" in sentence:
        return "supported"
    if "rainy" in sentence:
        return "contradictory"
    return "not_applicable" if "Hello" in sentence else "unsupported"


def _rubric_verdict(rubric_id: str, prompt: str) -> str:
    if rubric_id == "r_sunny":
        return "yes" if "It is sunny" in prompt else "no"
    if rubric_id == "r_called_paris":
        return "yes" if '"city": "Paris"' in prompt else "no"
    return "maybe" if rubric_id == "r_vague" else "no"


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The stand-in's answer to a generateContent body (see the module)."""
    contents = body.get("contents") or []
    last = contents[-1]["parts"] if contents else []
    prompt = _text(last)
    if not body.get("tools") and "</finished>" in prompt:  # the user simulator
        if "in Oslo." in prompt or "in Rome." in prompt:
            return gemini_response("Great, thanks! </finished>").json
        return gemini_response("Thanks. And what is the weather in Oslo?").json
    if not body.get("tools"):  # the judge
        rubrics = re.findall(r"\[id: (r_\w+)\] (.*)", prompt)
        if rubrics:
            return gemini_response("\n\n".join(
                f"ID: {rubric_id}\nProperty: {text.strip()}\nRationale: looked\nVerdict: {_rubric_verdict(rubric_id, prompt)}"
                for rubric_id, text in rubrics)).json
        if "supporting_excerpt" in prompt:  # hallucinations_v1: label the sentences
            return gemini_response("\n\n".join(
                f"sentence: {said}\nlabel: {_label(said)}\nrationale: looked\nsupporting_excerpt: null\n"
                f"contradicting_excerpt: null" for said in _sentences(prompt))).json
        responses = re.findall(r"(?:\*\*Response Begin\*\*|<response>)\n(.*?)\n(?:\*\*Response End\*\*|</response>)",
                               prompt, re.DOTALL)
        if responses:  # hallucinations_v1: cut the response into sentences
            return gemini_response("\n".join(f"<sentence>{said}</sentence>"
                                             for said in re.split(r"(?<=[.!?])\s+", responses[-1].strip()))).json
        if "weather" not in prompt or "is_the_agent_response_valid" not in prompt:
            return gemini_response("what?").json
        if "hello" in prompt.lower() or "Sunny, in Paris" in prompt:
            return gemini_response("I would rather not say.").json  # no verdict
        verdict = "invalid" if "cloudy" in prompt and "sunny" in prompt else "valid"
        return gemini_response(f'{{"reasoning": "compared", "is_the_agent_response_valid": "{verdict}"}}').json
    results = [part["functionResponse"] for part in last if "functionResponse" in part]
    if results:
        asked = [part["functionCall"] for part in contents[-2]["parts"] if "functionCall" in part]
        said = {r["name"]: r["response"] for r in results}
        city = asked[0]["args"]["city"]
        words = f"It is {said['get_weather']['weather']} in {city}"
        if "get_time" in said:
            words += f" at {said['get_time']['time']}"
        return gemini_response(words + ".").json
    asked_for = re.search(r"weather in (\w+)", prompt)
    if asked_for is None:
        return gemini_response("Hello! Ask me about the weather.").json
    city = asked_for.group(1)
    calls = [("get_weather", {"city": city})]
    if "time" in prompt:
        calls = [("get_time", {"city": city}), *calls]
    return gemini_response(function_calls=calls).json


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(answer)) as server:
        yield server.url


@pytest.fixture
def agents(stand_in: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Two importable agent packages, ``their_weather`` (google-adk) and ``our_weather``
    (the same source rewritten), on the stand-in by environment variables alone."""
    on_stand_in(stand_in, monkeypatch)
    yield from agent_packages(tmp_path, AGENT, "their_weather", "our_weather", monkeypatch)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _invocation(text: str, response: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"invocation_id": f"i-{abs(hash(text))}", "user_content": _user(text),
            "final_response": {"role": "model", "parts": [{"text": response}]},
            "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in calls]}}


CASES = {
    "paris": [_invocation("What is the weather in Paris?", "It is sunny in Paris.",
                          [("get_weather", {"city": "Paris"})])],
    "hello_then_oslo": [_invocation("hello", "Hello! Ask me about the weather.", []),
                        _invocation("What is the weather in Oslo?", "Oslo is rainy today.",
                                    [("get_weather", {"city": "Oslo"})])],
    "expects_cloud_and_other_order": [
        _invocation("What is the weather in Rome, and the time?", "It is cloudy in Rome.",
                    [("get_weather", {"city": "Rome"}), ("get_time", {"city": "Rome"})])],
    "old_tool_args": [_invocation("What is the weather in Paris?", "Sunny, in Paris.",
                                  [("get_weather", {"city": "paris"})])],
}


def _write_case(folder: Path, case_id: str, criteria: dict[str, Any],
                rubrics: list[dict[str, Any]] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    eval_set = {"eval_set_id": f"set_{case_id}", "eval_cases": [
        {"eval_id": case_id, "conversation": CASES[case_id],
         "session_input": {"app_name": "weather", "user_id": "tia", "state": {}},
         **({"rubrics": rubrics} if rubrics else {})}]}
    path = folder / f"{case_id}.test.json"
    path.write_text(json.dumps(eval_set))
    (folder / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    return path


def _evaluate(evaluator: Any, module: str, path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """One evaluation: the summary lines it printed and the failure lines it raised,
    with the agent's module name taken out."""
    capsys.readouterr()
    failures: list[str] = []
    try:
        asyncio.run(asyncio.wait_for(evaluator.evaluate(module, str(path), num_runs=2), timeout=120))
    except AssertionError as failed:
        failures = [line.replace(module, "<agent>").split(" See the logs")[0].split(" Why:")[0]
                    for line in str(failed).splitlines()[1:]]
    printed = capsys.readouterr().out
    # the informational efficiency metrics are compared too, but for the seconds a turn took (a clock's)
    return {"summaries": sorted(line for line in printed.splitlines() if line.startswith("Summary:")
                                and "invocation_duration_v1" not in line),
            "failures": sorted(failures)}


JUDGE = {"threshold": 0.5, "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3}}


def rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    return {"rubric_id": rubric_id, "rubric_content": {"text_property": text}, **({"type": kind} if kind else {})}


SUNNY, POLITE = rubric("r_sunny", "The answer says it is sunny."), rubric("r_polite", "The answer thanks the user.")
PARIS, VAGUE = rubric("r_called_paris", "The weather tool is asked about Paris."), rubric("r_vague", "It is fine.")


@pytest.mark.parametrize(("case_id", "criteria"), [
    ("paris", {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}),
    ("hello_then_oslo", {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}),
    ("hello_then_oslo", {"response_match_score": 0.9}),
    ("expects_cloud_and_other_order", {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "EXACT"}}),
    ("expects_cloud_and_other_order", {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "ANY_ORDER"}}),
    ("expects_cloud_and_other_order", {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "in-order"}}),
    ("old_tool_args", {"tool_trajectory_avg_score": {"threshold": 1.0, "matchType": "IN_ORDER"}}),
    ("old_tool_args", {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER",
                                                     "ignore_args": True}, "response_match_score": 0.6}),
    ("paris", {"final_response_match_v2": JUDGE}),
    ("expects_cloud_and_other_order", {"final_response_match_v2": JUDGE}),
    ("hello_then_oslo", {"final_response_match_v2": JUDGE}),
    ("old_tool_args", {"final_response_match_v2": JUDGE}),
    ("paris", {"rubric_based_final_response_quality_v1": {**JUDGE, "threshold": 0.6, "rubrics": [SUNNY, POLITE]}}),
    ("hello_then_oslo", {"rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [SUNNY]}}),
    ("paris", {"rubric_based_tool_use_quality_v1": {**JUDGE, "threshold": 1.0, "rubrics": [PARIS]}}),
    ("old_tool_args", {"rubric_based_tool_use_quality_v1": {**JUDGE, "rubrics": [PARIS, VAGUE]},
                       "rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [VAGUE]}}),
    ("expects_cloud_and_other_order", {"rubric_based_tool_use_quality_v1": {**JUDGE, "rubrics": [PARIS]}}),
    ("paris", {"rubric_based_tool_use_quality_v1": JUDGE}),
    ("paris", {"rubric_based_final_response_quality_v1": JUDGE,
               "rubric_based_tool_use_quality_v1": {**JUDGE, "threshold": 0.9}}),
    ("paris", {"hallucinations_v1": {**JUDGE, "threshold": 0.8}}),
    ("hello_then_oslo", {"hallucinations_v1": {**JUDGE, "threshold": 0.2}}),
    ("hello_then_oslo", {"hallucinations_v1": {**JUDGE, "threshold": 0.5, "evaluate_intermediate_nl_responses": True}}),
    ("old_tool_args", {"hallucinations_v1": {"threshold": 0.5}}),
])
def test_google_adk_and_ours_score_the_same_eval_set_alike(case_id: str, criteria: dict[str, Any], agents: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # the last case carries its rubrics: a final-response one and a tool-use one, each read by its metric only
    rubrics = [rubric("r_sunny", "The answer says it is sunny.", "FINAL_RESPONSE_QUALITY"),
               rubric("r_called_paris", "The weather tool is asked about Paris.", "TOOL_USE_QUALITY"),
               rubric("r_polite", "The answer thanks the user.", "TOOL_USE_QUALITY")]
    last = criteria.get("rubric_based_final_response_quality_v1") is JUDGE
    path = _write_case(agents / "evals" / case_id, case_id, criteria, rubrics if last else None)
    theirs = _evaluate(TheirEvaluator, "their_weather", path, capsys)
    ours = _evaluate(AgentEvaluator, "our_weather", path, capsys)
    assert theirs["summaries"], "google-adk printed no summary"
    assert ours == theirs


def test_what_the_side_by_side_cases_show(agents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The cases above are not all alike: passes, score failures and a judge with no
    verdict, each as a user reads it from our evaluator."""
    passed = _evaluate(AgentEvaluator, "our_weather",
                       _write_case(agents / "a", "paris", {"tool_trajectory_avg_score": 1.0,
                                                            "response_match_score": 0.8}), capsys)
    assert passed["failures"] == [] and len(passed["summaries"]) == 5  # and 3 informational
    exact = _evaluate(AgentEvaluator, "our_weather", _write_case(
        agents / "b", "expects_cloud_and_other_order", {"tool_trajectory_avg_score": 1.0}), capsys)
    assert exact["failures"] == ["tool_trajectory_avg_score for <agent> Failed. Expected 1.0, but got 0.0."]
    judged = _evaluate(AgentEvaluator, "our_weather", _write_case(
        agents / "c", "expects_cloud_and_other_order", {"final_response_match_v2": JUDGE}), capsys)
    assert judged["failures"] == ["final_response_match_v2 for <agent> Failed. Expected 0.5, but got 0.0."]
    with pytest.raises(EvalFailed, match=r"was not evaluated.*Why: .*no verdict"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(_write_case(
            agents / "d", "old_tool_args", {"final_response_match_v2": {**JUDGE, "threshold": 0.0}})),
            num_runs=1, print_detailed_results=False))


class StrictJudge(BaseLlm):
    """A judge registered with our LLMRegistry: it finds every answer invalid."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"strict-judge-for-evals"]

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncIterator[LlmResponse]:
        verdict = '{"reasoning": "too strict", "is_the_agent_response_valid": "invalid"}'
        yield LlmResponse(content=Content.model(verdict))


def test_the_judge_comes_from_our_model_registry(agents: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A judge model registered with LLMRegistry judges; one that cannot be had (no
    key for its provider) leaves the metric not evaluated, and the failure says why."""
    LLMRegistry.register(StrictJudge)
    strict = {**JUDGE, "judge_model_options": {"judge_model": "strict-judge-for-evals", "num_samples": 1}}
    judged = _evaluate(AgentEvaluator, "our_weather",
                       _write_case(agents / "strict", "paris", {"final_response_match_v2": strict}), capsys)
    assert judged["failures"] == ["final_response_match_v2 for <agent> Failed. Expected 0.5, but got 0.0."]
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    keyless = {**JUDGE, "judge_model_options": {"judge_model": "claude-sonnet-4-5", "num_samples": 1}}
    with pytest.raises(EvalFailed, match=r"was not evaluated.*Why: AuthenticationError.*ANTHROPIC_API_KEY"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(_write_case(
            agents / "keyless", "paris", {"final_response_match_v2": keyless})), num_runs=1))


def test_a_google_adk_eval_test_runs_here_with_its_imports_rewritten(agents: Path) -> None:
    """A google-adk user's eval test, as google-adk's docs write one, with only its
    imports changed: it passes on a passing case and fails (AssertionError) on a
    failing one."""
    source = rewritten('''
import asyncio
from google.adk.evaluation.agent_evaluator import AgentEvaluator


def test(path):
    asyncio.run(AgentEvaluator.evaluate(agent_module="our_weather", eval_dataset_file_path_or_dir=path,
                                        num_runs=1))
''')
    namespace: dict[str, Any] = {}
    exec(compile(source, "google_adk_style_test", "exec"), namespace)
    assert namespace["AgentEvaluator"] is AgentEvaluator
    namespace["test"](str(_write_case(agents / "good", "paris", {"tool_trajectory_avg_score": 1.0})))
    with pytest.raises(AssertionError, match="response_match_score for our_weather Failed"):
        namespace["test"](str(_write_case(agents / "worse", "old_tool_args", {"response_match_score": 0.9})))


def test_results_are_saved_where_the_console_reads_them(agents: Path) -> None:
    path = _write_case(agents / "e", "paris", {"tool_trajectory_avg_score": 1.0})
    files = EvalFiles(agents / "data" / "evals")
    eval_set = EvalSet.model_validate_json(path.read_text())
    asyncio.run(AgentEvaluator.evaluate_eval_set("our_weather", eval_set, eval_config=AgentEvaluator
                                                 .find_config_for_test_file(str(path)), num_runs=1,
                                                 app_name="weather", eval_set_results_manager=files,
                                                 print_detailed_results=False))
    [saved] = files.list_results("weather")
    [case] = files.get_result("weather", saved).eval_case_results
    assert case.eval_id == "paris" and case.final_eval_status.value == 1
    assert case.overall_eval_metric_results[0].score == 1.0


def test_an_older_format_test_file_and_bad_input(agents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = agents / "old"
    folder.mkdir()
    (folder / "weather.test.json").write_text(json.dumps([
        {"query": "What is the weather in Oslo?", "expected_tool_use": [
            {"tool_name": "get_weather", "tool_input": {"city": "Oslo"}}], "reference": "It is rainy in Oslo."}]))
    theirs = _evaluate(TheirEvaluator, "their_weather", folder, capsys)
    ours = _evaluate(AgentEvaluator, "our_weather", folder, capsys)
    assert ours == theirs and ours["failures"] == [] and len(ours["summaries"]) == 5

    # migrated to the eval set format, it runs the same; the per-invocation rows go to a CSV file
    migrated = agents / "migrated" / "weather.test.json"
    migrated.parent.mkdir()
    AgentEvaluator.migrate_eval_data_to_new_schema(str(folder / "weather.test.json"), str(migrated))
    assert EvalSet.model_validate_json(migrated.read_text()).eval_cases[0].conversation
    out = agents / "results" / "rows.csv"
    asyncio.run(AgentEvaluator.evaluate("our_weather", str(migrated), num_runs=2, output_file=str(out),
                                        print_detailed_results=False))
    with out.open() as rows_file:
        rows = list(csv.DictReader(rows_file))
    assert {(row["metric_name"], row["score"], row["eval_status"]) for row in rows
            if row["metric_name"] in ("tool_trajectory_avg_score", "response_match_score")} == {
        ("tool_trajectory_avg_score", "1.0", "PASSED"), ("response_match_score", "1.0", "PASSED")}
    assert len(rows) == 2 * 2 + 2 * 4 and rows[0]["actual_tool_calls"] == 'get_weather({"city": "Oslo"})'

    (folder / "test_config.json").write_text(json.dumps({"criteria": {"no_such_metric": 0.5}}))
    with pytest.raises(ValueError, match="Invalid criteria key"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(folder)))
    bad = _write_case(agents / "bad", "paris", {"safety_v1": 0.5})
    with pytest.raises(EvalError, match="not offered"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(bad)))
    (agents / "bad" / "test_config.json").write_text(json.dumps({"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"num_samples": 0}}}}))
    with pytest.raises(EvalError, match=r"judge criterion.*num_samples"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(bad)))
    (agents / "bad" / "test_config.json").write_text(json.dumps({"criteria": {"tool_call_count_v1": 1.0}}))
    with pytest.raises(EvalError, match="does not take a threshold"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(bad)))
    (agents / "bad" / "test_config.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": {
        "threshold": 1.0, "match_type": "SOMETIMES"}}}))
    with pytest.raises(EvalError, match="match_type"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(bad)))
    (agents / "bad" / "test_config.json").write_text(json.dumps({"criteria": {"response_match_score": "high"}}))
    with pytest.raises(EvalError, match="not an eval config"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(bad)))
    with pytest.raises(ValueError, match="num_runs"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(bad), num_runs=0))
    (agents / "empty").mkdir()
    with pytest.raises(ValueError, match=r"no \*\.test\.json"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(agents / "empty")))


SCENARIO = {"starting_prompt": "What is the weather in Paris?",
            "conversation_plan": "Ask for the weather in Paris, then in Oslo, then stop."}


@pytest.mark.parametrize("criteria", [
    {"rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [SUNNY]},
     "rubric_based_tool_use_quality_v1": {**JUDGE, "rubrics": [PARIS]}},
    {"tool_trajectory_avg_score": 1.0, "rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [SUNNY]}},
])
def test_the_user_simulator_plays_a_scenario_alike(criteria: dict[str, Any], agents: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A conversation_scenario case: the simulated user (the stand-in's model) asks
    about Paris, then Oslo, then stops; the rubric metrics score both invocations (one
    of each rubric passes), those that need expected invocations are not evaluated."""
    folder = agents / "scenario"
    folder.mkdir()
    path = folder / "scenario.test.json"
    path.write_text(json.dumps({"eval_set_id": "scenario", "eval_cases": [
        {"eval_id": "paris_then_oslo", "conversation_scenario": SCENARIO,
         "session_input": {"app_name": "weather", "user_id": "tia", "state": {}}}]}))
    simulator = {"type": "llm_backed", "model": "gemini-2.5-flash", "max_allowed_invocations": 5}
    (folder / "test_config.json").write_text(json.dumps({"criteria": criteria, "user_simulator_config": simulator}))
    theirs = _evaluate(TheirEvaluator, "their_weather", path, capsys)
    ours = _evaluate(AgentEvaluator, "our_weather", path, capsys)
    assert ours == theirs
    assert any("rubric_based_final_response_quality_v1`. Expected threshold: `0.5`, actual value: `0.5`" in line
               for line in ours["summaries"])


def test_the_user_simulator_stops_at_its_limit_and_refuses_a_bad_config(agents: Path) -> None:
    folder = agents / "limit"
    folder.mkdir()
    path = folder / "scenario.test.json"
    path.write_text(json.dumps({"eval_set_id": "scenario", "eval_cases": [
        {"eval_id": "paris_only", "conversation_scenario": SCENARIO}]}))
    files = EvalFiles(agents / "data")
    config = {"criteria": {"rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [SUNNY]}},
              "user_simulator_config": {"max_allowed_invocations": 1}}
    (folder / "test_config.json").write_text(json.dumps(config))
    asyncio.run(AgentEvaluator.evaluate("our_weather", str(path), num_runs=1, app_name="weather",
                                        eval_set_results_manager=files, print_detailed_results=False))
    [case] = files.get_result("weather", files.list_results("weather")[0]).eval_case_results
    assert [row.actual_invocation.user_content.text for row in case.eval_metric_result_per_invocation] == [
        "What is the weather in Paris?"]  # the first message only: the limit counts it
    assert case.overall_eval_metric_results[0].details["rubric_scores"] == [{"rubric_id": "r_sunny", "score": 1.0}]

    (folder / "test_config.json").write_text(json.dumps({**config, "user_simulator_config": {"type": "audio"}}))
    with pytest.raises(EvalError, match="user simulator type"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(path)))
    (folder / "test_config.json").write_text(json.dumps({**config, "user_simulator_config": {
        "custom_instructions": "Play the user: {{ conversation_plan }}"}}))
    with pytest.raises(EvalError, match="stop_signal"):
        asyncio.run(AgentEvaluator.evaluate("our_weather", str(path)))
