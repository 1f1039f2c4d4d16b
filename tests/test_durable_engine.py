"""Durable runs in the engine: an invocation cut after any of its committed events and
resumed ends as the uninterrupted one did, asks the model only for the steps not
committed, and runs a side-effecting tool exactly once."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, ClassVar

import durable_agents
import pytest
from durable_agents import tree
from engine_helpers import summary
from pydantic import BaseModel

from adk_actors import Content, Event, LlmAgent, SequentialAgent
from adk_actors.engine import (
    CallDecision,
    EndedByDecision,
    LoggingPlugin,
    NeedsDecision,
    NothingToResume,
    SessionView,
    resume_invocation,
    run_invocation,
)
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import FunctionTool


def _run(agent: Any, session: SessionView, text: str = "go") -> list[Event]:
    async def go() -> list[Event]:
        return [e async for e in run_invocation(agent, session, Content.user(text), invocation_id="e-1")]
    return asyncio.run(go())


def _resume(agent: Any, session: SessionView, decisions: dict[str, CallDecision] | None = None,
            invocation_id: str = "e-1") -> list[Event]:
    async def go() -> list[Event]:
        return [e async for e in resume_invocation(agent, session, invocation_id=invocation_id,
                                                   decisions=decisions)]
    return asyncio.run(go())


def _cut(events: list[Event], k: int) -> SessionView:
    """A session holding the user's event and the first ``k`` events after it."""
    session = SessionView()
    for event in events[:k + 1]:
        session.commit(event)
    return session


def _by_branch(events: list[Event]) -> dict[tuple[str, str | None], list[tuple[str, str]]]:
    """Each (author, branch)'s events in order (parallel branches interleave freely)."""
    out: dict[tuple[str, str | None], list[tuple[str, str]]] = {}
    for event in events:
        out.setdefault((event.author, event.branch), []).extend(summary([event]))
    return out


def _calls_made(events: list[Event]) -> Counter[str]:
    """What the uninterrupted run's tools did before a cut after ``events``: every call
    whose model event is committed counts as executed (the worst case: killed after the
    tool ran, before its result was committed)."""
    made: Counter[str] = Counter()
    for event in events:
        if event.content is not None:
            for c in event.content.function_calls:
                made[f"{c.name}:{c.args['step']}"] += 1
    return made


def test_a_run_cut_after_any_committed_event_resumes_to_the_same_end() -> None:
    durable_agents.COUNTS.clear()
    full_session = SessionView()
    full = [e for e in _run(tree(), full_session) if not e.partial]
    expected_counts = Counter(durable_agents.COUNTS)
    assert expected_counts == Counter({"send:first": 1, "note:left": 1, "send:right": 1, "note:looped": 2})
    responses = {p.function_response.id: p.function_response.response
                 for e in full if e.content is not None for p in e.content.parts if p.function_response is not None}
    assert len(full) == 17  # the user's; first, left, right: call, result, text; looped twice; last
    for k in range(len(full)):
        durable_agents.COUNTS.clear()
        durable_agents.COUNTS.update(_calls_made(full[1:k + 1]))
        session = _cut(full, k)
        asked = 0
        try:
            new = _resume(tree(), session)
        except NeedsDecision as pending:
            # only send (not idempotent) is ever asked about, and only when its result is missing
            assert [c.name for c in pending.calls] == ["send"], k
            asked = 1
            decisions = {c.call_id: CallDecision("result", responses[c.call_id]) for c in pending.calls}
            new = _resume(tree(), session, decisions)
        assert asked == (1 if _pending_send(full[1:k + 1]) else 0), k
        assert _by_branch(session.events) == _by_branch(full), k
        assert session.state == full_session.state, k
        assert all(e.invocation_id == "e-1" for e in new)
        sends = {key: n for key, n in durable_agents.COUNTS.items() if key.startswith("send:")}
        assert sends == {"send:first": 1, "send:right": 1}, (k, sends)  # each sent exactly once


def _pending_send(events: list[Event]) -> bool:
    answered = {p.function_response.id for e in events if e.content is not None for p in e.content.parts
                if p.function_response is not None}
    return any(c.name == "send" and c.id not in answered
               for e in events if e.content is not None for c in e.content.function_calls)


def test_a_resumed_run_asks_the_model_only_for_steps_not_committed() -> None:
    model = ScriptedModel([call("note", step="one"), "one done", call("note", step="two"), "two done"])
    agent = SequentialAgent(name="root", sub_agents=[
        LlmAgent(name="one", model=model, tools=[durable_agents.note]),
        LlmAgent(name="two", model=model, tools=[durable_agents.note])])
    full = [e for e in _run(agent, SessionView())]
    assert len(model.requests) == 4
    session = _cut(full, 3)  # one: call, result, "one done"
    model.add(call("note", step="two"), "two done")
    _resume(agent, session)
    assert len(model.requests) == 6  # two more: agent two's steps, none of agent one's
    assert _by_branch(session.events) == _by_branch(full)


def test_a_resumed_run_retries_the_model_call_that_failed_last() -> None:
    model = ScriptedModel([RuntimeError("provider down")])
    agent = LlmAgent(name="solo", model=model)
    session = SessionView()
    events = []

    async def go() -> None:
        async for event in run_invocation(agent, session, Content.user("hi"), invocation_id="e-1"):
            events.append(event)
    with pytest.raises(Exception, match="provider down"):
        asyncio.run(go())
    assert session.events[-1].error_code
    model.add("recovered")
    new = _resume(agent, session)
    assert [e.content.text for e in new if e.content is not None] == ["recovered"]


