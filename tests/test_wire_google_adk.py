"""Our events against google-adk's, field by field: the same YAML agent, served by
google-adk's own ``adk api_server`` and by our host, each talking to its own Gemini
stub (a real HTTP server speaking Gemini's wire format) that gives both the same
answers. For each run (``/run``, ``/run_sse`` with and without streaming, a model that
fails) the events' shapes must be equal: the same keys at every level, ``usageMetadata``
camelCase, no ``partial`` key where google-adk sends none, the same error line; a
tool's state change and artifact (their events, the stored state, the artifact routes)
and a transfer to a sub-agent; google-adk's Event model reads each of ours. Ids,
timestamps and texts that differ by nature are not compared, only where keys are."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import ROOT, answers, free_port, serving
from wire_shapes import differences, shape

from adk_actors.testing import StubResponse, StubServer, gemini_response, gemini_stream
from supervision.testing import wait_until

pytest.importorskip("google.adk.cli")
from google.adk.events import Event

AGENT = """\
name: weather_yaml
model: gemini-2.5-flash
description: Tells the weather.
instruction: You tell the weather. Use get_weather.
tools:
  - name: examples.weather_bot.agent.get_weather
  - name: wire_tools.remember_city
  - name: wire_tools.save_report
sub_agents:
  - config_path: ./forecaster.yaml
