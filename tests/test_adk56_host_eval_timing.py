"""Evals run through a host report google-adk 2.13's ``invocation_duration_v1`` too:
each turn's ``duration`` measured at the caller (request to terminal message), and
where its seconds went (model, tool, framework) from the spans the run worker recorded
of the turn (the session's trace).

A real ``serve`` runs the ``timed`` app below: its model stand-in answers each call
after ``MODEL_DELAY`` and asks once per turn for a tool that sleeps ``TOOL_SLEEP``. An
eval case made from a two-turn session runs through google-adk's eval routes, as
adk-web calls them; the saved result must carry every part, in google-adk's keys, and
the parts must relate as they do for a turn run in process. Then the same set through
an ``HttpRunner`` (``adk-actors eval APP --url``), which reads the split from the host's
trace route (tests/test_adk56_http_eval_timing.py has the CLI's run, an AgentTool turn,
and a host that keeps no trace).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call

MODEL_DELAY, TOOL_SLEEP = 0.2, 0.3
APP = "timed"
PARTS = ("total_seconds", "model_seconds", "tool_seconds", "framework_seconds")


async def nap(minutes: int) -> dict[str, Any]:
    """Take a nap."""
    await asyncio.sleep(TOOL_SLEEP)
    return {"slept_minutes": minutes}


def _answer(request: LlmRequest) -> Any:
    """After MODEL_DELAY: a nap when the user just spoke, else the last word."""
    time.sleep(MODEL_DELAY)
    last = request.contents[-1]
    if any(part.function_response is not None for part in last.parts):
        return "Rested."
    return call("nap", minutes=5)


timed_agent = LlmAgent(name="timed", model=ScriptedModel(fallback=_answer), tools=[nap])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from conftest import serving  # here, not above: the host imports this module for its app

    with serving(tmp_path_factory.mktemp("timed"),
                 apps=f'{APP} = "test_adk56_host_eval_timing:timed_agent"\n') as info:
        yield info


@pytest.fixture
def client(served: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served["url"], timeout=60) as http:
        yield http


def eval_set_of_a_session(client: httpx.Client, set_id: str, *texts: str) -> None:
    """An eval set whose one case ("naps") is a session of these turns."""
    session = client.post(f"/apps/{APP}/users/ida/sessions").json()["id"]
    for text in texts:
        answer = client.post("/run", json={"appName": APP, "userId": "ida", "sessionId": session,
                                           "newMessage": {"role": "user", "parts": [{"text": text}]}})
        assert answer.status_code == 200, answer.text
    made = client.post(f"/dev/apps/{APP}/eval-sets", json={"eval_set": {"eval_set_id": set_id}})
    assert made.status_code == 200, made.text
    added = client.post(f"/dev/apps/{APP}/eval_sets/{set_id}/add_session",
                        json={"evalId": "naps", "sessionId": session, "userId": "ida"})
    assert added.status_code == 200, added.text


def assert_split_relates(details: dict[str, Any], model_calls: int, tool_calls: int) -> None:
    """The parts of a timed and traced turn (or their means) relate as a run turn's do."""
    total, model, tool, framework = (details[part] for part in PARTS)
    assert None not in (total, model, tool, framework), details
    assert model >= model_calls * MODEL_DELAY - 0.002, details  # each call waited its delay
    assert tool >= tool_calls * TOOL_SLEEP - 0.002, details  # the tool slept (its model time is not in it)
    assert total + 0.002 >= model + tool, details  # the hops and the framework are the rest
    assert framework == pytest.approx(max(total - model - tool, 0.0), abs=0.002), details


