"""google-adk 2.13's judge metrics added in issue 56, side by side with google-adk's
``AgentEvaluator``: ``rubric_based_multi_turn_trajectory_quality_v1`` and
``per_turn_user_simulator_quality_v1``.

Both evaluators run the same agent source (google-adk's, and the same with its imports
rewritten for ours), the same eval sets and ``test_config.json`` files, against one
Gemini REST stand-in on 127.0.0.1 that answers by what it is asked. It plays:

* the agent's model: a weather tool call for the city asked about, then an answer;
* the user simulator: it asks about Paris first (the scenario's starting prompt), then
  about Oslo whatever its plan says (about Rome where the plan's second city is Rome),
  then stops;
* the trajectory judge: per rubric, ``yes`` / ``no`` by what the conversation shows
  (a rubric it cannot judge gets "maybe": no score);
* the simulator judge: a message naming a city the plan does not is invalid; the stop
  is invalid while a city of the plan was never asked about; a message about Rome gets
  an answer with no verdict.

The prompts differ (each side writes its own); the stand-in reads either. Compared:
each metric's summary (status, threshold, score over the runs) as both print it, and
the failure lines both raise. Then ours alone: per-invocation scores, bad input, and
the Vertex-scored metrics' typed error.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator as TheirEvaluator
from google_adk_harness import agent_packages, on_stand_in

from adk_actors.evals import (
    AgentEvaluator,
    EvalCase,
    EvalError,
    EvalFailed,
    EvalFiles,
    EvalMetric,
    Invocation,
    VertexEvalRequired,
    score_async,
)
from adk_actors.models import LlmResponse
from adk_actors.testing import StubServer, gemini_answers, gemini_response
from adk_actors.types import Content

AGENT = '''
from google.adk.agents import Agent


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"weather": {"Paris": "sunny", "Oslo": "rainy", "Rome": "sunny"}.get(city, "unknown")}


root_agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer about the weather.",
                   tools=[get_weather])
'''

CITIES = ("Paris", "Oslo", "Rome")


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in parts)


def _section(prompt: str, tag: str, heading: str) -> str:
    """A section of either side's simulator-judge prompt: ours in ``<tag>``, google-adk's
    under ``# heading``."""
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.DOTALL)
    if found is None:
        found = re.search(rf"# {heading}\n(.*?)(?:\n# |\Z)", prompt, re.DOTALL)
    assert found is not None, f"no {heading} in the judge's prompt"
    return found.group(1)


def _cities(text: str) -> set[str]:
    return {city for city in CITIES if city in text}


def _simulator_verdict(prompt: str) -> str:
    plan = _section(prompt, "plan", "Conversation Plan")
    history = _section(prompt, "conversation_so_far", "Conversation History")
    message = _section(prompt, "next_user_message", "Generated User Response")
    if "Rome" in message:
        return "I cannot tell."
    asked = _cities("\n".join(line for line in history.splitlines() if line.startswith("user:")))
    valid = _cities(plan) <= asked if "</finished>" in message else _cities(message) <= _cities(plan)
    return json.dumps({"criteria": [{"name": "PLAN", "reasoning": "looked", "passes": valid}],
                       "is_valid": valid})


def _dialogue(prompt: str) -> str:
    """The conversation in either side's trajectory-judge prompt."""
    found = re.search(r"<conversation(?:_history)?>\n(.*?)\n</conversation(?:_history)?>", prompt, re.DOTALL)
    assert found is not None, "no conversation in the judge's prompt"
    return found.group(1)


def _trajectory_verdict(rubric_id: str, prompt: str) -> str:
    said = _dialogue(prompt)
    if rubric_id == "r_oslo":
        return "yes" if '{"city": "Oslo"}' in said else "no"
    if rubric_id == "r_paris_sunny":
        return "yes" if "It is sunny in Paris" in said else "no"
    if rubric_id == "r_no_rome":
        return "no" if "Rome" in said else "yes"
    if rubric_id == "r_rome":
        return "yes" if "Rome" in said else "no"
    return "maybe"


