"""An ``AgentTool``'s agent's model calls, on a served host: google-adk 2.13 and ours,
side by side.

The same agent source (google-adk's, and the same with its imports rewritten for ours)
is served by google-adk's web server (``get_fast_api_app(web=True)``: its eval and
trace routes) and by ``adk-actors serve``, against one Gemini REST stand-in on
127.0.0.1 that answers the root agent after ``MODEL_DELAY`` and the helper after
``HELPER_DELAY``. On each: a turn that asks the helper (an ``AgentTool``), made an eval
case through the eval routes, as adk-web makes one, and run with
``invocation_duration_v1``. Both must count the helper's model call as model time and
keep it out of the tool time (google-adk's ``Invocation.tool_duration``), and both
session traces must hold the helper's model call in the turn's trace, under the
tool's span, with an invocation id of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google_adk_harness import rewritten

from adk_actors.testing import StubServer, gemini_answers, gemini_response
from supervision.lowlevel import free_port
from supervision.testing import wait_until

MODEL_DELAY, HELPER_DELAY = 0.2, 0.5
APP = "helped"
TESTS = Path(__file__).resolve().parent

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.tools.agent_tool import AgentTool

helper = Agent(name="helper", model="gemini-2.5-flash", instruction="Take notes.", description="Takes notes.")
root_agent = Agent(name="helped", model="gemini-2.5-flash", instruction="Help.", tools=[AgentTool(agent=helper)])
'''


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The helper notes (after HELPER_DELAY); the root agent (after MODEL_DELAY) asks
    the helper, then says "Done." once it answered."""
    system = json.dumps(body.get("systemInstruction") or body.get("system_instruction") or "")
    if "Take notes." in system:
        time.sleep(HELPER_DELAY)
        response = gemini_response("Noted.")
    else:
        time.sleep(MODEL_DELAY)
        last = (body.get("contents") or [{}])[-1].get("parts") or []
        answered = any("functionResponse" in part for part in last)
        response = gemini_response("Done.") if answered else gemini_response(
            function_calls=[("helper", {"request": "note this"})])
    reply: dict[str, Any] = response.json
    return reply


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(answer)) as server:
        yield server.url


def _gemini_env(url: str) -> dict[str, str]:
    return {"GOOGLE_API_KEY": "test-key-not-a-secret", "GOOGLE_GEMINI_BASE_URL": url}


@contextlib.contextmanager
def google_adk_web_server(agents: Path) -> Iterator[httpx.Client]:
    """google-adk's web server app (dev routes: evals, traces) over ``agents`` on uvicorn
    on a free loopback port, in a thread; a client of it."""
    import uvicorn
    from google.adk.cli.fast_api import get_fast_api_app

    served = get_fast_api_app(agents_dir=str(agents), web=True, session_service_uri="memory://",
                              artifact_service_uri="memory://", memory_service_uri="memory://")
    server = uvicorn.Server(uvicorn.Config(served, host="127.0.0.1", port=free_port(), log_level="critical"))
    thread = threading.Thread(target=server.run, name="google-adk-web-server", daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), timeout=30)
        assert server.started, "google-adk's app did not start"
        with httpx.Client(base_url=f"http://127.0.0.1:{server.config.port}", timeout=60) as http:
            yield http
    finally:
        server.should_exit = True
        thread.join(30)


