"""``Runner.run_live`` and the live settings of tools, side by side with google-adk 2.13
(issue 52).

A google-adk user opens a live conversation with ``runner.run_live(user_id=...,
session_id=..., live_request_queue=...)``: the session is read as ``run_async`` reads it
(a missing one is ``SessionNotFoundError``), the model is asked for audio unless the
run config says otherwise, and the user's typed turns are stored, not streamed back. A
tool marks itself for the Live API with ``behavior`` (``NON_BLOCKING``: the conversation
goes on while it runs; ``BLOCKING``) and ``response_scheduling`` (when the model reacts to
its result), given to ``BaseTool.__init__`` or set on the tool: the setup's declarations
and the tool's results on the wire say so as google-genai sends them.

Each side talks to its own Live API stand-in (``live_stub``); compared are what the
model received, the agent's events and the session.
"""

from __future__ import annotations

import asyncio
import ssl
import warnings
from typing import Any

import pytest
import test_adk52_live_tools as shared
from live_stub import LiveServer, live_server
from test_adk52_live_tools import both, get_forecast, live, on_hi, turns_then_close, weather_model

tls = shared.tls  # the fixture: google-adk's stand-in serves TLS

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]


def adk(side: str) -> tuple[Any, Any, Any, Any]:
    """The side's ``types``, ``BaseTool``, ``FunctionTool`` and ``runners`` modules' names
    (a google-adk file and its import-rewritten copy)."""
    if side == "theirs":
        from google.adk import runners
        from google.adk.tools import BaseTool, FunctionTool
        from google.genai import types
        return types, BaseTool, FunctionTool, runners
    from adk_actors import runners
    from adk_actors import types as our_types
    from adk_actors.tools import BaseTool as OurBaseTool
    from adk_actors.tools import FunctionTool as OurFunctionTool
    return our_types, OurBaseTool, OurFunctionTool, runners


def quick_forecast(city: str) -> dict[str, Any]:
    return {"city": city}


def forecast_tool(side: str, func: Any = get_forecast, **settings: Any) -> Any:
    """``func`` as a google-adk user's own ``BaseTool`` subclass named ``get_forecast``,
    its live ``settings`` given to ``BaseTool.__init__`` (each side's own enums)."""
    types, base, _, _ = adk(side)

    class Forecast(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__(name="get_forecast", description="The forecast of a city.",
                             **{key: getattr(getattr(types, kind), value)
                                for key, (kind, value) in settings.items()})

        def _get_declaration(self) -> Any:
            return types.FunctionDeclaration(
                name=self.name, description=self.description,
                parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                        "required": ["city"]})

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            return await asyncio.to_thread(func, args["city"])

    return Forecast()


def tool_responses(messages: list[dict[str, Any]]) -> list[Any]:
    """The function responses the model received, as sent (``scheduling`` included)."""
    return [message["tool_response"]["function_responses"] for message in messages if "tool_response" in message]


def declarations(setup: dict[str, Any]) -> list[dict[str, Any]]:
    return list(setup["tools"][0]["function_declarations"])


# -- BaseTool(behavior=..., response_scheduling=...) -----------------------------------------

def test_a_base_tool_made_non_blocking_in_its_init_runs_in_the_background(tls: ssl.SSLContext) -> None:
    """The result comes after the model's answer to the user's next words, which the
    tool waits for: the tool did not hold the conversation up."""
    seen = both(tls, weather_model, lambda side, url: live(side)(
        url, [forecast_tool(side, behavior=("Behavior", "NON_BLOCKING"))],
        turns_then_close(3, on_hi, on_call="Hello?"), first="Forecast?", pool=True))
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["received"] == theirs["received"] == ["Forecast?", "Hello?", {"city": "Oslo", "released": True}]
    assert declarations(ours["setup"]) == declarations(theirs["setup"])
    assert declarations(theirs["setup"])[0]["behavior"] == "NON_BLOCKING"
    texts = [r[2] for r in theirs["streamed"] if not r[0] and r[2]]
    assert texts == [(("call", "get_forecast", {"city": "Oslo"}),), ("Hi!",),
                     (("result", "get_forecast", {"city": "Oslo", "released": True}),), ("Sunny.",)]


def test_a_tool_with_a_response_scheduling_runs_in_the_background_and_its_result_says_when(
        tls: ssl.SSLContext) -> None:
    seen = both(tls, weather_model, lambda side, url: live(side)(
        url, [forecast_tool(side, response_scheduling=("FunctionResponseScheduling", "WHEN_IDLE"))],
        turns_then_close(3, on_hi, on_call="Hello?"), first="Forecast?", pool=True))
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert declarations(ours["setup"]) == declarations(theirs["setup"])
    assert declarations(theirs["setup"])[0]["behavior"] == "NON_BLOCKING"
    assert tool_responses(ours["messages"]) == tool_responses(theirs["messages"]) == [[
        {"id": "fc-1", "name": "get_forecast", "response": {"city": "Oslo", "released": True},
         "scheduling": "WHEN_IDLE"}]]


