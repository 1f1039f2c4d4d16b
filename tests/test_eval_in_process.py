"""``adk-actors eval AGENT_DIR EVAL_SET[:CASE,...]``: google-adk's ``adk eval``, in the
CLI's own process, no host. A real ``adk-actors`` subprocess on a temporary agent
folder: a Gemini agent with a Python tool, its key and endpoint given only by the
folder's ``.env``, the endpoint a Gemini REST stand-in on 127.0.0.1 that answers by
what it is asked. Checked: what a passing and a failing eval set print and their exit
codes, the picking of cases, ``--print_detailed_results``, the eval config found
beside the file, bad input (a one-line error, exit 2, nothing run). google-adk's own
``adk eval`` on the same folder (its imports those of google-adk) passes and fails the
same cases: in ``test_eval_history``, whose one run of it serves two comparisons.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google_adk_harness import rewritten

from adk_actors.testing import StubServer, gemini_answers, gemini_response

ROOT = Path(__file__).resolve().parents[1]
ADK = ROOT / ".venv" / "bin" / "adk"

#: google-adk's source; ours is the same with its imports rewritten
AGENT = '''
from google.adk.agents import Agent


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"weather": {"Paris": "sunny", "Oslo": "rainy"}.get(city, "unknown")}


def get_time(city: str) -> dict:
    """The time in a city."""
    return {"time": "noon"}


root_agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer about the weather.",
                   tools=[get_weather, get_time])
'''


def answer(body: dict[str, Any]) -> Any:
    """The stand-in's answer: the judge of final_response_match_v2 finds every answer
    valid; after a tool's result, the weather in words; asked about the weather in a
    city, a call of get_weather; else a greeting."""
    contents = body.get("contents") or []
    last = contents[-1]["parts"] if contents else []
    if "is_the_agent_response_valid" in "".join(part.get("text", "") for part in last):  # the judge
        return gemini_response('{"reasoning": "the same", "is_the_agent_response_valid": "valid"}').json
    results = [part["functionResponse"] for part in last if "functionResponse" in part]
    if results:
        city = next(part["functionCall"]["args"]["city"] for part in contents[-2]["parts"] if "functionCall" in part)
        return gemini_response(f"It is {results[0]['response']['weather']} in {city}.").json
    asked = re.search(r"weather in (\w+)", "".join(part.get("text", "") for part in last))
    if asked is None:
        return gemini_response("Hello! Ask me about the weather.").json
    return gemini_response(function_calls=[("get_weather", {"city": asked.group(1)})]).json


@pytest.fixture(scope="module")
def stand_in_server() -> Iterator[StubServer]:
    """The Gemini stand-in: ``answer`` to each request (the requests are recorded)."""
    with StubServer(gemini_answers(answer)) as server:
        yield server


@pytest.fixture(scope="module")
def stand_in(stand_in_server: StubServer) -> str:
    return stand_in_server.url


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _case(eval_id: str, turns: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]]) -> dict[str, Any]:
    return {"eval_id": eval_id, "session_input": {"app_name": "weather", "user_id": "tia", "state": {}},
            "conversation": [{"invocation_id": f"{eval_id}-{n}", "user_content": _user(text),
                              "final_response": {"role": "model", "parts": [{"text": response}]},
                              "intermediate_data": {"tool_uses": [{"name": name, "args": args}
                                                                  for name, args in calls]}}
                             for n, (text, response, calls) in enumerate(turns)]}


PARIS = _case("paris", [("What is the weather in Paris?", "It is sunny in Paris.", [("get_weather", {"city": "Paris"})])])
HELLO_THEN_OSLO = _case("hello_then_oslo", [
    ("hello", "Hello! Ask me about the weather.", []),
    ("What is the weather in Oslo?", "It is rainy in Oslo.", [("get_weather", {"city": "Oslo"})])])
# the agent calls get_weather; this case expects get_time (the answer is what the agent says)
WRONG_TOOL = _case("wrong_tool", [("What is the weather in Paris?", "It is sunny in Paris.",
                                   [("get_time", {"city": "Paris"})])])
SETS = {"passing": [PARIS, HELLO_THEN_OSLO], "failing": [WRONG_TOOL], "mixed": [PARIS, WRONG_TOOL, HELLO_THEN_OSLO]}


def _folder(root: Path, source: str, stand_in: str) -> Path:
    """``root/weather``: the agent, its ``.env`` (the stand-in's key and endpoint), and
    the eval sets in ``root/evals/NAME/NAME.evalset.json`` (a folder each, so no
    ``test_config.json`` is shared)."""
    folder = root / "weather"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(source)
    (folder / ".env").write_text(f"GOOGLE_API_KEY=test-key-not-a-secret\nGOOGLE_GEMINI_BASE_URL={stand_in}\n"
                                 "ADK_DISABLE_TELEMETRY=1\n")
    for name, cases in SETS.items():
        (root / "evals" / name).mkdir(parents=True)
        (root / "evals" / name / f"{name}.evalset.json").write_text(json.dumps({"eval_set_id": name,
                                                                                "eval_cases": cases}))
    return folder


@pytest.fixture
def ours(tmp_path: Path, stand_in: str) -> Path:
    return _folder(tmp_path / "ours", rewritten(AGENT), stand_in)


def _environment() -> dict[str, str]:
    """This environment without any model setting: the folder's .env is all there is."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_", "ANTHROPIC_", "OPENAI_"))}


def eval_cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", "eval", str(folder), *args], cwd=folder.parent,
                          env=_environment(), capture_output=True, text=True, timeout=120)


