"""Where an eval's turn spent its seconds (google-adk 2.13's ``DurationDetails``: model,
tool and framework seconds of ``invocation_duration_v1``), for turns run on a host:

* ``adk-actors eval APP --url URL`` (an ``HttpRunner``) reads each turn's split from
  the host's trace route (google-adk's ``/debug/trace/session/{session_id}``), as a
  host's Runner does from its session trace;
* an ``AgentTool``'s agent's model calls are model time, not tool time, as google-adk
  counts them (``Invocation.tool_duration``: a tool's wait on a model is model time):
  its child run's spans are in the turn's trace, under the tool's span.

A real ``serve`` runs the ``helped`` app below: its model stand-in answers after
``MODEL_DELAY``; it asks for ``nap`` (sleeps ``TOOL_SLEEP``) or for its ``helper`` (an
``AgentTool`` whose agent's model answers after ``HELPER_DELAY``), then says "Done.".
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools.agent_tool import AgentTool

MODEL_DELAY, HELPER_DELAY, TOOL_SLEEP = 0.2, 0.5, 0.3
APP = "helped"
ROOT = Path(__file__).resolve().parents[1]
DURATION = "invocation_duration_v1"


async def nap(minutes: int) -> dict[str, Any]:
    """Take a nap."""
    await asyncio.sleep(TOOL_SLEEP)
    return {"slept_minutes": minutes}


def _root_answer(request: LlmRequest) -> Any:
    """After MODEL_DELAY: "Done." once a tool answered; the helper when the user asks
    for it; else a nap."""
    time.sleep(MODEL_DELAY)
    last = request.contents[-1]
    if any(part.function_response is not None for part in last.parts):
        return "Done."
    if "helper" in last.text:
        return call("helper", request="note this")
    return call("nap", minutes=5)


def _helper_answer(request: LlmRequest) -> Any:
    time.sleep(HELPER_DELAY)
    return "Noted."


helper = LlmAgent(name="helper", model=ScriptedModel(fallback=_helper_answer, name="helper-model"),
                  description="Takes notes.")
helped_agent = LlmAgent(name="helped", model=ScriptedModel(fallback=_root_answer, name="root-model"),
                        tools=[nap, AgentTool(agent=helper)])


def _turn(text: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"invocation_id": f"i-{tool}", "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": "Done."}]},
            "intermediate_data": {"tool_uses": [{"name": tool, "args": args}]}}


EVAL_SET = {"eval_set_id": "helped_set", "eval_cases": [{
    "eval_id": "nap_then_help", "session_input": {"app_name": APP, "user_id": "ida", "state": {}},
    "conversation": [_turn("Nap, please.", "nap", {"minutes": 5}),
                     _turn("Ask the helper.", "helper", {"request": "note this"})]}]}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from conftest import serving  # here, not above: the host imports this module for its app

    with serving(tmp_path_factory.mktemp("helped"),
                 apps=f'{APP} = "test_adk56_http_eval_timing:helped_agent"\n') as info:
        yield info


def assert_nap_split(split: dict[str, Any]) -> None:
    """Two model calls and a nap; nothing waited on a model inside the tool."""
    assert None not in split.values(), split
    assert split["model_seconds"] >= 2 * MODEL_DELAY - 0.002, split
    assert split["tool_seconds"] >= TOOL_SLEEP - 0.002, split
    assert split["total_seconds"] + 0.002 >= split["model_seconds"] + split["tool_seconds"], split


def assert_helper_split(split: dict[str, Any]) -> None:
    """Two model calls of the root agent and the helper's one, inside the AgentTool's
    span: all three are model time; the tool's own time is the rest of its span."""
    assert None not in split.values(), split
    assert split["model_seconds"] >= 2 * MODEL_DELAY + HELPER_DELAY - 0.002, split
    assert split["tool_seconds"] < HELPER_DELAY, split
    assert split["total_seconds"] + 0.002 >= split["model_seconds"] + split["tool_seconds"], split


def _details(row: Any) -> dict[str, Any]:
    [duration] = [m for m in row.eval_metric_results if m.metric_name == DURATION]
    assert duration.details is not None and duration.details.duration_details is not None
    split: dict[str, Any] = duration.details.duration_details.model_dump()
    assert None not in split.values(), split  # timed, and where the time went is known
    actual = row.actual_invocation
    assert (split["total_seconds"], split["model_seconds"], split["tool_seconds"]) == (
        actual.duration, actual.model_duration, actual.tool_duration)
    assert split["framework_seconds"] == round(max(
        split["total_seconds"] - split["model_seconds"] - split["tool_seconds"], 0.0), 3)
    return split


