"""A turn that answers a confirmation puts the answer, then the approved call's result,
on record before the next step (``ctx.committed``: on a host, one round trip to the
session's partition, which stores every event the run handed over so far).

Without it a host's run worker killed after the approved call ran, while the model was
being asked, could take the call's result (or the answer itself) with it: the run's
resume then found the approval unanswered and ran the call again (seen once in CI:
tests/test_adk52_confirmation_http.py's killed answering turn wrote its side effect
twice). These tests run both turns in process with a ``committed`` that records what
was yielded each time it was awaited, and a tool and a model that note what was on
record when they ran.
"""

from __future__ import annotations

import asyncio
from typing import Any

from adk_actors import Content
from adk_actors.agents import Agent
from adk_actors.engine import SessionView, run_invocation
from adk_actors.models import ScriptedModel, call
from adk_actors.tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME as CONFIRM
from adk_actors.tools.tool_context import ToolContext
from adk_actors.types import FunctionResponse, Part


class Record:
    """The events yielded so far, and the ones each ``committed`` put on record."""

    def __init__(self) -> None:
        self.yielded: list[Any] = []
        self.on_record: list[Any] = []

    async def committed(self) -> None:
        self.on_record = list(self.yielded)

    def answers_on_record(self) -> bool:
        return any(e.author == "user" and e.get_function_responses() for e in self.on_record)

    def result_on_record(self, name: str, result: dict[str, Any]) -> bool:
        return any(e.author != "user" and any(r.name == name and r.response == result
                                              for r in e.get_function_responses()) for e in self.on_record)


def _turn(agent: Agent, session: SessionView, message: Content, record: Record) -> list[Any]:
    async def go() -> list[Any]:
        events = []
        async for event in run_invocation(agent, session, message, committed=record.committed):
            events.append(event)
            record.yielded.append(event)
        return events

    return asyncio.run(asyncio.wait_for(go(), timeout=30))


def test_the_answer_and_the_approved_calls_result_are_on_record_before_the_next_step() -> None:
    record = Record()
    seen: dict[str, bool] = {}

    def transfer(amount: int, tool_context: ToolContext) -> dict[str, Any]:
        """Moves money."""
        if tool_context.tool_confirmation is None:
            tool_context.request_confirmation(hint="Approve?")
            return {"status": "waiting"}
        seen["answer on record when the call ran"] = record.answers_on_record()
        return {"status": "done"}

    def after_the_call(_: Any) -> str:
        seen["result on record when the model was asked"] = record.result_on_record("transfer", {"status": "done"})
        return "Sent."

    model = ScriptedModel([call("transfer", amount=5), "Waiting.", after_the_call])
    agent = Agent(name="bank", model=model, instruction="Move money.", tools=[transfer])
    session = SessionView()
    first = _turn(agent, session, Content.user("send money"), record)
    asked = next(c for e in first for c in e.get_function_calls() if c.name == CONFIRM)
    answer = Content(role="user", parts=(Part(function_response=FunctionResponse(
        id=asked.id, name=CONFIRM, response={"confirmed": True})),))
    second = _turn(agent, session, answer, record)
    assert [p.text for p in second[-1].content.parts] == ["Sent."]
    assert seen == {"answer on record when the call ran": True, "result on record when the model was asked": True}
