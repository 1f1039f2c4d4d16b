"""google-adk's custom agents run here with only their imports rewritten (issue 52,
custom agents).

Each case is a small google-adk program in the shapes of google-adk's custom-agent
docs: a ``BaseAgent`` subclass that overrides ``_run_async_impl(ctx)``, declares its
sub-agents as pydantic fields (``model_config = {"arbitrary_types_allowed": True}``)
and passes them to ``super().__init__(sub_agents=[...])``, runs them with ``async for
event in self.child.run_async(ctx): yield event``, reads and writes
``ctx.session.state`` and yields events of its own (``Event(author=self.name, ...)``).
Each runs twice, as tests/test_google_adk_parity.py runs its programs (the shared
harness, tests/google_adk_harness.py): as written on google-adk 2.13, and with its
imports rewritten on ours, against one Gemini REST stand-in named by environment
variables only. Compared: the events the runner yielded (author, final verdict,
calls, responses, text, ...), the final texts, the session's final state, every
request the model received and, where a program records them (``LOG``), the hooks
its callbacks and plugins saw.

Then, ours only: a custom agent's events go through the engine's commit path and
its hooks (a before-agent callback that answers ends it, ``end_invocation`` skips its
after-agent hooks, an error in it reaches the caller), ``run_live`` /
``_run_live_impl``, and a custom agent named by import path served by a ``Host``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import assert_alike, calls

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

# One runner loop for every program: ``main(turns)`` -> (events, final texts, state).
RUN = '''
async def main(turns):
    runner = InMemoryRunner(agent=ROOT, app_name="custom", **RUNNER_ARGS)
    session = await runner.session_service.create_session(app_name="custom", user_id="ann", state=dict(START))
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append((event.author, "".join(p.text or "" for p in event.content.parts)))
    stored = await runner.session_service.get_session(app_name="custom", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, {"state": dict(stored.state), "log": LOG}
'''

HEAD = '''
from typing import AsyncGenerator
from typing_extensions import override

from google.adk.agents import BaseAgent, LlmAgent, LoopAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event, EventActions
from google.adk.runners import InMemoryRunner
from google.adk.tools import ToolContext
from google.genai import types

LOG = []
RUNNER_ARGS = {}
START = {}
'''

STORY_FLOW = HEAD + '''
START = {"topic": "a lighthouse"}

class StoryFlowAgent(BaseAgent):
    """Writes a story, has it judged, and rewrites it only when the critic asks."""

    writer: LlmAgent
    critic: LlmAgent
    reviser: LlmAgent

    model_config = {"arbitrary_types_allowed": True}

    def __init__(self, name: str, writer: LlmAgent, critic: LlmAgent, reviser: LlmAgent):
        super().__init__(name=name, writer=writer, critic=critic, reviser=reviser,
                         sub_agents=[writer, critic, reviser])

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        LOG.append(("start", ctx.agent.name, ctx.user_content.parts[0].text, isinstance(ctx, InvocationContext)))
        async for event in self.writer.run_async(ctx):
            yield event
        if not ctx.session.state.get("story"):
            return
        async for event in self.critic.run_async(ctx):
            yield event
        if ctx.session.state.get("verdict", "").strip().lower().startswith("rewrite"):
            async for event in self.reviser.run_async(ctx):
                yield event
        LOG.append(("end", ctx.session.state["verdict"]))

writer = LlmAgent(name="writer", model="gemini-2.5-flash",
                  instruction="Write a two-sentence story about {topic}.", output_key="story")
critic = LlmAgent(name="critic", model="gemini-2.5-flash",
                  instruction="Judge this story: {story}. Answer 'ok' or 'rewrite: <why>'.", output_key="verdict")
reviser = LlmAgent(name="reviser", model="gemini-2.5-flash",
                   instruction="Rewrite the story {story} given {verdict}.", output_key="story")
ROOT = StoryFlowAgent(name="story_flow", writer=writer, critic=critic, reviser=reviser)
''' + RUN

LOOP_UNTIL_STATE = HEAD + '''
def mark_done(tool_context: ToolContext) -> dict:
    """Marks the draft as finished."""
    tool_context.state["status"] = "done"
    return {"status": "done"}

class RefineUntilDone(BaseAgent):
    """Runs its drafter until the state says done (or max_rounds), then reports."""

    drafter: LlmAgent
    max_rounds: int = 3

    model_config = {"arbitrary_types_allowed": True}

    def __init__(self, name: str, drafter: LlmAgent, max_rounds: int = 3):
        super().__init__(name=name, drafter=drafter, max_rounds=max_rounds, sub_agents=[drafter])

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        rounds = 0
        while rounds < self.max_rounds and ctx.session.state.get("status") != "done":
            rounds += 1
            yield Event(author=self.name, invocation_id=ctx.invocation_id,
                        content=types.Content(role="model", parts=[types.Part(text=f"Round {rounds}: improve it.")]))
            async for event in self.drafter.run_async(ctx):
                yield event
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=[types.Part(
                        text=f"Finished after {rounds} rounds: {ctx.session.state.get('draft')}")]))

drafter = LlmAgent(name="drafter", model="gemini-2.5-flash", output_key="draft", tools=[mark_done],
                   instruction="Improve the draft ({status?}). Call mark_done when it is good.")
ROOT = RefineUntilDone(name="refiner", drafter=drafter)
''' + RUN

OWN_STATE_EVENT = HEAD + '''
class VisitCounter(BaseAgent):
    """Counts visits in state through its own event, then lets the greeter speak."""

    greeter: LlmAgent

    model_config = {"arbitrary_types_allowed": True}

    def __init__(self, name: str, greeter: LlmAgent):
        super().__init__(name=name, greeter=greeter, sub_agents=[greeter])

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        visits = ctx.session.state.get("visits", 0) + 1
        yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                    content=types.Content(role="model", parts=[types.Part(text=f"Visit number {visits}.")]),
                    actions=EventActions(state_delta={"visits": visits, "user:last_app": ctx.app_name,
                                                      "temp:scratch": "gone"}))
        LOG.append(("after own event", ctx.session.state["visits"], ctx.user_id))
        async for event in self.greeter.run_async(ctx):
            yield event

greeter = LlmAgent(name="greeter", model="gemini-2.5-flash",
                   instruction="Greet the user; this is visit {visits}.")
ROOT = VisitCounter(name="visit_counter", greeter=greeter)
''' + RUN

ESCALATE = HEAD + '''
def set_status(status: str, tool_context: ToolContext) -> dict:
    """Records how far the work is."""
    tool_context.state["status"] = status
    return {"status": status}

class StopChecker(BaseAgent):
    """Escalates (ends the loop) once the work is completed."""

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        done = ctx.session.state.get("status") == "completed"
        LOG.append(("checked", ctx.session.state.get("status")))
        if not done:  # a word for the worker's next step
            yield Event(author=self.name, content=types.Content(role="model", parts=[types.Part(
                text=f"Status {ctx.session.state.get('status')}: go on.")]))
        yield Event(author=self.name, actions=EventActions(escalate=done))

worker = LlmAgent(name="worker", model="gemini-2.5-flash", tools=[set_status],
                  instruction="Do one step of the work and record its status.")
ROOT = LoopAgent(name="work_loop", sub_agents=[worker, StopChecker(name="stop_checker")], max_iterations=5)
''' + RUN

TRANSFER_TO_CUSTOM = HEAD + '''
class OrderStatus(BaseAgent):
    """Answers from state alone, no model: the status of the user's order."""

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        order = ctx.session.state.get("order", "none")
        asked = ctx.session.state.get("asked", 0) + 1
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=[types.Part(text=f"Order {order} has shipped.")]),
                    actions=EventActions(state_delta={"asked": asked}))