def test_adk_actors_eval_over_http_reports_each_turns_split(served: dict[str, Any], tmp_path: Path) -> None:
    """``adk-actors eval APP FILE --url URL --json``, as a user runs it: each turn's
    duration and where it went, from the host's trace route."""
    from google.adk.evaluation.eval_result import EvalSetResult

    path = tmp_path / "helped.evalset.json"
    path.write_text(json.dumps(EVAL_SET))
    ran = subprocess.run([sys.executable, "-m", "adk_actors.cli", "eval", APP, str(path), "--url", served["url"],
                          "--json", "--metric", DURATION, "--metric", "tool_trajectory_avg_score=1.0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [line] = [line for line in ran.stdout.splitlines() if line.startswith("{")]
    result = EvalSetResult.model_validate(json.loads(line))  # google-adk's model reads it
    [case] = result.eval_case_results
    napped, helped = (_details(row) for row in case.eval_metric_result_per_invocation)
    assert_nap_split(napped)
    assert_helper_split(helped)
    [overall] = [m for m in case.overall_eval_metric_results if m.metric_name == DURATION]
    assert overall.details is not None and overall.details.duration_details is not None
    assert overall.details.duration_details.model_dump() == {
        part: round((napped[part] + helped[part]) / 2, 3) for part in napped}


def test_a_host_eval_counts_an_agent_tools_model_calls_as_model_time(served: dict[str, Any]) -> None:
    """Through the host's eval routes (adk-web's): the helper's model call, inside the
    AgentTool's span, is model time."""
    from google.adk.evaluation.eval_result import EvalSetResult

    with httpx.Client(base_url=served["url"], timeout=60) as client:
        session = client.post(f"/apps/{APP}/users/ida/sessions").json()["id"]
        answer = client.post("/run", json={"appName": APP, "userId": "ida", "sessionId": session,
                                           "newMessage": {"role": "user", "parts": [{"text": "Ask the helper."}]}})
        assert answer.status_code == 200, answer.text
        made = client.post(f"/dev/apps/{APP}/eval-sets", json={"eval_set": {"eval_set_id": "helps"}})
        assert made.status_code == 200, made.text
        added = client.post(f"/dev/apps/{APP}/eval_sets/helps/add_session",
                            json={"evalId": "help", "sessionId": session, "userId": "ida"})
        assert added.status_code == 200, added.text
        ran = client.post(f"/dev/apps/{APP}/eval-sets/helps/run",
                          json={"eval_metrics": [{"metric_name": DURATION}]})
        assert ran.status_code == 200, ran.text
        [result_id] = [r for r in client.get(f"/dev/apps/{APP}/eval_results").json() if "helps" in r]
        stored = client.get(f"/dev/apps/{APP}/eval_results/{result_id}")
        assert stored.status_code == 200, stored.text
    [case] = EvalSetResult.model_validate(stored.json()).eval_case_results
    [row] = case.eval_metric_result_per_invocation
    assert_helper_split(_details(row))


def test_the_session_trace_holds_an_agent_tools_run_under_its_tool_span(served: dict[str, Any]) -> None:
    """As google-adk's trace route does (an AgentTool's run shares its caller's trace):
    the helper's agent and model spans are in the turn's trace, under the tool's span,
    with the helper's own invocation id."""
    with httpx.Client(base_url=served["url"], timeout=60) as client:
        session = client.post(f"/apps/{APP}/users/ida/sessions").json()["id"]
        answer = client.post("/run", json={"appName": APP, "userId": "ida", "sessionId": session,
                                           "newMessage": {"role": "user", "parts": [{"text": "Ask the helper."}]}})
        assert answer.status_code == 200, answer.text
        spans = client.get(f"/dev/apps/{APP}/debug/trace/session/{session}").json()
    assert sorted(span["name"] for span in spans) == [
        "execute_tool helper", "generate_content helper-model", "generate_content root-model",
        "generate_content root-model", "invoke_agent helped", "invoke_agent helper"]
    by_name = {span["name"]: span for span in spans}
    assert len({span["trace_id"] for span in spans}) == 1
    assert by_name["invoke_agent helper"]["parent_span_id"] == by_name["execute_tool helper"]["span_id"]
    assert by_name["generate_content helper-model"]["parent_span_id"] == by_name["invoke_agent helper"]["span_id"]
    assert by_name["execute_tool helper"]["parent_span_id"] == by_name["invoke_agent helped"]["span_id"]
    invocation = "gcp.vertex.agent.invocation_id"
    root_invocation = by_name["invoke_agent helped"]["attributes"][invocation]
    assert by_name["execute_tool helper"]["attributes"][invocation] == root_invocation
    assert by_name["invoke_agent helper"]["attributes"][invocation] not in ("", root_invocation)


def test_over_http_a_host_that_keeps_no_trace_leaves_the_split_unknown(tmp_path: Path) -> None:
    """``trace_turns = 0``: the trace route serves no span; each turn is still timed at
    the caller, and where its time went is unknown (None, google-adk's n/a), not 0."""
    from conftest import serving

    from adk_actors.evals import EvalMetric, EvalSet, run_eval_set
    from adk_actors.remote import HttpRunner

    with serving(tmp_path, "trace_turns = 0\n", apps=f'{APP} = "test_adk56_http_eval_timing:helped_agent"\n') as info, \
            HttpRunner(info["url"], APP) as remote:
        result = run_eval_set(remote, APP, EvalSet.model_validate(EVAL_SET), [EvalMetric(metric_name=DURATION)])
    [case] = result.eval_case_results
    for row in case.eval_metric_result_per_invocation:
        actual = row.actual_invocation
        assert actual.duration is not None and actual.duration >= 2 * MODEL_DELAY - 0.002
        assert actual.model_duration is None and actual.tool_duration is None
        [duration] = row.eval_metric_results
        assert duration.details["duration_details"] == {"total_seconds": actual.duration, "model_seconds": None,
                                                        "tool_seconds": None, "framework_seconds": None}


def test_a_turns_spans_are_its_last_trace_with_an_agent_tools_child_run() -> None:
    """Of a session's trace: the turn's spans are those of the last trace holding a span
    of its invocation (an invocation answered over two turns has two), the child run of
    its AgentTool (another invocation id, same trace) included."""
    from adk_actors.evals._timing import spans_of_turn, split_of_spans
    from adk_actors.tracing import INVOCATION_ID, TraceSpan

    def span(trace: int, invocation: str, operation: str, start: float, end: float) -> TraceSpan:
        return TraceSpan(f"{operation} x", int(start * 1e9), int(end * 1e9), trace, int(start * 10) + 1, None,
                         {"gen_ai.operation.name": operation, INVOCATION_ID: invocation})

    first = [span(1, "e-1", "invoke_agent", 0, 3), span(1, "e-1", "generate_content", 0, 1),
             span(1, "e-1", "execute_tool", 1, 3)]  # the turn that asked for a long-running call
    second = [span(2, "e-1", "invoke_agent", 10, 17), span(2, "e-1", "generate_content", 10, 11),
              span(2, "e-1", "execute_tool", 11, 16), span(2, "e-child", "invoke_agent", 11.5, 15.5),
              span(2, "e-child", "generate_content", 12, 15), span(2, "e-1", "generate_content", 16, 17)]
    other = [span(3, "e-2", "invoke_agent", 20, 21), span(3, "e-2", "generate_content", 20, 21)]
    assert spans_of_turn(first + second + other, "e-1") == second
    model, tool = split_of_spans(spans_of_turn(first + second + other, "e-1")) or (None, None)
    assert model == pytest.approx(5.0) and tool == pytest.approx(2.0)  # the child's 3 s are model time
    assert spans_of_turn(first + other, "e-9") == []


def test_a_worker_hands_an_agent_tools_spans_over_with_the_turn() -> None:
    """The recorder a run worker keeps: the helper's spans are taken with the turn that
    ran the AgentTool (and none are left behind under the helper's invocation id)."""
    from engine_helpers import collect

    from adk_actors.tracing import TraceRecorder

    scripted_helper = LlmAgent(name="helper", model=ScriptedModel(["Noted."], name="helper-model"),
                               description="Takes notes.")
    root = LlmAgent(name="helped", model=ScriptedModel([call("helper", request="note this"), "Done."],
                                                       name="root-model"), tools=[AgentTool(agent=scripted_helper)])
    recorder = TraceRecorder()
    recorder.attach("test-adk56-agent-tool")
    try:
        events = asyncio.run(collect(root, "Ask the helper."))
        turn = events[-1].invocation_id
        spans = recorder.take(turn)
    finally:
        recorder.detach("test-adk56-agent-tool")
    assert [span.name for span in spans] == [
        "generate_content root-model", "generate_content helper-model", "invoke_agent helper",
        "execute_tool helper", "generate_content root-model", "invoke_agent helped"]
    children = {span.invocation_id for span in spans} - {turn}
    assert len(children) == 1 and len({span.trace_id for span in spans}) == 1
    assert recorder.take(children.pop()) == []
