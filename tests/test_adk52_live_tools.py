"""Tools in a live run, side by side with google-adk 2.13 (issue 52).

google-adk's live flow runs the model's tool calls in its receiving loop: an ordinary
tool's call is awaited there (the model's next words wait for its result), a
synchronous function on ``RunConfig.tool_thread_pool_config``'s threads, so the
caller's inputs still reach the model meanwhile (without that config google-adk runs
it on its event loop, which then stops altogether; ours runs it on a thread all the
same). A ``NON_BLOCKING`` tool runs in the background: the conversation goes on and its
result is committed and sent to the model when it comes. A streaming tool (an async
generator function) answers "pending" at once; each value it yields goes to the model
as a further result, an ``Event`` it yields is shown to the user, and the agent's
``stop_streaming`` tool stops it.

Each side talks to its own Live API stand-in (``live_stub``; google-adk's over TLS)
that answers both alike. The tools wait for what the user would see (an event, the
model having heard a message), never for a clock: a tool that would be held up
reports so in its result (``released``: false) after a deadline, and the events then
differ in their order too. Compared: the agent's events in order (text, partial or
not, calls and results, the end of each turn, branch), what the model received, and
the session.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trustme
from live_stub import LiveServer, live_server, snake

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

#: how long a tool waits for what it waits for before it reports it was held up
DEADLINE = 10.0


def said(text: str) -> list[dict[str, Any]]:
    return [{"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": text}]}}},
            {"serverContent": {"turnComplete": True}}]


def call(call_id: str, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool call, then the end of the turn (as Gemini 2.x Live ends a turn after one)."""
    return [{"toolCall": {"functionCalls": [{"id": call_id, "name": name, "args": args}]}},
            {"serverContent": {"turnComplete": True}}]


def typed(message: dict[str, Any]) -> str | None:
    """The text of a user's complete turn, if the message is one."""
    content = snake(message).get("client_content", {})
    if not content.get("turn_complete"):
        return None
    return str(content["turns"][-1]["parts"][0].get("text"))


def tool_result(message: dict[str, Any]) -> dict[str, Any] | None:
    results = snake(message).get("tool_response", {}).get("function_responses")
    return dict(results[0]["response"]) if results else None


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """The server side of TLS for google-adk's stand-in (google-genai reaches the Live
    API over TLS only), its authority trusted by google-genai; its key and no other
    Gemini setting."""
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    authority.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    for name in ("GEMINI_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI",
                 "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")
    return context


class Stage:
    """What a scenario's tools and stand-in wait on, fresh for each side."""

    def __init__(self) -> None:
        self.heard_hello = threading.Event()  # the stand-in got the user's second message
        self.saw_hi = threading.Event()  # the user saw the model's answer to it
        self.gates: list[asyncio.Event] = []  # a streaming tool's steps (made on the run's loop)
        self.side = ""


STAGE = Stage()


def get_weather(city: str) -> dict[str, Any]:
    """The weather of a city; waits until the model has heard the user's next message."""
    return {"city": city, "released": STAGE.heard_hello.wait(DEADLINE)}


def get_forecast(city: str) -> dict[str, Any]:
    """The forecast of a city; waits until the user saw the model's next answer."""
    return {"city": city, "released": STAGE.saw_hi.wait(DEADLINE)}