START = {"order": "A-17"}
ROOT = LlmAgent(name="front_desk", model="gemini-2.5-flash",
                instruction="Help the user; send order questions to order_status.",
                sub_agents=[OrderStatus(name="order_status", description="Tells the status of the user's order.")])
''' + RUN

HOOKS = HEAD + '''
from google.adk.plugins.base_plugin import BasePlugin

class Watcher(BasePlugin):
    def __init__(self):
        super().__init__(name="watcher")

    async def before_agent_callback(self, *, agent, callback_context):
        LOG.append(("plugin before_agent", agent.name))

    async def after_agent_callback(self, *, agent, callback_context):
        LOG.append(("plugin after_agent", agent.name))

    async def on_event_callback(self, *, invocation_context, event):
        LOG.append(("plugin on_event", event.author,
                    "".join(p.text or "" for p in event.content.parts) if event.content else ""))

    async def before_model_callback(self, *, callback_context, llm_request):
        LOG.append(("plugin before_model", callback_context.agent_name))

class Relay(BaseAgent):
    """Says what it will do, then has its helper answer."""

    helper: LlmAgent

    model_config = {"arbitrary_types_allowed": True}

    def __init__(self, name: str, helper: LlmAgent, **kwargs):
        super().__init__(name=name, helper=helper, sub_agents=[helper], **kwargs)

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=[types.Part(text="Asking my helper.")]))
        async for event in self.helper.run_async(ctx):
            yield event

