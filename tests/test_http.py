"""The host's HTTP front door (issue 21), through a real ``adk-actors serve``: google-adk's
routes and wire shapes (checked with google-adk's own client and models), SSE framing,
the origin/host guard, bearer tokens that keep users apart, bad input, and the server
coming back after kill -9."""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, last_text, serving, session_workers, wait_workers_gone

from adk_actors.runtime import Host
from supervision import call
from supervision.lowlevel import proc_stat, process_alive
from supervision.testing import wait_until

APPS = ('weather_bot = "examples.weather_bot.agent:root_agent"\n'
        'streaming = "runtime_agents:streaming_agent"\n'
        'notes = "runtime_agents:notes_agent"\n'
        'guarded = "runtime_agents:guarded_app"\n'
        'fluent_pipeline = "examples.fluent_pipeline.agent:root_agent"\n')
APP_NAMES = ["fluent_pipeline", "guarded", "notes", "streaming", "weather_bot"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving(tmp_path_factory.mktemp("http"), apps=APPS) as info:
        assert info["url"], info["out"].read_text()
        yield info


def no_nulls(value: Any) -> bool:
    """google-adk omits None fields: no null anywhere in a session or event."""
    if isinstance(value, dict):
        return all(v is not None and no_nulls(v) for v in value.values())
    if isinstance(value, list):
        return all(no_nulls(v) for v in value)
    return True


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """Parse an SSE body, asserting google-adk's framing: only ``data:`` lines, each a
    compact JSON object, each followed by a blank line."""
    text = body.decode()
    assert text.endswith("\n\n") and "\r" not in text
    frames = text[:-2].split("\n\n")
    parsed = []
    for frame in frames:
        assert frame.startswith("data: ") and "\n" not in frame, frame
        payload = frame[len("data: "):]
        event = json.loads(payload)
        assert payload == json.dumps(event, separators=(",", ":"), ensure_ascii=True) or "error" in event
        parsed.append(event)
    return parsed


# -- google-adk's own client ------------------------------------------------------------------------


def test_google_adks_client_drives_the_host(served: dict[str, Any]) -> None:
    """google-adk's AdkWebServerClient, unchanged, against our host: every answer parses
    into google-adk's own Session and Event models."""
    from google.adk.cli.adk_web_server import RunAgentRequest
    from google.adk.cli.conformance.adk_web_server_client import AdkWebServerClient
    from google.genai import types

    async def conversation() -> tuple[Any, ...]:
        async with AdkWebServerClient(served["url"]) as adk:
            version = await adk.get_version_data()
            session = await adk.create_session(app_name="weather_bot", user_id="ann", state={"unit": "C"})
            request = RunAgentRequest(app_name="weather_bot", user_id="ann", session_id=session.id,
                                      new_message=types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]))
            events = [event async for event in adk.run_agent(request)]
            patched = await adk.update_session(app_name="weather_bot", user_id="ann", session_id=session.id,
                                               state_delta={"unit": "F"})
            again = await adk.get_session(app_name="weather_bot", user_id="ann", session_id=session.id)
            await adk.delete_session(app_name="weather_bot", user_id="ann", session_id=session.id)
            with pytest.raises(httpx.HTTPStatusError) as gone:
                await adk.get_session(app_name="weather_bot", user_id="ann", session_id=session.id)
            return version, session, events, patched, again, gone.value.response.status_code

    version, session, events, patched, again, gone = asyncio.run(conversation())
    assert version["language"] == "python" and version["version"]
    assert session.app_name == "weather_bot" and session.user_id == "ann" and session.state == {"unit": "C"}
    assert [e.content.parts[0].function_call.name for e in events[:1]] == ["get_weather"]
    assert events[-1].content.parts[0].text == "It is 21 °C and clear in Paris."
    assert len({e.invocation_id for e in events}) == 1
    assert patched.state["unit"] == "F" and patched.events[-1].invocation_id.startswith("p-")
    assert patched.events[-1].author == "user" and patched.events[-1].actions.state_delta == {"unit": "F"}
    assert [e.id for e in again.events[1:len(events) + 1]] == [e.id for e in events]  # what streamed is stored
    assert gone == 404


# -- routes, shapes, errors ---------------------------------------------------------------------