def _package(folder: Path, name: str, source: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text("from . import agent\n")
    (folder / name / "agent.py").write_text(source)


def eval_a_helper_turn(http: httpx.Client) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A session of one turn that asks the helper, made the eval case ``help`` of the set
    ``helps`` and run with ``invocation_duration_v1`` through the eval routes (as adk-web
    calls them); the duration details of its one invocation, as stored, and the spans
    of the session's trace."""
    session = http.post(f"/apps/{APP}/users/ida/sessions").json()["id"]
    ran = http.post("/run", json={"appName": APP, "userId": "ida", "sessionId": session,
                                  "newMessage": {"role": "user", "parts": [{"text": "Ask the helper."}]}})
    assert ran.status_code == 200, ran.text
    made = http.post(f"/dev/apps/{APP}/eval-sets", json={"eval_set": {"eval_set_id": "helps", "eval_cases": []}})
    assert made.status_code == 200, made.text
    added = http.post(f"/dev/apps/{APP}/eval_sets/helps/add_session",
                      json={"evalId": "help", "sessionId": session, "userId": "ida"})
    assert added.status_code == 200, added.text
    evaluated = http.post(f"/dev/apps/{APP}/eval-sets/helps/run",
                          json={"eval_metrics": [{"metric_name": "invocation_duration_v1"}]})
    assert evaluated.status_code == 200, evaluated.text
    [result_id] = http.get(f"/dev/apps/{APP}/eval_results").json()
    stored = http.get(f"/dev/apps/{APP}/eval_results/{result_id}")
    assert stored.status_code == 200, stored.text
    [case] = stored.json()["evalCaseResults"]
    [row] = case["evalMetricResultPerInvocation"]
    [duration] = [m for m in row["evalMetricResults"] if m["metricName"] == "invocation_duration_v1"]
    trace = http.get(f"/dev/apps/{APP}/debug/trace/session/{session}")
    assert trace.status_code == 200, trace.text
    return duration["details"]["durationDetails"], trace.json()


def assert_helper_is_model_time(details: dict[str, Any], spans: list[dict[str, Any]]) -> None:
    """The helper's model call counted as model time, not tool time. The eval runs the
    case again (a run of its own), so its figures are compared with the delays the
    stand-in enforces, which load only lengthens, not with the first run's spans: model
    time holds the three delayed model calls, and tool time is less than the helper's
    own delay (counted as tool time, the helper's call alone would exceed it). The
    session's trace shows the helper's call inside the tool's span."""
    assert set(details) == {"totalSeconds", "modelSeconds", "toolSeconds", "frameworkSeconds"}, details
    assert details["modelSeconds"] >= 2 * MODEL_DELAY + HELPER_DELAY - 0.002, details
    [tool] = [span for span in spans if span["name"] == "execute_tool helper"]
    [inner] = [span for span in spans if span["name"].startswith("generate_content")
               and tool["start_time"] <= span["start_time"] and span["end_time"] <= tool["end_time"]]
    seconds = lambda span: (span["end_time"] - span["start_time"]) / 1e9  # noqa: E731
    assert seconds(inner) >= HELPER_DELAY
    assert details["toolSeconds"] < HELPER_DELAY, details
    assert details["totalSeconds"] + 0.002 >= details["modelSeconds"] + details["toolSeconds"], details


def assert_helper_in_the_turns_trace(spans: list[dict[str, Any]]) -> None:
    """The helper's model call: in the trace of the tool's span, below it, with an
    invocation id that is not the root agent's calls'."""
    by_id = {span["span_id"]: span for span in spans}

    def ancestors(span: dict[str, Any]) -> list[str]:
        names, parent = [], by_id.get(span["parent_span_id"])
        while parent is not None:
            names.append(parent["name"])
            parent = by_id.get(parent["parent_span_id"])
        return names

    models = [span for span in spans if span["name"].startswith("generate_content")]
    inside = [span for span in models if "execute_tool helper" in ancestors(span)]
    outside = [span for span in models if span not in inside]
    assert len(inside) == 1 and len(outside) == 2, [(s["name"], ancestors(s)) for s in models]
    [tool] = [span for span in spans if span["name"] == "execute_tool helper"]
    assert inside[0]["trace_id"] == tool["trace_id"]
    invocation = "gcp.vertex.agent.invocation_id"
    assert inside[0]["attributes"][invocation] not in {span["attributes"][invocation] for span in outside}


@pytest.mark.timeout(300)  # google-adk's web server and a host to start, one after the other, on a loaded machine
def test_google_adk_and_a_host_count_an_agent_tools_model_call_alike(
        stand_in: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import serving

    for name in ("GEMINI_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
                 "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in _gemini_env(stand_in).items():
        monkeypatch.setenv(name, value)
    _package(tmp_path / "theirs", APP, PROGRAM)
    _package(tmp_path / "ours", "ours_helped56", rewritten(PROGRAM))
    with google_adk_web_server(tmp_path / "theirs") as theirs:
        their_details, their_spans = eval_a_helper_turn(theirs)
    (tmp_path / "host").mkdir()
    env = {**_gemini_env(stand_in), "PYTHONPATH": os.pathsep.join([str(TESTS), str(tmp_path / "ours")])}
    with serving(tmp_path / "host", apps=f'{APP} = "ours_helped56.agent:root_agent"\n', env=env) as info, \
            httpx.Client(base_url=info["url"], timeout=60) as ours:
        our_details, our_spans = eval_a_helper_turn(ours)
    assert_helper_is_model_time(their_details, their_spans)
    assert_helper_is_model_time(our_details, our_spans)
    assert_helper_in_the_turns_trace(their_spans)
    assert_helper_in_the_turns_trace(our_spans)
