"""Telemetry events from the engine: agent, llm and tool spans with durations, ids and usage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from engine_helpers import run

from adk_actors import LlmAgent, telemetry
from adk_actors.models import ScriptedModel, ServerError, call

EVENTS = [(*prefix, phase) for prefix in (("adk", "agent"), ("adk", "llm"), ("adk", "tool"))
          for phase in ("start", "stop", "exception")]


@pytest.fixture
def seen() -> Iterator[list[tuple[Any, ...]]]:
    records: list[tuple[Any, ...]] = []
    telemetry.attach("test", EVENTS, lambda event, measurements, metadata: records.append(
        (event, measurements, metadata)))
    yield records
    telemetry.detach("test")


def lookup(city: str) -> dict[str, Any]:
    return {"city": city}


def test_a_tool_turn_emits_agent_llm_and_tool_spans(seen: list[tuple[Any, ...]]) -> None:
    agent = LlmAgent(name="bot", model=ScriptedModel([call("lookup", city="Oslo"), "done"], name="scripted-x"),
                     tools=[lookup])
    events = run(agent, "go")
    names = [":".join(e[0][1:]) for e in seen]
    assert names == ["agent:start", "llm:start", "llm:stop", "tool:start", "tool:stop", "llm:start", "llm:stop",
                     "agent:stop"]
    llm_stop = next(m for e, _, m in seen if e == ("adk", "llm", "stop"))
    assert llm_stop["agent"] == "bot" and llm_stop["model"] == "scripted-x"
    assert llm_stop["invocation_id"] == events[0].invocation_id
    assert llm_stop["usage"] is not None
    tool_stop = next((meas, meta) for e, meas, meta in seen if e == ("adk", "tool", "stop"))
    assert tool_stop[1]["tool"] == "lookup" and tool_stop[0]["duration"] >= 0
    assert all("system_time" in meas for e, meas, _ in seen if e[-1] == "start")


def test_model_errors_and_raising_handlers(seen: list[tuple[Any, ...]]) -> None:
    def broken(event: Any, measurements: Any, metadata: Any) -> None:
        raise RuntimeError("bad handler")

    telemetry.attach("broken", ("adk", "llm", "start"), broken)
    events = run(LlmAgent(name="bot", model=ScriptedModel([ServerError("503")])), "go")
    assert events[-1].error_code == "server_error"  # the run went on despite the handler
    assert "broken" not in telemetry.handlers()  # detached after raising
    llm_stop = next(m for e, _, m in seen if e == ("adk", "llm", "stop"))
    assert llm_stop["error"] == "server_error"
    with pytest.raises(ValueError):
        telemetry.attach("test", ("adk", "llm", "stop"), lambda *a: None)
