"""google-adk 2.13's names in ``agents`` and ``apps`` that issue 52 adds at google-adk's
paths, each run side by side with google-adk itself: the same program (imports
rewritten, see google_adk_harness) on both, against one Gemini stand-in where a model
is called, and what each side returns compared.

* ``agents.context.Context``: what a tool's ``tool_context`` and a callback's
  ``callback_context`` are instances of; state written through it lands the same, and
  it reads the invocation as google-adk's (``user_content``, ``branch``,
  ``run_config``, ``function_call_id``, ``get_invocation_context()``).
* ``agents.live_request_queue``: ``LiveRequestQueue``'s send methods put the same
  requests, in order, as google-adk's; ``closed``; ``get`` waits on an empty queue; and
  our engine's live invocation reads its inputs from one.
* ``agents.transcription_entry.TranscriptionEntry``,
  ``agents.active_streaming_tool.ActiveStreamingTool``, ``loop_agent.LoopAgentState``,
  ``sequential_agent.SequentialAgentState``: the same fields, defaults and refusals.
* ``agents.invocation_context``: ``new_invocation_context_id``'s form;
  ``LlmCallsLimitExceededError`` raised out of the run when ``max_llm_calls`` is
  reached, the events before it kept (the in-process Runner; a host ends the run with an error event).
* ``apps.app.validate_app_name``: the same names accepted and refused.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from google_adk_harness import calls, gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors import Content, LlmAgent
from adk_actors._types import Event
from adk_actors.agents.live_request_queue import LiveRequestQueue
from adk_actors.engine import SessionView, run_live_invocation
from adk_actors.models import ScriptedModel
from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"),
              pytest.mark.timeout(120)]


def both(source: str, server: StubServer, answers: list[Any] | None = None) -> tuple[Any, Any]:
    """What ``main()`` of ``source`` returns on google-adk, then here (imports rewritten),
    each side given the same script of model answers (all of which it must use)."""
    _, theirs = run_program(source, list(answers or []), server)
    assert len(server.responses) == 0, "google-adk must use the whole script"
    ours_source = rewritten(source)
    assert "google" not in ours_source
    _, ours = run_program(ours_source, list(answers or []), server)
    assert len(server.responses) == 0
    return theirs, ours


# -- Context -------------------------------------------------------------------------------

CONTEXT = '''
from google.adk.agents import Agent
from google.adk.agents.context import Context
from google.adk.runners import InMemoryRunner
from google.genai import types

seen = []


def remember(item: str, tool_context: Context) -> dict:
    """Remembers an item."""
    seen.append(("tool", isinstance(tool_context, Context), bool(tool_context.function_call_id),
                 tool_context.user_content.parts[0].text, tool_context.agent_name))
    tool_context.state["item"] = item
    return {"kept": item}


def count_visit(callback_context: Context):
    seen.append(("agent", isinstance(callback_context, Context), callback_context.function_call_id,
                 callback_context.user_content.parts[0].text, callback_context.branch,
                 callback_context.run_config.max_llm_calls,
                 callback_context.get_invocation_context().invocation_id == callback_context.invocation_id))
    callback_context.state["visits"] = callback_context.state.get("visits", 0) + 1


def look(callback_context: Context, llm_request):
    seen.append(("model", isinstance(callback_context, Context), callback_context.state.get("item")))


root_agent = Agent(name="keeper", model="gemini-2.5-flash", instruction="Keep items.", tools=[remember],
                   before_agent_callback=count_visit, before_model_callback=look)


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="keeper")
    session = await runner.session_service.create_session(app_name="keeper", user_id="ann")
    texts = []
    async for event in runner.run_async(user_id="ann", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text="a pen")])):
        texts += [part.text for part in (event.content.parts if event.content else []) if part.text]
    stored = await runner.session_service.get_session(app_name="keeper", user_id="ann", session_id=session.id)
    return seen, dict(stored.state), texts
'''


def test_tools_and_callbacks_get_a_context_as_google_adks_do(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(CONTEXT, gemini, [calls(("remember", {"item": "pen"})), gemini_response("Kept the pen.")])
    assert theirs == ([("agent", True, None, "a pen", None, 500, True), ("model", True, None),
                       ("tool", True, True, "a pen", "keeper"), ("model", True, "pen")],
                      {"visits": 1, "item": "pen"}, ["Kept the pen."])
    assert ours == theirs


ANY_NAME = '''
from typing import Optional

from google.adk.agents import Agent
from google.adk.agents.context import Context
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types


def keep(item: str, ctx: Context) -> dict:
    """Keeps an item."""
    ctx.state["kept"] = item
    return {"kept": item, "by": ctx.agent_name}


def tag(label: str, where: Optional[ToolContext] = None) -> dict:
    """Tags something."""
    where.state["tag"] = label
    return {"tag": label}


root_agent = Agent(name="keeper", model="gemini-2.5-flash", instruction="Keep.", tools=[keep, tag])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="keeper")
    session = await runner.session_service.create_session(app_name="keeper", user_id="ann")
    answers = []
    async for event in runner.run_async(user_id="ann", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text="a pen")])):
        answers += [p.function_response.response for p in (event.content.parts if event.content else [])
                    if p.function_response]
    stored = await runner.session_service.get_session(app_name="keeper", user_id="ann", session_id=session.id)
    return answers, stored.state
'''


def test_a_tools_context_is_found_by_its_annotation_under_any_name(gemini: StubServer) -> None:  # noqa: F811
    """google-adk passes the context to the parameter annotated ``Context`` (or
    ``ToolContext``, optional too), whatever its name, and does not declare it."""
    theirs, ours = both(ANY_NAME, gemini, [calls(("keep", {"item": "pen"}), ("tag", {"label": "red"})),
                                           gemini_response("Done.")])
    assert theirs == ([{"kept": "pen", "by": "keeper"}, {"tag": "red"}], {"kept": "pen", "tag": "red"})
    assert ours == theirs
    declared = {d["name"]: d for d in gemini.requests[0].body["tools"][0]["functionDeclarations"]}  # ours
    assert set(declared["keep"]["parameters_json_schema"]["properties"]) == {"item"}
    assert set(declared["tag"]["parameters_json_schema"]["properties"]) == {"label"}


BRANCHES = '''
from google.adk.agents import Agent, ParallelAgent, SequentialAgent
from google.adk.agents.context import Context
from google.adk.runners import InMemoryRunner
from google.genai import types

seen = []


def note(callback_context: Context):
    seen.append((callback_context.agent_name, callback_context.branch))


a = Agent(name="a", model="gemini-2.5-flash", instruction="A.", before_agent_callback=note)
b = Agent(name="b", model="gemini-2.5-flash", instruction="B.", before_agent_callback=note)
c = Agent(name="c", model="gemini-2.5-flash", instruction="C.", before_agent_callback=note)
root_agent = SequentialAgent(name="seq", before_agent_callback=note, sub_agents=[
    ParallelAgent(name="par", sub_agents=[a, b], before_agent_callback=note), c])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="branches")
    session = await runner.session_service.create_session(app_name="branches", user_id="ann")
    async for _ in runner.run_async(user_id="ann", session_id=session.id,
                                    new_message=types.Content(role="user", parts=[types.Part(text="go")])):
        pass
    return sorted(seen, key=str)
'''


def test_a_context_names_the_branch_an_agent_runs_on_as_google_adks(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(BRANCHES, gemini, [gemini_response("ok")] * 3)
    assert theirs == [("a", "par.a"), ("b", "par.b"), ("c", None), ("par", None), ("seq", None)]
    assert ours == theirs


# -- LiveRequestQueue ----------------------------------------------------------------------

QUEUE = '''
import asyncio
from google.adk.agents.live_request_queue import LiveRequest, LiveRequestQueue
from google.genai import types


async def main():
    queue = LiveRequestQueue()
    empty_waits = False
    try:
        await asyncio.wait_for(queue.get(), 0.05)
    except (asyncio.TimeoutError, TimeoutError):
        empty_waits = True
    queue.send_content(types.Content(role="user", parts=[types.Part(text="hi")]))
    queue.send_content(types.Content(role="user", parts=[types.Part(text="and")]), partial=True)
    queue.send_realtime(types.Blob(mime_type="audio/pcm;rate=16000", data=b"\\x01\\x02"))
    queue.send_activity_start()
    queue.send_activity_end()
    queue.send_audio_stream_end()
    queue.send(LiveRequest(state_delta={"mood": "calm"}))
    open_before = queue.closed
    queue.close()
    got = [await queue.get() for _ in range(8)]
    other = LiveRequestQueue()
    other.send(LiveRequest(close=True))
    return (empty_waits, open_before, queue.closed, other.closed, (await other.get()).close,
            [r.model_dump(mode="json", exclude_none=True) for r in got])
'''


def _said(dump: dict[str, Any]) -> dict[str, Any]:
    """A request's fields that say something (google-adk's False defaults are our None)."""
    return {key: value for key, value in dump.items() if value is not False}


def test_a_live_request_queue_carries_what_google_adks_carries(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(QUEUE, gemini)
    assert theirs[:5] == (True, False, True, True, True)
    assert ours[:5] == theirs[:5]
    assert [_said(r) for r in ours[5]] == [_said(r) for r in theirs[5]]
    assert len(theirs[5]) == 8 and theirs[5][-1] == {"close": True, "audio_stream_end": False, "partial": False}


def test_a_live_run_reads_its_inputs_from_a_live_request_queue() -> None:
    agent = LlmAgent(name="plain", model=ScriptedModel(["Plain answer."]))
    queue = LiveRequestQueue()

    async def scenario() -> list[Event]:
        queue.send_content(Content.user("hello"))
        events: list[Event] = []
        async for event in run_live_invocation(agent, SessionView(), queue):  # type: ignore[arg-type]
            events.append(event)
            if event.author == "plain" and not event.partial:
                queue.close()
        return events

    events = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert [(e.author, e.content.text) for e in events if not e.partial and e.content and e.content.text] == [
        ("user", "hello"), ("plain", "Plain answer.")]
    assert queue.closed


# -- plain data types ----------------------------------------------------------------------

DATA = '''
import asyncio
from google.adk.agents.active_streaming_tool import ActiveStreamingTool
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.agents.loop_agent import LoopAgentState
from google.adk.agents.sequential_agent import SequentialAgentState
from google.adk.agents.transcription_entry import TranscriptionEntry
from google.genai import types


def refused(make):
    try:
        make()
    except ValueError:
        return True
    return False


async def main():
    heard = TranscriptionEntry(role="user", data=types.Blob(mime_type="audio/pcm", data=b"ab"))
    said = TranscriptionEntry(data=types.Content(role="model", parts=[types.Part(text="ok")]))
    queue = LiveRequestQueue()
    tool = ActiveStreamingTool(stream=queue)
    task = asyncio.ensure_future(asyncio.sleep(0))
    running = ActiveStreamingTool(task=task)
    await task
    return {
        "heard": (heard.role, heard.data.mime_type, heard.data.data),
        "said": (said.role, said.data.parts[0].text),
        "entry_refuses": [refused(lambda: TranscriptionEntry(role="user")),
                          refused(lambda: TranscriptionEntry(data=types.Blob(data=b"a"), extra=1)),
                          refused(lambda: TranscriptionEntry(data="text"))],
        "tool": (tool.stream is queue, tool.task, running.task is task, ActiveStreamingTool().stream),
        "tool_refuses": [refused(lambda: ActiveStreamingTool(stream="q")),
                         refused(lambda: ActiveStreamingTool(other=1))],
        "loop": LoopAgentState().model_dump(),
        "looped": LoopAgentState(current_sub_agent="critic", times_looped=2).model_dump(),
        "sequence": SequentialAgentState(current_sub_agent="writer").model_dump(),
        "state_refuses": [refused(lambda: LoopAgentState(times=1)),
                          refused(lambda: SequentialAgentState(times_looped=1))],
    }
'''


def test_the_live_and_agent_state_data_types_are_google_adks(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(DATA, gemini)
    assert theirs["entry_refuses"] == [True, True, True] and theirs["tool_refuses"] == [True, True]
    assert theirs["state_refuses"] == [True, True] and theirs["tool"] == (True, None, True, None)
    assert ours == theirs


# -- invocation_context --------------------------------------------------------------------

IDS = '''
from google.adk.agents.invocation_context import new_invocation_context_id


async def main():
    return [new_invocation_context_id() for _ in range(3)]
'''


def test_new_invocation_context_ids_have_google_adks_form(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(IDS, gemini)
    form = re.compile(r"e-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
    for ids in (theirs, ours):
        assert all(form.match(i) for i in ids) and len(set(ids)) == 3


LIMIT = '''
from google.adk.agents import Agent
from google.adk.agents.invocation_context import LlmCallsLimitExceededError
from google.adk.agents.run_config import RunConfig
from google.adk.runners import InMemoryRunner
from google.genai import types


def look(key: str) -> dict:
    """Looks a key up."""
    return {"value": key.upper()}


root_agent = Agent(name="looker", model="gemini-2.5-flash", instruction="Look keys up.", tools=[look])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="looker")
    session = await runner.session_service.create_session(app_name="looker", user_id="ann")
    authors = []
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id, run_config=RunConfig(max_llm_calls=1),
                                            new_message=types.Content(role="user", parts=[types.Part(text="a")])):
            authors.append((event.author, event.error_code))
    except LlmCallsLimitExceededError as exc:
        kept = await runner.session_service.get_session(app_name="looker", user_id="ann", session_id=session.id)
        return "raised", isinstance(exc, Exception), authors, [e.error_code for e in kept.events]
    return "not raised", None, authors
'''


def test_reaching_max_llm_calls_raises_google_adks_error(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(LIMIT, gemini, [calls(("look", {"key": "a"}))])
    assert theirs[:2] == ("raised", True)
    assert ours == theirs


# -- apps.app.validate_app_name ------------------------------------------------------------

NAMES = '''
from google.adk.apps.app import validate_app_name

NAMES = ["helper", "Helper_2", "a-b", "x", "user", "User", "2fast", "_x", "a b", "", "a.b", "été", "a/b"]


async def main():
    verdicts = {}
    for name in NAMES:
        try:
            validate_app_name(name)
            verdicts[name] = "ok"
        except ValueError:
            verdicts[name] = "refused"
    return verdicts
'''


def test_app_names_are_accepted_and_refused_as_google_adk_does(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(NAMES, gemini)
    assert [name for name, verdict in theirs.items() if verdict == "ok"] == ["helper", "Helper_2", "a-b", "x", "User"]
    assert ours == theirs
