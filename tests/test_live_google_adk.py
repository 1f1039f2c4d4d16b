"""``/run_live`` against google-adk's own, field by field: the same YAML agent served by
google-adk's ``adk api_server`` and by our host, each connected to its own stand-in for
Gemini's Live API (a real WebSocket server on 127.0.0.1 speaking ``BidiGenerateContent``,
checked against google-genai's message types) that answers both the same way. A typed
turn (text answer) and a spoken one (audio in, transcriptions and speech out), each
with a tool call: the frames each server sends, and the session it stores, must have
the same keys at every level, and google-adk's Event model must read each of ours."""

from __future__ import annotations

import base64
import json
import os
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import trustme
from conftest import ROOT, answers, free_port, serving
from live_stub import LiveServer, live_server_in_thread, snake
from websockets.sync.client import connect
from wire_shapes import differences, shape

from supervision.testing import wait_until

pytest.importorskip("google.adk.cli")
from google.adk.events import Event

AGENT = """\
name: live_weather
model: gemini-live-2.5-flash
description: Tells the weather, by voice or text.
instruction: You tell the weather. Use get_weather.
tools:
  - name: examples.weather_bot.agent.get_weather
"""

PCM = base64.b64encode(b"\x00\x01" * 240).decode()
USAGE = {"promptTokenCount": 12, "responseTokenCount": 5, "totalTokenCount": 17}