def sets(folder: Path, *names: str) -> list[str]:
    return [str(folder.parent / "evals" / name.split(":")[0] / f"{name.split(':')[0]}.evalset.json")
            + (":" + name.split(":", 1)[1] if ":" in name else "") for name in names]


def case_lines(stdout: str) -> dict[str, str]:
    """{set/case: the status word} of each case line."""
    return {m.group(2): m.group(1) for m in re.finditer(r"^(PASS|FAILED|NOT_EVALUATED) (\S+):", stdout, re.M)}


def test_a_passing_set_and_a_failing_one(ours: Path) -> None:
    passing = eval_cli(ours, *sets(ours, "passing"))
    assert passing.returncode == 0, passing.stderr
    assert case_lines(passing.stdout) == {"passing/paris": "PASS", "passing/hello_then_oslo": "PASS"}
    assert "PASS passing/paris: tool_trajectory_avg_score 1.00, response_match_score 1.00\n" in passing.stdout
    assert "passing:\n  Tests passed: 2\n  Tests failed: 0\n" in passing.stdout
    assert "expected tools" not in passing.stdout  # a passed case's details only with --print_detailed_results

    failing = eval_cli(ours, *sets(ours, "failing"))
    assert failing.returncode == 1, failing.stderr
    assert "FAILED failing/wrong_tool: tool_trajectory_avg_score 0.00, response_match_score 1.00\n" in failing.stdout
    assert ("  invocation 1: 'What is the weather in Paris?'; tool_trajectory_avg_score 0.00 < 1.0\n"
            '    expected tools:    get_time({"city": "Paris"})\n'
            '    actual tools:      get_weather({"city": "Paris"})\n') in failing.stdout
    assert "failing:\n  Tests passed: 0\n  Tests failed: 1\n" in failing.stdout
    assert "Traceback" not in failing.stderr


def test_cases_are_picked_by_google_adks_syntax(ours: Path) -> None:
    picked = eval_cli(ours, *sets(ours, "mixed:paris,hello_then_oslo"))
    assert picked.returncode == 0, picked.stderr
    assert case_lines(picked.stdout) == {"mixed/paris": "PASS", "mixed/hello_then_oslo": "PASS"}

    with_the_failing_one = eval_cli(ours, *sets(ours, "mixed:wrong_tool", "passing"))
    assert with_the_failing_one.returncode == 1
    assert case_lines(with_the_failing_one.stdout) == {"mixed/wrong_tool": "FAILED", "passing/paris": "PASS",
                                                       "passing/hello_then_oslo": "PASS"}
    assert "mixed:\n  Tests passed: 0\n  Tests failed: 1\npassing:\n  Tests passed: 2\n" \
           in with_the_failing_one.stdout

    # an eval set kept in the agent folder is named by its id, as google-adk's adk web keeps them
    (ours / "kept.evalset.json").write_text(json.dumps({"eval_set_id": "kept", "eval_cases": [PARIS, WRONG_TOOL]}))
    by_id = eval_cli(ours, "kept:paris")
    assert by_id.returncode == 0, by_id.stderr
    assert case_lines(by_id.stdout) == {"kept/paris": "PASS"}


def test_detailed_results_show_every_invocation_and_metric(ours: Path) -> None:
    detailed = eval_cli(ours, *sets(ours, "passing:hello_then_oslo"), "--print_detailed_results")
    assert detailed.returncode == 0, detailed.stderr
    out = detailed.stdout
    assert "  metric tool_trajectory_avg_score: PASSED, score 1, threshold 1\n" in out
    assert "  metric response_match_score: PASSED, score 1, threshold 0.8\n" in out
    assert "  metric tool_call_count_v1: INFORMATIONAL, score 0.5, threshold -\n" in out  # google-adk's efficiency
    assert "  invocation 1: 'hello'\n    expected tools:    (none)\n    actual tools:      (none)\n" in out
    assert ("  invocation 2: 'What is the weather in Oslo?'\n"
            '    expected tools:    get_weather({"city": "Oslo"})\n'
            '    actual tools:      get_weather({"city": "Oslo"})\n'
            "    expected response: 'It is rainy in Oslo.'\n"
            "    actual response:   'It is rainy in Oslo.'\n"
            "    metrics:           tool_trajectory_avg_score PASSED 1, response_match_score PASSED 1, "
            "tool_call_count_v1 INFORMATIONAL 1") in out