def remember_start(callback_context):
    callback_context.state["relay_started"] = True

helper = LlmAgent(name="helper", model="gemini-2.5-flash", instruction="Answer briefly.")
ROOT = Relay(name="relay", helper=helper, before_agent_callback=remember_start)
RUNNER_ARGS = {"plugins": [Watcher()]}
''' + RUN

GATE = HEAD + '''
from google.adk.agents import SequentialAgent

def refuse_when_closed(callback_context):
    if callback_context.state.get("closed"):
        return types.Content(role="model", parts=[types.Part(text="We are closed.")])

def log_after(callback_context):
    LOG.append(("after_agent", callback_context.agent_name))

class Desk(BaseAgent):
    """Repeats what it heard; "close" closes the desk and ends it at once."""

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        heard = ctx.user_content.parts[0].text
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=[types.Part(text=f"Desk heard: {heard}")]),
                    actions=EventActions(state_delta={"closed": heard == "close"}))
        if heard == "close":
            ctx.end_invocation = True

helper = LlmAgent(name="helper", model="gemini-2.5-flash", instruction="Help.", after_agent_callback=log_after)
ROOT = SequentialAgent(name="line", sub_agents=[
    Desk(name="desk", before_agent_callback=refuse_when_closed, after_agent_callback=log_after), helper])
''' + RUN

SUBCLASSED_LLM_AGENT = HEAD + '''
class PoliteAgent(LlmAgent):
    """An LlmAgent that signs off after the model's answer, once per turn."""

    @override
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async for event in super()._run_async_impl(ctx):
            yield event
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=[types.Part(text="Have a nice day.")]),
                    actions=EventActions(state_delta={"signed": ctx.session.state.get("signed", 0) + 1}))