def _rubrics_asked(prompt: str) -> list[tuple[str, str]]:
    ours = re.findall(r"\[id: (r_\w+)\] (.*)", prompt)
    theirs = re.findall(r'"id": "(r_\w+)",\s*"property": "(.*?)"', prompt)
    return ours or theirs


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The stand-in's answer to a generateContent body (see the module)."""
    contents = body.get("contents") or []
    last = contents[-1]["parts"] if contents else []
    prompt = _text(last)
    if not body.get("tools"):
        if '"is_valid"' in prompt:
            return gemini_response(_simulator_verdict(prompt)).json
        if "</finished>" in prompt:  # the user simulator
            if "in Oslo." in prompt or "in Rome." in prompt:
                return gemini_response("Great, thanks! </finished>").json
            city = "Rome" if "Paris, then in Rome" in prompt else "Oslo"
            return gemini_response(f"Thanks. And what is the weather in {city}?").json
        rubrics = _rubrics_asked(prompt)
        if rubrics:
            return gemini_response("\n\n".join(
                f"ID: {rubric_id}\nProperty: {text.strip()}\nRationale: looked\n"
                f"Verdict: {_trajectory_verdict(rubric_id, prompt)}" for rubric_id, text in rubrics)).json
        return gemini_response("what?").json
    results = [part["functionResponse"] for part in last if "functionResponse" in part]
    if results:
        asked = [part["functionCall"] for part in contents[-2]["parts"] if "functionCall" in part]
        return gemini_response(f"It is {results[0]['response']['weather']} in {asked[0]['args']['city']}.").json
    asked_for = re.search(r"weather in (\w+)", prompt)
    if asked_for is None:
        return gemini_response("Hello! Ask me about the weather.").json
    return gemini_response(function_calls=[("get_weather", {"city": asked_for.group(1)})]).json


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(answer)) as server:
        yield server.url