def model_turns(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The Live API's side of both conversations: a question (typed or spoken) makes a
    tool call, and ends its turn; the tool's result gets ``ANSWER`` (text, or speech with its
    transcription, then the usage and the end of the turn). Field names are read in
    either case, as the Live API reads them (google-genai sends some in snake_case)."""
    message = snake(message)
    realtime = message.get("realtime_input", {})  # google-genai sends audio as the older media_chunks
    spoken = "audio" in realtime or any(c["mime_type"].startswith("audio/") for c in realtime.get("media_chunks", []))
    typed = message.get("client_content", {}).get("turn_complete")
    if spoken or typed:
        heard = [{"serverContent": {"inputTranscription": {"text": "weather in Oslo"}}}] if spoken else []
        return [*heard, {"toolCall": {"functionCalls": [{"id": "fc-1", "name": "get_weather",
                                                         "args": {"city": "Oslo"}}]}},
                {"serverContent": {"turnComplete": True}}]  # Gemini 2.x Live ends a turn after its tool call
    return ANSWER if "tool_response" in message else []


#: what the model says once it has the tool's result: set by each test (text or speech)
ANSWER: list[dict[str, Any]] = []


def text_answer() -> list[dict[str, Any]]:
    return [{"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "It is sunny "}]}}},
            {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "in Oslo."}]}}},
            {"usageMetadata": USAGE}, {"serverContent": {"turnComplete": True}}]


def spoken_answer() -> list[dict[str, Any]]:
    return [{"serverContent": {"outputTranscription": {"text": "It is sunny "}}},
            {"serverContent": {"modelTurn": {"role": "model", "parts": [
                {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": PCM}}]}}},
            {"serverContent": {"outputTranscription": {"text": "in Oslo."}}},
            {"usageMetadata": USAGE}, {"serverContent": {"turnComplete": True}}]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """google-adk's ``adk api_server`` and our host, each with its Live API stand-in."""
    root = tmp_path_factory.mktemp("live")
    agents = root / "agents"
    (agents / "live_weather").mkdir(parents=True)
    (agents / "live_weather" / "root_agent.yaml").write_text(AGENT)
    port = free_port()
    authority = trustme.CA()  # google-genai reaches the Live API only over TLS
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(tls)
    authority.cert_pem.write_to_path(str(root / "ca.pem"))
    stand_ins = {"theirs": LiveServer(model_turns), "ours": LiveServer(model_turns)}
    with live_server_in_thread(stand_ins["theirs"], tls) as theirs_model, \
            live_server_in_thread(stand_ins["ours"]) as our_model:
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}",
               "GOOGLE_GEMINI_BASE_URL": theirs_model, "GOOGLE_API_KEY": "test-key-not-a-secret",
               "SSL_CERT_FILE": str(root / "ca.pem"), "ADK_DISABLE_TELEMETRY": "1"}
        server = subprocess.Popen([sys.executable, "-m", "google.adk.cli", "api_server", str(agents), "--port",
                                   str(port)], cwd=root, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_until(lambda: answers(f"http://127.0.0.1:{port}/list-apps"), timeout=60)
            ours_env = {"GEMINI_API_KEY": "test-key-not-a-secret", "GEMINI_BASE_URL": our_model}
            with serving(root, f'agents_dir = "{agents}"\n', apps="", env=ours_env) as served:
                assert served["url"] is not None
                yield {"theirs": f"http://127.0.0.1:{port}", "ours": served["url"], "stand_ins": stand_ins}
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def converse(url: str, modality: str, session_id: str) -> dict[str, Any]:
    """One question on the server at ``url``: the frames it sends until the answer's
    turn is complete, then the session it stored once the socket is closed."""
    with httpx.Client(base_url=url, timeout=30) as http:
        http.post("/apps/live_weather/users/ann/sessions", json={"sessionId": session_id})
    ws_url = url.replace("http://", "ws://")
    frames: list[dict[str, Any]] = []
    with connect(f"{ws_url}/run_live?app_name=live_weather&user_id=ann&session_id={session_id}"
                 f"&modalities={modality}") as socket:
        if modality == "AUDIO":
            socket.send(json.dumps({"blob": {"mime_type": "audio/pcm;rate=16000", "data": PCM}}))
        else:
            socket.send(json.dumps({"content": {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}}))
        while sum(bool(frame.get("turnComplete")) for frame in frames) < 2:  # the tool call's turn, the answer's
            frames.append(json.loads(socket.recv(timeout=20)))
    with httpx.Client(base_url=url, timeout=30) as http:
        stored = http.get(f"/apps/live_weather/users/ann/sessions/{session_id}").json()
    return {"frames": frames, "stored": stored["events"]}


def spoken_as_theirs(event: dict[str, Any]) -> dict[str, Any]:
    """Our committed speech as google-adk's: it keeps only the transcription, where we
    also keep the words as content, so that later turns (live or typed, on any model)
    see what was said. That content says what the transcription says."""
    for key in ("inputTranscription", "outputTranscription"):
        if event.get(key, {}).get("finished") and "content" in event:
            assert [p["text"] for p in event["content"]["parts"]] == [event[key]["text"]]
            return {k: v for k, v in event.items() if k != "content"}
    return event


@pytest.mark.parametrize("modality", ["TEXT", "AUDIO"])
def test_live_frames_have_google_adks_fields(both: dict[str, Any], modality: str) -> None:
    ANSWER[:] = text_answer() if modality == "TEXT" else spoken_answer()
    theirs = converse(both["theirs"], modality, f"t-{modality}")
    ours = converse(both["ours"], modality, f"o-{modality}")
    for form in ("frames", "stored"):
        assert differences([shape(spoken_as_theirs(e)) for e in ours[form]], [shape(e) for e in theirs[form]]) == []
    for event in [*ours["frames"], *ours["stored"]]:  # google-adk's own model reads each of ours
        Event.model_validate(event)
    usage = [e["usageMetadata"] for e in ours["stored"] if "usageMetadata" in e]
    assert usage == [{"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}]
    words = [e["content"]["parts"][0]["text"] for e in ours["stored"] if "content" in e and "text" in e["content"]["parts"][0]]
    assert words == (["Weather in Oslo?", "It is sunny in Oslo."] if modality == "TEXT"
                     else ["weather in Oslo", "It is sunny in Oslo."])