def test_sessions_and_runs_have_google_adks_shapes(client: httpx.Client) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    assert client.get("/list-apps").json() == APP_NAMES
    detailed = client.get("/list-apps", params={"detailed": "true"}).json()["apps"]
    assert {"name": "weather_bot", "rootAgentName": "weather_bot", "description": "", "language": "python",
            "isComputerUse": False, "agents": None} in detailed
    info = client.get("/apps/weather_bot/app-info").json()
    assert info["rootAgentName"] == "weather_bot" and info["language"] == "python"
    root = info["agents"]["weather_bot"]
    assert root["sub_agents"] == ["alert_agent"] and "alert_agent" in info["agents"]
    assert root["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"
    assert client.get("/apps/nobody/app-info").status_code == 404
    created = client.post("/apps/weather_bot/users/bob/sessions",
                          json={"sessionId": "b1", "state": {"city": "Oslo", "temp:x": 1}})
    assert created.status_code == 200
    assert set(created.json()) == {"id", "appName", "userId", "state", "events", "lastUpdateTime"}
    assert created.json()["state"] == {"city": "Oslo"}  # temp: state is never stored
    duplicate = client.post("/apps/weather_bot/users/bob/sessions", json={"sessionId": "b1"})
    assert duplicate.status_code == 409 and duplicate.json() == {"detail": "Session already exists: b1"}
    assert client.post("/apps/weather_bot/users/bob/sessions").status_code == 200  # no body: a new id
    answer = client.post("/run", json={"appName": "weather_bot", "userId": "bob", "sessionId": "b1",
                                       "newMessage": {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}})
    assert answer.status_code == 200
    events = answer.json()
    assert all(e["author"] == "weather_bot" for e in events) and no_nulls(events)  # the user's event is not echoed
    assert events[0]["content"]["parts"][0]["functionCall"]["name"] == "get_weather"
    assert set(events[0]["actions"]) >= {"stateDelta", "artifactDelta", "requestedAuthConfigs",
                                         "requestedToolConfirmations"}
    session = client.get("/apps/weather_bot/users/bob/sessions/b1").json()
    assert no_nulls(session) and [e["id"] for e in session["events"][1:]] == [e["id"] for e in events]
    listed = client.get("/apps/weather_bot/users/bob/sessions").json()
    assert "b1" in {s["id"] for s in listed}
    # a run's stateDelta is committed on the user's event, as google-adk does: no event of its own
    again = client.post("/run", json={"appName": "weather_bot", "userId": "bob", "sessionId": "b1",
                                      "stateDelta": {"mood": "sunny", "city": None},
                                      "newMessage": {"role": "user", "parts": [{"text": "And in Paris?"}]}})
    assert again.status_code == 200
    after = client.get("/apps/weather_bot/users/bob/sessions/b1").json()
    user_event = after["events"][len(session["events"])]
    assert user_event["author"] == "user" and user_event["content"]["parts"][0]["text"] == "And in Paris?"
    assert user_event["actions"]["stateDelta"] == {"mood": "sunny", "city": None}
    assert [e["id"] for e in after["events"][len(session["events"]) + 1:]] == [e["id"] for e in again.json()]
    assert after["state"]["mood"] == "sunny" and after["state"]["last_city"] == "Paris"
    patched = client.patch("/apps/weather_bot/users/bob/sessions/b1", json={"stateDelta": {"city": None, "n": 2}})
    assert "city" not in patched.json()["state"] and patched.json()["state"]["n"] == 2  # null deletes (our rule)
    assert client.delete("/apps/weather_bot/users/bob/sessions/b1").json() is None
    assert client.get("/apps/weather_bot/users/bob/sessions/b1").status_code == 404
    assert client.delete("/apps/weather_bot/users/bob/sessions/never").json() is None  # as google-adk


def test_auto_create_session_lets_a_run_make_the_session_it_names(tmp_path: Path) -> None:
    """``[http] auto_create_session`` (google-adk's ``--auto_create_session``): ``/run``
    and ``/run_sse`` on a session that does not exist create it, empty, and run the
    turn in it; the next turn continues it. (Off by default: 404, tested above.)"""
    with serving(tmp_path, env={"ADK_ACTORS_HTTP__AUTO_CREATE_SESSION": "true"}) as running:
        url = running["url"]
        assert "Paris" in last_text(url, "weather_bot", "weather in Paris", user="cy", session="made-by-run")
        run = {"appName": "weather_bot", "userId": "cy", "sessionId": "made-by-sse",
               "newMessage": {"role": "user", "parts": [{"text": "weather in Oslo"}]}}
        streamed = httpx.post(f"{url}/run_sse", json=run, timeout=30)
        assert streamed.status_code == 200 and "Oslo" in streamed.text and '"error"' not in streamed.text
        assert "Rome" in last_text(url, "weather_bot", "weather in Rome", user="cy", session="made-by-run")
        made = httpx.get(f"{url}/apps/weather_bot/users/cy/sessions/made-by-run", timeout=10).json()
        said = [e["content"]["parts"][0].get("text") for e in made["events"] if e["author"] == "user"]
        assert said == ["weather in Paris", "weather in Rome"]
        assert httpx.get(f"{url}/apps/weather_bot/users/cy/sessions/made-by-sse", timeout=10).status_code == 200
        from websockets.sync.client import connect

        live = url.replace("http://", "ws://") + "/run_live?app_name=weather_bot&user_id=cy&session_id=made-live"
        with connect(live) as socket:
            socket.send(json.dumps({"content": {"role": "user", "parts": [{"text": "weather in Lima"}]}}))
            frames = [json.loads(socket.recv(timeout=20))]
            while not frames[-1].get("turnComplete") and len(frames) < 50:
                frames.append(json.loads(socket.recv(timeout=20)))
        assert "Lima" in json.dumps(frames)
        assert httpx.get(f"{url}/apps/weather_bot/users/cy/sessions/made-live", timeout=10).status_code == 200


def test_bad_input_gets_a_typed_error_and_the_host_keeps_serving(client: httpx.Client) -> None:
    run = {"appName": "weather_bot", "userId": "cy", "sessionId": "nope",
           "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}
    unknown = client.post("/run", json=run)
    assert unknown.status_code == 404 and unknown.json() == {"detail": "Session not found"}
    streamed = client.post("/run_sse", json=run)
    assert streamed.status_code == 404 and streamed.json() == {"detail": "Session not found"}  # before any stream
    assert client.post("/run", json={**run, "appName": "nobody"}).status_code == 404
    assert client.get("/apps/nobody/users/cy/sessions").status_code == 404
    malformed = client.post("/run", content=b"{not json", headers={"content-type": "application/json"})
    assert malformed.status_code == 422
    wrong_type = client.post("/run", json={**run, "userId": 5})
    assert wrong_type.status_code == 422 and wrong_type.json()["detail"][0]["loc"][-1] == "userId"
    assert client.post("/run", json={**run, "newMessage": {"parts": "text"}}).status_code == 422
    huge = client.post("/apps/weather_bot/users/cy/sessions", json={"state": {"x": "y" * 3_000_000}})
    assert huge.status_code == 413 and "bytes" in huge.json()["detail"]
    assert client.get("/apps/weather_bot/users/cy/sessions").json() == []  # nothing stored half-way
    assert client.patch("/apps/weather_bot/users/cy/sessions/nope", json={}).status_code == 422
    assert client.get("/health").json() == {"status": "ok"}


def test_a_message_an_input_policy_refuses_is_answered_with_the_refusal(client: httpx.Client) -> None:
    """The refusal is the run's first event (there is no user event): it is the answer."""
    client.post("/apps/guarded/users/hal/sessions", json={"sessionId": "h1"})
    body = {"appName": "guarded", "userId": "hal", "sessionId": "h1",
            "newMessage": {"role": "user", "parts": [{"text": "SHOUT hello"}]}}
    answered = client.post("/run", json=body).json()
    assert [(e["author"], e["errorCode"]) for e in answered] == [("guarded", "input_rejected")]
    streamed = sse_events(client.post("/run_sse", json=body).content)
    assert [e.get("errorCode") for e in streamed] == ["input_rejected"]
    polite = client.post("/run", json={**body, "newMessage": {"role": "user", "parts": [{"text": "hello"}]}})
    assert [e["content"]["parts"][0]["text"] for e in polite.json()] == ["hello: hello [model calls: 1]"]


def test_artifacts_and_memory(client: httpx.Client) -> None:
    base = "/apps/notes/users/dee/sessions"
    client.post(base, json={"sessionId": "d1"})
    first = client.post(f"{base}/d1/artifacts", json={"filename": "plan.txt", "artifact": {"text": "v0"}})
    assert first.status_code == 200 and first.json()["version"] == 0
    assert set(first.json()) == {"version", "mimeType", "createTime", "customMetadata", "canonicalUri"}
    second = client.post(f"{base}/d1/artifacts", json={"filename": "plan.txt", "customMetadata": {"from": "upload"},
                                                       "artifact": {"inlineData": {"mimeType": "text/csv", "data": "YSxi"}}})
    assert second.json()["version"] == 1 and second.json()["customMetadata"] == {"from": "upload"}
    assert client.get(f"{base}/d1/artifacts").json() == ["plan.txt"]
    assert client.get(f"{base}/d1/artifacts/plan.txt/versions").json() == [0, 1]
    assert client.get(f"{base}/d1/artifacts/plan.txt", params={"version": 0}).json() == {"text": "v0"}
    latest = client.get(f"{base}/d1/artifacts/plan.txt").json()
    assert latest == {"inlineData": {"mimeType": "text/csv", "data": "YSxi"}}
    assert client.get(f"{base}/d1/artifacts/plan.txt/versions/latest").json() == latest
    assert client.get(f"{base}/d1/artifacts/plan.txt/versions/x").status_code == 422
    assert client.get(f"{base}/d1/artifacts/plan.txt/versions/7/metadata").status_code == 404

    async def metadata() -> tuple[Any, Any]:
        from google.adk.cli.conformance.adk_web_server_client import AdkWebServerClient

        async with AdkWebServerClient(str(client.base_url)) as adk:
            every = await adk.list_artifact_versions_metadata(app_name="notes", user_id="dee", session_id="d1",
                                                              artifact_name="plan.txt")
            one = await adk.get_artifact_version_metadata(app_name="notes", user_id="dee", session_id="d1",
                                                          artifact_name="plan.txt", version=1)
            return every, one

    every, one = asyncio.run(metadata())  # google-adk's client, parsed into its ArtifactVersion model
    assert [(v.version, v.mime_type) for v in every] == [(0, "text/plain"), (1, "text/csv")]
    assert one.version == 1 and one.canonical_uri.endswith("/artifacts/plan.txt/versions/1")
    assert one.custom_metadata == {"from": "upload"} and every[0].custom_metadata == {}
    assert every[0].create_time <= one.create_time
    assert client.get(f"{base}/d1/artifacts/missing.txt").status_code == 404
    empty = client.post(f"{base}/d1/artifacts", json={"filename": "empty.txt", "artifact": {}})
    assert empty.status_code == 400 and "text or inline_data" in empty.json()["detail"]  # the actor once crashed
    tricky = client.post(f"{base}/d1/artifacts", json={"filename": "../../etc/passwd", "artifact": {"text": "x"}})
    assert tricky.status_code == 422 and "path" in tricky.json()["detail"]  # the name grammar, at the edge
    assert client.get(f"{base}/d1/artifacts/..%2F..%2Fetc%2Fpasswd").status_code in (400, 404)
    client.post("/run", json={"appName": "notes", "userId": "dee", "sessionId": "d1",
                              "newMessage": {"role": "user", "parts": [{"text": "save remember the milk"}]}})
    assert client.patch("/apps/notes/users/dee/memory", json={"sessionId": "d1"}).json() is None
    assert client.delete(f"{base}/d1/artifacts/plan.txt").json() is None
    assert client.get(f"{base}/d1/artifacts/plan.txt").status_code == 404


def test_sse_streams_partials_then_the_final_event(client: httpx.Client) -> None:
    client.post("/apps/streaming/users/eve/sessions", json={"sessionId": "e1"})
    body = {"appName": "streaming", "userId": "eve", "sessionId": "e1", "streaming": True,
            "newMessage": {"role": "user", "parts": [{"text": "hello"}]}}
    response = client.post("/run_sse", json=body)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.content)
    partials = [e for e in events if e.get("partial")]
    final = events[-1]
    assert [p["content"]["parts"][0]["text"] for p in partials] == ["You said: ", "hello", "."]
    assert final["content"]["parts"][0]["text"] == "You said: hello." and not final.get("partial")
    stored = client.get("/apps/streaming/users/eve/sessions/e1").json()["events"]
    assert [e["id"] for e in stored] [-1] == final["id"] and not any(e.get("partial") for e in stored)
    quiet = client.post("/run_sse", json={**body, "streaming": False})
    assert not any(e.get("partial") for e in sse_events(quiet.content))


def test_sse_sends_an_event_with_an_artifact_delta_twice_as_google_adk_does(client: httpx.Client) -> None:
    """The tool's response saved an artifact: /run_sse sends that event twice with one
    id (its content with an empty artifactDelta, then the artifactDelta without
    content); /run and the session have it once, whole."""
    client.post("/apps/notes/users/gus/sessions", json={"sessionId": "g1"})
    body = {"appName": "notes", "userId": "gus", "sessionId": "g1",
            "newMessage": {"role": "user", "parts": [{"text": "save buy bread"}]}}
    streamed = sse_events(client.post("/run_sse", json=body).content)
    with_delta = [e for e in streamed if e["actions"].get("artifactDelta")]
    assert len(with_delta) == 1 and "content" not in with_delta[0]
    twin = [e for e in streamed if e["id"] == with_delta[0]["id"]]
    assert len(twin) == 2 and twin[0]["actions"]["artifactDelta"] == {} and twin[0]["content"]["parts"]
    assert with_delta[0]["actions"]["artifactDelta"] == {"note.txt": 0}
    stored = [e for e in client.get("/apps/notes/users/gus/sessions/g1").json()["events"]
              if e["id"] == twin[0]["id"]]
    assert len(stored) == 1 and stored[0]["content"]["parts"] and stored[0]["actions"]["artifactDelta"]
    ran = client.post("/run", json={**body, "newMessage": {"role": "user", "parts": [{"text": "save more"}]}}).json()
    assert [bool(e.get("content")) for e in ran if e["actions"].get("artifactDelta")] == [True]


def test_a_client_that_leaves_mid_stream_leaves_a_whole_turn(client: httpx.Client) -> None:
    client.post("/apps/streaming/users/fay/sessions", json={"sessionId": "f1"})
    body = {"appName": "streaming", "userId": "fay", "sessionId": "f1", "streaming": True,
            "newMessage": {"role": "user", "parts": [{"text": "slow bye"}]}}
    with client.stream("POST", "/run_sse", json=body) as response:
        first = next(response.iter_lines())
        assert json.loads(first[len("data: "):])["partial"] is True
    # The stream is cut after one partial: the run goes on to its end and is committed.
    def texts() -> list[str]:
        events = client.get("/apps/streaming/users/fay/sessions/f1").json()["events"]
        return [e["content"]["parts"][0]["text"] for e in events if e.get("content")]

    wait_until(lambda: texts() == ["slow bye", "You said: slow bye."], timeout=15)
    assert client.get("/health").json() == {"status": "ok"}


def test_openapi_is_published(client: httpx.Client) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/run", "/run_sse", "/list-apps", "/apps/{app}/users/{user}/sessions/{session_id}"} <= set(paths)


# -- the guard -----------------------------------------------------------------------------------


def test_origin_and_host_guards(client: httpx.Client, served: dict[str, Any]) -> None:
    own = served["url"]
    evil = client.get("/list-apps", headers={"origin": "http://evil.example"})
    assert evil.status_code == 403 and evil.text == "Forbidden: origin not allowed"
    assert client.get("/list-apps", headers={"origin": own}).status_code == 200
    rebound = client.get("/list-apps", headers={"host": "evil.example"})
    assert rebound.status_code == 403 and rebound.text == "Forbidden: host not allowed"
    port = own.rsplit(":", 1)[1]
    for name in ("localhost", "127.0.0.1", "[::1]", "127.0.0.9"):
        assert client.get("/list-apps", headers={"host": f"{name}:{port}"}).status_code == 200
        assert client.get("/list-apps", headers={"host": name}).status_code == 200  # no port: a non-browser client
    # A loopback name with the server's port or none: a page rebound to loopback sends its own name.
    for host in (f"localhost:{int(port) + 1}", "127.0.0.1:80@evil.example", "[::1].evil.example", "evil.example",
                 f"127.0.0.1:{port}.evil.example", f"localhost.evil.example:{port}", "::1", f"127.0.0.1:{port}:1", "",
                 f"127.0.0.1:{port}, evil.example", f"[::1]:{port}x", "127.1", f"10.0.0.1:{port}"):
        refused = client.get("/list-apps", headers={"host": host})
        assert (refused.status_code, refused.text) == (403, "Forbidden: host not allowed"), host


TOKENS = {"ann-token-0123456789abcdef": "ann", "bob-token-0123456789abcdef": "bob",
          "ops-token-0123456789abcdef": "*"}


def test_traces_are_served_as_google_adks_trace_view_reads_them(client: httpx.Client) -> None:
    """The spans of a turn, parsed by google-adk's own WebUiSpan model; the span of the
    model call that made an event; 404 for an event with none."""
    from google.adk.telemetry._web_ui import WebUiSpan

    session = client.post("/apps/weather_bot/users/tia/sessions").json()["id"]
    events = client.post("/run", json={"appName": "weather_bot", "userId": "tia", "sessionId": session,
                                       "newMessage": {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}}).json()
    trace = client.get(f"/dev/apps/weather_bot/debug/trace/session/{session}").json()
    spans = [WebUiSpan.model_validate(span) for span in trace]
    assert [s.name for s in spans] == ["generate_content scripted", "execute_tool get_weather",
                                       "generate_content scripted", "invoke_agent weather_bot"]
    root = spans[-1]
    assert root.parent_span_id is None and all(s.parent_span_id == root.span_id for s in spans[:-1])
    assert {s.attributes["gcp.vertex.agent.invocation_id"] for s in spans} == {events[0]["invocationId"]}
    assert {s.attributes.get("gen_ai.conversation.id") for s in spans if not s.name.startswith("execute_tool")} \
        == {session}
    assert "gen_ai.conversation.id" not in spans[1].attributes  # a tool's span names none, as google-adk's
    answer = client.get(f"/dev/apps/weather_bot/debug/trace/{events[-1]['id']}")
    assert answer.status_code == 200
    flat = answer.json()
    assert flat["span_id"] == spans[2].span_id and flat["gcp.vertex.agent.event_id"] == events[-1]["id"]
    assert "It is -3 °C and snow in Oslo." in json.loads(flat["gcp.vertex.agent.llm_response"])["content"]["parts"][0]["text"]
    assert client.get("/dev/apps/weather_bot/debug/trace/no-such-event").json() == {"detail": "Trace not found"}
    assert client.get("/dev/apps/nobody/debug/trace/session/x").status_code == 404
    assert client.get("/dev/apps/weather_bot/debug/trace/session/no-such-session").json() == []


def test_tokens_keep_users_apart(tmp_path: Path) -> None:
    env = {"ADK_ACTORS_HTTP__TOKENS": json.dumps(TOKENS)}
    with serving(tmp_path, env=env) as served, httpx.Client(base_url=served["url"], timeout=30) as http:
        def as_(token: str) -> dict[str, str]:
            return {"authorization": f"Bearer {token}-0123456789abcdef"}

        ann, bob, ops = as_("ann-token"), as_("bob-token"), as_("ops-token")
        assert http.get("/list-apps").status_code == 401
        assert http.get("/list-apps", headers={"authorization": "Bearer wrong-token-0123456789abcdef"}).status_code == 401
        assert http.get("/health").status_code == 200  # open: a liveness probe needs no token
        assert http.get("/").status_code == 200 and "app.js" in http.get("/").text  # the console asks for a token
        assert http.get("/console/api/whoami").status_code == 401
        assert http.post("/apps/weather_bot/users/ann/sessions", json={"sessionId": "a1"}, headers=ann).status_code == 200
        assert http.get("/apps/weather_bot/users/ann/sessions/a1", headers=ann).status_code == 200
        assert http.get("/apps/weather_bot/users/ann/sessions/a1", headers=bob).status_code == 403
        assert http.get("/apps/weather_bot/users/ann/sessions", headers=bob).status_code == 403
        assert http.post("/apps/weather_bot/users/ann/sessions", json={}, headers=bob).status_code == 403
        stolen = {"appName": "weather_bot", "userId": "ann", "sessionId": "a1",
                  "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}
        assert http.post("/run", json=stolen, headers=bob).status_code == 403
        assert http.post("/run_sse", json=stolen, headers=bob).status_code == 403
        assert http.get("/apps/weather_bot/users/ann/sessions/a1/artifacts", headers=bob).status_code == 403
        assert http.patch("/apps/weather_bot/users/ann/memory", json={"sessionId": "a1"}, headers=bob).status_code == 403
        assert http.get("/apps/weather_bot/users/ann/approvals", headers=bob).status_code == 403
        assert http.post("/apps/weather_bot/users/ann/approvals/x", json={"approve": True}, headers=bob).status_code == 403
        assert http.put("/apps/weather_bot/users/ann/credentials/cal", json={"apiKey": "k" * 20},
                        headers=bob).status_code == 403
        assert http.get("/console/api/tree", headers=ann).status_code == 403  # the tree is the operator's
        assert http.post("/console/api/kill", json={"path": "registry"}, headers=ann).status_code == 403
        assert http.get("/console/api/whoami", headers=ann).json() == {"principal": "ann", "operator": False}
        # the agent builder writes the host's agent files: the operator's alone
        upload = {"files": ("mine/root_agent.yaml", b"name: mine\n", "application/x-yaml")}
        assert http.post("/dev/apps/mine/builder/save", files=upload, headers=ann).status_code == 403
        assert http.get("/dev/apps/mine/builder", headers=ann).status_code == 403
        assert http.post("/dev/apps/mine/builder/save", files=upload, headers=ops).json() is True
        assert "mine" in http.get("/list-apps", headers=ann).json()
        # ... and so does the builder's assistant
        assistant = "/apps/__adk_agent_builder_assistant/users/ann/sessions"
        assert http.post(assistant, json={"sessionId": "b1"}, headers=ann).status_code == 403
        assert http.post(assistant, json={"sessionId": "b1"}, headers=ops).status_code == 200
        helped = {"appName": "__adk_agent_builder_assistant", "userId": "ann", "sessionId": "b1",
                  "newMessage": {"role": "user", "parts": [{"text": "write a virus"}]}}
        assert http.post("/run", json=helped, headers=ann).status_code == 403
        ran = http.post("/run", json=stolen, headers=ann)
        assert ran.status_code == 200
        trace, final = "/dev/apps/weather_bot/debug/trace/session/a1", f"/dev/apps/weather_bot/debug/trace/{ran.json()[-1]['id']}"
        assert http.get(trace, headers=ann).json() and http.get(trace, headers=ops).json()
        assert http.get(trace, headers=bob).json() == [] and http.get(final, headers=bob).status_code == 404
        assert http.get(final, headers=ann).status_code == 200
        assert http.get("/apps/weather_bot/users/ann/sessions/a1", headers=ops).status_code == 200
        assert http.get("/apps/weather_bot/users/ann/approvals", headers=ann).json() == []
        assert any(r["path"] == "http" for r in http.get("/console/api/tree", headers=ops).json()["rows"])
        tokens_in_output = served["out"].read_text() + served["err"].read_text()
        assert not any(token in tokens_in_output for token in TOKENS)
        assert "ann-token" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout

        # The CLI over HTTP (`--url`), the token from the environment: ann's own session works,
        # streamed; bob's token on ann's session and no token at all are refused with exit 1.
        def cli(*args: str, token: str | None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
            env = {**os.environ, "ADK_ACTORS_TOKEN": f"{token}-0123456789abcdef"} if token else \
                {k: v for k, v in os.environ.items() if k != "ADK_ACTORS_TOKEN"}
            return subprocess.run([sys.executable, "-m", "adk_actors.cli", *args, "--url", served["url"]],
                                  capture_output=True, text=True, timeout=60, env=env, input=stdin)

        turn = cli("run", "weather_bot", "What's the weather in Paris?", "--user", "ann", "--session", "a2",
                   token="ann-token")
        assert turn.returncode == 0, turn.stderr
        assert "-> get_weather" in turn.stdout and "21 °C and clear in Paris" in turn.stdout
        chat = cli("chat", "weather_bot", "--user", "ann", "--session", "a2", token="ann-token",
                   stdin="and in Oslo?\nthanks\n")
        assert chat.returncode == 0 and "snow in Oslo" in chat.stdout, chat.stderr
        assert len(http.get("/apps/weather_bot/users/ann/sessions/a2", headers=ann).json()["events"]) > 6
        refused = cli("run", "weather_bot", "hi", "--user", "ann", "--session", "a2", token="bob-token")
        assert refused.returncode == 1 and "refused" in refused.stderr and "Traceback" not in refused.stderr
        anonymous = cli("run", "weather_bot", "hi", "--user", "ann", "--session", "a2", token=None)
        assert anonymous.returncode == 1 and "401" in anonymous.stderr


def test_a_public_address_needs_tokens(tmp_path: Path) -> None:
    config = tmp_path / "host.toml"
    config.write_text(f'[host]\nport = 1\ndata_dir = "{tmp_path / "data"}"\n[http]\naddress = "0.0.0.0"\n'
                      '[apps]\nweather_bot = "examples.weather_bot.agent:root_agent"\n')
    result = subprocess.run([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "http" in result.stderr and "tokens" in result.stderr


# -- supervision ---------------------------------------------------------------------------------


def test_the_http_server_comes_back_after_kill_9(served: dict[str, Any], client: httpx.Client) -> None:
    """serve forks the server's first process ahead of the tree (it is serve's child);
    killing its actor kills it all the same (it watches its owner). Later servers are
    the actor's own children, and die with it (their parent death signal)."""
    host = Host.connect(served["port"])

    def http_child() -> Any:
        assert host.root is not None
        return next(c for c in host.root.which_children() if c.id == "http")

    def server_of(actor: Any) -> int:
        pid: int = call(host.system, actor.address, "server_pid")
        return pid

    def parent_of(pid: int) -> int | None:
        stat = proc_stat(pid)
        return stat[1] if stat is not None else None

    def healthy() -> bool:
        try:
            return client.get("/health").status_code == 200
        except httpx.TransportError:
            return False

    def comes_back(actor: Any) -> Any:
        wait_until(lambda: http_child().pid not in (None, actor.pid) and healthy(), timeout=20)
        return http_child()

    actor = http_child()
    first = server_of(actor)
    assert parent_of(first) == served["process"].pid
    os.kill(actor.pid, signal.SIGKILL)  # the actor: the server it took from serve dies with it
    wait_until(lambda: proc_stat(first) is None, timeout=10)  # dead, and reaped by serve: no zombie
    actor = comes_back(actor)
    server = server_of(actor)
    assert server != first and parent_of(server) == actor.pid
    os.kill(server, signal.SIGKILL)  # the uvicorn process
    actor = comes_back(actor)
    server = server_of(actor)
    os.kill(actor.pid, signal.SIGKILL)  # the actor: its server process dies with it, both come back
    wait_until(lambda: not process_alive(server), timeout=10)
    comes_back(actor)
    assert client.get("/list-apps").json() == APP_NAMES


# -- the WebSocket -------------------------------------------------------------------------------


def test_run_live_streams_text_turns_over_a_websocket(client: httpx.Client, served: dict[str, Any]) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    ws_url = served["url"].replace("http://", "ws://") + "/run_live"
    with connect(f"{ws_url}?app_name=streaming&user_id=gil&session_id=nope") as socket:
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1002
    assert closed.value.rcvd.reason == "Session not found"

    client.post("/apps/streaming/users/gil/sessions", json={"sessionId": "g1"})
    with connect(f"{ws_url}?app_name=streaming&user_id=gil&session_id=g1&modalities=TEXT") as socket:
        for text in ("one", "two"):
            socket.send(json.dumps({"content": {"role": "user", "parts": [{"text": text}]}}))
            frames = []
            while not frames or not frames[-1].get("turnComplete"):
                frames.append(json.loads(socket.recv(timeout=10)))
            assert [f["content"]["parts"][0]["text"] for f in frames if "content" in f] == [
                "You said: ", text, ".", f"You said: {text}."]
            # the pieces, the usage, the answer (partial: false) and the end of the turn, as google-adk's
            assert [f.get("partial") for f in frames] == [True, True, True, None, False, None]
            assert "usageMetadata" in frames[3] and frames[5]["turnComplete"] is True
        socket.send(json.dumps({"close": True}))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
    events = client.get("/apps/streaming/users/gil/sessions/g1").json()["events"]
    assert [e["content"]["parts"][0]["text"] for e in events if "content" in e] == [
        "one", "You said: one.", "two", "You said: two."]
    with connect(f"{ws_url}?app_name=streaming&user_id=gil&session_id=g1") as socket:
        socket.send("{not json")
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
    huge = base64.b64encode(b"\0" * (1024 * 1024 + 1)).decode()  # over the host's max_message_bytes
    with connect(f"{ws_url}?app_name=streaming&user_id=gil&session_id=g1", max_size=None) as socket:
        socket.send(json.dumps({"blob": {"mime_type": "audio/pcm;rate=16000", "data": huge}}))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with connect(f"{ws_url}?app_name=streaming&user_id=gil&session_id=g1&modalities=SMELL") as socket:
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
    evil = {"origin": "http://evil.example"}
    with pytest.raises(Exception) as refused:
        with connect(f"{ws_url}?app_name=streaming&user_id=gil&session_id=g1", additional_headers=evil) as socket:
            socket.recv(timeout=10)
    assert "403" in str(refused.value) or "1008" in str(refused.value)


def test_run_live_hears_audio_and_answers_in_speech_as_adk_web_sends_it(client: httpx.Client,
                                                                       served: dict[str, Any]) -> None:
    """adk-web's microphone frames (``{"blob": {"mime_type": "audio/pcm;rate=16000",
    "data": base64}}``) in; transcriptions and 24 kHz audio out; what was said is
    stored as text, no audio; a client that just goes away leaves the session free."""
    from websockets.sync.client import connect

    ws_url = served["url"].replace("http://", "ws://") + "/run_live"
    client.post("/apps/streaming/users/hal/sessions", json={"sessionId": "h1"})
    quarter = base64.b64encode(b"\x10\x00" * 4000).decode()  # 0.25 s of 16 kHz 16-bit PCM
    frame = base64.b64encode(b"\xff\xd8 a camera frame").decode()
    with connect(f"{ws_url}?app_name=streaming&user_id=hal&session_id=h1&modalities=AUDIO") as socket:
        socket.send(json.dumps({"blob": {"mime_type": "image/jpeg", "data": frame}}))  # adk-web's camera
        for _ in range(4):
            socket.send(json.dumps({"blob": {"mime_type": "audio/pcm;rate=16000", "data": quarter}}))
        frames = []
        while not frames or not frames[-1].get("turnComplete"):
            frames.append(json.loads(socket.recv(timeout=10)))
    heard = [f["inputTranscription"]["text"] for f in frames if "inputTranscription" in f]
    assert heard and heard[0] == "(1.0 s of audio)"
    spoken = "".join(f["outputTranscription"]["text"] for f in frames if "outputTranscription" in f and f.get("partial"))
    assert spoken == "You said: (1.0 s of audio)."
    audio = [p["inlineData"] for f in frames for p in f.get("content", {}).get("parts", []) if "inlineData" in p]
    # bytes as google-adk's pydantic types write them: URL-safe base64
    assert audio and all(a["mimeType"] == "audio/pcm;rate=24000" and base64.urlsafe_b64decode(a["data"])
                         for a in audio)
    # the socket was dropped without a close: the run ends, the session keeps the words
    def stored() -> list[tuple[str, str]]:
        events = client.get("/apps/streaming/users/hal/sessions/h1").json()["events"]
        return [(e["author"], e["content"]["parts"][0]["text"]) for e in events if "content" in e]

    wait_until(lambda: len(stored()) == 2, timeout=10)
    assert stored() == [("user", "(1.0 s of audio)"), ("streamer", "You said: (1.0 s of audio).")]
    events = client.get("/apps/streaming/users/hal/sessions/h1").json()["events"]
    assert all("inlineData" not in p for e in events for p in e.get("content", {}).get("parts", []))
    assert events[0]["inputTranscription"] == {"text": "(1.0 s of audio)", "finished": True}
    assert [e["outputTranscription"] for e in events if "outputTranscription" in e] == [
        {"text": "You said: (1.0 s of audio).", "finished": True}]
    answer = client.post("/run", json={"appName": "streaming", "userId": "hal", "sessionId": "h1",
                                       "newMessage": {"role": "user", "parts": [{"text": "typed"}]}}, timeout=30)
    assert answer.status_code == 200 and answer.json()[-1]["content"]["parts"][0]["text"] == "You said: typed."


def test_live_runs_survive_their_workers_and_partitions_being_killed(client: httpx.Client,
                                                                     served: dict[str, Any]) -> None:
    """Three voice sessions at once over /run_live; every run worker is killed, then
    every session partition. Each socket ends with google-adk's error payload and a
    1011 close (never a hang); what was said before the kills is stored; each session
    takes a new live run and a typed turn afterwards."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    ws_url = served["url"].replace("http://", "ws://") + "/run_live"
    second = base64.b64encode(b"\x10\x00" * 16_000).decode()  # 1 s of 16 kHz 16-bit PCM

    def one_turn(socket: Any) -> None:
        socket.send(json.dumps({"blob": {"mime_type": "audio/pcm;rate=16000", "data": second}}))
        frames: list[dict[str, Any]] = []
        while not frames or not frames[-1].get("turnComplete"):
            frames.append(json.loads(socket.recv(timeout=10)))

    def ended_with_1011(socket: Any) -> None:
        last: list[str] = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                last.append(socket.recv(timeout=15))
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011, closed.value
        assert "error" in json.loads(last[-1]), last

    def processes(kind: str) -> list[int]:
        rows = client.get("/console/api/tree").json()["rows"]
        top = "run_pools/" if kind == "worker" else "sessions/"  # run_pools/<pool>/worker-<pid>, sessions/<partition>
        depth = 2 if kind == "worker" else 1
        return [r["pid"] for r in rows if r["path"].startswith(top) and r["path"].count("/") == depth]

    for kind in ("worker", "partition"):
        names = [f"{kind}-{n}" for n in range(3)]
        for name in names:
            client.post("/apps/streaming/users/kit/sessions", json={"sessionId": name})
        sockets = [connect(f"{ws_url}?app_name=streaming&user_id=kit&session_id={name}") for name in names]
        try:
            for socket in sockets:
                one_turn(socket)
            victims = processes(kind)
            assert victims, kind
            for pid in victims:
                os.kill(pid, signal.SIGKILL)
            for socket in sockets:
                ended_with_1011(socket)
        finally:
            for socket in sockets:
                socket.close()
        for name in names:
            url = f"/apps/streaming/users/kit/sessions/{name}"
            wait_until(lambda: client.get(url).status_code == 200, timeout=20)
            said = [e["content"]["parts"][0]["text"] for e in client.get(url).json()["events"] if "content" in e]
            assert said == ["(1.0 s of audio)", "You said: (1.0 s of audio)."], (kind, said)
            with connect(f"{ws_url}?app_name=streaming&user_id=kit&session_id={name}") as socket:
                one_turn(socket)
            typed = client.post("/run", json={"appName": "streaming", "userId": "kit", "sessionId": name,
                                              "newMessage": {"role": "user", "parts": [{"text": "typed"}]}})
            assert typed.status_code == 200 and typed.json()[-1]["content"]["parts"][0]["text"] == "You said: typed."


def test_a_thousand_idle_connections_do_not_stop_the_host(client: httpx.Client, served: dict[str, Any]) -> None:
    import socket

    port = int(served["url"].rsplit(":", 1)[1])
    idle = []
    try:
        for _ in range(1000):
            connection = socket.create_connection(("127.0.0.1", port), timeout=10)
            idle.append(connection)
        half = idle[0]
        half.sendall(f"POST /run HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n".encode() +
                     b"Content-Length: 100\r\n\r\n{\"appName\":")  # a body that never ends
        client.post("/apps/weather_bot/users/ida/sessions", json={"sessionId": "i1"})
        answer = client.post("/run", json={"appName": "weather_bot", "userId": "ida", "sessionId": "i1",
                                           "newMessage": {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}})
        assert answer.status_code == 200 and answer.json()[-1]["content"]["parts"][0]["text"].startswith("It is")
    finally:
        for connection in idle:
            connection.close()
    assert client.get("/apps/weather_bot/users/ida/sessions/i1").status_code == 200
    assert client.get("/health").json() == {"status": "ok"}


def _poisoned(value: Any, kind: str, where: int) -> Any:
    """``value`` (a generated body or path parameter) with poison put in it: a lone
    surrogate (``surrogate``), a value nested 600 deep (``deep``), or a name that is a
    path (``name``); ``where`` picks which of its fields."""
    poison: Any = {"surrogate": "x\ud800y", "name": "../../etc"}.get(kind)
    if kind == "deep":
        poison = "leaf"
        for _ in range(600):
            poison = {"a": poison}
    if isinstance(value, dict) and value:
        key = sorted(value)[where % len(value)]
        return {**value, key: poison}
    return poison if kind != "deep" else value


@pytest.mark.timeout(300)  # every operation x 20 examples: ~40 s idle, more than the default 120 s at load
def test_schemathesis_finds_no_server_error(served: dict[str, Any]) -> None:
    """Generated requests for every operation of the published OpenAPI: typed 4xx at
    worst, never a 5xx. Path and body names are drawn from real apps, users and a
    real session as well as generated ones, so that requests reach the routes' work;
    and poison is put into bodies and path parameters (a lone surrogate, nesting 600
    deep, a name that is a path), so that it reaches every route too."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    httpx.post(served["url"] + "/apps/weather_bot/users/sam/sessions", json={"sessionId": "known"})
    schema = schemathesis.openapi.from_url(served["url"] + "/openapi.json")
    server_errors: list[str] = []
    statuses: collections.Counter[int] = collections.Counter()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    real = {"app": ["weather_bot", "notes", "streaming"], "user": ["sam"], "session_id": ["known"]}
    body_names = {"appName": "app", "userId": "user", "sessionId": "session_id"}
    for operation in operations:
        @settings(max_examples=20, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(), use_real=st.booleans(), pick=st.integers(0, 2),
               poison=st.sampled_from(["", "", "surrogate", "deep", "name"]), where=st.integers(0, 7))
        def call(case: Any, use_real: bool, pick: int, poison: str, where: int) -> None:
            if use_real:
                for name, values in real.items():
                    if name in (case.path_parameters or {}):
                        case.path_parameters[name] = values[pick % len(values)]
                if isinstance(case.body, dict):
                    for key, name in body_names.items():
                        if key in case.body:
                            case.body[key] = real[name][pick % len(real[name])]
            if poison and isinstance(case.body, dict):
                case.body = _poisoned(case.body, poison, where)
            elif poison and case.path_parameters and poison != "deep":
                case.path_parameters = _poisoned(case.path_parameters, poison, where)
            try:
                response = case.call(base_url=served["url"], timeout=30)
            except UnicodeEncodeError:
                return  # a surrogate the client itself cannot put in a URL: nothing was sent
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                server_errors.append(f"{case.method} {case.formatted_path} -> {response.status_code}: "
                                     f"{response.text[:200]}")

        call()
    assert server_errors == []
    assert statuses[200] >= 40, statuses  # many requests did real work
    assert statuses[422] >= 20, statuses  # and the poison reached the edge's checks
    assert httpx.get(served["url"] + "/health").json() == {"status": "ok"}


def test_an_idle_connection_outlives_a_clients_keep_alive(served: dict[str, Any]) -> None:
    """The server keeps an idle connection longer than clients do (httpx: 5 s), so a
    client never reuses one the server is closing at that moment (with uvicorn's own
    5 s, a burst of SSE turns lost one in a few hundred to a reset connection)."""
    import socket
    import time

    port = int(served["url"].rsplit(":", 1)[1])
    request = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()

    def answer(connection: socket.socket) -> bytes:
        received = b""
        while b'{"status":"ok"}' not in received:
            chunk = connection.recv(4096)
            if not chunk:  # closed by the server
                break
            received += chunk
        return received

    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        assert b'{"status":"ok"}' in answer(connection)
        time.sleep(6.0)
        try:
            connection.sendall(request)
            second = answer(connection)
        except ConnectionError:
            second = b""
        assert b'{"status":"ok"}' in second  # still open: the same connection answers


def test_a_run_killed_mid_stream_ends_the_stream_with_google_adks_error_line(
        client: httpx.Client, served: dict[str, Any]) -> None:
    client.post("/apps/streaming/users/ivy/sessions", json={"sessionId": "i1"})
    host = Host.connect(served["port"])
    body = {"appName": "streaming", "userId": "ivy", "sessionId": "i1", "streaming": True,
            "newMessage": {"role": "user", "parts": [{"text": "slow words"}]}}
    frames = []
    with client.stream("POST", "/run_sse", json=body) as response:
        lines = response.iter_lines()
        for line in lines:
            if line.startswith("data: "):
                frames.append(json.loads(line[6:]))
                break
        killed = session_workers(host, "streaming", "ivy", "i1")  # the run's worker among them
        for worker in killed:
            os.kill(worker, signal.SIGKILL)
        frames += [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    wait_workers_gone(host, "streaming", "ivy", "i1", killed)  # the next turn goes to a live one
    assert frames[0]["partial"] is True
    last = frames[-1]
    assert set(last) == {"error", "error_details"} and "killed" in last["error"]
    assert last["error_details"]["error_type"] == "RunActorDied"
    after = client.post("/run", json={**body, "streaming": False, "newMessage": {
        "role": "user", "parts": [{"text": "again"}]}})
    assert after.status_code == 200, after.text
    assert after.json()[-1]["content"]["parts"][0]["text"] == "You said: again."


def test_the_fluent_pipeline_example_answers_over_http(served: dict[str, Any], client: httpx.Client) -> None:
    """Issue 33: a pipeline built with adk_actors.fluent is a plain app of the host."""
    client.post("/apps/fluent_pipeline/users/ann/sessions/fluent").raise_for_status()
    assert last_text(served["url"], "fluent_pipeline", "parse dates", session="fluent") == \
        "Summary: Reviewed `def parse_dates(x) -- 1 suggestion."
    state = client.get("/apps/fluent_pipeline/users/ann/sessions/fluent").json()["state"]
    assert state["code"] == "def parse_dates(x): return x" and state["review"].startswith("Reviewed")
