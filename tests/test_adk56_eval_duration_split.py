"""google-adk 2.13's ``invocation_duration_v1`` split: where a turn's seconds went
(``DurationDetails``: total, model, tool and framework seconds), per invocation and
averaged over them, measured while the eval ran the turn.

Side by side with google-adk's ``AgentEvaluator``: the same agent source (google-adk's,
and the same with its imports rewritten for ours), the same eval set, against one
Gemini REST stand-in on 127.0.0.1 that answers each model call after a set delay. The
agent has a tool that sleeps, called twice at once, and an ``AgentTool`` whose agent's
model call is slower than the others. Both result files must carry the same fields,
set alike, and on both the parts must add up and keep a tool's model time and the
second of two concurrent tools out of the tool time.

Then ours alone with its clock replaced by one that moves only when the stand-in model
answers, a tool works, or the root agent's callback runs: every figure is exact.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator as TheirEvaluator
from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from google_adk_harness import agent_packages, on_stand_in

from adk_actors.evals import AgentEvaluator, EvalConfig, EvalFiles, EvalSet, Invocation, _timing
from adk_actors.evals._efficiency import efficiency_results
from adk_actors.evals._models import EvalMetric
from adk_actors.testing import StubServer, gemini_answers, gemini_response
from adk_actors.types import Content

DURATION = "invocation_duration_v1"
PARTS = ("total_seconds", "model_seconds", "tool_seconds", "framework_seconds")
MODEL_DELAY, HELPER_DELAY, TOOL_SLEEP = 0.1, 0.4, 0.3

AGENT = f'''
import asyncio

from google.adk.agents import Agent
from google.adk.tools.agent_tool import AgentTool


async def look_up(city: str) -> dict:
    """Looks a city up."""
    await asyncio.sleep({TOOL_SLEEP})
    return {{"found": city}}


helper = Agent(name="helper", model="gemini-2.5-flash", instruction="Take notes.", description="Takes notes.")
root_agent = Agent(name="trips", model="gemini-2.5-flash", instruction="Plan trips.",
                   tools=[look_up, AgentTool(agent=helper)])
'''


class Pace:
    """How long the stand-in takes to answer the root agent (``model``) or the helper
    (``helper``): a real sleep, or with ``clock`` set, a step of that clock."""

    clock: FakeClock | None = None
    delays: ClassVar[dict[str, float]] = {"model": MODEL_DELAY, "helper": HELPER_DELAY}
    steps: ClassVar[dict[str, float]] = {}

    def wait(self, who: str) -> None:
        if self.clock is not None:
            self.clock.advance(self.steps[who])
        else:
            time.sleep(self.delays[who])


PACE = Pace()


class FakeClock:
    """A monotonic clock that moves only when told to (from any thread)."""

    def __init__(self) -> None:
        self._now, self._lock = 1000.0, threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The root agent asks for two look-ups at once, or for its helper, then says
    "Done."; the helper (slower: ``HELPER_DELAY``) notes once with its own tool, if it
    has one, then answers."""
    contents = body.get("contents") or []
    last = contents[-1]["parts"] if contents else []
    said = "".join(part.get("text", "") for part in last)
    system = json.dumps(body.get("systemInstruction") or body.get("system_instruction") or "")
    answered = any("functionResponse" in part for part in last)
    if "Take notes." in system:
        PACE.wait("helper")
        has_note = any(d.get("name") == "note" for t in body.get("tools") or []
                       for d in t.get("functionDeclarations") or [])
        if has_note and not answered:
            return gemini_response(function_calls=[("note", {"text": said})]).json
        return gemini_response("Noted.").json
    PACE.wait("model")
    if answered:
        return gemini_response("Done.").json
    if "helper" in said:
        return gemini_response(function_calls=[("helper", {"request": "note this"})]).json
    return gemini_response(function_calls=[("look_up", {"city": "Paris"}), ("look_up", {"city": "Oslo"})]).json


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(answer)) as server:
        yield server.url


@pytest.fixture
def named_stand_in(stand_in: str, monkeypatch: pytest.MonkeyPatch) -> None:
    on_stand_in(stand_in, monkeypatch)


