"""The agent engine: flow loop, tools, workflow agents, transfer and routing."""

from __future__ import annotations

import asyncio
import datetime
import sys
import time
from typing import Any

import pytest
from engine_helpers import run, summary
from pydantic import BaseModel

from adk_actors import (
    AgentDefinitionError,
    Content,
    Event,
    FunctionCall,
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    RunConfig,
    SequentialAgent,
    StreamingMode,
)
from adk_actors.engine import (
    CancelToken,
    ModelRaised,
    RunCancelled,
    SessionView,
    run_invocation,
    select_agent,
)
from adk_actors.models import Chunks, ModelError, ScriptedModel, call
from adk_actors.tools import (
    AgentTool,
    FunctionTool,
    LongRunningFunctionTool,
    ToolContext,
    exit_loop,
)

THIS = sys.modules[__name__]


def get_weather(city: str, unit: str = "C") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city to look up.
        unit: C or F.
    """
    return {"city": city, "temp": 21, "unit": unit}


def remember(fact: str, tool_context: ToolContext) -> str:
    """Remember a fact in the session state."""
    tool_context.state["fact"] = fact
    tool_context.state["temp:scratch"] = 1
    return "stored"


class Opaque:
    """A type no JSON schema describes."""


def takes_opaque(thing: Opaque) -> str:
    return "never"


def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


def boom() -> str:
    raise ValueError("tool exploded")


def scaled(factor: int, value: int) -> int:
    return factor * value


# -- the reference scenarios (seed examples) ---------------------------------------------


def test_weather_bot_tool_round_trip() -> None:
    model = ScriptedModel([call("get_weather", city="Paris"), "It is 21 C in Paris."])
    bot = LlmAgent(name="weather_bot", model=model, instruction="The user is in {location}.", tools=[get_weather])
    session = SessionView(state={"location": "Paris"})
    events = run(bot, "Weather?", session)
    assert summary(events) == [
        ("user", "Weather?"),
        ("weather_bot", "call:get_weather"),
        ("weather_bot", "result:get_weather={'city': 'Paris', 'temp': 21, 'unit': 'C'}"),
        ("weather_bot", "It is 21 C in Paris."),
    ]
    call_event, result_event = events[1], events[2]
    assert call_event.content and result_event.content
    assert call_event.content.function_calls[0].id == result_event.content.function_responses[0].id
    first, second = model.requests
    assert first.system_instruction.startswith("The user is in Paris.")
    assert [c.role for c in second.contents] == ["user", "model", "user"]  # the call and its result came back
    assert session.events == events and all(e.invocation_id == events[0].invocation_id for e in events)


def test_a_transfer_ping_pong_ends_with_the_llm_call_limit_not_a_recursion_error() -> None:
    """Issue 19 item 2: ~160 hops used to end in RecursionError."""
    ping = LlmAgent(name="ping", model=ScriptedModel(fallback=call("transfer_to_agent", agent_name="pong")))
    pong = LlmAgent(name="pong", model=ScriptedModel(fallback=call("transfer_to_agent", agent_name="ping")))
    root = LlmAgent(name="root", model=ScriptedModel(fallback=call("transfer_to_agent", agent_name="ping")),
                    sub_agents=[ping, pong])
    events = run(root, "go", SessionView(), run_config=RunConfig(max_llm_calls=400))
    assert events[-1].error_code == "max_llm_calls"
    hops = [e for e in events if e.actions.transfer_to_agent]
    assert len(hops) >= 399


def test_router_transfers_and_the_next_turn_sticks_to_the_specialist() -> None:
    router_model = ScriptedModel([call("transfer_to_agent", agent_name="weather")])
    weather_model = ScriptedModel(["Sunny.", "Still sunny."])
    weather = LlmAgent(name="weather", model=weather_model, description="Weather questions")
    news = LlmAgent(name="news", model=ScriptedModel(["News."]), description="News questions")
    router = LlmAgent(name="router", model=router_model, instruction="Route.", sub_agents=[weather, news])
    session = SessionView()
    assert summary(run(router, "Weather today?", session)) == [
        ("user", "Weather today?"),
        ("router", "call:transfer_to_agent"),
        ("router", "result:transfer_to_agent={'result': None}"),
        ("weather", "Sunny."),
    ]
    assert select_agent(router, session.events) is weather
    assert summary(run(router, "And tomorrow?", session))[1:] == [("weather", "Still sunny.")]
    assert len(router_model.requests) == 1  # the router was not asked again


def test_no_sticky_routing_when_the_specialist_cannot_transfer_back() -> None:
    weather = LlmAgent(name="weather", model=ScriptedModel(["Sunny."]), disallow_transfer_to_parent=True)
    router = LlmAgent(name="router", model=ScriptedModel([call("transfer_to_agent", agent_name="weather"), "Me."]),
                      sub_agents=[weather])
    session = SessionView()
    run(router, "Weather?", session)
    assert select_agent(router, session.events) is router


def test_unknown_transfer_target_is_an_error_result_not_a_crash() -> None:
    model = ScriptedModel([call("transfer_to_agent", agent_name="nobody"), "Sorry."])
    router = LlmAgent(name="router", model=model, sub_agents=[LlmAgent(name="helper", model=ScriptedModel())])
    events = run(router, "hi")
    assert "Unknown agent 'nobody'" in summary(events)[2][1] and "helper" in summary(events)[2][1]
    assert summary(events)[-1] == ("router", "Sorry.")


# -- tools ---------------------------------------------------------------------------------


def test_declaration_is_derived_from_signature_and_docstring() -> None:
    # google-adk 2.13's shape (its JSON_SCHEMA_FOR_FUNC_DECL, on by default): the whole
    # docstring describes the tool, and its parameters are pydantic's JSON schema of them
    # (tests/test_adk52_tool_schemas.py checks it against google-adk's request body).
    declaration = FunctionTool(get_weather).declaration()
    assert declaration.description == "Current weather for a city.\n\nArgs:\n    city: The city to look up.\n    unit: C or F."
    assert declaration.parameters is None
    assert declaration.parameters_json_schema == {
        "type": "object",
        "title": "get_weatherParams",
        "properties": {
            "city": {"type": "string", "title": "City"},
            "unit": {"type": "string", "title": "Unit", "default": "C"},
        },
        "required": ["city"],
    }
    assert "tool_context" not in str(FunctionTool(remember).declaration())


def test_function_tool_forms() -> None:
    assert FunctionTool(f"{__name__}:get_weather").name == "get_weather"
    triple = FunctionTool((THIS, "scaled", [3]))
    assert list(triple.declaration().parameters_schema["properties"]) == ["value"]  # type: ignore[index]
    model = ScriptedModel([call("scaled", value=5), "15"])
    events = run(LlmAgent(name="calc", model=model, tools=[triple]), "5 times 3?")
    assert summary(events)[2] == ("calc", "result:scaled={'result': 15}")
    with pytest.raises(AgentDefinitionError):
        FunctionTool("no_module_here")
    with pytest.raises(AgentDefinitionError):
        FunctionTool((THIS, "missing_function"))


def test_a_plain_function_stays_a_function_and_is_declared_and_run_as_a_tool() -> None:
    """As in google-adk: ``LlmAgent.tools`` keeps the function itself; the request
    declares it from its signature and the engine runs it; a signature no schema fits
    fails when the agent is built, not at the first request."""
    model = ScriptedModel([call("get_weather", city="Oslo"), "done"])
    agent = LlmAgent(name="bot", model=model, tools=[get_weather])
    assert agent.tools == [get_weather]
    events = run(agent, "weather?")
    assert model.requests[0].tools[0] == FunctionTool(get_weather).declaration()
    assert summary(events)[2] == ("bot", "result:get_weather={'city': 'Oslo', 'temp': 21, 'unit': 'C'}")
    with pytest.raises(AgentDefinitionError, match="takes_opaque"):
        LlmAgent(name="bad", model=model, tools=[takes_opaque])


def test_bad_arguments_unknown_tools_and_raising_tools_go_back_to_the_model() -> None:
    model = ScriptedModel([
        [call("get_weather"), call("teleport", to="Mars"), call("boom")],
        "I could not do any of that.",
    ])
    bot = LlmAgent(name="bot", model=model, tools=[get_weather, boom])
    events = run(bot, "go")
    results = {p.function_response.name: p.function_response.response
               for p in events[2].content.parts if p.function_response}  # type: ignore[union-attr]
    assert "invalid arguments for get_weather" in results["get_weather"]["error"]
    assert "city" in results["get_weather"]["error"]
    assert results["teleport"]["error"].startswith("Unknown tool: teleport")
    assert results["boom"] == {"error": "ValueError: tool exploded"}
    assert summary(events)[-1] == ("bot", "I could not do any of that.")


def test_independent_tool_calls_run_concurrently() -> None:
    model = ScriptedModel([[call("slow", seconds=0.4), call("slow", seconds=0.4), call("slow", seconds=0.4)], "ok"])
    bot = LlmAgent(name="bot", model=model, tools=[slow])
    began = time.monotonic()
    events = run(bot, "go")
    assert time.monotonic() - began < 1.0  # three 0.4 s tools, not 1.2 s in a row
    assert len(events[2].content.function_responses) == 3  # type: ignore[union-attr]  # ONE response event


def test_tool_state_writes_become_the_events_state_delta() -> None:
    model = ScriptedModel([call("remember", fact="sky is blue"), "Noted."])
    session = SessionView()
    events = run(LlmAgent(name="bot", model=model, tools=[remember]), "remember", session)
    assert events[2].actions.state_delta == {"fact": "sky is blue", "temp:scratch": 1}
    assert session.state["fact"] == "sky is blue"


def test_a_long_running_tool_that_answers_now_is_summarized_as_in_google_adk() -> None:
    def start_job(name: str) -> dict[str, str]:
        return {"status": "pending", "ticket": "T-1"}

    model = ScriptedModel([call("start_job", name="x"), "Job T-1 is pending."])
    events = run(LlmAgent(name="bot", model=model, tools=[LongRunningFunctionTool(start_job)]), "start")
    assert events[1].long_running_tool_ids == (events[1].content.function_calls[0].id,)  # type: ignore[union-attr]
    assert summary(events)[2:] == [("bot", "result:start_job={'status': 'pending', 'ticket': 'T-1'}"),
                                   ("bot", "Job T-1 is pending.")]
    assert len(model.requests) == 2


def test_a_long_running_tool_that_answers_nothing_ends_the_turn_with_its_call_open() -> None:
    def start_job(name: str) -> None:
        """Start a job; its result is sent later."""

    model = ScriptedModel([call("start_job", name="x")])
    events = run(LlmAgent(name="bot", model=model, tools=[LongRunningFunctionTool(start_job)]), "start")
    assert summary(events) == [("user", "start"), ("bot", "call:start_job")]
    assert events[1].long_running_tool_ids == (events[1].content.function_calls[0].id,)  # type: ignore[union-attr]
    assert len(model.requests) == 1


def test_toolsets_are_resolved_per_request_and_failures_reported() -> None:
    class Dynamic:
        name = "dynamic"

        def __init__(self) -> None:
            self.calls = 0

        async def get_tools(self, ctx: Any) -> list[Any]:
            self.calls += 1
            return [FunctionTool(get_weather)]

    class Broken:
        name = "broken"

        async def get_tools(self, ctx: Any) -> list[Any]:
            raise ConnectionError("MCP server gone")

    dynamic = Dynamic()
    model = ScriptedModel([call("get_weather", city="Oslo"), "Cold."])
    events = run(LlmAgent(name="bot", model=model, tools=[dynamic, Broken()]), "Oslo?")
    assert dynamic.calls == 2  # once per model request
    assert [t.name for t in model.requests[0].tools] == ["get_weather"]
    errors = [e for e in events if e.error_code == "toolset_error"]
    assert len(errors) == 2 and "MCP server gone" in (errors[0].error_message or "")
    assert summary(events)[-1] == ("bot", "Cold.")


def test_agent_tool_runs_in_an_isolated_session() -> None:
    class Verdict(BaseModel):
        ok: bool

    checker = LlmAgent(name="checker", model=ScriptedModel(['{"ok": true}']), output_schema=Verdict,
                       description="Checks things.")
    model = ScriptedModel([call("checker", request="is it fine?"), "It is fine."])
    session = SessionView()
    events = run(LlmAgent(name="boss", model=model, tools=[AgentTool(checker)]), "check", session)
    assert summary(events)[2] == ("boss", "result:checker={'ok': True}")
    assert all(e.author != "checker" for e in session.events)  # the child session stayed separate


# -- limits, output, streaming, cancellation -----------------------------------------------------


def test_max_iterations_and_max_llm_calls_end_with_error_events() -> None:
    looping = ScriptedModel([call("get_weather", city="x")] * 10)
    events = run(LlmAgent(name="bot", model=looping, tools=[get_weather], max_iterations=3), "go")
    assert events[-1].error_code == "max_iterations" and len(looping.requests) == 3
    looping = ScriptedModel([call("get_weather", city="x")] * 10)
    events = run(LlmAgent(name="bot", model=looping, tools=[get_weather]), "go", run_config=RunConfig(max_llm_calls=2))
    assert events[-1].error_code == "max_llm_calls" and len(looping.requests) == 2


class Forecast(BaseModel):
    city: str
    temp: int


def test_output_key_stores_the_final_answer_json_decoded_with_a_schema() -> None:
    plain = LlmAgent(name="a", model=ScriptedModel(["hello"]), output_key="greeting")
    assert run(plain, "hi")[-1].actions.state_delta == {"greeting": "hello"}
    typed = LlmAgent(name="b", model=ScriptedModel(['{"city": "Oslo", "temp": -3}']), output_schema=Forecast,
                     output_key="forecast")
    assert run(typed, "hi")[-1].actions.state_delta == {"forecast": {"city": "Oslo", "temp": -3}}
    structured = LlmAgent(name="c", model=ScriptedModel([call("set_model_response", city="Rome", temp=30)]),
                          output_schema=Forecast, output_key="forecast", tools=[get_weather])
    final = run(structured, "hi")[-1]
    assert final.actions.state_delta == {"forecast": {"city": "Rome", "temp": 30}}


def test_a_scripted_plain_answer_streams_no_partial_the_script_did_not_name() -> None:
    """Issue 19 item 13: a test double sends exactly the partials its script names."""
    model = ScriptedModel(["It is sunny.", Chunks(["a", "b"])])
    streamed = RunConfig(streaming_mode=StreamingMode.SSE)
    plain = run(LlmAgent(name="bot", model=model), "weather?", SessionView(), run_config=streamed)
    assert [e.partial for e in plain if e.author == "bot"] == [False]  # one final event, marked so (as google-adk)
    chunked = run(LlmAgent(name="bot", model=model), "again?", SessionView(), run_config=streamed)
    assert [e.content.text for e in chunked if e.partial] == ["a", "b"]  # type: ignore[union-attr]


def test_streaming_partials_share_the_final_id_and_are_not_committed() -> None:
    model = ScriptedModel([Chunks(["It ", "is ", "sunny."])])
    session = SessionView()
    events = run(LlmAgent(name="bot", model=model), "weather?", session,
                 run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    partials = [e for e in events if e.partial]
    assert [e.content.text for e in partials] == ["It ", "is ", "sunny."]  # type: ignore[union-attr]
    final = events[-1]
    assert not final.partial and final.content.text == "It is sunny."  # type: ignore[union-attr]
    assert {e.id for e in partials} == {final.id}
    assert [e.partial for e in session.events] == [None, False]  # the streamed answer's final says so (as google-adk)


def test_a_model_error_is_an_error_event_then_the_run_raises_it() -> None:
    """As google-adk's run raises a model's exception (its SSE stream ends with an error
    line): the error event comes first, so that it is committed."""
    model = ScriptedModel([ModelError("upstream 503", error_type="server_error")])
    seen: list[Event] = []

    async def go() -> None:
        async for event in run_invocation(LlmAgent(name="bot", model=model), SessionView(), Content.user("hi")):
            seen.append(event)

    with pytest.raises(ModelRaised) as raised:
        asyncio.run(go())
    assert (seen[-1].error_code, seen[-1].error_message) == ("server_error", "upstream 503")
    assert (raised.value.error_type, raised.value.message) == ("server_error", "upstream 503")


def test_cancellation_is_checked_between_steps() -> None:
    token = CancelToken()

    def cancel_me() -> str:
        token.cancel("user pressed stop")
        return "cancelling"

    model = ScriptedModel([call("cancel_me"), "never said"])
    seen: list[Event] = []

    async def go() -> None:
        async for event in _iterate(LlmAgent(name="bot", model=model, tools=[cancel_me]), token):
            seen.append(event)

    with pytest.raises(RunCancelled, match="user pressed stop"):
        asyncio.run(go())
    assert len(model.requests) == 1 and summary(seen)[-1][1].startswith("result:cancel_me")


async def _iterate_plain(agent: Any, text: str) -> Any:
    from adk_actors.engine import run_invocation

    async for event in run_invocation(agent, SessionView(), Content.user(text)):
        yield event


async def _iterate(agent: Any, token: CancelToken) -> Any:
    from adk_actors.engine import run_invocation

    async for event in run_invocation(agent, SessionView(), Content.user("go"), cancel=token):
        yield event


# -- workflow agents ---------------------------------------------------------------------------


def test_sequential_pipeline_passes_state_through_output_key() -> None:
    writer = LlmAgent(name="writer", model=ScriptedModel(["def add(a, b): return a + b"]), output_key="code")
    reviewer = LlmAgent(name="reviewer", model=ScriptedModel(["Looks fine."]), instruction="Review: {code}",
                        output_key="review")
    pipeline = SequentialAgent(name="pipeline", sub_agents=[writer, reviewer])
    session = SessionView()
    events = run(pipeline, "write add", session)
    assert [a for a, _ in summary(events)] == ["user", "writer", "reviewer"]
    assert reviewer.model.requests[0].system_instruction.startswith("Review: def add(a, b): return a + b")
    assert session.state == {"code": "def add(a, b): return a + b", "review": "Looks fine."}


def test_parallel_children_run_concurrently_on_isolated_branches() -> None:
    a = LlmAgent(name="a", model=ScriptedModel([call("slow", seconds=0.4), "A done"]), tools=[slow])
    b = LlmAgent(name="b", model=ScriptedModel([call("slow", seconds=0.4), "B done"]), tools=[slow])
    fan = ParallelAgent(name="fan", sub_agents=[a, b])
    began = time.monotonic()
    events = run(fan, "go")
    assert time.monotonic() - began < 0.75
    assert {e.branch for e in events if e.author == "a"} == {"fan.a"}
    assert {e.branch for e in events if e.author == "b"} == {"fan.b"}
    second_request_of_a = a.model.requests[1]  # type: ignore[union-attr]
    assert all("B" not in c.text and c.text != "b" for c in second_request_of_a.contents)
    assert len(second_request_of_a.contents) == 3  # user, its own call, its own result: nothing of b


def test_parallel_child_failure_or_timeout_spares_its_siblings() -> None:
    class Crashing:
        name = "crashing"
        description = ""
        sub_agents: tuple[Any, ...] = ()

        async def run(self, ctx: Any) -> Any:
            raise RuntimeError("custom agent bug")
            yield  # pragma: no cover

    sleepy = LlmAgent(name="sleepy", model=ScriptedModel([call("slow", seconds=2.0)]), tools=[slow])
    fine = LlmAgent(name="fine", model=ScriptedModel(["I am fine."]))
    fan = ParallelAgent(name="fan", sub_agents=[Crashing(), sleepy, fine], child_timeout=0.5)
    began = time.monotonic()
    arrivals: list[float] = []

    async def go() -> list[Event]:
        out = []
        async for event in _iterate_plain(fan, "go"):
            out.append(event)
            arrivals.append(time.monotonic() - began)
        return out

    events = asyncio.run(go())
    # every event, the timeout's included, arrived long before the 2 s tool would end,
    # and nothing waited for the abandoned tool thread (a daemon: it cannot hold the
    # process, though Python cannot kill it either)
    assert max(arrivals) < 1.5
    assert time.monotonic() - began < 1.5
    assert ("fine", "I am fine.") in summary(events)
    assert ("crashing", "error:agent_error") in summary(events)
    assert ("sleepy", "error:timeout") in summary(events)


def test_loop_stops_on_exit_loop_or_max_iterations() -> None:
    critic = LlmAgent(name="critic", model=ScriptedModel(["again", "again", call("exit_loop"), "unused"]),
                      tools=[exit_loop])
    loop = LoopAgent(name="loop", sub_agents=[critic])
    events = run(loop, "improve")
    assert [w for a, w in summary(events) if a == "critic"] == ["again", "again", "call:exit_loop",
                                                              "result:exit_loop={'result': None}"]
    assert events[-1].actions.escalate
    bounded = LoopAgent(name="bounded", max_iterations=2,
                        sub_agents=[LlmAgent(name="w", model=ScriptedModel(["x", "y", "z"]))])
    assert [w for a, w in summary(run(bounded, "go")) if a == "w"] == ["x", "y"]


def test_custom_agents_need_no_base_class() -> None:
    class Echo:
        def __init__(self, name: str) -> None:
            self.name = name
            self.description = "Echoes"
            self.sub_agents: list[Any] = []

        async def run(self, ctx: Any) -> Any:
            last = ctx.session.events[-1].content.text
            yield ctx.event(content=Content.model(f"echo: {last}"))

    pipeline = SequentialAgent(name="p", sub_agents=[Echo("echo"), LlmAgent(name="after", model=ScriptedModel(["ok"]))])
    assert summary(run(pipeline, "ping"))[1:] == [("echo", "echo: ping"), ("after", "ok")]


def test_function_call_ids_are_added_when_the_model_gives_none() -> None:
    model = ScriptedModel([Content(role="model", parts=(
        __import__("adk_actors").Part(function_call=FunctionCall(name="get_weather", args={"city": "x"})),)), "ok"])
    events = run(LlmAgent(name="bot", model=model, tools=[get_weather]), "go")
    call_id = events[1].content.function_calls[0].id  # type: ignore[union-attr]
    assert call_id and call_id.startswith("adk-")
    assert events[2].content.function_responses[0].id == call_id  # type: ignore[union-attr]


def test_memory_and_artifact_tools() -> None:
    from adk_actors import Event as Ev
    from adk_actors.engine import InMemoryArtifactService, InMemoryMemoryService
    from adk_actors.tools import load_artifacts, load_memory

    memory = InMemoryMemoryService()
    memory.add_session("app", "user", "old", [
        Ev(author="user", content=Content.user("my cat is called Miso")),
        Ev(author="bot", content=Content.model("Nice name for a cat!")),
    ])
    memory.add_session("app", "someone_else", "x", [Ev(author="user", content=Content.user("my cat is Rex"))])
    artifacts = InMemoryArtifactService()
    from adk_actors import Part as P

    artifacts.save("app", "user", "session", "notes.txt", P(text="buy milk"))
    model = ScriptedModel([[call("load_memory", query="cat is called"), call("load_artifacts", artifact_names=["notes.txt"])],
                           "Miso, and milk."])
    events = run(LlmAgent(name="bot", model=model, tools=[load_memory, load_artifacts]), "remind me", memory=memory,
                 artifacts=artifacts)
    memory_result, artifact_result = [p.function_response.response for p in events[2].content.parts]  # type: ignore[union-attr]
    memories = memory_result["result"]["memories"]  # google-adk's shape: content, author, ISO timestamp
    assert [m["content"]["parts"][0]["text"] for m in memories] == ["my cat is called Miso", "Nice name for a cat!"]
    assert [(m["content"]["role"], m["author"]) for m in memories] == [("user", "user"), ("model", "bot")]
    assert all(datetime.datetime.fromisoformat(m["timestamp"]).tzinfo is not None for m in memories)
    # google-adk's load_artifacts: the call answers the names; the next request carries the artifact
    assert artifact_result["artifact_names"] == ["notes.txt"]
    assert [p.text for p in model.requests[-1].contents[-1].parts] == ["Artifact notes.txt is:", "buy milk"]
    assert "notes.txt" in model.requests[-1].system_instruction


def test_sub_agent_can_transfer_back_to_its_parent() -> None:
    child = LlmAgent(name="child", model=ScriptedModel([call("transfer_to_agent", agent_name="root")]))
    root = LlmAgent(name="root", model=ScriptedModel([call("transfer_to_agent", agent_name="child"), "root again"]),
                    sub_agents=[child])
    assert [a for a, _ in summary(run(root, "go"))] == ["user", "root", "root", "child", "child", "root"]