def test_a_blocking_tool_is_declared_blocking(tls: ssl.SSLContext) -> None:
    seen = both(tls, weather_model, lambda side, url: live(side)(
        url, [forecast_tool(side, quick_forecast, behavior=("Behavior", "BLOCKING"))], turns_then_close(2),
        first="Forecast?", pool=True))
    theirs, ours = seen["theirs"], seen["ours"]
    assert declarations(ours["setup"]) == declarations(theirs["setup"])
    assert declarations(theirs["setup"])[0]["behavior"] == "BLOCKING"
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["received"] == theirs["received"] == ["Forecast?", {"city": "Oslo"}]


def test_a_plain_tool_is_declared_without_a_behavior(tls: ssl.SSLContext) -> None:
    seen = both(tls, weather_model, lambda side, url: live(side)(
        url, [shared.get_weather], turns_then_close(1), pool=True, first="Hello?"))
    for side in ("theirs", "ours"):
        assert "behavior" not in declarations(seen[side]["setup"])[0], side


# -- the runner: sessions, modalities, the user's own events -------------------------------------

async def open_live(side: str, url: str, *, create: bool = True, run_config: Any = None,
                    by_session: bool = False, state_delta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A google-adk user's run_live on ``side``: "Hello?" typed (with ``state_delta``
    sent first when given), the run closed at the model's first end of a turn; the
    events and the stored session's events and state. What the runner raises is
    returned as ``error``."""
    types, _, _, runners = adk(side)
    if side == "theirs":
        from google.adk.agents import Agent, LiveRequestQueue
        from google.adk.models import Gemini
        model: Any = Gemini(model="gemini-live-2.5-flash", base_url=url)
    else:
        from adk_actors.agents import Agent, LiveRequestQueue  # type: ignore[assignment]
        from adk_actors.models import GeminiModel
        model = GeminiModel("gemini-live-2.5-flash", base_url=url, api_key="test-key")
    runner = runners.InMemoryRunner(agent=Agent(name="root", model=model, instruction="Help."), app_name="p")
    session = (await runner.session_service.create_session(app_name="p", user_id="ann", session_id="s1")
               if create else None)
    queue = LiveRequestQueue()
    if state_delta is not None:
        if side == "theirs":
            from google.adk.agents.live_request_queue import LiveRequest
        else:
            from adk_actors.agents.live_request_queue import LiveRequest  # type: ignore[assignment]
        queue.send(LiveRequest(state_delta=state_delta))
    queue.send_content(types.Content(role="user", parts=[types.Part(text="Hello?")]))
    ids: dict[str, Any] = {"session": session} if by_session else {"user_id": "ann", "session_id": "s1"}
    streamed: list[Any] = []
    try:
        async for event in runner.run_live(live_request_queue=queue, run_config=run_config, **ids):
            streamed.append(event)
            if event.turn_complete:
                queue.close()
                break
    except Exception as exc:
        await runner.close()
        return {"error": exc}
    stored = await runner.session_service.get_session(app_name="p", user_id="ann", session_id="s1")
    await runner.close()
    return {"streamed": streamed, "stored": stored.events, "state": dict(stored.state)}


def side_by_side(tls: ssl.SSLContext, **options: Any) -> dict[str, Any]:
    return both(tls, weather_model, lambda side, url: open_live(side, url, **options))


def test_run_live_on_a_missing_session_raises_session_not_found(tls: ssl.SSLContext) -> None:
    for side in ("theirs", "ours"):
        server = LiveServer(weather_model)

        async def scenario(side: str = side, server: LiveServer = server) -> dict[str, Any]:
            async with live_server(server, tls if side == "theirs" else None) as url:
                return await asyncio.wait_for(open_live(side, url, create=False), 60)

        error = asyncio.run(scenario())["error"]
        assert type(error).__name__ == "SessionNotFoundError" and isinstance(error, ValueError), side
        assert server.received == [], side  # no conversation was opened


def test_run_live_without_a_session_or_its_ids_raises_value_error() -> None:
    from google.adk.agents import LiveRequestQueue as TheirQueue

    from adk_actors.agents import LiveRequestQueue as OurQueue

    async def first(side: str) -> BaseException | None:
        _, _, _, runners = adk(side)
        from google.adk.agents import Agent as TheirAgent

        from adk_actors.agents import Agent as OurAgent
        agent = (TheirAgent if side == "theirs" else OurAgent)(name="root", model="gemini-live-2.5-flash")
        runner = runners.InMemoryRunner(agent=agent, app_name="p")
        queue = TheirQueue() if side == "theirs" else OurQueue()
        try:
            async for _ in runner.run_live(user_id="ann", live_request_queue=queue):
                pass
        except ValueError as exc:
            return exc
        finally:
            await runner.close()
        return None

    for side in ("theirs", "ours"):
        error = asyncio.run(first(side))
        assert str(error) == "Either session or user_id and session_id must be provided.", side


def test_run_live_asks_for_audio_unless_the_run_config_says_otherwise(tls: ssl.SSLContext) -> None:
    seen = side_by_side(tls)  # no run config
    for side in ("theirs", "ours"):
        assert seen[side]["setup"]["generation_config"]["response_modalities"] == ["AUDIO"], side


def test_run_live_stores_the_users_turn_without_streaming_it_and_keeps_the_answer(tls: ssl.SSLContext) -> None:
    def config(side: str) -> Any:
        if side == "theirs":
            from google.adk.agents.run_config import RunConfig
            from google.genai import types
            return RunConfig(response_modalities=[types.Modality.TEXT])
        from adk_actors.agents.run_config import RunConfig as Ours
        return Ours(response_modalities=["TEXT"])

    seen = both(tls, weather_model, lambda side, url: open_live(side, url, run_config=config(side),
                                                                state_delta={"mood": "good"}))
    for side in ("theirs", "ours"):
        result = seen[side]
        assert [e.author for e in result["streamed"]] == ["root", "root", "root"], side
        assert [(e.author, e.content.parts[0].text if e.content else None, dict(e.actions.state_delta))
                for e in result["stored"]] == [("user", None, {"mood": "good"}), ("user", "Hello?", {}),
                                               ("root", "Hi!", {}), ("root", None, {})], side
        assert result["state"] == {"mood": "good"}, side
        assert seen[side]["received"] == ["Hello?"], side


def test_run_live_with_the_session_itself_warns_it_is_deprecated_and_runs_on_it(tls: ssl.SSLContext) -> None:
    def run(side: str, url: str) -> Any:
        async def go() -> dict[str, Any]:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = await open_live(side, url, by_session=True)
            result["warned"] = [w for w in caught if issubclass(w.category, DeprecationWarning)
                                and "session" in str(w.message)]
            return result
        return go()

    seen = both(tls, weather_model, run)
    for side in ("theirs", "ours"):
        assert seen[side]["warned"], side
        assert [e.author for e in seen[side]["stored"]][:2] == ["user", "root"], side


# -- a streaming tool's results and their scheduling ------------------------------------------------

async def monitor_weather(city: str) -> Any:
    """Watch the weather of a city: a plain reading, then one the model hears silently."""
    await shared.STAGE.gates[0].wait()
    types = adk(shared.STAGE.side)[0]
    yield {"temp": 1}
    yield types.FunctionResponse(name="monitor_weather", response={"temp": 2},
                                 scheduling=types.FunctionResponseScheduling.SILENT)
    await asyncio.Event().wait()  # until the conversation ends


def test_a_streaming_tools_results_carry_its_scheduling_or_the_one_it_yields(tls: ssl.SSLContext) -> None:
    def steps(answer: str, send: Any) -> None:
        if answer.startswith("got {\"status\": \"The function is running"):
            shared.STAGE.gates[0].set()

    async def run(side: str, url: str) -> Any:
        shared.STAGE.gates, shared.STAGE.side = [asyncio.Event()], side
        _, _, function_tool, _ = adk(side)
        tool = function_tool(monitor_weather)
        tool.response_scheduling = adk(side)[0].FunctionResponseScheduling.WHEN_IDLE
        return await live(side)(url, [tool], turns_then_close(4, steps), first="Watch")

    seen = both(tls, shared.streaming_model, run)
    theirs, ours = seen["theirs"], seen["ours"]
    assert declarations(ours["setup"]) == declarations(theirs["setup"])
    assert declarations(theirs["setup"])[0]["behavior"] == "NON_BLOCKING"
    pending = {"status": "The function is running asynchronously and the results are pending."}
    expected = [[{"id": "fc-1", "name": "monitor_weather", "response": pending, "scheduling": "WHEN_IDLE"}],
                [{"id": "fc-1", "name": "monitor_weather", "response": {"temp": 1}, "scheduling": "WHEN_IDLE"}],
                [{"id": "fc-1", "name": "monitor_weather", "response": {"temp": 2}, "scheduling": "SILENT"}]]
    assert tool_responses(ours["messages"]) == tool_responses(theirs["messages"]) == expected
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