@pytest.fixture
def agents(named_stand_in: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``their_trips56`` (google-adk) and ``our_trips56`` (the same source rewritten)."""
    yield from agent_packages(tmp_path, AGENT, "their_trips56", "our_trips56", monkeypatch)


def _turn(text: str, response: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"invocation_id": f"i-{abs(hash(text))}", "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": response}]},
            "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in calls]}}


EVAL_SET = {"eval_set_id": "trips_set", "eval_cases": [{
    "eval_id": "trip", "session_input": {"app_name": "trips", "user_id": "tia", "state": {}},
    "conversation": [_turn("Look up Paris and Oslo", "Done.",
                           [("look_up", {"city": "Paris"}), ("look_up", {"city": "Oslo"})]),
                     _turn("Ask the helper", "Done.", [("helper", {"request": "note this"})])]}]}
CRITERIA = {"response_match_score": 0.5}


def _result_file(folder: Path) -> dict[str, Any]:
    [path] = sorted(folder.rglob("*.evalset_result.json"))
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def _split(result: dict[str, Any]) -> dict[str, Any]:
    """The duration metric's details (overall, then per invocation) and the timing
    fields of each actual and expected invocation, from a result file."""
    [case] = result["eval_case_results"]
    [overall] = [m for m in case["overall_eval_metric_results"] if m["metric_name"] == DURATION]
    rows = case["eval_metric_result_per_invocation"]
    each = [next(m for m in row["eval_metric_results"] if m["metric_name"] == DURATION) for row in rows]
    timing = ("duration", "model_duration", "tool_duration")
    return {"overall": overall, "each": each,
            "actual": [{k: row["actual_invocation"].get(k, "missing") for k in timing} for row in rows],
            "expected": [{k: row["expected_invocation"].get(k, "missing") for k in timing} for row in rows]}


def _shape(split: dict[str, Any]) -> Any:
    """Which fields are there and which are null: what must be alike on both sides."""
    def nulls(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: nulls(v) for k, v in value.items()}
        if isinstance(value, list):
            return [nulls(v) for v in value]
        return None if value is None else "set"

    return {"overall": nulls(split["overall"]["details"]["duration_details"]),
            "each": [nulls(m["details"]["duration_details"]) for m in split["each"]],
            "actual": nulls(split["actual"]), "expected": nulls(split["expected"])}


def _check_relations(split: dict[str, Any]) -> None:
    """What holds of any measured turn of this eval set (each side's clock its own)."""
    look_ups, helper = (m["details"]["duration_details"] for m in split["each"])
    for details, actual in zip((look_ups, helper), split["actual"], strict=True):
        assert (details["total_seconds"], details["model_seconds"], details["tool_seconds"]) == (
            actual["duration"], actual["model_duration"], actual["tool_duration"])
        assert details["framework_seconds"] == round(max(
            details["total_seconds"] - details["model_seconds"] - details["tool_seconds"], 0.0), 3)
        assert details["model_seconds"] + details["tool_seconds"] <= details["total_seconds"] + 0.002
    # two model calls; the two look-ups overlap, so they are counted once, not twice
    assert look_ups["model_seconds"] >= 2 * MODEL_DELAY
    assert TOOL_SLEEP <= look_ups["tool_seconds"] < 2 * TOOL_SLEEP
    # the helper's model call inside the AgentTool is model time, not tool time
    assert helper["model_seconds"] >= 2 * MODEL_DELAY + HELPER_DELAY
    assert helper["tool_seconds"] < HELPER_DELAY
    overall = split["overall"]["details"]["duration_details"]
    for part in PARTS:
        assert overall[part] == round((look_ups[part] + helper[part]) / 2, 3)
    assert split["overall"]["score"] == overall["total_seconds"]


def test_both_report_the_same_split_of_a_run_turn(agents: Path, tmp_path: Path) -> None:
    path = tmp_path / "trip.test.json"
    path.write_text(json.dumps(EVAL_SET))
    (tmp_path / "test_config.json").write_text(json.dumps({"criteria": CRITERIA}))
    asyncio.run(asyncio.wait_for(TheirEvaluator.evaluate(
        "their_trips56", str(path), num_runs=1, app_name="trips", print_detailed_results=False,
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=str(tmp_path / "theirs"))), timeout=120))
    asyncio.run(asyncio.wait_for(AgentEvaluator.evaluate(
        "our_trips56", str(path), num_runs=1, app_name="trips", print_detailed_results=False,
        eval_set_results_manager=EvalFiles(tmp_path / "ours")), timeout=120))
    theirs, ours = _split(_result_file(tmp_path / "theirs")), _split(_result_file(tmp_path / "ours"))

    assert _shape(ours) == _shape(theirs)
    assert _shape(ours)["each"][0] == dict.fromkeys(PARTS, "set")  # every part measured
    assert _shape(ours)["expected"][0] == dict.fromkeys(("duration", "model_duration", "tool_duration"))
    _check_relations(theirs)
    _check_relations(ours)


def test_read_back_and_older_invocations_report_alike() -> None:
    """An invocation not run by the eval has no timing (every part n/a); one timed
    before the split was measured has its total and no framework figure (not "all
    framework"); google-adk's evaluator and ours report the same, overall too, and
    serve it alike on the wire."""
    from google.adk.evaluation import eval_case as theirs_case
    from google.adk.evaluation._efficiency_evaluators import _InvocationDurationV1Evaluator
    from google.adk.evaluation.eval_metrics import EvalMetricResult as TheirResult
    from google.adk.evaluation.eval_metrics import EvalMetricResultDetails as TheirDetails
    from google.adk.evaluation.eval_metrics import EvalStatus as TheirStatus
    from google.genai import types as genai_types

    timings: list[dict[str, float | None]] = [
        {}, {"duration": 2.5}, {"duration": 3.0, "model_duration": 1.25, "tool_duration": 0.5},
        {"duration": 1.0, "model_duration": 0.75, "tool_duration": 0.5},  # closed a hair late: framework 0
        {"duration": 1.4, "model_duration": 0.2, "tool_duration": 0.1}]
    ours = [Invocation(user_content=Content.user("hi"), **t) for t in timings]
    their_invocations = [theirs_case.Invocation(user_content=genai_types.Content(
        role="user", parts=[genai_types.Part(text="hi")]), **t) for t in timings]
    their_result = _InvocationDurationV1Evaluator().evaluate_invocations(their_invocations)
    total, each = efficiency_results(EvalMetric(metric_name=DURATION), ours)

    assert [one.details["duration_details"] for one in each] == [
        r.duration_details.model_dump() for r in their_result.per_invocation_results]
    assert [one.score for one in each] == [r.score for r in their_result.per_invocation_results]
    assert total.details["duration_details"] == their_result.overall_duration_details.model_dump()
    assert total.score == their_result.overall_score
    assert each[0].details["duration_details"] == dict.fromkeys(PARTS)
    assert each[1].details["duration_details"]["framework_seconds"] is None
    assert each[3].details["duration_details"]["framework_seconds"] == 0.0

    untimed_total, _ = efficiency_results(EvalMetric(metric_name=DURATION), ours[:1])
    assert untimed_total.details["duration_details"] == dict.fromkeys(PARTS)

    # as google-adk's HTTP API serves a metric result: camelCase, nulls left out
    def served(score: float | None, details: Any) -> dict[str, Any]:
        return TheirResult(metric_name=DURATION, score=score, eval_status=TheirStatus.INFORMATIONAL,
                           details=TheirDetails(duration_details=details)).model_dump(
            mode="json", by_alias=True, exclude_none=True)

    assert [one.wire() for one in each] == [served(r.score, r.duration_details)
                                            for r in their_result.per_invocation_results]
    assert total.wire() == served(their_result.overall_score, their_result.overall_duration_details)
    assert each[2].wire()["details"] == {"durationDetails": {
        "totalSeconds": 3.0, "modelSeconds": 1.25, "toolSeconds": 0.5, "frameworkSeconds": 1.25}}


# -- ours alone, on a clock that moves only when told ----------------------------------------------

MODEL_STEP, TOOL_STEP, HELPER_STEP, NOTE_STEP, FRAMEWORK_STEP = 2.0, 0.25, 4.0, 0.5, 0.125


def _exact_agent(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """``exact56``: the root agent (each run of it moves the clock by FRAMEWORK_STEP,
    outside any model call or tool) with ``look_up`` (both calls in flight before
    either moves the clock by TOOL_STEP, and neither ends before both did) and an
    AgentTool whose agent has a ``note`` tool (NOTE_STEP)."""
    from adk_actors.agents import Agent
    from adk_actors.tools.agent_tool import AgentTool

    gates: dict[str, asyncio.Barrier] = {}

    async def look_up(city: str) -> dict[str, str]:
        """Looks a city up."""
        loop = id(asyncio.get_running_loop())  # each run of the eval has a loop of its own
        started = gates.setdefault(f"{loop}-started", asyncio.Barrier(2))
        moved = gates.setdefault(f"{loop}-moved", asyncio.Barrier(2))
        await asyncio.wait_for(started.wait(), 10)
        clock.advance(TOOL_STEP)
        await asyncio.wait_for(moved.wait(), 10)
        return {"found": city}

    def note(text: str) -> dict[str, str]:
        """Notes a text."""
        clock.advance(NOTE_STEP)
        return {"noted": text}

    def framework_time(callback_context: Any) -> None:
        clock.advance(FRAMEWORK_STEP)

    helper = Agent(name="helper", model="gemini-2.5-flash", instruction="Take notes.", description="Takes notes.",
                   tools=[note])
    root = Agent(name="trips", model="gemini-2.5-flash", instruction="Plan trips.",
                 tools=[look_up, AgentTool(agent=helper)], before_agent_callback=framework_time)
    module = types.ModuleType("exact56")
    module.agent = types.SimpleNamespace(root_agent=root)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "exact56", module)


@pytest.fixture
def exact(named_stand_in: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeClock]:
    clock = FakeClock()
    monkeypatch.setattr(_timing, "clock", clock)
    monkeypatch.setattr(PACE, "clock", clock)
    monkeypatch.setattr(PACE, "steps", {"model": MODEL_STEP, "helper": HELPER_STEP})
    _exact_agent(clock, monkeypatch)
    yield clock


def test_the_split_is_exact_on_an_injected_clock(exact: FakeClock, tmp_path: Path) -> None:
    files = EvalFiles(tmp_path / "ours")
    asyncio.run(asyncio.wait_for(AgentEvaluator.evaluate_eval_set(
        "exact56", EvalSet.model_validate(EVAL_SET), eval_config=EvalConfig(criteria=CRITERIA), num_runs=1,
        app_name="trips", print_detailed_results=False, eval_set_results_manager=files), timeout=60))
    split = _split(_result_file(tmp_path / "ours"))
    look_ups, helper = (m["details"]["duration_details"] for m in split["each"])
    # two model calls; two look-ups in flight together for TOOL_STEP twice over: once
    assert look_ups == {"total_seconds": 2 * MODEL_STEP + 2 * TOOL_STEP + FRAMEWORK_STEP,
                        "model_seconds": 2 * MODEL_STEP, "tool_seconds": 2 * TOOL_STEP,
                        "framework_seconds": FRAMEWORK_STEP}
    # the AgentTool's span holds its agent's two model calls and its note: only the note is tool time
    assert helper == {"total_seconds": 2 * MODEL_STEP + 2 * HELPER_STEP + NOTE_STEP + FRAMEWORK_STEP,
                      "model_seconds": 2 * MODEL_STEP + 2 * HELPER_STEP, "tool_seconds": NOTE_STEP,
                      "framework_seconds": FRAMEWORK_STEP}
    assert split["actual"][1] == {"duration": helper["total_seconds"], "model_duration": helper["model_seconds"],
                                  "tool_duration": NOTE_STEP}
    assert split["overall"]["details"]["duration_details"] == {
        part: (look_ups[part] + helper[part]) / 2 for part in PARTS}
    assert split["overall"]["score"] == (look_ups["total_seconds"] + helper["total_seconds"]) / 2
    # the eval's timing is off the engine's telemetry once the run is over
    assert "adk_actors.evals.busy_intervals" not in __import__("adk_actors").telemetry.handlers()