@pytest.fixture
def agents(stand_in: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Two importable agent packages, ``their_weather56`` (google-adk) and
    ``our_weather56`` (the same source rewritten), on the stand-in by environment
    variables alone."""
    on_stand_in(stand_in, monkeypatch)
    yield from agent_packages(tmp_path, AGENT, "their_weather56", "our_weather56", monkeypatch)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _invocation(text: str, response: str, city: str | None) -> dict[str, Any]:
    return {"invocation_id": f"i-{abs(hash(text))}", "user_content": _user(text),
            "final_response": {"role": "model", "parts": [{"text": response}]},
            "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": city}}] if city else []}}


def rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    return {"rubric_id": rubric_id, "rubric_content": {"text_property": text}, **({"type": kind} if kind else {})}


OSLO = rubric("r_oslo", "The agent looks up the weather in Oslo.")
PARIS_SUNNY = rubric("r_paris_sunny", "The agent tells the user it is sunny in Paris.")
NO_ROME = rubric("r_no_rome", "The agent never talks about Rome.")
ROME = rubric("r_rome", "The agent tells the user about Rome's weather.")
VAGUE = rubric("r_vague", "The agent is nice.")

CONVERSATIONS = {
    "paris_then_oslo": [_invocation("What is the weather in Paris?", "It is sunny in Paris.", "Paris"),
                        _invocation("And the weather in Oslo?", "It is rainy in Oslo.", "Oslo")],
    "hello_then_rome": [_invocation("hello", "Hello! Ask me about the weather.", None),
                        _invocation("What is the weather in Rome?", "It is sunny in Rome.", "Rome")],
    "paris_only": [_invocation("What is the weather in Paris?", "It is sunny in Paris.", "Paris")],
}

SCENARIOS = {
    "plan_paris_oslo": "Ask for the weather in Paris, then in Oslo, then stop.",
    "plan_paris": "Ask for the weather in Paris, then stop.",
    "plan_three": "Ask for the weather in Paris, then in Oslo, then in Rome, then stop.",
    "plan_rome": "Ask for the weather in Paris, then in Rome, then stop.",
}

JUDGE = {"threshold": 0.5, "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3}}
SIMULATOR = {"type": "llm_backed", "model": "gemini-2.5-flash", "max_allowed_invocations": 5}


def _write(folder: Path, case_id: str, criteria: dict[str, Any], rubrics: list[dict[str, Any]] | None = None,
           simulated: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    case: dict[str, Any] = {"eval_id": case_id, "session_input": {"app_name": "weather", "user_id": "tia",
                                                                   "state": {}}}
    if case_id in SCENARIOS:
        case["conversation_scenario"] = {"starting_prompt": "What is the weather in Paris?",
                                         "conversation_plan": SCENARIOS[case_id]}
    else:
        case["conversation"] = CONVERSATIONS[case_id]
    if rubrics:
        case["rubrics"] = rubrics
    path = folder / f"{case_id}.test.json"
    path.write_text(json.dumps({"eval_set_id": f"set_{case_id}", "eval_cases": [case]}))
    config: dict[str, Any] = {"criteria": criteria}
    if simulated:
        config["user_simulator_config"] = SIMULATOR
    (folder / "test_config.json").write_text(json.dumps(config))
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
    wanted = ("rubric_based_multi_turn_trajectory_quality_v1", "per_turn_user_simulator_quality_v1")
    return {"summaries": sorted(line for line in printed.splitlines() if line.startswith("Summary:")
                                and any(name in line for name in wanted)),
            "failures": sorted(failures)}


TRAJECTORY = "rubric_based_multi_turn_trajectory_quality_v1"
PER_TURN = "per_turn_user_simulator_quality_v1"


@pytest.mark.parametrize(("case_id", "criteria", "rubrics"), [
    ("paris_then_oslo", {TRAJECTORY: {**JUDGE, "rubrics": [OSLO, PARIS_SUNNY]}}, None),
    ("hello_then_rome", {TRAJECTORY: {**JUDGE, "rubrics": [OSLO, NO_ROME]}}, None),
    ("paris_then_oslo", {TRAJECTORY: {**JUDGE, "threshold": 0.7, "rubrics": [OSLO, ROME]}}, None),
    ("hello_then_rome", {TRAJECTORY: {**JUDGE, "rubrics": [ROME, NO_ROME, PARIS_SUNNY]}}, None),
    ("hello_then_rome", {TRAJECTORY: {**JUDGE, "threshold": 0.3, "rubrics": [PARIS_SUNNY, VAGUE]}}, None),
    ("paris_only", {TRAJECTORY: {**JUDGE, "threshold": 1.0, "rubrics": [PARIS_SUNNY]}}, None),
    # the case's rubrics: only those of type TRAJECTORY_QUALITY are read
    ("paris_then_oslo", {TRAJECTORY: JUDGE},
     [rubric("r_oslo", "The agent looks up the weather in Oslo.", "TRAJECTORY_QUALITY"),
      rubric("r_no_rome", "The agent never talks about Rome.", "FINAL_RESPONSE_QUALITY")]),
    ("paris_then_oslo", {TRAJECTORY: {**JUDGE, "threshold": 0.9}}, None),  # no rubric: not evaluated
])
def test_multi_turn_trajectory_rubrics_score_alike(case_id: str, criteria: dict[str, Any],
                                                   rubrics: list[dict[str, Any]] | None, agents: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(agents / "evals" / case_id, case_id, criteria, rubrics)
    theirs = _evaluate(TheirEvaluator, "their_weather56", path, capsys)
    ours = _evaluate(AgentEvaluator, "our_weather56", path, capsys)
    assert theirs["summaries"], "google-adk printed no summary"
    assert ours == theirs


@pytest.mark.parametrize(("case_id", "criteria"), [
    ("plan_paris_oslo", {PER_TURN: JUDGE}),
    ("plan_paris", {PER_TURN: JUDGE}),
    ("plan_paris", {PER_TURN: {**JUDGE, "threshold": 0.4}}),
    ("plan_three", {PER_TURN: {**JUDGE, "threshold": 0.8}}),
    ("plan_three", {PER_TURN: {**JUDGE, "stop_signal": "</done>"}}),
    ("plan_rome", {PER_TURN: JUDGE}),  # the Rome turn gets no verdict
    ("plan_paris_oslo", {PER_TURN: JUDGE, TRAJECTORY: {**JUDGE, "rubrics": [OSLO, PARIS_SUNNY, NO_ROME]}}),
])
def test_per_turn_user_simulator_quality_scores_alike(case_id: str, criteria: dict[str, Any], agents: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(agents / "scenarios" / case_id, case_id, criteria, simulated=True)
    theirs = _evaluate(TheirEvaluator, "their_weather56", path, capsys)
    ours = _evaluate(AgentEvaluator, "our_weather56", path, capsys)
    assert theirs["summaries"], "google-adk printed no summary"
    assert ours == theirs


def _saved_case(agents: Path, path: Path, folder: str) -> Any:
    files = EvalFiles(agents / folder)
    asyncio.run(AgentEvaluator.evaluate("our_weather56", str(path), num_runs=1, app_name="weather",
                                        eval_set_results_manager=files, print_detailed_results=False))
    [case] = files.get_result("weather", files.list_results("weather")[0]).eval_case_results
    return case


def test_what_the_scores_are_per_invocation(agents: Path) -> None:
    """The side-by-side cases are not all alike: a judged last turn, a plan the
    simulator strays from, and a stop that comes too early, as a user reads them."""
    path = _write(agents / "a", "paris_then_oslo", {TRAJECTORY: {**JUDGE, "rubrics": [OSLO, NO_ROME, VAGUE]}})
    case = _saved_case(agents, path, "data_a")
    [first, second] = [row.eval_metric_results[0] for row in case.eval_metric_result_per_invocation]
    assert (first.score, first.eval_status.name) == (None, "NOT_EVALUATED")  # judged on the last turn only
    assert (second.score, second.eval_status.name) == (1.0, "PASSED")
    assert [s["rubric_id"] for s in second.details["rubric_scores"]] == ["r_oslo", "r_no_rome", "r_vague"]
    assert case.overall_eval_metric_results[0].score == 1.0

    strayed = _write(agents / "b", "plan_paris", {PER_TURN: JUDGE}, simulated=True)
    case = _saved_case(agents, strayed, "data_b")
    assert [row.actual_invocation.user_content.text for row in case.eval_metric_result_per_invocation] == [
        "What is the weather in Paris?", "Thanks. And what is the weather in Oslo?"]
    assert [row.eval_metric_results[0].score for row in case.eval_metric_result_per_invocation] == [1.0, 0.0]
    assert case.overall_eval_metric_results[0].score == 0.5

    early = _write(agents / "c", "plan_three", {PER_TURN: JUDGE}, simulated=True)
    case = _saved_case(agents, early, "data_c")  # Oslo's turn was fine, but Rome was never asked: the stop fails
    assert [row.eval_metric_results[0].score for row in case.eval_metric_result_per_invocation] == [1.0, 0.0]
    unsure = _write(agents / "e", "plan_rome", {PER_TURN: JUDGE}, simulated=True)
    case = _saved_case(agents, unsure, "data_e")  # the Rome turn has no verdict: not counted as passing
    assert [row.eval_metric_results[0].score for row in case.eval_metric_result_per_invocation] == [1.0, None]
    assert case.overall_eval_metric_results[0].score == 0.5
    with pytest.raises(EvalFailed, match=r"per_turn_user_simulator_quality_v1 for our_weather56 Failed\. "
                                         r"Expected 0\.8, but got 0\.5\."):
        asyncio.run(AgentEvaluator.evaluate("our_weather56", str(_write(
            agents / "d", "plan_three", {PER_TURN: {**JUDGE, "threshold": 0.8}}, simulated=True)), num_runs=1,
            print_detailed_results=False))


def test_a_fixed_conversation_has_no_simulator_to_score(agents: Path) -> None:
    """per_turn_user_simulator_quality_v1 on a case without a scenario: not evaluated,
    and the failure says why (google-adk logs a ValueError and reports it not evaluated)."""
    path = _write(agents / "fixed", "paris_only", {PER_TURN: JUDGE})
    with pytest.raises(EvalFailed, match=r"was not evaluated.*Why: .*needs a conversation_scenario"):
        asyncio.run(AgentEvaluator.evaluate("our_weather56", str(path), num_runs=1, print_detailed_results=False))


@pytest.mark.parametrize("name", ["safety_v1", "response_evaluation_score", "multi_turn_task_success_v1",
                                  "multi_turn_trajectory_quality_v1", "multi_turn_tool_use_quality_v1"])
def test_vertex_scored_metrics_are_a_typed_error_before_any_agent_runs(name: str, agents: Path) -> None:
    path = _write(agents / name, "paris_only", {name: 0.5})
    with pytest.raises(VertexEvalRequired, match=rf"{name}.*Vertex AI.*GOOGLE_CLOUD_PROJECT") as raised:
        asyncio.run(AgentEvaluator.evaluate("our_weather56", str(path), num_runs=1))
    assert isinstance(raised.value, EvalError)


def test_bad_criteria_are_refused_before_any_call(agents: Path) -> None:
    bad = _write(agents / "bad", "paris_only", {PER_TURN: {"threshold": 0.5,
                                                           "judge_model_options": {"num_samples": 0}}})
    with pytest.raises(EvalError, match=r"judge criterion.*num_samples"):
        asyncio.run(AgentEvaluator.evaluate("our_weather56", str(bad)))
    (agents / "bad" / "test_config.json").write_text(json.dumps({"criteria": {TRAJECTORY: {
        **JUDGE, "rubrics": [{"rubric_id": "r1"}]}}}))
    with pytest.raises(EvalError, match=r"judge criterion.*rubric"):
        asyncio.run(AgentEvaluator.evaluate("our_weather56", str(bad)))


def test_score_async_with_a_judge_that_answers_nonsense() -> None:
    """A judge whose answers have no verdict leaves the metrics not evaluated, saying
    why; nothing raises."""

    class Nonsense:
        async def generate(self, request: Any, stream: bool = False) -> Any:
            yield LlmResponse(content=Content.model("the weather is a state of mind"))

    said = Invocation(user_content=Content.user("What is the weather in Paris?"),
                      final_response=Content.model("It is sunny in Paris."))
    case = EvalCase.model_validate({"eval_id": "x", "conversation_scenario": {
        "starting_prompt": "What is the weather in Paris?", "conversation_plan": "Paris"}})
    for name, criterion in ((TRAJECTORY, {**JUDGE, "rubrics": [OSLO]}), (PER_TURN, JUDGE)):
        metric = EvalMetric(metric_name=name, threshold=0.5, criterion=criterion)
        total, each = asyncio.run(score_async(metric, [(said, None), (said, None)], lambda _: Nonsense(), case))
        if name == TRAJECTORY:
            assert total.eval_status.name == "NOT_EVALUATED" and "no verdict" in total.details["error"]
        else:  # the first turn needs no judge; the second has no verdict, and counts as not passing
            assert [one.score for one in each] == [1.0, None] and total.score == 0.5