def test_decisions_rerun_or_end_a_pending_call() -> None:
    durable_agents.COUNTS.clear()
    model = ScriptedModel([call("send", step="x"), "sent"])
    agent = LlmAgent(name="mailer", model=model, tools=[durable_agents.send])
    full = _run(agent, SessionView())
    session = _cut(full, 1)  # the call is committed, its result is not
    with pytest.raises(NeedsDecision) as pending:
        _resume(agent, session)
    call_id = pending.value.calls[0].call_id
    assert pending.value.calls[0].args == {"step": "x"} and '"pending_calls"' in pending.value.detail()
    with pytest.raises(EndedByDecision):
        _resume(agent, _cut(full, 1), {call_id: CallDecision("end")})
    model.add("sent again")
    new = _resume(agent, session, {call_id: CallDecision("rerun")})
    assert durable_agents.COUNTS["send:x"] == 2  # the human chose to send it again
    assert summary(new) == [("mailer", "result:send={'sent': 'x'}"), ("mailer", "sent again")]


def test_an_idempotent_function_tool_reruns_without_a_decision() -> None:
    durable_agents.COUNTS.clear()
    model = ScriptedModel([call("send", step="y"), "done"])
    agent = LlmAgent(name="mailer", model=model, tools=[FunctionTool(durable_agents.send, idempotent=True)])
    full = _run(agent, SessionView())
    model.add("done")
    new = _resume(agent, _cut(full, 1))
    assert summary(new) == [("mailer", "result:send={'sent': 'y'}"), ("mailer", "done")]


def test_a_finished_invocation_resumes_to_nothing_and_an_unknown_one_is_refused() -> None:
    model = ScriptedModel(["hello"])
    agent = LlmAgent(name="solo", model=model)
    session = SessionView()
    _run(agent, session)
    assert _resume(agent, session) == []
    assert len(model.requests) == 1
    with pytest.raises(NothingToResume):
        _resume(agent, session, invocation_id="e-unknown")
    with pytest.raises(ValueError):
        CallDecision("maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CallDecision("result")


class _Recording(LoggingPlugin):
    """The LoggingPlugin, keeping its state as each run ended."""

    ended: ClassVar[list[dict[str, int]]] = []

    def after_run(self, state: dict[str, int], ctx: Any, error: BaseException | None) -> Any:
        self.ended.append(dict(state))
        return state


@pytest.mark.parametrize("cut", [4, 9, 13])
def test_a_plugins_state_after_a_resumed_run_is_the_uninterrupted_runs(cut: int) -> None:
    _Recording.ended = []

    async def full() -> list[Event]:
        return [e async for e in run_invocation(tree(), SessionView(), Content.user("go"), invocation_id="e-1",
                                                plugins=[_Recording()])]
    events = asyncio.run(full())
    session = _cut(events, cut)

    async def resumed() -> None:
        async for _ in resume_invocation(tree(), session, invocation_id="e-1", plugins=[_Recording()],
                                         decisions={c.id: CallDecision("rerun") for e in events if e.content
                                                    for c in e.content.function_calls}):
            pass
    asyncio.run(resumed())
    assert _Recording.ended[1] == _Recording.ended[0] == {"events": 16, "model_calls": 11, "tool_calls": 5}


def test_a_run_killed_before_its_user_event_was_committed_begins_again_from_its_kept_message() -> None:
    model = ScriptedModel(["hello again"])
    agent = LlmAgent(name="solo", model=model)
    session = SessionView()

    async def go() -> list[Event]:
        return [e async for e in resume_invocation(agent, session, invocation_id="e-7",
                                                   message=Content.user("hi"), state_delta={"lang": "en"})]
    new = asyncio.run(go())
    assert summary(new) == [("user", "hi"), ("solo", "hello again")]
    assert all(e.invocation_id == "e-7" for e in new) and session.state == {"lang": "en"}


class _Forecast(BaseModel):
    city: str
    temp: int


def test_a_structured_answer_resumes_from_any_cut_to_the_same_end_without_asking_the_model_again() -> None:
    """An agent with an output_schema and a tool answers through set_model_response:
    its call, its response, then the answer's own event (as google-adk gives them).
    Cut after any committed event and resumed, the run ends with the same events and
    state, and the model is asked only for the steps not committed: cut between
    set_model_response's response and the answer's event, the answer is made from the
    committed response; cut before that response, the call runs again (it changes
    nothing else)."""
    script: list[Any] = [call("note", step="one"), call("set_model_response", city="Rome", temp=30)]

    def agent(model: ScriptedModel) -> LlmAgent:
        return LlmAgent(name="reporter", model=model, tools=[durable_agents.note], output_schema=_Forecast,
                        output_key="forecast")

    full_session = SessionView()
    full = _run(agent(ScriptedModel(list(script))), full_session)
    assert summary(full[1:]) == [("reporter", "call:note"), ("reporter", "result:note={'noted': 'one'}"),
                                 ("reporter", "call:set_model_response"),
                                 ("reporter", "result:set_model_response={'city': 'Rome', 'temp': 30}"),
                                 ("reporter", '{"city": "Rome", "temp": 30}')]
    assert full_session.state["forecast"] == {"city": "Rome", "temp": 30}
    for k in range(1, len(full)):
        asked = sum(1 for e in full[1:k + 1] if e.content is not None and e.content.function_calls)
        model = ScriptedModel(script[asked:])
        session = _cut(full, k)
        _resume(agent(model), session)
        assert len(model.requests) == len(script) - asked, k
        assert summary(session.events) == summary(full), k
        assert session.state == full_session.state, k
