"""A2A against google-adk, both ways (issue 32): google-adk's own RemoteA2aAgent
(run by its InMemoryRunner) reaches our host's app; our RemoteA2aAgent reaches an
agent served by google-adk's ``to_a2a`` (its model a Gemini stub: a real HTTP server
speaking Gemini's wire format)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, answers, free_port, serving

from adk_actors.testing import StubServer, gemini_response
from supervision.testing import wait_until

pytest.importorskip("a2a")
pytest.importorskip("google.adk.a2a")

GOOGLE_CLIENT = """
import asyncio, sys
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

async def main():
    runner = InMemoryRunner(agent=RemoteA2aAgent(name="remote", agent_card=sys.argv[1]), app_name="t")
    session = await runner.session_service.create_session(app_name="t", user_id="u")
    for text in sys.argv[2:]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            if event.error_message:
                print("ERROR", event.error_message)
            elif event.content and event.content.parts and not event.partial:
                print("TEXT", event.author, "".join(p.text or "" for p in event.content.parts))
asyncio.run(main())
"""

GOOGLE_SERVER = """
import sys
import uvicorn
from google.adk.agents import LlmAgent
from google.adk.a2a.utils.agent_to_a2a import to_a2a

agent = LlmAgent(name="gforecaster", model="gemini-2.5-flash", description="Forecasts the weather.",
                 instruction="You forecast the weather.")
uvicorn.run(to_a2a(agent, host="127.0.0.1", port=int(sys.argv[1])), host="127.0.0.1", port=int(sys.argv[1]),
            log_level="warning")
"""


def test_google_adks_remote_a2a_agent_reaches_our_app(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        card = f"{served['url']}/a2a/weather_bot/.well-known/agent-card.json"
        done = subprocess.run([sys.executable, "-c", GOOGLE_CLIENT, card, "What's the weather in Paris?",
                               "And in Oslo?"], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "ADK_DISABLE_TELEMETRY": "1"})
    lines = [line for line in done.stdout.splitlines() if line.startswith(("TEXT", "ERROR"))]
    assert done.returncode == 0 and not [x for x in lines if x.startswith("ERROR")], done.stdout + done.stderr
    answers = [line for line in lines if line.startswith("TEXT remote")]
    assert any("Paris" in line for line in answers) and "Oslo" in answers[-1], lines


@pytest.fixture
def google_server() -> Iterator[tuple[str, StubServer]]:
    """google-adk's ``to_a2a`` app on uvicorn, its model a Gemini stub."""
    port = free_port()
    with StubServer() as model:
        env = {**os.environ, "GOOGLE_GEMINI_BASE_URL": model.url, "GOOGLE_API_KEY": "test-key-not-a-secret",
               "ADK_DISABLE_TELEMETRY": "1", "PYTHONPATH": str(ROOT)}
        server = subprocess.Popen([sys.executable, "-c", GOOGLE_SERVER, str(port)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: answers(f"{url}/.well-known/agent-card.json"), timeout=60)
            yield url, model
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_our_remote_a2a_agent_reaches_google_adks_to_a2a(google_server: tuple[str, StubServer],
                                                         tmp_path: Path) -> None:
    url, model = google_server
    model.add(gemini_response("Sunny in Paris all week."))
    card = f"{url}/.well-known/agent-card.json"
    apps = 'router = "examples.a2a_router.agent:root_agent"\n'
    with serving(tmp_path, apps=apps, env={"ADK_A2A_SPECIALIST_CARD": card}) as ours, \
            httpx.Client(base_url=ours["url"], timeout=60) as http:
        session = http.post("/apps/router/users/ann/sessions", json={}).json()["id"]
        events: list[dict[str, Any]] = http.post("/run", json={
            "appName": "router", "userId": "ann", "sessionId": session,
            "newMessage": {"role": "user", "parts": [{"text": "What's the weather in Paris next week?"}]}}).json()
    final = events[-1]
    assert final["author"] == "forecaster", events
    assert final["content"]["parts"][0]["text"] == "Sunny in Paris all week."
    assert final["customMetadata"]["a2a_context_id"]
    sent = model.requests[-1].body  # what google-adk's agent got: our user's message
    assert "What's the weather in Paris next week?" in str(sent["contents"])
