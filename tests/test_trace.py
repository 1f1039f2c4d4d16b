"""Traces of turns (adk_actors.tracing): recorded from the engine's spans, kept with the
session in the store (durable, bounded, deleted with it), and read through the Runner."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import runtime_agents
from engine_helpers import collect

from adk_actors import Content, Event, LlmAgent
from adk_actors._secrets import register_secret
from adk_actors.engine import SessionView
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host, HostConfig
from adk_actors.tools import google_search
from adk_actors.tracing import MAX_CONTENTS, TraceRecorder, TraceSpan, pack, unpack
from supervision import SupervisorClient
from supervision.testing import wait_until


def lookup(city: str) -> dict[str, Any]:
    """Look a city up."""
    return {"city": city, "temp_c": 21}


@pytest.fixture
def recorder() -> Iterator[TraceRecorder]:
    recording = TraceRecorder()
    recording.attach("test-trace")
    yield recording
    recording.detach("test-trace")


def run_traced(recorder: TraceRecorder, agent: Any, message: str,
               session: SessionView | None = None) -> tuple[list[Event], list[TraceSpan]]:
    events = asyncio.run(collect(agent, message, session))
    return events, recorder.take(events[-1].invocation_id)


def test_a_tool_turn_is_one_trace_of_agent_model_and_tool_spans(recorder: TraceRecorder) -> None:
    agent = LlmAgent(name="bot", model=ScriptedModel([call("lookup", city="Oslo"), "It is 21 in Oslo."],
                                                     name="scripted-x"), tools=[lookup])
    events, spans = run_traced(recorder, agent, "weather in Oslo?", SessionView(session_id="s-oslo"))
    assert [span.name for span in spans] == ["generate_content scripted-x", "execute_tool lookup",
                                             "generate_content scripted-x", "invoke_agent bot"]
    model_call, tool_call, answer, root = spans
    assert root.parent_span_id is None
    assert {s.parent_span_id for s in (model_call, tool_call, answer)} == {root.span_id}
    assert len({s.trace_id for s in spans}) == 1 and len({s.span_id for s in spans}) == 4
    assert all(0 < s.span_id < 2**53 and 0 < s.trace_id < 2**53 for s in spans)  # exact in a browser
    assert all(s.start_time <= s.end_time for s in spans) and root.start_time <= model_call.start_time
    # Each model call names the event it made; its request and response are recorded.
    model_events = [e for e in events if e.author == "bot" and e.content is not None
                    and e.content.role == "model"]
    assert [model_call.event_id, answer.event_id] == [e.id for e in model_events]
    assert json.loads(answer.attributes["gcp.vertex.agent.llm_response"])["content"]["parts"][0]["text"] == \
        "It is 21 in Oslo."
    request = json.loads(model_call.attributes["gcp.vertex.agent.llm_request"])
    assert request["contents"][-1]["parts"][0]["text"] == "weather in Oslo?"
    assert request["config"]["tools"][0]["function_declarations"][0]["name"] == "lookup"
    assert json.loads(tool_call.attributes["gcp.vertex.agent.tool_call_args"]) == {"city": "Oslo"}
    assert json.loads(tool_call.attributes["gcp.vertex.agent.tool_response"])["temp_c"] == 21
    # the session on every span but the tool call's, which names none (as google-adk's)
    assert {s.attributes["gen_ai.conversation.id"] for s in spans if s is not tool_call} == {"s-oslo"}
    assert "gen_ai.conversation.id" not in tool_call.attributes
    assert {s.invocation_id for s in spans} == {events[0].invocation_id}
    assert recorder.take(events[0].invocation_id) == []  # handed over once
    packed = pack(events[0].invocation_id, spans)  # as a worker sends them and the store keeps them
    assert packed is not None and unpack(packed.data) == spans
    assert packed.event_ids == (model_call.event_id, answer.event_id)
    assert len(packed.data) * 2 < len(json.dumps([s.web_ui() for s in spans]))
    assert pack("e-none", []) is None


def test_a_long_sessions_request_keeps_its_last_contents_and_no_secret(recorder: TraceRecorder) -> None:
    secret = "sk-trace-test-0123456789"
    register_secret(secret)
    history = SessionView(events=[Event(author="user" if i % 2 == 0 else "bot",
                                        content=Content(role="user" if i % 2 == 0 else "model",
                                                        parts=({"text": f"line {i}"},)))  # type: ignore[arg-type]
                                  for i in range(30)])
    agent = LlmAgent(name="bot", model=ScriptedModel(["ok"]))
    _, spans = run_traced(recorder, agent, f"my key is {secret}", history)
    request_text = spans[0].attributes["gcp.vertex.agent.llm_request"]
    request = json.loads(request_text)
    assert len(request["contents"]) == MAX_CONTENTS
    assert request["contents_omitted"] == 31 - MAX_CONTENTS
    assert secret not in json.dumps([s.attributes for s in spans]) and "***" in request_text


def test_spans_of_a_turn_that_was_taken_already_are_dropped(recorder: TraceRecorder) -> None:
    """A worker takes a turn's spans when it ends; a span that ends later (a task the
    turn left behind) is not kept for ever."""
    recorder.handle(("adk", "agent", "start"), {}, {"span_id": "a", "invocation_id": "e-1", "agent": "bot"})
    assert recorder.take("e-1") == []
    recorder.handle(("adk", "agent", "stop"), {}, {"span_id": "a", "invocation_id": "e-1", "agent": "bot"})
    assert recorder.take("e-1") == []


@pytest.fixture
def traced_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), trace_turns=2),
              system=actor_system) as running:
        yield running


def test_a_session_keeps_the_trace_of_its_last_turns_through_a_kill_and_loses_it_on_delete(
        traced_host: Host) -> None:
    runner = traced_host.runner("keeper")
    runner.create_session("ann", "s1")
    turns = [list(runner.run("ann", "s1", f"remember v{i}")) for i in range(3)]
    spans = runner.session_trace("s1")
    kept = [turns[1][-1].invocation_id, turns[2][-1].invocation_id]  # trace_turns=2: the last two
    assert sorted({s.invocation_id for s in spans}) == sorted(kept)
    assert [s.name for s in spans if s.invocation_id == kept[1]] == [
        "generate_content scripted", "execute_tool remember", "generate_content scripted", "invoke_agent keeper"]
    final = turns[2][-1]
    found = runner.event_trace(final.id)
    assert found is not None and found.event_id == final.id
    assert json.loads(found.attributes["gcp.vertex.agent.llm_response"])["content"]["parts"][0]["text"] == "done"
    assert runner.session_trace("s1", user_id="bob") == [] and runner.event_trace(final.id, user_id="bob") is None

    # Stored with the session: kill -9 of the partition that wrote it loses nothing.
    sessions = SupervisorClient(traced_host.system, traced_host.root.child("sessions").address)  # type: ignore[union-attr]
    owner = next(i for i in sessions.which_children() if i.address == traced_host.partition_for("keeper", "ann", "s1"))
    assert owner.pid is not None
    os.kill(owner.pid, signal.SIGKILL)
    wait_until(lambda: sessions.child(owner.id).status == "running" and sessions.child(owner.id).pid != owner.pid)
    assert [s.span_id for s in runner.session_trace("s1", user_id="ann")] == [s.span_id for s in spans]

    runner.delete_session("ann", "s1")
    assert runner.session_trace("s1") == [] and runner.event_trace(final.id) is None


def test_no_trace_is_recorded_with_trace_turns_0(actor_system: Any, tmp_path: Path) -> None:
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), trace_turns=0),
              system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        list(runner.run("ann", "s1", "hi"))
        assert runner.session_trace("s1") == []


def deep(levels: int) -> dict[str, Any]:
    """Return a value nested ``levels`` deep (more than JSON encoders take)."""
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def test_a_value_with_no_json_is_noted_in_the_trace_and_never_fails_the_run(recorder: TraceRecorder) -> None:
    """A tool result nested 300 deep has no JSON: the trace notes that it was not recorded,
    and the run goes on (before, the recorder's error ended the run ``ValueError`` on a
    host, instead of the store's typed ``Unstorable``)."""
    agent = LlmAgent(name="bot", model=ScriptedModel([call("deep", levels=300), "done"], name="scripted-d"),
                     tools=[deep])
    events, spans = run_traced(recorder, agent, "go deep", SessionView(session_id="s-deep"))
    assert events[-1].content is not None and events[-1].content.text == "done"
    tool_span = next(s for s in spans if s.name == "execute_tool deep")
    assert tool_span.attributes["gcp.vertex.agent.tool_response"].startswith("(not recorded: ")


def test_a_model_calls_recorded_request_lists_geminis_own_tools_beside_the_functions(
        recorder: TraceRecorder) -> None:
    """google-adk's recorded request lists every entry of its config's tools, Gemini's
    own (``google_search``) beside the function declarations; an eval's judge reads
    the agents' tools from it (``evals._app_details``)."""
    agent = LlmAgent(name="bot", model=ScriptedModel(["It is 21 in Oslo."], name="gemini-2.5-flash"),
                     tools=[lookup, google_search])
    _events, spans = run_traced(recorder, agent, "weather in Oslo?")
    request = json.loads(next(s for s in spans if s.name.startswith("generate_content")).attributes[
        "gcp.vertex.agent.llm_request"])
    tools = request["config"]["tools"]
    assert tools[0]["function_declarations"][0]["name"] == "lookup"
    assert any("google_search" in entry or "googleSearch" in entry for entry in tools[1:]), tools