"""

FORECASTER = """\
name: forecaster
model: gemini-2.5-flash
description: Forecasts the weather of the coming days.
instruction: You forecast the weather.
"""

USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def call_chunks(name: str, args: dict[str, Any]) -> StubResponse:
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]},
                             "finishReason": "STOP", "index": 0}], "modelVersion": "gemini-test",
             "usageMetadata": USAGE}
    return StubResponse(sse=["data: " + json.dumps(chunk)])


def failing() -> StubResponse:
    return StubResponse(status=400, json={"error": {"code": 400, "message": "the prompt is invalid",
                                                    "status": "INVALID_ARGUMENT"}})


# Each run: (streaming, the model's answers, the user's text)
RUNS: dict[str, tuple[bool, list[StubResponse], str]] = {
    "tool call and answer": (False, [gemini_response(function_calls=[("get_weather", {"city": "Paris"})]),
                                     gemini_response("It is 21 C and clear in Paris.")], "Weather in Paris?"),
    "streamed answer": (True, [call_chunks("get_weather", {"city": "Oslo"}),
                               gemini_stream(["It is -3 degrees ", "in Oslo."])], "Weather in Oslo?"),
    "model error": (True, [failing()], "Weather on Mars?"),
    "state change": (False, [gemini_response(function_calls=[("remember_city", {"city": "Paris"})]),
                             gemini_response("I will remember Paris.")], "I live in Paris."),
    "artifact": (False, [gemini_response(function_calls=[("save_report", {"text": "Paris: 21 C, clear."})]),
                         gemini_response("Saved the report.")], "Save a report on Paris."),
    "transfer": (False, [gemini_response(function_calls=[("transfer_to_agent", {"agent_name": "forecaster"})]),
                         gemini_response("Sunny all week.")], "What about next week?"),
}


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[str, StubServer]]]:
    """google-adk's ``adk api_server`` and our host, each with its Gemini stub."""
    root = tmp_path_factory.mktemp("wire")
    agents = root / "agents"
    (agents / "weather_yaml").mkdir(parents=True)
    (agents / "weather_yaml" / "root_agent.yaml").write_text(AGENT)
    (agents / "weather_yaml" / "forecaster.yaml").write_text(FORECASTER)
    port = free_port()
    with StubServer() as theirs_model, StubServer() as our_model:
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}", "GOOGLE_GEMINI_BASE_URL": theirs_model.url,
               "GOOGLE_API_KEY": "test-key-not-a-secret", "ADK_DISABLE_TELEMETRY": "1"}
        server = subprocess.Popen([sys.executable, "-m", "google.adk.cli", "api_server", str(agents), "--port",
                                   str(port)], cwd=root, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_until(lambda: answers(f"http://127.0.0.1:{port}/list-apps"), timeout=60)
            ours_env = {"GEMINI_API_KEY": "test-key-not-a-secret", "GEMINI_BASE_URL": our_model.url}
            with serving(root, f'agents_dir = "{agents}"\n', apps="", env=ours_env) as served:
                yield {"theirs": (f"http://127.0.0.1:{port}", theirs_model), "ours": (served["url"], our_model)}
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def run_on(url: str, model: StubServer, name: str) -> dict[str, Any]:
    """One run of ``RUNS[name]`` on the server at ``url``: its SSE lines (or /run's
    list), and the session stored after it."""
    streaming, answers, text = RUNS[name]
    model.add(*answers)
    with httpx.Client(base_url=url, timeout=30) as http:
        session = http.post("/apps/weather_yaml/users/ann/sessions", json={}).json()
        body = {"appName": "weather_yaml", "userId": "ann", "sessionId": session["id"],
                "newMessage": {"role": "user", "parts": [{"text": text}]}, "streaming": streaming}
        if not streaming:
            answer = http.post("/run", json=body)
            events = answer.json()
        else:
            answer = http.post("/run_sse", json=body)
            events = [json.loads(line[len("data: "):]) for line in answer.text.split("\n\n") if line.strip()]
        where = f"/apps/weather_yaml/users/ann/sessions/{session['id']}"
        stored = http.get(where).json()
        artifacts = [http.get(f"{where}/artifacts").json()]
        for artifact in artifacts[0]:
            artifacts += [http.get(f"{where}/artifacts/{artifact}").json(),
                          http.get(f"{where}/artifacts/{artifact}/versions").json(),
                          http.get(f"{where}/artifacts/{artifact}/versions/metadata").json()]
    return {"status": answer.status_code, "events": events, "stored": stored["events"], "state": stored["state"],
            "artifacts": artifacts}


@pytest.mark.parametrize("name", list(RUNS))
def test_our_events_have_google_adks_fields(both: dict[str, tuple[str, StubServer]], name: str) -> None:
    theirs, ours = run_on(*both["theirs"], name), run_on(*both["ours"], name)
    assert ours["status"] == theirs["status"]
    assert differences([shape(e) for e in ours["events"]], [shape(e) for e in theirs["events"]]) == []
    assert differences([shape(e) for e in ours["stored"]], [shape(e) for e in theirs["stored"]]) == []
    assert ours["state"] == theirs["state"]
    assert (ours["state"].get("city") == "Paris") == (name == "state change")
    assert len(ours["artifacts"]) == (4 if name == "artifact" else 1)
    assert differences(shape(ours["artifacts"]), shape(theirs["artifacts"])) == []
    for event in [*ours["events"], *ours["stored"]]:  # google-adk's own model reads each of ours
        if "error" not in event:
            Event.model_validate(event)
    if name == "model error":  # google-adk's error line ends the stream, after the stored error event
        assert set(ours["events"][-1]) == {"error", "error_details"} == set(theirs["events"][-1])
        assert set(ours["events"][-1]["error_details"]) == set(theirs["events"][-1]["error_details"])


def test_the_deprecated_post_of_a_session_with_its_id(both: dict[str, tuple[str, StubServer]]) -> None:
    """``POST .../sessions/{id}`` whose body is the initial state: the same answer, and the
    same refusal the second time."""
    answers = {}
    for side, (url, _) in both.items():
        with httpx.Client(base_url=url, timeout=30) as http:
            made = http.post("/apps/weather_yaml/users/ann/sessions/kept-id", json={"unit": "C"})
            again = http.post("/apps/weather_yaml/users/ann/sessions/kept-id", json={"unit": "F"})
            stored = http.get("/apps/weather_yaml/users/ann/sessions/kept-id").json()
        answers[side] = (made.status_code, shape(made.json()), again.status_code, stored["state"])
        assert made.json()["id"] == "kept-id" and made.json()["state"] == {"unit": "C"}
    assert answers["ours"] == answers["theirs"]

