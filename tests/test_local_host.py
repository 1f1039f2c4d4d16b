"""A Runner over ``runtime.testing.LocalHost``: real turns of a real agent, no process started.

What code using a Runner relies on: a turn's events stream in order and the turn ends
once; a tool's call and result are committed to the session; a bad input and an unknown
session are its typed errors; and all of it with no child process of the test's own.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_actors import Content, Event, InvalidRequestError, RunFailedError, SessionNotFoundError
from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Runner
from adk_actors.runtime.testing import LocalHost
from adk_actors.tools import ToolContext


def children() -> set[int]:
    """The pids of this process's children (from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(stat.parent.name))
    return found


def text_of(event: Event) -> str | None:
    return event.content.parts[0].text if event.content and event.content.parts else None


def bump(tool_context: ToolContext) -> dict[str, Any]:
    """Add one to the session's counter."""
    tool_context.state["count"] = tool_context.state.get("count", 0) + 1
    return {"count": tool_context.state["count"]}


@pytest.fixture
def before() -> set[int]:
    return children()


@pytest.fixture
def host(before: set[int]) -> Iterator[LocalHost]:
    model = ScriptedModel(["Hello, Ann.", call("bump"), "Counted."])
    agent = LlmAgent(name="greeter", model=model, tools=[bump])
    with LocalHost({"app": agent}) as made:
        yield made


def test_a_turn_streams_the_agents_events_and_the_session_keeps_them(host: LocalHost, before: set[int]) -> None:
    runner = Runner(host, "app", timeout=30.0, call_timeout=5.0)
    runner.create_session("ann", "s1", state={"mood": "fine"})

    events = list(runner.run("ann", "s1", "hi"))

    assert [(e.author, text_of(e)) for e in events] == [("user", "hi"), ("greeter", "Hello, Ann.")]
    stored = runner.get_session("ann", "s1")
    assert [e.id for e in stored.events] == [e.id for e in events]
    assert stored.state == {"mood": "fine"}
    assert runner.last_run("ann", "s1").status == "done"  # type: ignore[union-attr]
    assert children() == before  # nothing was started


def test_a_tool_turn_commits_the_call_its_result_and_the_state_it_changed(host: LocalHost,
                                                                          before: set[int]) -> None:
    runner = Runner(host, "app", timeout=30.0, call_timeout=5.0)
    runner.create_session("ann", "s1")
    list(runner.run("ann", "s1", "hi"))

    events = list(runner.run("ann", "s1", "count"))

    calls = [c.name for e in events for c in e.get_function_calls()]
    results = [r.response for e in events for r in e.get_function_responses()]
    assert calls == ["bump"] and results == [{"count": 1}]
    assert text_of(events[-1]) == "Counted."
    assert runner.get_state("ann", "s1") == {"count": 1}
    assert len(runner.get_session("ann", "s1").events) == 2 + len(events)
    assert children() == before


def test_bad_input_and_an_unknown_session_are_typed_errors(host: LocalHost, before: set[int]) -> None:
    runner = Runner(host, "app", timeout=30.0, call_timeout=5.0)
    runner.create_session("ann", "s1")

    with pytest.raises(InvalidRequestError):
        list(runner.run("ann/x", "s1", "hi"))  # a name the input rules refuse (the Runner's own check)
    with pytest.raises(InvalidRequestError, match="non-empty"):
        list(runner.run("ann", "s1", Content(role="user", parts=[])))  # refused by the session
    with pytest.raises(SessionNotFoundError):
        list(runner.run("ann", "nobody", "hi"))
    with pytest.raises(SessionNotFoundError):
        runner.get_session("ann", "nobody")

    assert runner.get_session("ann", "s1").events == []  # the refusals recorded nothing
    assert children() == before


def test_an_async_turn_ends_once_and_the_session_may_be_created_for_it(host: LocalHost) -> None:
    runner = Runner(host, "app", timeout=30.0, call_timeout=5.0, auto_create_session=True)

    async def turn() -> list[Any]:
        return [e async for e in runner.run_async("bob", "new", "hi")]

    events = asyncio.run(asyncio.wait_for(turn(), 30.0))

    assert [e.author for e in events] == ["user", "greeter"]
    assert runner.last_run("bob", "new").status == "done"  # type: ignore[union-attr]


async def wait_here() -> str:
    """Wait longer than any test."""
    await asyncio.sleep(60)
    return "waited"


def test_a_cancelled_turn_ends_once_cancelled_and_the_session_serves_the_next(before: set[int]) -> None:
    model = ScriptedModel([call("wait_here"), "Next."])
    agent = LlmAgent(name="waiter", model=model, tools=[wait_here])
    with LocalHost({"app": agent}, run_stop_grace=0.1) as host:  # the tool is not stopped: a grace later, ended
        runner = Runner(host, "app", timeout=30.0, call_timeout=5.0)
        runner.create_session("ann", "s1")
        stream = runner.run("ann", "s1", "wait", run_id="run-wait")
        # Cancelled once its tool runs (the model's call seen): cancelled before its model
        # step (the user's message alone seen, at load), the call would be left in the
        # script for the next turn, which would then wait in the tool.
        seen = [next(stream)]
        while not (seen[-1].content is not None and seen[-1].content.function_calls):
            seen.append(next(stream))
        runner.cancel("run-wait")
        with pytest.raises(RunFailedError) as failed:
            seen.extend(stream)

        assert failed.value.reason == "cancelled"
        assert [e.author for e in runner.run("ann", "s1", "again")][-1] == "waiter"
        assert runner.last_run("ann", "s1").status == "done"  # type: ignore[union-attr]
    assert children() == before
