"""google-adk's conformance runner (``adk conformance record|test``) against our host.

The same YAML agent is served by google-adk's own ``adk api_server`` and by ours. Each
case is recorded on google-adk (its RecordingsPlugin, its model a real HTTP server
speaking Gemini's wire format), then replayed on our host by google-adk's own
``ConformanceTestRunner``, unchanged: every model answer and tool result comes from
the recording, and the runner compares the session our host made, event by event,
with the one google-adk made. Cases recorded on our host (google-adk's record client,
unchanged) replay on it too. A changed recording, or a host without
``conformance_dir``, fails with a typed error."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from conftest import ROOT, free_port, serving

from adk_actors.runtime._conformance import (
    REPLAY_CONFIG,
    ConformanceConfigError,
    conformance_plugin,
)
from adk_actors.testing import StubResponse, StubServer, gemini_response, gemini_stream
from supervision.testing import wait_until

pytest.importorskip("google.adk.cli.conformance.cli_test")

from google.adk.agents._streaming_mode import StreamingMode
from google.adk.cli.conformance import cli_record
from google.adk.cli.conformance.adk_web_server_client import AdkWebServerClient
from google.adk.cli.conformance.cli_test import ConformanceTestRunner

AGENT = """\
name: weather_yaml
model: gemini-2.5-flash
description: Tells the weather.
instruction: You tell the weather in {unit?} degrees. Use get_weather.
tools:
  - name: examples.weather_bot.agent.get_weather