ROOT = PoliteAgent(name="polite", model="gemini-2.5-flash", instruction="Answer briefly.")
''' + RUN

CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "a story flow: two agents in order, a third only when state asks": (STORY_FLOW, [
        gemini_response("The lamp went dark. The keeper waited."), gemini_response("rewrite: too short"),
        gemini_response("The lamp went dark one winter night. The keeper lit it by hand."),
        gemini_response("A ship saw the light. It came home."), gemini_response("ok"),
    ], ["Tell me a story.", "Another one."]),
    "a loop until state says done, then the agent's own answer": (LOOP_UNTIL_STATE, [
        gemini_response("Draft one."),
        calls(("mark_done", {})), gemini_response("Draft two, final."),
    ], ["Write me a slogan."]),
    "the agent's own event with a state_delta, read by its sub-agent": (OWN_STATE_EVENT, [
        gemini_response("Welcome!"), gemini_response("Welcome back!"),
    ], ["Hello", "Hello again"]),
    "an agent that escalates out of a LoopAgent": (ESCALATE, [
        calls(("set_status", {"status": "started"})), gemini_response("Step one done."),
        calls(("set_status", {"status": "completed"})), gemini_response("All done."),
    ], ["Do the work."]),
    "a custom agent as an LlmAgent's sub-agent, by transfer": (TRANSFER_TO_CUSTOM, [
        calls(("transfer_to_agent", {"agent_name": "order_status"})),
        gemini_response("Anything else I can do?"),
    ], ["Where is my order?", "Thanks."]),
    "a custom agent's events through callbacks and plugins": (HOOKS, [
        gemini_response("Forty-two."),
    ], ["What is the answer?"]),
    "a before-agent callback answers for a custom agent; end_invocation skips its after callback": (GATE, [
        gemini_response("How can I help?"), gemini_response("Goodbye."), gemini_response("Sorry."),
    ], ["hello", "close", "anyone?"]),
    "an LlmAgent subclass around super()._run_async_impl(ctx)": (SUBCLASSED_LLM_AGENT, [
        gemini_response("Four."), gemini_response("Five."),
    ], ["2 + 2?", "2 + 3?"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_google_adk_custom_agent_runs_here_with_its_imports_rewritten(name: str, gemini: StubServer) -> None:
    source, answers, turns = CASES[name]
    assert_alike(source, answers, turns, gemini)


# -- ours only: the engine's hooks, errors and live entry around a custom agent ------------

def _run_ours(root: Any, turns: list[str], plugins: list[Any] = ()) -> tuple[list[Any], dict[str, Any]]:
    from adk_actors import types
    from adk_actors.runners import InMemoryRunner

    async def main() -> tuple[list[Any], dict[str, Any]]:
        runner = InMemoryRunner(agent=root, app_name="ours", plugins=list(plugins))
        session = await runner.session_service.create_session(app_name="ours", user_id="u")
        events = []
        for text in turns:
            async for event in runner.run_async(user_id="u", session_id=session.id,
                                                new_message=types.Content(role="user", parts=[types.Part(text=text)])):
                events.append(event)
        stored = await runner.session_service.get_session(app_name="ours", user_id="u", session_id=session.id)
        await runner.close()
        return events, dict(stored.state)

    return asyncio.run(asyncio.wait_for(main(), timeout=60))


def test_a_custom_agents_events_are_committed_in_its_invocation_with_its_hooks_and_plugins() -> None:
    from adk_actors.agents import BaseAgent, LlmAgent
    from adk_actors.events import Event, EventActions
    from adk_actors.models import ScriptedModel
    from adk_actors.plugins.base_plugin import BasePlugin

    delivered: list[tuple[str, str, str]] = []

    class Delivered(BasePlugin):
        async def on_event_callback(self, *, invocation_context: Any, event: Any) -> None:
            delivered.append((event.author, event.invocation_id, event.content.parts[0].text if event.content else ""))

    class Tally(BaseAgent):
        helper: LlmAgent

        def __init__(self, name: str, helper: LlmAgent) -> None:
            super().__init__(name=name, helper=helper, sub_agents=[helper])

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            # an event that names no invocation: stored in this one
            yield Event(author=self.name, actions=EventActions(state_delta={"n": ctx.session.state.get("n", 0) + 1}))
            assert ctx.session.state["n"] >= 1  # committed before the agent resumed
            async for event in self.helper.run_async(ctx):
                yield event

    helper = LlmAgent(name="helper", model=ScriptedModel(fallback="hi"))
    events, state = _run_ours(Tally(name="tally", helper=helper), ["a", "b"], [Delivered(name="delivered")])
    assert state == {"n": 2}
    assert [(e.author, e.content.parts[0].text if e.content else "") for e in events] == [
        ("tally", ""), ("helper", "hi"), ("tally", ""), ("helper", "hi")]
    assert all(e.invocation_id for e in events)
    assert [d[0] for d in delivered] == ["tally", "helper", "tally", "helper"]
    assert [d[1] for d in delivered] == [e.invocation_id for e in events]
    assert events[0].invocation_id == events[1].invocation_id != events[2].invocation_id


def test_an_error_in_a_custom_agent_reaches_the_caller_and_a_missing_impl_is_named() -> None:
    from adk_actors.agents import BaseAgent

    class Broken(BaseAgent):
        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            raise ValueError("no stock left")
            yield  # pragma: no cover

    with pytest.raises(ValueError, match="no stock left"):
        _run_ours(Broken(name="broken"), ["a"])
    with pytest.raises(NotImplementedError, match=r"_run_async_impl for \w+ is not implemented"):
        _run_ours(BaseAgent(name="bare"), ["a"])


def test_run_live_runs_a_sub_agents_run_live_impl_between_its_hooks() -> None:
    from adk_actors import types
    from adk_actors.agents import BaseAgent
    from adk_actors.events import Event

    hooks: list[str] = []

    class Speaker(BaseAgent):
        async def _run_live_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            yield Event(author=self.name, content=types.Content(role="model", parts=[types.Part(text="live words")]))

    class Host_(BaseAgent):
        speaker: BaseAgent

        def __init__(self, name: str, speaker: BaseAgent) -> None:
            super().__init__(name=name, speaker=speaker, sub_agents=[speaker])

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            async for event in self.speaker.run_live(ctx):
                yield event

    speaker = Speaker(name="speaker", before_agent_callback=lambda callback_context: hooks.append("before"),
                      after_agent_callback=lambda callback_context: hooks.append("after"))
    events, _ = _run_ours(Host_(name="stage", speaker=speaker), ["go"])
    assert [(e.author, e.content.parts[0].text) for e in events] == [("speaker", "live words")]
    with pytest.raises(NotImplementedError, match="_run_live_impl for Host_"):
        _run_ours(Host_(name="stage", speaker=Host_(name="inner", speaker=Speaker(name="s2"))), ["go"])
    assert hooks == ["before", "after"]
    assert events[0].invocation_id


# -- a custom agent named by import path, served by a host ------------------------------

def test_a_custom_agent_named_by_path_runs_on_a_host_as_in_process(actor_system: Any, tmp_path: Path) -> None:
    """tests/custom_agent_defs.py's ``review_flow`` (a BaseAgent subclass with three
    LlmAgent fields): its own state event and its sub-agents' turns run in the host's
    run worker, are stored, and are the same events as in process."""
    import custom_agent_defs

    from adk_actors.runtime import Host, HostConfig

    in_process, state_in_process = _run_ours(custom_agent_defs.review_flow, ["rewrite it", "thanks"])
    with Host(HostConfig(apps=custom_agent_defs.APPS, data_dir=str(tmp_path / "data")), system=actor_system) as host:
        runner = host.runner("review")
        runner.create_session("ann", "s1")
        served = [event for text in ("rewrite it", "thanks") for event in runner.run("ann", "s1", text)
                  if event.author != "user"]
        stored = runner.get_session("ann", "s1")

    def rows(events: list[Any]) -> list[tuple[str, str, dict[str, Any]]]:
        return [(e.author, e.content.parts[0].text if e.content else "", dict(e.actions.state_delta)) for e in events]

    assert rows(served) == rows(in_process)
    assert [row[0] for row in rows(served)] == ["review_flow", "writer", "critic", "reviser",
                                                "review_flow", "writer", "critic"]
    assert stored.state == state_in_process == {"turns": 2, "draft": "A short draft.", "verdict": "ok"}
    assert rows([e for e in stored.events if e.author != "user"]) == rows(served)
