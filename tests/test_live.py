"""Live runs: a conversation with a live model (voice, video, text) for as long as the
caller keeps it open. The engine with the scripted live model, and the Gemini Live API
connector against a real WebSocket server on 127.0.0.1 speaking the Live API's wire
format, checked against google-genai's own message types."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from live_stub import LiveServer, live_server

from adk_actors import (
    Content,
    InvalidRequestError,
    LlmAgent,
    RunConfig,
    RunFailedError,
    SessionNotFoundError,
)
from adk_actors._secrets import REDACTED
from adk_actors._types import Blob, Event, LiveRequest
from adk_actors.engine import LIVE_UNSUPPORTED, SessionView, run_live_invocation
from adk_actors.models import (
    AuthenticationError,
    GeminiModel,
    ModelError,
    ScriptedModel,
    ServerError,
    call,
)

SECOND_OF_AUDIO = b"\x01\x00" * 16_000  # 1 s of 16 kHz 16-bit PCM


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "sky": "sunny"}


async def converse(agent: Any, requests: list[LiveRequest], session: SessionView | None = None,
                   run_config: RunConfig | None = None, turns: int = 0,
                   **context: Any) -> tuple[list[Event], SessionView]:
    """Run a live invocation fed with ``requests``, then closed by its caller once
    ``turns`` answers are complete (with no ``turns``, left to end by itself)."""
    session = session if session is not None else SessionView()
    inputs: asyncio.Queue[LiveRequest] = asyncio.Queue()
    for request in requests:
        inputs.put_nowait(request)
    events: list[Event] = []
    async for event in run_live_invocation(agent, session, inputs, run_config=run_config, **context):
        events.append(event)
        if turns and event.turn_complete and sum(bool(e.turn_complete) for e in events) == turns:
            inputs.put_nowait(LiveRequest(close=True))
    return events, session


def said(events: list[Event]) -> list[tuple[str, str]]:
    """(author, text) of committed events with content text."""
    return [(e.author, e.content.text) for e in events if not e.partial and e.content is not None and e.content.text]


# -- the engine, with the scripted live model ----------------------------------------------


def test_a_spoken_turn_is_heard_answered_in_speech_and_committed_as_text() -> None:
    model = ScriptedModel(["Hello there, Ana."], hear=lambda audio: f"hi, {len(audio)} bytes")
    agent = LlmAgent(name="voice", model=model, instruction="Be brief.")
    chunk = Blob(mime_type="audio/pcm;rate=16000", data=SECOND_OF_AUDIO[:16_000])
    events, session = asyncio.run(converse(agent, [LiveRequest(blob=chunk), LiveRequest(blob=chunk)], turns=1))
    heard = [e for e in events if e.input_transcription is not None]
    assert heard[0].partial and heard[0].input_transcription.text == "hi, 32000 bytes"
    assert heard[-1].author == "user" and not heard[-1].partial and heard[-1].input_transcription.finished
    audio = [p.inline_data for e in events if e.partial and e.content for p in e.content.parts if p.inline_data]
    assert audio and audio[0].mime_type == "audio/pcm;rate=24000" and len(audio[0].data) == 480 * 17
    spoken = [e.output_transcription.text for e in events if e.partial and e.output_transcription]
    assert spoken == ["Hello there, Ana."]
    assert events[-1].turn_complete and not events[-1].partial  # committed, as google-adk's
    assert said(events) == [("user", "hi, 32000 bytes"), ("voice", "Hello there, Ana.")]
    answer = next(e for e in events if not e.partial and e.author == "voice" and e.content)
    assert answer.output_transcription is not None and answer.output_transcription.finished
    # only what was said is stored: no audio, no partial pieces
    assert [(e.author, e.content.text) for e in session.events if e.content] == said(events)
    assert all(not e.partial and not (e.content and any(p.inline_data for p in e.content.parts))
               for e in session.events)
    # the model was given the instruction and what it heard
    request = model.requests[-1]
    assert "Be brief." in request.system_instruction and request.contents[-1].text == "hi, 32000 bytes"


def test_text_modality_answers_in_text_and_history_reaches_the_model() -> None:
    model = ScriptedModel(["First.", "Second."])
    agent = LlmAgent(name="texter", model=model)
    session = SessionView(events=[Event(author="user", content=Content.user("earlier question")),
                                  Event(author="texter", content=Content.model("earlier answer"))])
    events, session = asyncio.run(converse(
        agent, [LiveRequest(content=Content.user("one")), LiveRequest(content=Content.user("two"))],
        session=session, run_config=RunConfig(response_modalities=("TEXT",)), turns=2))
    assert said(events) == [("user", "one"), ("texter", "First."), ("user", "two"), ("texter", "Second.")]
    assert not any(e.output_transcription for e in events)
    assert [c.text for c in model.requests[0].contents] == ["earlier question", "earlier answer", "one"]
    # and each turn's usage and end, stored as google-adk stores them
    assert [("usage" if e.usage_metadata else "end" if e.turn_complete else e.author) for e in session.events[2:]] == [
        "user", "usage", "texter", "end", "user", "usage", "texter", "end"]


def test_tool_calls_in_a_conversation_run_and_their_results_go_back_to_the_model() -> None:
    model = ScriptedModel([call("get_weather", city="Oslo"), "Sunny in Oslo."])
    agent = LlmAgent(name="weather", model=model, tools=[get_weather])
    events, _ = asyncio.run(converse(agent, [LiveRequest(content=Content.user("Weather in Oslo?"))],
                                           run_config=RunConfig(response_modalities=("TEXT",)), turns=1))
    committed = [e for e in events if not e.partial]
    calls = [c for e in committed if e.content for c in e.content.function_calls]
    results = [r for e in committed if e.content for r in e.content.function_responses]
    assert [c.name for c in calls] == ["get_weather"] and calls[0].id
    assert results[0].id == calls[0].id and results[0].response == {"city": "Oslo", "sky": "sunny"}
    assert said(events)[-1] == ("weather", "Sunny in Oslo.")
    assert model.requests[-1].contents[-1].function_responses[0].response["sky"] == "sunny"


def test_the_input_policy_and_output_policy_hold_in_a_conversation() -> None:
    from adk_actors.engine import Policy, Reject

    class Guarded(Policy):
        def filter_input(self, ctx: Any, message: Content) -> Content | Reject:
            return Reject("no shouting here") if message.text.startswith("SHOUT") else message

        def filter_output(self, ctx: Any, event: Event) -> Event:
            if event.content is None or "1234" not in event.content.text:
                return event
            return event.model_copy(update={"content": Content.model(event.content.text.replace("1234", "****"))})

    model = ScriptedModel(["Your PIN is 1234."])
    agent = LlmAgent(name="guard", model=model)
    events, session = asyncio.run(converse(
        agent, [LiveRequest(content=Content.user("SHOUT IT")), LiveRequest(content=Content.user("my pin?"))],
        policies=[Guarded()], run_config=RunConfig(response_modalities=("TEXT",)), turns=1))
    assert events[0].error_code == "input_rejected" and events[0].author == "guard"
    assert [c.text for c in model.requests[0].contents] == ["my pin?"]  # the refused text never reached it
    assert said(events) == [("user", "my pin?"), ("guard", "Your PIN is ****.")]
    assert [e.content.text for e in session.events if e.content] == ["my pin?", "Your PIN is ****."]
    assert not any("1234" in e.to_json() for e in events)  # nor in the streamed pieces
    # spoken: audio cannot be unsaid, so nothing of the answer is streamed but its filtered words
    spoken, _ = asyncio.run(converse(LlmAgent(name="guard", model=ScriptedModel(["Your PIN is 1234."])),
                                     [LiveRequest(content=Content.user("my pin?"))], policies=[Guarded()],
                                     run_config=RunConfig(response_modalities=("AUDIO",)), turns=1))
    assert not any("1234" in e.to_json() for e in spoken)
    assert not any(e.partial and (e.output_transcription or e.content) for e in spoken)
    assert said(spoken)[-1] == ("guard", "Your PIN is ****.")


def test_a_model_without_live_serves_text_turn_by_turn_and_refuses_audio_with_a_typed_error() -> None:
    class TextOnly:
        name = "text-only"

        def __init__(self) -> None:
            self.inner = ScriptedModel(["Plain answer."])

        def generate(self, request: Any, *, stream: bool = False) -> Any:
            return self.inner.generate(request, stream=stream)

    agent = LlmAgent(name="plain", model=TextOnly())
    events, session = asyncio.run(converse(agent, [
        LiveRequest(content=Content.user("hello")), LiveRequest(state_delta={"mood": "calm"}),
        LiveRequest(blob=Blob(mime_type="audio/pcm", data=b"\0\0"), state_delta={"mood": "loud"})]))
    assert said(events) == [("user", "hello"), ("plain", "Plain answer.")]
    assert events[-1].error_code == LIVE_UNSUPPORTED
    assert session.state == {"mood": "loud"}  # every state change committed, the audio refused


def test_live_requests_read_as_google_adk_writes_them() -> None:
    from google.adk.agents.live_request_queue import LiveRequest as AdkLiveRequest
    from google.genai import types

    with pytest.raises(ValueError):
        LiveRequest()
    with pytest.raises(ValueError):
        LiveRequest.model_validate_json('{"close": false, "audio_stream_end": false}')
    # google-adk's own JSON, defaults and all (standard base64)
    frame = AdkLiveRequest(blob=types.Blob(mime_type="audio/pcm;rate=16000", data=b"\xff\xfe" * 8)).model_dump_json(
        exclude_none=True)
    ours = LiveRequest.model_validate_json(frame)
    assert ours.blob is not None and ours.blob.data == b"\xff\xfe" * 8 and not ours.close
    text = AdkLiveRequest(content=types.Content(role="user", parts=[types.Part(text="hi")]),
                          state_delta={"k": 1}).model_dump_json(exclude_none=True)
    ours = LiveRequest.model_validate_json(text)
    assert ours.content is not None and ours.content.text == "hi" and ours.state_delta == {"k": 1}


# -- the Gemini Live API connector, against a server speaking its wire format ----------------


def spoken_reply(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The user's audio is heard as 'weather in Oslo', the model calls the tool, and
    after the tool's result it answers in speech."""
    if "realtimeInput" in message and "audio" in message["realtimeInput"]:
        return [{"serverContent": {"inputTranscription": {"text": "weather in Oslo"}}},
                {"toolCall": {"functionCalls": [{"id": "fc-1", "name": "get_weather", "args": {"city": "Oslo"}}]}}]
    if "toolResponse" in message:
        pcm = base64.b64encode(b"\x00\x01" * 240).decode()
        return [{"serverContent": {"outputTranscription": {"text": "It is sunny "}}},
                {"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000",
                                                                          "data": pcm}}]}}},
                {"serverContent": {"outputTranscription": {"text": "in Oslo."}}},
                {"usageMetadata": {"promptTokenCount": 12, "responseTokenCount": 5, "totalTokenCount": 17}},
                {"serverContent": {"turnComplete": True}}]
    return []