def test_the_eval_config_beside_the_file_or_given_is_used(ours: Path, tmp_path: Path) -> None:
    """Without the tool trajectory in the criteria, the case that called the wrong tool passes."""
    config = {"criteria": {"response_match_score": 0.8}}
    (ours.parent / "evals" / "failing" / "test_config.json").write_text(json.dumps(config))
    beside = eval_cli(ours, *sets(ours, "failing"))
    assert beside.returncode == 0, beside.stdout + beside.stderr
    assert "PASS failing/wrong_tool: response_match_score 1.00\n" in beside.stdout

    judged = {"criteria": {"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
        "judge_model": "gemini-2.5-flash", "num_samples": 1}}}}  # the judge's key and endpoint: the folder's .env
    (tmp_path / "judged.json").write_text(json.dumps(judged))
    by_judge = eval_cli(ours, *sets(ours, "failing"), "--config_file_path", str(tmp_path / "judged.json"))
    assert by_judge.returncode == 0, by_judge.stdout + by_judge.stderr
    assert "PASS failing/wrong_tool: final_response_match_v2 1.00\n" in by_judge.stdout

    (tmp_path / "strict.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}}))
    given = eval_cli(ours, *sets(ours, "failing"), "--config_file_path", str(tmp_path / "strict.json"))
    assert given.returncode == 1
    assert "FAILED failing/wrong_tool: tool_trajectory_avg_score 0.00\n" in given.stdout


def test_bad_input_is_one_line_and_exit_2_before_anything_runs(ours: Path, tmp_path: Path,
                                                               stand_in_server: StubServer) -> None:
    asked = len(stand_in_server.requests)
    (tmp_path / "empty").mkdir()
    (tmp_path / "garbled.evalset.json").write_text("{not json")
    (tmp_path / "other.evalset.json").write_text(json.dumps({"eval_cases": "none"}))
    for args, says in [
        ((str(tmp_path / "empty"), *sets(ours, "passing")), "is not an agent folder"),
        ((str(ours), str(tmp_path / "garbled.evalset.json")), "garbled.evalset.json: not an eval set"),
        ((str(ours), str(tmp_path / "other.evalset.json")), "other.evalset.json: not an eval set"),
        ((str(ours), *sets(ours, "passing"), *sets(ours, "mixed:paris,nope")), "no eval case 'nope' in eval set 'mixed'"),
        ((str(ours), "no_such_set"), "no_such_set: no such eval set file"),
        ((str(ours), *sets(ours, "passing"), "--metric", "no_such_metric"), "no_such_metric"),
    ]:
        done = subprocess.run([sys.executable, "-m", "adk_actors.cli", "eval", *args], cwd=tmp_path,
                              env=_environment(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: ") and says in done.stderr, done.stderr
        assert done.stdout == ""
    assert len(stand_in_server.requests) == asked, "a model was called before the input was checked"


def test_a_yaml_agent_folder_and_a_turn_that_fails(ours: Path, tmp_path: Path, stand_in: str) -> None:
    """A root_agent.yaml folder is evaluated as ``run AGENT_DIR`` loads it; a case whose
    turn fails (here: no model key, the .env gone) fails with the reason on one line."""
    greeter = tmp_path / "yaml" / "greeter"
    greeter.mkdir(parents=True)
    (greeter / "root_agent.yaml").write_text("name: greeter\nmodel: gemini-2.5-flash\ninstruction: Greet.\n")
    (greeter / ".env").write_text(f"GOOGLE_API_KEY=test-key-not-a-secret\nGOOGLE_GEMINI_BASE_URL={stand_in}\n")
    hello = _case("hello", [("hello", "Hello! Ask me about the weather.", [])])
    (greeter / "greetings.evalset.json").write_text(json.dumps({"eval_set_id": "greetings", "eval_cases": [hello]}))
    greeted = eval_cli(greeter, "greetings")
    assert greeted.returncode == 0, greeted.stdout + greeted.stderr
    assert "PASS greetings/hello: tool_trajectory_avg_score 1.00, response_match_score 1.00\n" in greeted.stdout

    (ours / ".env").unlink()
    keyless = eval_cli(ours, *sets(ours, "passing:paris"))
    assert keyless.returncode == 1
    assert keyless.stdout.startswith("FAILED passing/paris: (no metric results)\n  error: ModelRaised: authentication: "
                                     "model 'gemini-2.5-flash' needs GEMINI_API_KEY (or GOOGLE_API_KEY)")
    assert "Traceback" not in keyless.stderr