"""

MODES = {StreamingMode.NONE: "generated-session.yaml", StreamingMode.SSE: "generated-session-sse.yaml"}


def call_chunks(name: str, args: dict[str, Any]) -> StubResponse:
    """A streamed Gemini answer that is one function call."""
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]},
                             "finishReason": "STOP", "index": 0}], "modelVersion": "gemini-test"}
    return StubResponse(sse=["data: " + json.dumps(chunk)])


# Each case: its spec, then the model's answers google-adk records, for each streaming mode.
CASES: dict[str, tuple[str, dict[StreamingMode, list[StubResponse]]]] = {
    "tools/paris": ("""\
        description: a tool call, then the answer
        agent: weather_yaml
        user_messages:
          - text: What's the weather in Paris?
        """, {StreamingMode.NONE: [gemini_response(function_calls=[("get_weather", {"city": "Paris"})]),
                                   gemini_response("It is 21 C and clear in Paris.")],
              StreamingMode.SSE: [call_chunks("get_weather", {"city": "Paris"}),
                                  gemini_stream(["It is 21 C ", "and clear in Paris."])]}),
    "state/two_turns": ("""\
        description: two turns, initial state and a state delta on the second message
        agent: weather_yaml
        initial_state:
          unit: Celsius
        user_messages:
          - text: How cold is Oslo?
          - text: Thanks!
            state_delta:
              mood: grateful
        """, {StreamingMode.NONE: [gemini_response(function_calls=[("get_weather", {"city": "Oslo"})]),
                                   gemini_response("It is -3 degrees and snowing in Oslo."),
                                   gemini_response("You're welcome.")],
              StreamingMode.SSE: [call_chunks("get_weather", {"city": "Oslo"}),
                                  gemini_stream(["It is -3 degrees ", "and snowing in Oslo."]),
                                  gemini_stream(["You're ", "welcome."])]}),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The agent and the cases, each recorded on google-adk's ``adk api_server``."""
    root = tmp_path_factory.mktemp("conformance")
    agents, cases = root / "agents", root / "cases"
    (agents / "weather_yaml").mkdir(parents=True)
    (agents / "weather_yaml" / "root_agent.yaml").write_text(AGENT)
    port = free_port()
    with StubServer() as gemini:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GOOGLE_GEMINI_BASE_URL": gemini.url,
               "GOOGLE_API_KEY": "test-key-not-a-secret", "ADK_DISABLE_TELEMETRY": "1"}
        server = subprocess.Popen(
            [sys.executable, "-m", "google.adk.cli", "api_server", str(agents), "--port", str(port),
             "--extra_plugins", "google.adk.cli.plugins.recordings_plugin.RecordingsPlugin"],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_until(lambda: _answers(f"http://127.0.0.1:{port}/list-apps"), timeout=60)
            record_cases(f"http://127.0.0.1:{port}", cases, gemini)
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    yield {"root": root, "agents": agents, "cases": cases}


@pytest.fixture(scope="module")
def model() -> Iterator[StubServer]:
    """The host's Gemini: answers only what a test queued (a replay must call none)."""
    with StubServer() as gemini:
        yield gemini


@pytest.fixture(scope="module")
def served(recorded: dict[str, Path], model: StubServer, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[dict[str, Any]]:
    """One host for the tests that replay and record: its ``conformance_dir`` the folder
    of the recorded cases, under which each test keeps cases of its own (a replay's or
    recording's folder must be under it); its model ``model``."""
    settings = f'agents_dir = "{recorded["agents"]}"\nconformance_dir = "{recorded["root"]}"\n'
    env = {"GEMINI_API_KEY": "test-key-not-a-secret", "GEMINI_BASE_URL": model.url}
    with serving(tmp_path_factory.mktemp("conformance-host"), settings, apps="", env=env) as info:
        yield info


def record_cases(url: str, cases: Path, gemini: StubServer) -> None:
    """Write every case under ``cases`` and record it, in both streaming modes, with
    google-adk's record client against the server at ``url``."""
    cli_record.AdkWebServerClient = functools.partial(AdkWebServerClient, base_url=url)  # type: ignore[misc]
    try:
        for name, (spec, answers) in CASES.items():
            (cases / name).mkdir(parents=True, exist_ok=True)
            (cases / name / "spec.yaml").write_text(textwrap.dedent(spec))
            for mode, responses in answers.items():
                gemini.add(*responses)
                asyncio.run(cli_record.run_conformance_record([cases / name], mode))
                assert (cases / name / MODES[mode]).exists(), f"{name} was not recorded ({mode})"
    finally:
        cli_record.AdkWebServerClient = AdkWebServerClient  # type: ignore[misc]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def replay(url: str, cases: Path, mode: StreamingMode = StreamingMode.NONE) -> Any:
    runner = ConformanceTestRunner([cases], AdkWebServerClient(base_url=url), mode="replay", streaming_mode=mode)
    return asyncio.run(runner.run_all_tests())


@pytest.mark.parametrize("mode", list(MODES))
def test_google_adks_conformance_runner_passes_on_our_host(recorded: dict[str, Path], served: dict[str, Any],
                                                          model: StubServer, mode: StreamingMode) -> None:
    called = len(model.requests)  # a model nobody should call: replays answer from the recordings
    summary = replay(served["url"], recorded["cases"], mode)
    failures = [f"{r.category}/{r.name}: {r.error_message}" for r in summary.results if not r.success]
    assert failures == [] and summary.passed_tests == len(CASES), failures
    assert len(model.requests) == called


def test_a_changed_recording_fails_the_case(recorded: dict[str, Path], served: dict[str, Any]) -> None:
    changed = recorded["root"] / "changed"
    source = recorded["cases"] / "tools" / "paris"
    (changed / "tools" / "paris").mkdir(parents=True)
    for path in source.iterdir():
        text = path.read_text()
        (changed / "tools" / "paris" / path.name).write_text(
            text.replace("weather in Paris?", "weather in Rome?") if path.name == "generated-recordings.yaml" else text)
    summary = replay(served["url"], changed)
    assert summary.failed_tests == 1
    assert "ReplayVerificationError" in summary.results[0].error_message
    assert "Rome" in summary.results[0].error_message  # the recorded conversation, shown beside ours


def test_a_host_without_conformance_dir_refuses_a_replay(recorded: dict[str, Path], tmp_path: Path) -> None:
    with serving(tmp_path, f'agents_dir = "{recorded["agents"]}"\n', apps="") as served:
        summary = replay(served["url"], recorded["cases"])
        assert summary.failed_tests == len(CASES)
        with httpx.Client(base_url=served["url"], timeout=30) as http:
            http.post("/apps/weather_yaml/users/u/sessions", json={"sessionId": "s"})
            refused = http.post("/run", json={
                "appName": "weather_yaml", "userId": "u", "sessionId": "s",
                "newMessage": {"role": "user", "parts": [{"text": "hi"}]},
                "stateDelta": {"_adk_replay_config": {"dir": "/etc", "user_message_index": 0}}})
    assert refused.status_code == 500
    assert "conformance replay or recording, which is off on this host" in refused.json()["detail"]


def test_cases_recorded_on_our_host_replay_on_it(recorded: dict[str, Path], served: dict[str, Any],
                                               model: StubServer) -> None:
    """``adk conformance record`` against our host: google-adk's client, our server's
    recordings (in google-adk's file format), then a replay of them that passes."""
    from google.adk.cli.plugins.recordings_schema import Recordings

    cases = recorded["root"] / "ours"
    before = len(model.requests)
    record_cases(served["url"], cases, model)
    assert len(model.requests) - before == sum(len(r) for _, answers in CASES.values() for r in answers.values())
    for path in cases.rglob("generated-recordings*.yaml"):
        recordings = Recordings.model_validate(yaml.safe_load(path.read_text()))
        assert {r.agent_name for r in recordings.recordings} == {"weather_yaml"}
        assert any(r.tool_recording for r in recordings.recordings), path
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    called = len(model.requests)
    for mode in MODES:
        summary = replay(served["url"], cases, mode)
        failures = [f"{r.category}/{r.name}: {r.error_message}" for r in summary.results if not r.success]
        assert failures == [] and summary.passed_tests == len(CASES), failures
    assert len(model.requests) == called  # the replays called no model


@pytest.mark.parametrize(("config", "problem"), [
    ({"dir": "/etc", "user_message_index": 0}, "is not under the host's conformance_dir"),
    ({"dir": "{cases}/../elsewhere", "user_message_index": 0}, "is not under the host's conformance_dir"),
    ({"dir": "{cases}", "user_message_index": "0"}, "needs dir and user_message_index"),
    ({"dir": "{cases}", "user_message_index": 0, "streaming_mode": "bidi"}, "streaming_mode is none or sse"),
    ({"dir": "{cases}/missing", "user_message_index": 0}, "the recordings generated-recordings.yaml: cannot read it"),
])
def test_a_bad_replay_config_is_refused_before_any_file_is_read(tmp_path: Path, config: dict[str, Any],
                                                                problem: str) -> None:
    (tmp_path / "cases").mkdir()
    config = {k: v.replace("{cases}", str(tmp_path / "cases")) if isinstance(v, str) else v for k, v in config.items()}
    with pytest.raises(ConformanceConfigError, match=problem):
        conformance_plugin({REPLAY_CONFIG: config}, "none", str(tmp_path / "cases"))
    assert conformance_plugin({"unit": "C"}, "none", None) is None  # no config: no plugin, on or off
