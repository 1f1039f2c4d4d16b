"""Issue 33: adk-fluent's ``dispatch`` and ``join`` (background tasks of a pipeline)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk_actors.fluent import Agent, DispatchDirective, M, StructuredLogMiddleware, dispatch, join
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host


def answer(text: str) -> ScriptedModel:
    return ScriptedModel(fallback=lambda request: text)


async def _events(builder: Any, prompt: str) -> list[Any]:
    return [event async for event in builder.events(prompt)]


def run(builder: Any, prompt: str = "go") -> list[Any]:
    return asyncio.run(_events(builder, prompt))


def test_dispatched_agents_run_beside_the_pipeline_and_join_brings_their_work_in() -> None:
    completed: list[tuple[str, str]] = []
    seen: list[list[str]] = []
    log = M.dispatch_log()
    pipeline = (
        Agent("writer", answer("draft")).writes("draft")
        >> dispatch(Agent("emailer", answer("mail sent")), Agent("auditor", answer("audited")),
                    on_complete=lambda name, text: completed.append((name, text)), stream_to="progress")
        >> Agent("formatter", ScriptedModel(fallback=lambda r: seen.append([c.text for c in r.contents]) or "formatted"))
        >> join()
        >> Agent("final", ScriptedModel(fallback=lambda r: seen.append([c.text for c in r.contents]) or "done"))
    ).middleware(log)
    events = run(pipeline)
    authors = [e.author for e in events]
    assert authors[2:] == ["formatter", "emailer", "auditor", authors[5], "final"]
    assert authors[0] == "writer" and authors[1].startswith("dispatch_") and authors[5].startswith("join_")
    # the formatter ran before the dispatched answers joined; the final agent sees them
    assert not any("mail sent" in text for text in seen[0])
    assert any("mail sent" in text for text in seen[1]) and any("audited" in text for text in seen[1])
    delta = events[5].actions.state_delta
    assert delta["_dispatch_results"] == {"emailer": "mail sent", "auditor": "audited"}
    assert {name: s["status"] for name, s in delta["_dispatch_status"].items()} == \
        {"emailer": "completed", "auditor": "completed"}
    assert delta["progress"] in ("mail sent", "audited")
    assert sorted(completed) == [("auditor", "audited"), ("emailer", "mail sent")]
    assert [e["event"] for e in only(log).log] == ["dispatch", "dispatch", "task_complete", "task_complete", "join"]


def only(composite: Any) -> Any:
    (middleware,) = composite.to_stack()
    return middleware


def test_tasks_never_joined_are_joined_when_the_pipeline_ends() -> None:
    events = run(Agent("a", answer("A")) >> dispatch(Agent("bg", answer("background"))) >> Agent("c", answer("C")))
    assert [e.author for e in events][-3:] == ["c", "bg", events[-1].author]  # the last: the dispatch's join
    assert events[-1].actions.state_delta["_dispatch_results"] == {"bg": "background"}


def slow_sender(ended: list[str]) -> Any:
    """A tool that takes 30 s to send, and notes in ``ended`` that it was cancelled."""
    async def slow_send(to: str) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        return "sent"

    return slow_send


def test_join_waits_at_most_its_timeout_and_cancels_the_late_task() -> None:
    ended: list[str] = []
    slow_send = slow_sender(ended)

    slow = Agent("slow", ScriptedModel([call("slow_send", to="ann"), "never"])).tool(slow_send)
    events = run(dispatch(slow, Agent("quick", answer("quick done"))) >> join(timeout=1.0) >> Agent("after", answer("ok")))
    join_event = next(e for e in events if e.author.startswith("join_"))
    status = join_event.actions.state_delta["_dispatch_status"]
    assert status["slow"]["status"] == "timed_out" and status["quick"]["status"] == "completed"
    assert ended == ["cancelled"]
    assert events[-1].author == "after"
    assert "quick done" in [e.content.text for e in events if e.content is not None]


def test_a_failed_task_is_reported_and_the_pipeline_goes_on() -> None:
    errors: list[tuple[str, str]] = []
    log = M.dispatch_log()
    broken = Agent("broken", ScriptedModel([RuntimeError("smtp down")]))
    events = run((dispatch(broken, on_error=lambda name, error: errors.append((name, str(error))))
                  >> join() >> Agent("after", answer("ok"))).middleware(log))
    status = next(e for e in events if e.author.startswith("join_")).actions.state_delta["_dispatch_status"]
    assert status["broken"]["status"] == "error" and "smtp down" in status["broken"]["error"]
    assert errors and errors[0][0] == "broken" and "smtp down" in errors[0][1]
    assert [e["event"] for e in only(log).log] == ["dispatch", "task_error", "join"]
    assert events[-1].content.text == "ok"


def test_a_directive_skips_a_task_or_sets_state_for_it() -> None:
    heard: list[str] = []

    class Gatekeeper:
        def on_dispatch(self, ctx: Any, task_name: str, agent_name: str) -> DispatchDirective:
            if task_name == "skipped":
                return DispatchDirective(cancel=True)
            return DispatchDirective(inject_state={"recipient": "ann@example.com"})

    mailer = Agent("mailer", ScriptedModel(fallback=lambda r: heard.append(r.system_instruction) or "ok")) \
        .instruct("Mail {recipient}.")
    skipped = Agent("skipped", answer("never"))
    events = run((dispatch(mailer, skipped) >> join()).unchecked().middleware(Gatekeeper()))
    assert heard == ["Mail ann@example.com."] or heard[0].startswith("Mail ann@example.com.")
    assert "skipped" not in events[-1].actions.state_delta["_dispatch_status"]


def test_when_dispatched_runs_a_middleware_only_in_dispatched_tasks() -> None:
    log = StructuredLogMiddleware()
    run((Agent("main", answer("m")) >> dispatch(Agent("bg", answer("b"))) >> join()).middleware(
        M.when("dispatched", log)))
    assert {e["agent_name"] for e in log.log} == {"bg"}


def test_a_run_that_fails_cancels_the_tasks_still_running() -> None:
    ended: list[str] = []
    slow_send = slow_sender(ended)

    started = asyncio.Event()

    async def send_started(to: str) -> str:
        started.set()
        return await slow_send(to)

    async def once_sending(callback_context: Any, llm_request: Any) -> None:
        await started.wait()

    slow = Agent("slow", ScriptedModel([call("send_started", to="ann")])).tool(send_started)
    pipeline = dispatch(slow) >> Agent("breaks", ScriptedModel([RuntimeError("boom")])).before_model(once_sending)

    async def go() -> None:
        with pytest.raises(Exception, match="boom"):
            await _events(pipeline, "go")
        await asyncio.sleep(0)  # the cancelled task's handler runs
        assert ended == ["cancelled"]  # here, before asyncio.run would cancel what is left

    asyncio.run(go())


def test_a_host_keeps_what_a_dispatched_task_did(host: Host) -> None:
    runner = host.runner("fluent_dispatch")
    runner.create_session("ann", "s1")
    events = list(runner.run("ann", "s1", "go"))
    assert [e.author for e in events][:4] == ["user", "writer", events[2].author, "formatter"]  # the Runner's: user first
    assert "emailer" in [e.author for e in events]
    state = runner.get_state("ann", "s1")
    assert state["mail"] == "mail sent" and state["_dispatch_results"] == {"emailer": "mail sent"}
    assert state["_dispatch_status"]["emailer"]["status"] == "completed"
    stored = runner.get_session("ann", "s1")
    assert "emailer" in [e.author for e in stored.events]