def test_gemini_live_speaks_the_live_api_wire_format_end_to_end() -> None:
    server = LiveServer(spoken_reply)

    async def scenario() -> tuple[list[Event], SessionView]:
        async with live_server(server) as base_url:
            model = GeminiModel("gemini-live-2.5-flash", base_url=base_url, api_key="live-key-0123456789abcdef")
            agent = LlmAgent(name="voice", model=model, instruction="Answer about weather.", tools=[get_weather])
            session = SessionView(events=[Event(author="user", content=Content.user("hello")),
                                          Event(author="voice", content=Content.model("Hi!"))])
            chunk = Blob(mime_type="audio/pcm;rate=16000", data=SECOND_OF_AUDIO[:3200])
            inputs: asyncio.Queue[LiveRequest] = asyncio.Queue()
            inputs.put_nowait(LiveRequest(blob=Blob(mime_type="image/jpeg", data=b"\xff\xd8frame")))
            inputs.put_nowait(LiveRequest(blob=chunk))
            events: list[Event] = []
            async for event in run_live_invocation(agent, session, inputs):
                events.append(event)
                if event.turn_complete:
                    inputs.put_nowait(LiveRequest(close=True))
            return events, session

    events, session = asyncio.run(scenario())
    assert server.path == "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
    assert server.headers["x-goog-api-key"] == "live-key-0123456789abcdef"  # a header, never the URL
    setup = server.received[0]["setup"]
    assert setup["model"] == "models/gemini-live-2.5-flash"
    assert setup["generationConfig"]["responseModalities"] == ["AUDIO"]
    assert "Answer about weather." in setup["systemInstruction"]["parts"][0]["text"]
    assert setup["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"
    assert setup["inputAudioTranscription"] == {} and setup["outputAudioTranscription"] == {}
    history = server.received[1]["clientContent"]
    assert history["turnComplete"] is False and [t["role"] for t in history["turns"]] == ["user", "model"]
    video = server.received[2]["realtimeInput"]["video"]  # a camera frame
    assert video["mimeType"] == "image/jpeg" and base64.b64decode(video["data"]) == b"\xff\xd8frame"
    audio = server.received[3]["realtimeInput"]["audio"]
    assert audio["mimeType"] == "audio/pcm;rate=16000" and base64.b64decode(audio["data"]) == SECOND_OF_AUDIO[:3200]
    result = server.received[4]["toolResponse"]["functionResponses"][0]
    assert result == {"id": "fc-1", "name": "get_weather", "response": {"city": "Oslo", "sky": "sunny"}}
    assert said(events) == [("user", "weather in Oslo"), ("voice", "It is sunny in Oslo.")]
    answer = [e for e in events if not e.partial and e.author == "voice" and e.content and e.content.text][-1]
    assert answer.output_transcription is not None
    assert {e.model_version for e in events if e.content and e.content.function_calls} == {"gemini-live-2.5-flash"}
    usage = [e for e in events if e.usage_metadata is not None]  # its own event, as google-adk's
    assert [(e.partial, e.usage_metadata.total_token_count) for e in usage if e.usage_metadata] == [(None, 17)]
    assert any(e.partial and e.content and e.content.parts[0].inline_data for e in events)
    stored = [(e.author, e.content.text or [c.name for c in e.content.function_calls] or "result")
              for e in session.events[2:] if e.content]
    assert stored == [("user", "weather in Oslo"), ("voice", ["get_weather"]), ("voice", "result"),
                      ("voice", "It is sunny in Oslo.")]


def test_gemini_live_errors_are_typed_and_never_show_the_key() -> None:
    key = "live-secret-key-0123456789"

    async def attempt(server: LiveServer) -> BaseException:
        async with live_server(server) as base_url:
            agent = LlmAgent(name="voice", model=GeminiModel("gemini-live", base_url=base_url, api_key=key))
            try:
                await converse(agent, [LiveRequest(content=Content.user("hi"))])
            except Exception as error:
                return error
        raise AssertionError("the conversation did not fail")

    refused = asyncio.run(attempt(LiveServer(lambda m: [], refuse=401)))
    assert isinstance(refused, AuthenticationError) and key not in str(refused)
    crashed = asyncio.run(attempt(LiveServer(lambda m: [], close_with=(1011, f"internal error for {key}"))))
    assert isinstance(crashed, ServerError) and "1011" in str(crashed)
    assert key not in str(crashed) and REDACTED in str(crashed)
    assert isinstance(crashed, ModelError)


# -- live runs on the actor runtime ------------------------------------------------------------


def test_a_live_run_on_the_host_hears_answers_commits_and_ends_on_close(host: Any) -> None:
    from adk_actors.runtime import Runner

    runner = Runner(host, "echo")
    runner.create_session("lia", "l1")
    live = runner.run_live("lia", "l1", run_config=RunConfig(response_modalities=("AUDIO",)))
    events = live.events()
    seen: list[Event] = []

    def until_turn_complete() -> None:
        for event in events:
            seen.append(event)
            if event.turn_complete:
                return
        raise AssertionError("the run ended before its answer was complete")

    half = Blob(mime_type="audio/pcm;rate=16000", data=SECOND_OF_AUDIO[:16_000])
    live.send(LiveRequest(blob=half))
    live.send(LiveRequest(blob=half))  # one second: the scripted model's end of speech
    until_turn_complete()
    assert any(e.input_transcription and e.input_transcription.text == "(1.0 s of audio)" for e in seen)
    assert any(e.partial and e.content and e.content.parts[0].inline_data for e in seen)
    live.send(LiveRequest(content=Content.user("and in text?")))
    until_turn_complete()
    # a turn sent meanwhile waits for the live run's end, then runs
    waiting: dict[str, Any] = {}
    import threading
    turn = threading.Thread(target=lambda: waiting.update(events=list(runner.run("lia", "l1", "after"))))
    turn.start()
    live.close()
    rest = list(events)  # ends with RunDone: no error
    assert not any(e.error_code for e in rest)
    turn.join(30)
    assert waiting["events"][-1].content.text == "echo: after (turn 3)"
    stored = [(e.author, e.content.text) for e in runner.get_session("lia", "l1").events if e.content]
    assert stored == [("user", "(1.0 s of audio)"), ("echo", "echo: (1.0 s of audio) (turn 1)"),
                      ("user", "and in text?"), ("echo", "echo: and in text? (turn 2)"),
                      ("user", "after"), ("echo", "echo: after (turn 3)")]
    with pytest.raises(InvalidRequestError):
        live.send(LiveRequest(content=Content.user("too late")))


def test_a_live_run_whose_worker_is_killed_fails_killed_and_keeps_what_was_said(host: Any) -> None:
    import os
    import signal

    from conftest import session_workers, wait_workers_gone

    from adk_actors.runtime import Runner

    runner = Runner(host, "echo")
    runner.create_session("kim", "k1")
    live = runner.run_live("kim", "k1", run_config=RunConfig(response_modalities=("TEXT",)))
    events = live.events()
    live.send(LiveRequest(content=Content.user("before the kill")))
    for event in events:
        if event.turn_complete:
            break
    workers = session_workers(host, "echo", "kim", "k1")
    assert workers
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    with pytest.raises(RunFailedError) as failed:
        list(events)
    assert failed.value.reason == "killed"
    stored = [e.content.text for e in runner.get_session("kim", "k1").events if e.content]
    assert stored == ["before the kill", "echo: before the kill (turn 1)"]
    wait_workers_gone(host, "echo", "kim", "k1", workers)  # (another killed one may still be dying)
    again = runner.run_live("kim", "k1", run_config=RunConfig(response_modalities=("TEXT",)))
    again.send(LiveRequest(content=Content.user("after the kill")))
    texts = []
    for event in again.events():
        if not event.partial and event.content:
            texts.append(event.content.text)
        if event.turn_complete:
            again.close()
    assert texts == ["after the kill", "echo: after the kill (turn 2)"]


def test_a_live_run_can_be_cancelled_and_refuses_inputs_afterwards(host: Any) -> None:
    from adk_actors.runtime import Runner

    runner = Runner(host, "echo")
    runner.create_session("cy", "c1")
    live = runner.run_live("cy", "c1")
    runner.cancel(live.run_id)
    with pytest.raises(RunFailedError) as failed:
        list(live.events())
    assert failed.value.reason == "cancelled"
    with pytest.raises(InvalidRequestError):
        live.send(LiveRequest(activity_start={}))
    with pytest.raises(SessionNotFoundError):
        runner.run_live("cy", "nope")


def test_serve_stops_cleanly_with_voice_calls_open(tmp_path: Any) -> None:
    """SIGTERM to ``adk-actors serve`` while two voice calls are open: each socket is
    closed (never left hanging), serve exits 0 in time, what was said is stored, and no
    process is left behind."""
    import signal
    import sqlite3
    import time

    from conftest import serving
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from supervision.testing import find_marked_processes, wait_until

    with serving(tmp_path, apps='streaming = "runtime_agents:streaming_agent"\n') as served:
        import httpx

        ws_url = served["url"].replace("http://", "ws://") + "/run_live"
        sockets = []
        for name in ("a", "b"):
            httpx.post(f"{served['url']}/apps/streaming/users/sid/sessions", json={"sessionId": name})
            socket = connect(f"{ws_url}?app_name=streaming&user_id=sid&session_id={name}")
            socket.send(json.dumps({"blob": {"mime_type": "audio/pcm;rate=16000",
                                             "data": base64.b64encode(SECOND_OF_AUDIO).decode()}}))
            frames: list[dict[str, Any]] = []
            while not frames or not frames[-1].get("turnComplete"):
                frames.append(json.loads(socket.recv(timeout=10)))
            sockets.append(socket)
        began = time.monotonic()
        served["process"].send_signal(signal.SIGTERM)
        for socket in sockets:
            with pytest.raises(ConnectionClosed):
                while True:
                    socket.recv(timeout=15)
        assert served["process"].wait(30) == 0
        assert time.monotonic() - began < 15
        wait_until(lambda: not find_marked_processes(served["marker"]), timeout=10, message="no process left behind")
        database = tmp_path / "data" / "sessions.db"
        with sqlite3.connect(database) as db:
            stored = db.execute("select count(*) from events").fetchone()[0]
        assert stored == 8  # each call: what the user said, the turn's usage, the answer and the end of its turn


def test_a_caller_that_floods_a_live_run_gets_it_cancelled_not_a_worker_out_of_memory(host: Any) -> None:
    """A model that takes 10 s per chunk, a caller that sends 1,100 chunks: the run is
    cancelled once 1,000 wait (a typed end), and the session serves on."""
    from adk_actors.runtime import Runner

    runner = Runner(host, "slow_ears")
    runner.create_session("flo", "f1")
    live = runner.run_live("flo", "f1")
    chunk = LiveRequest(blob=Blob(mime_type="audio/pcm;rate=16000", data=b"\0\0" * 80))
    for _ in range(1100):
        try:
            live.send(chunk)
        except InvalidRequestError:
            break  # the run ended: its inputs are refused
    with pytest.raises(RunFailedError) as failed:
        list(live.events())
    assert failed.value.reason == "cancelled" and "inputs waited" in failed.value.detail
    events = list(runner.run("flo", "f1", "still there?"))
    assert events[-1].content is not None and events[-1].content.text == "typed answer"


def test_words_of_a_turn_cut_short_by_the_callers_close_are_committed() -> None:
    """The model heard the user and had begun to answer when the caller closed: both are
    stored, as the turn stood."""
    def half_answer(message: dict[str, Any]) -> list[dict[str, Any]]:
        if "realtimeInput" in message and "audio" in message["realtimeInput"]:
            return [{"serverContent": {"inputTranscription": {"text": "tell me a long story"}}},
                    {"serverContent": {"outputTranscription": {"text": "Once upon a time"}}}]
        return []

    server = LiveServer(half_answer)

    async def scenario() -> SessionView:
        async with live_server(server) as base_url:
            agent = LlmAgent(name="teller", model=GeminiModel("gemini-live", base_url=base_url,
                                                                 api_key="live-key-0123456789abcdef"))
            session = SessionView()
            inputs: asyncio.Queue[LiveRequest] = asyncio.Queue()
            inputs.put_nowait(LiveRequest(blob=Blob(mime_type="audio/pcm;rate=16000", data=SECOND_OF_AUDIO[:320])))
            async for event in run_live_invocation(agent, session, inputs):
                if event.output_transcription is not None and event.partial:
                    inputs.put_nowait(LiveRequest(close=True))
            return session

    session = asyncio.run(scenario())
    assert [(e.author, e.content.text) for e in session.events if e.content] == [
        ("user", "tell me a long story"), ("teller", "Once upon a time")]


def test_an_async_instruction_provider_is_awaited_for_a_live_run_as_for_a_turn() -> None:
    """google-adk allows an ``async def`` instruction provider; a live run's setup awaits
    it as a flow's model step does (before, its coroutine's repr was the instruction)."""
    async def brief(ctx: Any) -> str:
        await asyncio.sleep(0)
        return f"Be brief with {ctx.state.get('name', 'them')}."

    model = ScriptedModel(["Hello."], hear=lambda audio: "hi")
    agent = LlmAgent(name="voice", model=model, instruction=brief)
    chunk = Blob(mime_type="audio/pcm;rate=16000", data=SECOND_OF_AUDIO[:16_000])
    asyncio.run(converse(agent, [LiveRequest(blob=chunk), LiveRequest(blob=chunk)], SessionView(state={"name": "Ana"}),
                         turns=1))
    assert "Be brief with Ana." in model.requests[-1].system_instruction
    assert "coroutine" not in model.requests[-1].system_instruction