def weather_model(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The model: a question makes a call to the tool it names; ``Hello?`` gets ``Hi!``;
    a tool's result gets ``Sunny.``."""
    text = typed(message)
    if text in ("Weather?", "Forecast?"):
        return call("fc-1", "get_weather" if text == "Weather?" else "get_forecast", {"city": "Oslo"})
    if text == "Hello?":
        STAGE.heard_hello.set()
        return said("Hi!")
    return said("Sunny.") if tool_result(message) is not None else []


def rows(events: list[Any]) -> list[tuple[Any, ...]]:
    """The agent's events as a user reads them: partial or not, each part (text, call,
    result, code), the end of a turn, the branch when it is not the agent's own."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        if event.author == "user":
            continue  # google-adk's run_live stores the typed message without streaming it
        parts: list[Any] = []
        for part in (event.content.parts or []) if event.content else []:
            if part.function_call is not None:
                parts.append(("call", part.function_call.name, dict(part.function_call.args or {})))
            elif part.function_response is not None:
                parts.append(("result", part.function_response.name, dict(part.function_response.response or {})))
            elif part.executable_code is not None:
                parts.append(("code", part.executable_code.code))
            elif part.code_execution_result is not None:
                parts.append(("output", part.code_execution_result.output))
            elif part.text is not None:
                parts.append(part.text)
        role = event.content.role if event.content else None
        out.append((bool(event.partial), role, tuple(parts), bool(event.turn_complete), event.branch or None,
                    dict(event.actions.state_delta or {}) if event.actions else {}))
    return out


def received(server: LiveServer) -> list[Any]:
    """What the model received after the setup: typed turns and tool results, in order."""
    out: list[Any] = []
    for message in server.received[1:]:
        text, result = typed(message), tool_result(message)
        out.append(text if text is not None else result)
    return out


Client = Callable[[Any, Callable[[str], None], Callable[[], None]], None]


async def theirs_live(url: str, tools: list[Any], client: Client, *, pool: bool = False,
                      executor: Any = None, first: str = "Weather?") -> dict[str, Any]:
    """google-adk's run_live: the first message sent, then ``client(event, send, close)``
    at each event; the events, the stored session's events (after the user's first) and
    state."""
    from google.adk.agents import Agent, LiveRequestQueue
    from google.adk.agents.run_config import RunConfig, ToolThreadPoolConfig
    from google.adk.models import Gemini
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    agent = Agent(name="root", model=Gemini(model="gemini-live-2.5-flash", base_url=url), instruction="Help.",
                  tools=tools, **({"code_executor": executor} if executor is not None else {}))
    runner = InMemoryRunner(agent=agent, app_name="p")
    session = await runner.session_service.create_session(app_name="p", user_id="ann")
    queue = LiveRequestQueue()
    queue.send_content(types.Content(role="user", parts=[types.Part(text=first)]))
    closed: list[bool] = []

    def send(text: str) -> None:
        queue.send_content(types.Content(role="user", parts=[types.Part(text=text)]))

    def close() -> None:
        closed.append(True)
        queue.close()

    config = RunConfig(response_modalities=[types.Modality.TEXT],
                       tool_thread_pool_config=ToolThreadPoolConfig(max_workers=2) if pool else None)
    streamed = []
    async for event in runner.run_live(user_id="ann", session_id=session.id, live_request_queue=queue,
                                       run_config=config):
        streamed.append(event)
        client(event, send, close)
        if closed:
            break
    stored = await runner.session_service.get_session(app_name="p", user_id="ann", session_id=session.id)
    await runner.close()
    assert stored is not None
    return {"streamed": rows(streamed), "stored": rows(stored.events[1:]), "state": dict(stored.state)}


async def ours_live(url: str, tools: list[Any], client: Client, *, pool: bool = False,
                    executor: Any = None, first: str = "Weather?") -> dict[str, Any]:
    """Ours, as a google-adk user writes :func:`theirs_live` with the imports rewritten
    (the model is our connector given its key: the test without TLS sets no environment)."""
    from adk_actors import types
    from adk_actors.agents import Agent, LiveRequestQueue
    from adk_actors.agents.run_config import RunConfig, ToolThreadPoolConfig
    from adk_actors.models import GeminiModel
    from adk_actors.runners import InMemoryRunner

    model = GeminiModel("gemini-live-2.5-flash", base_url=url, api_key="test-key")
    agent = Agent(name="root", model=model, instruction="Help.", tools=tools,
                  **({"code_executor": executor} if executor is not None else {}))
    runner = InMemoryRunner(agent=agent, app_name="p")
    session = await runner.session_service.create_session(app_name="p", user_id="ann")
    queue = LiveRequestQueue()
    queue.send_content(types.Content(role="user", parts=[types.Part(text=first)]))
    closed: list[bool] = []

    def send(text: str) -> None:
        queue.send_content(types.Content(role="user", parts=[types.Part(text=text)]))

    def close() -> None:
        closed.append(True)
        queue.close()

    config = RunConfig(response_modalities=["TEXT"],
                       tool_thread_pool_config=ToolThreadPoolConfig(max_workers=2) if pool else None)
    streamed = []
    async for event in runner.run_live(user_id="ann", session_id=session.id, live_request_queue=queue,
                                       run_config=config):
        streamed.append(event)
        client(event, send, close)
        if closed:
            break
    stored = await runner.session_service.get_session(app_name="p", user_id="ann", session_id=session.id)
    await runner.close()
    assert stored is not None
    return {"streamed": rows(streamed), "stored": rows(stored.events[1:]), "state": dict(stored.state)}


def both(tls: ssl.SSLContext, model: Callable[[dict[str, Any]], list[dict[str, Any]]],
         run: Callable[[str, str], Any]) -> dict[str, Any]:
    """``run(side, url)`` on each side against its own stand-in answering by ``model``;
    each side's result with what its stand-in received (``received``, ``setup``, and
    every message after the setup as it came, ``messages``)."""
    seen: dict[str, Any] = {}
    for side in ("theirs", "ours"):
        global STAGE
        STAGE = Stage()
        server = LiveServer(model)

        async def scenario(side: str = side, server: LiveServer = server) -> Any:
            async with live_server(server, tls if side == "theirs" else None) as url:
                return await asyncio.wait_for(run(side, url), 60)

        seen[side] = asyncio.run(scenario())
        seen[side]["received"] = received(server)
        seen[side]["setup"] = snake(server.received[0])["setup"]
        seen[side]["messages"] = [snake(message) for message in server.received[1:]]
    return seen


def live(side: str) -> Callable[..., Any]:
    return theirs_live if side == "theirs" else ours_live


def turns_then_close(count: int, at_turn_end: Callable[[str, Callable[[str], None]], None] | None = None,
                     on_call: str | None = None) -> Client:
    """A client that sends ``on_call`` when it sees the model's first tool call, calls
    ``at_turn_end(the last committed answer, send)`` at each end of a turn (after
    everything the turn said, so that what it sets off comes after it on both sides),
    and closes the run at the ``count``-th end of a turn."""
    ended, last = [0], [""]

    def client(event: Any, send: Callable[[str], None], close: Callable[[], None]) -> None:
        if on_call is not None and event.get_function_calls() and ended[0] == 0:
            send(on_call)
        last[0] = answer_text(event) or last[0]
        if event.turn_complete:
            if at_turn_end is not None:
                at_turn_end(last[0], send)
            last[0] = ""
            ended[0] += 1
            if ended[0] == count:
                close()

    return client


def answer_text(event: Any) -> str | None:
    """The text of a committed answer of the agent."""
    if event.partial or event.author == "user" or event.content is None or not event.content.parts:
        return None
    text: str | None = event.content.parts[0].text
    return text


# -- a synchronous tool ------------------------------------------------------------------------

def test_a_slow_sync_tool_on_the_tool_pool_lets_the_users_words_reach_the_model(tls: ssl.SSLContext) -> None:
    seen = both(tls, weather_model, lambda side, url: live(side)(
        url, [get_weather], turns_then_close(3, on_call="Hello?"), pool=True))
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["received"] == theirs["received"] == ["Weather?", "Hello?", {"city": "Oslo", "released": True}]
    # the call's result first (the receiving loop waits for it), then the answer to "Hello?"
    texts = [r[2] for r in theirs["streamed"] if not r[0] and r[2]]
    assert texts == [(("call", "get_weather", {"city": "Oslo"}),),
                     (("result", "get_weather", {"city": "Oslo", "released": True}),), ("Hi!",), ("Sunny.",)]


def test_without_a_tool_pool_our_sync_tool_still_runs_off_the_loop() -> None:
    """google-adk runs the function on its event loop then (nothing else moves, the
    user's words wait); ours runs it on a thread: the conversation is the one above."""
    global STAGE
    STAGE = Stage()
    server = LiveServer(weather_model)

    async def scenario() -> dict[str, Any]:
        async with live_server(server) as url:
            return await asyncio.wait_for(ours_live(url, [get_weather], turns_then_close(3, on_call="Hello?")), 60)

    ours = asyncio.run(scenario())
    assert received(server) == ["Weather?", "Hello?", {"city": "Oslo", "released": True}]
    assert [r[2] for r in ours["streamed"] if not r[0] and r[2]][-2:] == [("Hi!",), ("Sunny.",)]


# -- a non-blocking tool -----------------------------------------------------------------------

def non_blocking(side: str) -> Any:
    """``get_forecast`` as a FunctionTool marked NON_BLOCKING, as a google-adk user marks
    it (each side its own ``types.Behavior``)."""
    if side == "theirs":
        from google.adk.tools.function_tool import FunctionTool
        from google.genai import types
    else:
        from adk_actors import types  # type: ignore[no-redef]
        from adk_actors.tools import FunctionTool  # type: ignore[assignment]

    tool: Any = FunctionTool(get_forecast)
    tool.behavior = types.Behavior.NON_BLOCKING
    return tool


def on_hi(answer: str, send: Callable[[str], None]) -> None:
    if answer == "Hi!":
        STAGE.saw_hi.set()


def test_a_non_blocking_sync_tool_lets_the_conversation_go_on_and_answers_later(tls: ssl.SSLContext) -> None:
    seen = both(tls, weather_model, lambda side, url: live(side)(
        url, [non_blocking(side)], turns_then_close(3, on_hi, on_call="Hello?"), first="Forecast?",
        pool=True))
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["received"] == theirs["received"] == ["Forecast?", "Hello?", {"city": "Oslo", "released": True}]
    for side in ("theirs", "ours"):  # the Live API takes a later result only for a NON_BLOCKING function
        assert seen[side]["setup"]["tools"][0]["function_declarations"][0]["behavior"] == "NON_BLOCKING", side
    # the model's answer to "Hello?" came while the tool ran; its result after it
    texts = [r[2] for r in theirs["streamed"] if not r[0] and r[2]]
    assert texts == [(("call", "get_forecast", {"city": "Oslo"}),), ("Hi!",),
                     (("result", "get_forecast", {"city": "Oslo", "released": True}),), ("Sunny.",)]


# -- a streaming tool ----------------------------------------------------------------------------

async def monitor_weather(city: str) -> Any:
    """Watch the weather of a city: readings as they come."""
    await STAGE.gates[0].wait()
    if STAGE.side == "ours":
        from adk_actors.events import Event
    else:
        from google.adk.events import Event  # type: ignore[assignment]
    yield Event(message=f"Watching {city}.")  # google-adk's form, the author left to the run
    yield {"temp": 1}
    await STAGE.gates[1].wait()
    yield {"temp": 2}
    await asyncio.Event().wait()  # until it is stopped


def stop_streaming(function_name: str) -> None:
    """Stop a streaming function."""


def streaming_model(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The model: ``Watch`` starts ``monitor_weather``; ``Stop`` stops it; each tool
    result is read back (``got <result>``)."""
    text = typed(message)
    if text == "Watch":
        return call("fc-1", "monitor_weather", {"city": "Oslo"})
    if text == "Stop":
        return call("fc-2", "stop_streaming", {"function_name": "monitor_weather"})
    result = tool_result(message)
    return said("got " + json.dumps(result, sort_keys=True)) if result is not None else []


def streaming_steps(answer: str, send: Callable[[str], None]) -> None:
    """At the end of each of the model's turns: the tool's next step once the model read
    back its last one; "Stop" after its second reading."""
    if answer.startswith("got {\"status\": \"The function is running"):
        STAGE.gates[0].set()
    elif answer == 'got {"temp": 1}':
        STAGE.gates[1].set()
    elif answer == 'got {"temp": 2}':
        send("Stop")


def test_a_streaming_tool_answers_pending_streams_its_readings_and_is_stopped(tls: ssl.SSLContext) -> None:
    async def run(side: str, url: str) -> Any:
        STAGE.gates, STAGE.side = [asyncio.Event(), asyncio.Event()], side
        return await live(side)(url, [monitor_weather, stop_streaming], turns_then_close(6, streaming_steps),
                                first="Watch")

    seen = both(tls, streaming_model, run)
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    pending = {"status": "The function is running asynchronously and the results are pending."}
    stopped = {"status": "Successfully stopped streaming function monitor_weather"}
    assert ours["received"] == theirs["received"] == ["Watch", pending, {"temp": 1}, {"temp": 2}, "Stop", stopped]
    committed = [r for r in theirs["streamed"] if not r[0] and r[2]]
    assert [r[2] for r in committed] == [
        (("call", "monitor_weather", {"city": "Oslo"}),), (("result", "monitor_weather", pending),),
        ("got " + json.dumps(pending),), ("Watching Oslo.",), ('got {"temp": 1}',), ('got {"temp": 2}',),
        (("call", "stop_streaming", {"function_name": "monitor_weather"}),),
        (("result", "stop_streaming", stopped),), ("got " + json.dumps(stopped),)]
    shown = committed[3]  # what the tool yielded as an event: its content, as the user's, on its branch
    assert shown[1] == "user" and shown[4] == "monitor_weather@fc-1"