def test_a_host_run_eval_reports_the_duration_and_its_split_in_google_adks_keys(client: httpx.Client) -> None:
    from google.adk.evaluation.eval_metrics import DurationDetails
    from google.adk.evaluation.eval_result import EvalSetResult

    eval_set_of_a_session(client, "naps", "Nap, please.", "Once more.")
    metrics = [{"metric_name": "tool_trajectory_avg_score", "threshold": 1.0},
               {"metric_name": "invocation_duration_v1"}]
    ran = client.post(f"/dev/apps/{APP}/eval-sets/naps/run", json={"eval_metrics": metrics})
    assert ran.status_code == 200, ran.text
    assert [r["finalEvalStatus"] for r in ran.json()["runEvalResults"]] == [1]
    [result_id] = client.get(f"/dev/apps/{APP}/eval_results").json()
    stored = client.get(f"/dev/apps/{APP}/eval_results/{result_id}")
    assert stored.status_code == 200, stored.text
    result = EvalSetResult.model_validate(stored.json())  # google-adk's model reads it, every part in it
    [case] = result.eval_case_results
    assert len(case.eval_metric_result_per_invocation) == 2
    for row in case.eval_metric_result_per_invocation:
        actual = row.actual_invocation
        assert actual.duration is not None and actual.model_duration is not None and actual.tool_duration is not None
        # the turn's own spans only: the session's four model calls and two naps would not fit in one turn
        assert actual.duration + 0.002 >= actual.model_duration + actual.tool_duration
        [duration] = [m for m in row.eval_metric_results if m.metric_name == "invocation_duration_v1"]
        assert duration.score == actual.duration
        assert duration.details is not None and duration.details.duration_details is not None
        split = duration.details.duration_details.model_dump()
        assert set(split) == set(DurationDetails.model_fields) == set(PARTS)
        assert split["total_seconds"] == actual.duration and split["model_seconds"] == actual.model_duration
        assert split["tool_seconds"] == actual.tool_duration
        assert_split_relates(split, model_calls=2, tool_calls=1)
    [overall] = [m for m in case.overall_eval_metric_results if m.metric_name == "invocation_duration_v1"]
    assert overall.details is not None and overall.details.duration_details is not None
    assert_split_relates(overall.details.duration_details.model_dump(), model_calls=2, tool_calls=1)


def test_an_http_runner_reads_the_split_from_the_hosts_trace_route(
        client: httpx.Client, served: dict[str, Any]) -> None:
    from adk_actors.evals import EvalMetric, EvalSet, run_eval_set
    from adk_actors.remote import HttpRunner

    eval_set_of_a_session(client, "over_http", "Nap, please.")
    kept = Path(served["config"]).parent / "data" / "evals" / APP / "over_http.evalset.json"
    eval_set = EvalSet.model_validate(json.loads(kept.read_text()))
    with HttpRunner(served["url"], APP) as remote:
        result = run_eval_set(remote, APP, eval_set, [EvalMetric(metric_name="invocation_duration_v1")])
    [case] = result.eval_case_results
    [row] = case.eval_metric_result_per_invocation
    actual = row.actual_invocation
    [duration] = row.eval_metric_results
    split = duration.details["duration_details"]
    assert split["total_seconds"] == actual.duration and split["model_seconds"] == actual.model_duration
    assert split["tool_seconds"] == actual.tool_duration
    assert_split_relates(split, model_calls=2, tool_calls=1)


def test_the_split_of_recorded_spans_counts_overlaps_once_and_a_tools_model_time_as_model_time() -> None:
    from adk_actors.evals._timing import split_of_spans
    from adk_actors.tracing import TraceSpan

    def span(operation: str, start: float, end: float) -> TraceSpan:
        return TraceSpan(f"{operation} x", int(start * 1e9), int(end * 1e9), 1, 2, None,
                         {"gen_ai.operation.name": operation})

    spans = [span("invoke_agent", 0, 10),  # the agent's own span: neither
             span("generate_content", 1, 3), span("generate_content", 2, 4),  # concurrent calls: 1..4
             span("execute_tool", 5, 9), span("generate_content", 6, 7),  # an AgentTool's child call inside a tool
             span("execute_tool", 8, 9.5)]  # a second tool, overlapping the first
    model, tool = split_of_spans(spans) or (None, None)
    assert model == pytest.approx(4.0) and tool == pytest.approx(3.5)
    assert split_of_spans([span("invoke_agent", 0, 1)]) == (0.0, 0.0)  # traced, no model or tool call
    assert split_of_spans([]) is None  # not traced: unknown, not 0
