"""Eval sets (adk_actors.evals) through google-adk's eval routes on a real ``serve``: a
session becomes an eval case, a run replays it on new sessions and scores it, results
are kept; every shape is checked with google-adk's own models, and a set written by
google-adk's models runs here."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving

from adk_actors.evals import rouge1_f

TOKENS = {"ops-token-0123456789abcdef": "*", "ann-token-0123456789abcdef": "ann"}
METRICS = [{"metric_name": "tool_trajectory_avg_score", "threshold": 1.0},
           {"metric_name": "response_match_score", "threshold": 0.8}]


def test_rouge1_f() -> None:
    assert rouge1_f("It is 21 °C in Paris.", "it is 21 °c in paris") == 1.0
    assert rouge1_f("the cat sat", "the cat ran") == pytest.approx(2 / 3)
    assert rouge1_f("sunny", "raining") == 0.0 and rouge1_f("", "anything") == 0.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving(tmp_path_factory.mktemp("evals")) as info:
        yield info


@pytest.fixture
def client(served: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served["url"], timeout=60) as http:
        yield http


def conversation(client: httpx.Client, user: str, *texts: str) -> str:
    session = client.post(f"/apps/weather_bot/users/{user}/sessions").json()["id"]
    for text in texts:
        answer = client.post("/run", json={"appName": "weather_bot", "userId": user, "sessionId": session,
                                           "newMessage": {"role": "user", "parts": [{"text": text}]}})
        assert answer.status_code == 200, answer.text
    return session


def test_a_session_becomes_an_eval_case_that_passes_then_fails_when_its_expectation_changes(
        client: httpx.Client, served: dict[str, Any]) -> None:
    from google.adk.cli.dev_server import RunEvalResult
    from google.adk.evaluation.eval_case import EvalCase
    from google.adk.evaluation.eval_result import EvalSetResult
    from google.adk.evaluation.eval_set import EvalSet

    base = "/dev/apps/weather_bot"
    session = conversation(client, "tia", "Weather in Paris?", "And in Oslo?")
    made = client.post(f"{base}/eval-sets", json={"eval_set": {"eval_set_id": "weather", "eval_cases": []}})
    assert made.status_code == 200 and EvalSet.model_validate(made.json()).eval_set_id == "weather"
    assert client.post(f"{base}/eval-sets", json={"eval_set": {"eval_set_id": "weather"}}).status_code == 400
    assert client.get(f"{base}/eval_sets").json() == ["weather"]
    assert client.get(f"{base}/eval-sets").json() == {"evalSetIds": ["weather"]}
    added = client.post(f"{base}/eval_sets/weather/add_session",
                        json={"evalId": "paris_then_oslo", "sessionId": session, "userId": "tia"})
    assert added.status_code == 200, added.text
    assert client.get(f"{base}/eval_sets/weather/evals").json() == ["paris_then_oslo"]
    case = EvalCase.model_validate(client.get(f"{base}/eval_sets/weather/evals/paris_then_oslo").json())
    assert [i.user_content.parts[0].text for i in case.conversation] == ["Weather in Paris?", "And in Oslo?"]
    assert case.conversation[1].final_response.parts[0].text == "It is -3 °C and snow in Oslo."
    assert client.post(f"{base}/eval_sets/weather/add_session",
                       json={"evalId": "x", "sessionId": "nope", "userId": "tia"}).status_code == 404

    # The file is google-adk's, private to the host's user.
    file = Path(served["config"]).parent / "data" / "evals" / "weather_bot" / "weather.evalset.json"
    assert EvalSet.model_validate_json(file.read_text()).eval_cases[0].eval_id == "paris_then_oslo"
    assert stat.S_IMODE(file.stat().st_mode) == 0o600

    ran = client.post(f"{base}/eval-sets/weather/run", json={"eval_case_ids": [], "eval_metrics": METRICS})
    assert ran.status_code == 200, ran.text
    [result] = [RunEvalResult.model_validate(r) for r in ran.json()["runEvalResults"]]
    assert result.final_eval_status.value == 1  # PASSED
    assert {(m.metric_name, m.score, m.eval_status.value) for m in result.overall_eval_metric_results} == {
        ("tool_trajectory_avg_score", 1.0, 1), ("response_match_score", 1.0, 1)}
    assert len(result.eval_metric_result_per_invocation) == 2
    assert result.session_id.startswith("___eval___session___") and result.user_id == "tia"
    listed = client.get("/apps/weather_bot/users/tia/sessions").json()
    assert [s["id"] for s in listed] == [session]  # the eval run's session is left out, as in google-adk
    assert client.get(f"/apps/weather_bot/users/tia/sessions/{result.session_id}").status_code == 200

    # Expect another answer for Oslo: the response metric fails, and so does the case.
    changed = client.get(f"{base}/eval_sets/weather/evals/paris_then_oslo").json()
    changed["conversation"][1]["finalResponse"]["parts"][0]["text"] = "Oslo is sunny and warm today."
    assert client.put(f"{base}/eval_sets/weather/evals/paris_then_oslo", json=changed).status_code == 200
    legacy = client.post(f"{base}/eval_sets/weather/run_eval", json={"evalIds": ["paris_then_oslo"],
                                                                      "evalMetrics": METRICS})
    [failed] = [RunEvalResult.model_validate(r) for r in legacy.json()]
    assert failed.final_eval_status.value == 2
    scores = {m.metric_name: m for m in failed.overall_eval_metric_results}
    assert scores["tool_trajectory_avg_score"].eval_status.value == 1
    assert scores["response_match_score"].eval_status.value == 2 and scores["response_match_score"].score < 0.8

    ids = client.get(f"{base}/eval_results").json()
    assert len(ids) == 2 and client.get(f"{base}/eval-results").json() == {"evalResultIds": ids}
    stored = EvalSetResult.model_validate(client.get(f"{base}/eval_results/{ids[0]}").json())
    assert stored.eval_set_id == "weather" and len(stored.eval_case_results) == 1

    # Bad input: a typed 4xx, nothing stored half-way.
    assert client.post(f"{base}/eval-sets/weather/run",
                       json={"eval_metrics": [{"metric_name": "safety_v1"}]}).status_code == 400
    assert client.post(f"{base}/eval-sets/weather/run",
                       json={"eval_case_ids": ["nope"], "eval_metrics": METRICS}).status_code == 400
    assert client.post(f"{base}/eval-sets/nope/run", json={"eval_metrics": METRICS}).status_code == 400
    assert client.post(f"{base}/eval-sets", json={"eval_set": {"eval_set_id": "../../etc"}}).status_code == 400
    assert client.get(f"{base}/eval_sets/weather/evals/nope").status_code == 404
    assert client.get(f"{base}/eval_results/nope").status_code == 404
    assert client.get("/dev/apps/nobody/eval_sets").status_code == 404
    assert len(client.get(f"{base}/eval_results").json()) == 2
    assert client.delete(f"{base}/eval_sets/weather/evals/paris_then_oslo").status_code == 200
    assert client.get(f"{base}/eval_sets/weather/evals").json() == []
    info = client.get(f"{base}/metrics-info").json()["metricsInfo"]
    assert {m["metricName"] for m in info} == {"tool_trajectory_avg_score", "response_match_score",
                                               "final_response_match_v2", "rubric_based_final_response_quality_v1",
                                               "rubric_based_tool_use_quality_v1", "hallucinations_v1",
                                               "rubric_based_multi_turn_trajectory_quality_v1",
                                               "per_turn_user_simulator_quality_v1"}


def test_an_eval_set_written_by_google_adk_runs_here(client: httpx.Client, served: dict[str, Any]) -> None:
    """google-adk's own eval-set manager writes a set (with a case in its 1.x
    intermediate-data form, as older files have it) into the host's eval folder: it is
    listed and run here."""
    from google.adk.evaluation.eval_case import EvalCase, IntermediateData, Invocation, SessionInput
    from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager
    from google.genai import types

    theirs = LocalEvalSetsManager(agents_dir=str(Path(served["config"]).parent / "data" / "evals"))
    theirs.create_eval_set("weather_bot", "from_google_adk")
    theirs.add_eval_case("weather_bot", "from_google_adk", EvalCase(
        eval_id="london", session_input=SessionInput(app_name="weather_bot", user_id="gus", state={}),
        conversation=[Invocation(
            user_content=types.Content(role="user", parts=[types.Part(text="Weather in London?")]),
            final_response=types.Content(role="model", parts=[types.Part(text="It is 15 °C and drizzle in London.")]),
            intermediate_data=IntermediateData(tool_uses=[types.FunctionCall(name="get_weather",
                                                                           args={"city": "London"})]))]))
    assert "from_google_adk" in client.get("/dev/apps/weather_bot/eval_sets").json()
    ran = client.post("/dev/apps/weather_bot/eval-sets/from_google_adk/run", json={"eval_metrics": METRICS}).json()
    [result] = ran["runEvalResults"]
    assert result["finalEvalStatus"] == 1, json.dumps(result)[:2000]
    assert result["userId"] == "gus"
    # ... and the set the host keeps is one google-adk's manager reads back.
    client.post("/dev/apps/weather_bot/eval-sets", json={"eval_set": {"eval_set_id": "ours"}})
    client.post("/dev/apps/weather_bot/eval_sets/ours/add_session",
                json={"evalId": "paris", "sessionId": conversation(client, "gus", "Weather in Paris?"),
                      "userId": "gus"})
    case = theirs.get_eval_case("weather_bot", "ours", "paris")
    assert case is not None and case.conversation[0].final_response.parts[0].text == "It is 21 °C and clear in Paris."


def test_only_an_operator_reaches_eval_sets(tmp_path: Path) -> None:
    env = {"ADK_ACTORS_HTTP__TOKENS": json.dumps(TOKENS)}
    with serving(tmp_path, env=env) as served, httpx.Client(base_url=served["url"], timeout=30) as http:
        ann = {"authorization": "Bearer ann-token-0123456789abcdef"}
        ops = {"authorization": "Bearer ops-token-0123456789abcdef"}
        assert http.get("/dev/apps/weather_bot/eval_sets", headers=ann).status_code == 403
        assert http.post("/dev/apps/weather_bot/eval-sets", json={"eval_set": {"eval_set_id": "x"}},
                         headers=ann).status_code == 403
        assert http.get("/dev/apps/weather_bot/eval_sets").status_code == 401
        assert http.get("/dev/apps/weather_bot/eval_sets", headers=ops).json() == []


def test_the_cli_runs_eval_set_files_and_fails_on_a_failing_case(client: httpx.Client, served: dict[str, Any],
                                                                 tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import ROOT

    client.post("/dev/apps/weather_bot/eval-sets", json={"eval_set": {"eval_set_id": "cli"}})
    client.post("/dev/apps/weather_bot/eval_sets/cli/add_session",
                json={"evalId": "new_york", "sessionId": conversation(client, "cy", "Weather in New York?"),
                      "userId": "cy"})
    kept = Path(served["config"]).parent / "data" / "evals" / "weather_bot" / "cli.evalset.json"
    wrong = json.loads(kept.read_text())
    wrong["eval_set_id"] = "cli_wrong"
    wrong["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] = "No idea, sorry."
    (tmp_path / "wrong.evalset.json").write_text(json.dumps(wrong))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "adk_actors.cli", "eval", "weather_bot", *args,
                               "--url", served["url"]], capture_output=True, text=True, timeout=120, cwd=ROOT)

    good = cli(str(kept), str(ROOT / "examples" / "weather_bot" / "weather.evalset.json"))
    assert good.returncode == 0, good.stdout + good.stderr
    assert "PASS cli/new_york: tool_trajectory_avg_score 1.00, response_match_score 1.00" in good.stdout
    assert "PASS weather/oslo_then_london" in good.stdout and "PASS weather/paris" in good.stdout
    bad = cli(str(kept), str(tmp_path / "wrong.evalset.json"), "--metric", "response_match_score=0.5")
    assert bad.returncode == 1 and "FAILED cli_wrong/new_york: response_match_score 0.00" in bad.stdout, bad.stdout
    config = tmp_path / "test_config.json"  # google-adk's eval config instead of --metric
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.5, "tool_trajectory_avg_score": {
        "threshold": 1.0, "match_type": "ANY_ORDER"}}}))
    configured = cli(str(kept), str(tmp_path / "wrong.evalset.json"), "--config_file_path", str(config))
    assert configured.returncode == 1, configured.stdout + configured.stderr
    assert "PASS cli/new_york: response_match_score 1.00, tool_trajectory_avg_score 1.00" in configured.stdout
    assert "FAILED cli_wrong/new_york: response_match_score 0.00, tool_trajectory_avg_score 1.00" in configured.stdout
    config.write_text(json.dumps({"criteria": {"response_match_score": "high"}}))
    bad_config = cli(str(kept), "--config_file_path", str(config))
    assert bad_config.returncode == 2 and "not an eval config" in bad_config.stderr
    not_a_set = cli("/etc/passwd")
    assert not_a_set.returncode == 2 and "not an eval set" in not_a_set.stderr and "root:" not in not_a_set.stderr
    unknown = cli(str(kept), "--metric", "safety_v1")
    # a metric refused before anything runs (it needs Vertex AI's eval service): exit 2, as a bad option
    assert unknown.returncode == 2 and "safety_v1" in unknown.stderr and "Traceback" not in unknown.stderr


def test_a_turn_that_fails_fails_its_case_and_says_why() -> None:
    """A run of a case whose second turn fails (a deadline, a killed worker ...): the
    case fails, each metric's overall result carries the error, and the invocation
    that ran is scored."""
    from adk_actors import Content, Event, FunctionCall, Part, RunFailedError
    from adk_actors.evals import EvalCase, EvalMetric, EvalSet, EvalStatus, Invocation, run_eval_set

    class FailingSecondTurn:
        """A Runner double: the first turn answers as expected, the second fails."""

        def __init__(self) -> None:
            self.turns = 0

        def create_session(self, user_id: str, session_id: str | None = None,
                           state: dict[str, Any] | None = None) -> None:
            assert session_id is not None and session_id.startswith("___eval___session___")

        def run(self, user_id: str, session_id: str, message: str | Content) -> Any:
            self.turns += 1
            if self.turns == 2:
                raise RunFailedError("run-2", "timeout", "RunTimeout", "the run exceeded its 5 s deadline")
            call = Content(role="model", parts=(Part(function_call=FunctionCall(name="get_weather",
                                                                                args={"city": "Paris"})),))
            return iter([Event(author="user", invocation_id="e-1", content=Content.user("Paris?")),
                         Event(author="bot", invocation_id="e-1", content=call),
                         Event(author="bot", invocation_id="e-1", content=Content.model("Sunny in Paris."))])

    expected = [Invocation(user_content=Content.user("Paris?"), final_response=Content.model("Sunny in Paris."),
                           intermediate_data={"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]}),
                Invocation(user_content=Content.user("And Oslo?"), final_response=Content.model("Snow in Oslo."))]
    eval_set = EvalSet(eval_set_id="s", eval_cases=[EvalCase(eval_id="two_turns", conversation=expected)])
    metrics = [EvalMetric(metric_name="tool_trajectory_avg_score"), EvalMetric(metric_name="response_match_score")]
    [case] = run_eval_set(FailingSecondTurn(), "weather_bot", eval_set, metrics).eval_case_results
    assert case.final_eval_status == EvalStatus.FAILED
    for metric in case.overall_eval_metric_results:
        assert metric.eval_status == EvalStatus.FAILED
        assert metric.details["error"].startswith("RunFailedError") and "RunTimeout" in metric.details["error"]
    assert [m.score for m in case.overall_eval_metric_results] == [1.0, 1.0]  # the turn that ran matched
    assert len(case.eval_metric_result_per_invocation) == 1


def test_print_detailed_results_shows_expected_against_actual_for_a_passed_case() -> None:
    """google-adk's ``--print_detailed_results``: a case that passed prints nothing more
    by default; with the flag, each invocation's expected against actual tools and
    response."""
    from adk_actors import Content, Event, FunctionCall, Part
    from adk_actors.cli import build_parser
    from adk_actors.cli._eval import eval_differences as _eval_differences
    from adk_actors.evals import EvalCase, EvalMetric, EvalSet, EvalStatus, Invocation, run_eval_set

    class OneTurn:
        """A Runner double whose one turn calls get_weather and answers as expected."""

        def create_session(self, user_id: str, session_id: str | None = None,
                           state: dict[str, Any] | None = None) -> None:
            return None

        def run(self, user_id: str, session_id: str, message: str | Content) -> Any:
            call = Content(role="model", parts=(Part(function_call=FunctionCall(name="get_weather",
                                                                                args={"city": "Paris"})),))
            return iter([Event(author="user", invocation_id="e-1", content=Content.user("Paris?")),
                         Event(author="bot", invocation_id="e-1", content=call),
                         Event(author="bot", invocation_id="e-1", content=Content.model("Sunny in Paris."))])

    expected = [Invocation(user_content=Content.user("Paris?"), final_response=Content.model("Sunny in Paris."),
                           intermediate_data={"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]})]
    eval_set = EvalSet(eval_set_id="s", eval_cases=[EvalCase(eval_id="paris", conversation=expected)])
    metrics = [EvalMetric(metric_name="tool_trajectory_avg_score"), EvalMetric(metric_name="response_match_score")]
    [case] = run_eval_set(OneTurn(), "weather_bot", eval_set, metrics).eval_case_results
    assert case.final_eval_status == EvalStatus.PASSED
    assert _eval_differences(case) == []
    detailed = "\n".join(_eval_differences(case, every=True))
    assert "invocation 1: 'Paris?'" in detailed
    assert 'expected tools:    get_weather({"city": "Paris"})' in detailed
    assert 'actual tools:      get_weather({"city": "Paris"})' in detailed
    assert "expected response: 'Sunny in Paris.'" in detailed and "actual response:   'Sunny in Paris.'" in detailed
    args = build_parser().parse_args(["eval", "weather_bot", "x.evalset.json", "--print_detailed_results"])
    assert args.print_detailed_results is True
    assert build_parser().parse_args(["eval", "weather_bot", "x.evalset.json"]).print_detailed_results is False
