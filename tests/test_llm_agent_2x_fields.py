"""google-adk 2.x's node settings on agents (issue 52): ``mode``, ``retry_config``,
``state_schema``, ``timeout``, ``wait_for_output``, side by side with google-adk 2.13.

Each run case is a small google-adk program run twice, as in
tests/test_google_adk_parity.py: as written on google-adk, then with its imports
rewritten on ours, against one Gemini REST stand-in on 127.0.0.1 named by environment
variables only. Compared: the events a user reads (author, error code, calls,
responses, text), what the run raised (its class name), and the session's stored
events and state afterwards. The one difference left, by rule: a timeout's message is
each side's own wording (compared as naming the agent and the seconds).
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.adk.workflow import RetryConfig
from google.genai import types
from pydantic import BaseModel, Field

SEEN = []


class Plan(BaseModel):
    count: int = 0
    label: str = ""
    tags: list[str] = Field(default_factory=list)


def note(tool_context: ToolContext, key: str, value: str) -> dict:
    """Writes one state key (numbers as numbers)."""
    tool_context.state[key] = int(value) if value.isdigit() else value
    return {"written": key}


def guard(callback_context, llm_request):
    SEEN.append("model")
    if FAIL_FIRST and len(SEEN) == 1:
        raise ValueError("the first model call fails")
    return None


FAIL_FIRST = False
AGENT

async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="fields")
    session = await runner.session_service.create_session(app_name="fields", user_id="ann")
    rows, raised = [], None
    message = types.Content(role="user", parts=[types.Part(text="go")])
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            parts = event.content.parts if event.content and event.content.parts else []
            rows.append({"author": event.author, "error_code": event.error_code,
                         "calls": [(c.name, dict(c.args or {})) for c in event.get_function_calls()],
                         "responses": [(r.name, dict(r.response or {})) for r in event.get_function_responses()],
                         "text": "".join(p.text for p in parts if p.text)})
    except Exception as exc:
        raised = (type(exc).__name__, str(exc))
    stored = await runner.session_service.get_session(app_name="fields", user_id="ann", session_id=session.id)
    await runner.close()
    errors = [e.error_message for e in stored.events if e.error_code]
    return {"events": rows, "raised": raised, "stored": [(e.author, e.error_code) for e in stored.events],
            "state": dict(stored.state), "errors": errors, "model_calls": len(SEEN)}
'''


def both(agent: str, answers: list[StubResponse], server: StubServer, *, fail_first: bool = False
         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The program with ``agent`` (the line defining ``root_agent``) run on google-adk,
    then on ours: what each returned."""
    source = PROGRAM.replace("AGENT", agent).replace("FAIL_FIRST = False", f"FAIL_FIRST = {fail_first}")
    runs = []
    for text in (source, rewritten(source)):
        _, result = run_program(text, answers, server)
        result["unused_answers"] = len(server.responses)
        runs.append(result)
    return runs[0], runs[1]


def assert_same(theirs: dict[str, Any], ours: dict[str, Any], *, calls_timed: bool = False) -> None:
    """The same events, stored events, state and model calls; the same exception class
    raised (its message compared where a case says). With ``calls_timed`` (a deadline
    that may pass before or after a side's model request is sent: a loaded machine
    delays either side's start), the model calls are not compared, only bounded."""
    for key in ("events", "stored", "state") + (() if calls_timed else ("model_calls", "unused_answers")):
        assert ours[key] == theirs[key], key
    if calls_timed:
        for run in (theirs, ours):
            assert run["model_calls"] <= 1 and run["unused_answers"] <= 1  # asked at most once, nothing used
    assert (ours["raised"] or ("",))[0] == (theirs["raised"] or ("",))[0]


# -- the fields: names, defaults, what each refuses ----------------------------------------


FIELDS = ("mode", "retry_config", "state_schema", "timeout", "wait_for_output")


def test_the_fields_and_their_defaults_are_google_adks() -> None:
    from google.adk.agents import LlmAgent as TheirAgent
    from google.adk.agents import SequentialAgent as TheirSequence

    from adk_actors.agents import LlmAgent, SequentialAgent

    theirs, ours = TheirAgent(name="a"), LlmAgent(name="a")
    assert {f: getattr(ours, f) for f in FIELDS} == {f: getattr(theirs, f) for f in FIELDS}
    assert set(FIELDS) <= set(LlmAgent.model_fields)
    # every agent has the node settings (google-adk's BaseAgent is a BaseNode); mode is LlmAgent's
    shared = ("retry_config", "state_schema", "timeout", "wait_for_output")
    assert {f: getattr(SequentialAgent(name="s"), f) for f in shared} == {
        f: getattr(TheirSequence(name="s"), f) for f in shared}
    assert "mode" not in SequentialAgent.model_fields and "mode" not in TheirSequence.model_fields


def test_values_are_kept_as_google_adk_keeps_them() -> None:
    from google.adk.agents import LlmAgent as TheirAgent
    from google.adk.workflow import RetryConfig as TheirRetry
    from pydantic import BaseModel

    from adk_actors.agents import LlmAgent
    from adk_actors.workflow import RetryConfig

    class Plan(BaseModel):
        count: int = 0

    given = {"mode": "single_turn", "timeout": 2, "state_schema": Plan, "wait_for_output": True}
    theirs = TheirAgent(name="a", retry_config=TheirRetry(max_attempts=3, exceptions=[ValueError]), **given)
    ours = LlmAgent(name="a", retry_config=RetryConfig(max_attempts=3, exceptions=[ValueError]), **given)
    for field in ("mode", "timeout", "state_schema", "wait_for_output"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours.retry_config.model_dump() == theirs.retry_config.model_dump()
    # a google-adk RetryConfig given to ours (a program half moved over) is taken too
    assert LlmAgent(name="b", retry_config=TheirRetry(max_attempts=2)).retry_config.max_attempts == 2
    assert str(LlmAgent(name="c", mode="task").mode) == "task"


@pytest.mark.parametrize("bad", [{"mode": "bogus"}, {"timeout": "soon"}, {"state_schema": 3},
                                 {"state_schema": dict}, {"retry_config": 5}, {"wait_for_output": "maybe"},
                                 {"retry_config": {"exceptions": [3]}}])
def test_bad_values_are_refused_by_both(bad: dict[str, Any]) -> None:
    from google.adk.agents import LlmAgent as TheirAgent

    from adk_actors import AgentDefinitionError
    from adk_actors.agents import LlmAgent

    with pytest.raises(ValueError):
        TheirAgent(name="a", **bad)
    with pytest.raises(AgentDefinitionError) as refused:  # a ValueError too
        LlmAgent(name="a", **bad)
    assert next(iter(bad)) in str(refused.value) or "RetryConfig" in str(refused.value)


# -- retry_config --------------------------------------------------------------------------


def test_a_failed_attempt_is_an_error_event_and_the_agent_runs_again(gemini: StubServer) -> None:
    agent = ('root_agent = Agent(name="worker", model="gemini-2.5-flash", tools=[note], before_model_callback=guard,\n'
             '                   retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0))')
    answers = [calls(("note", {"key": "label", "value": "ok"})), gemini_response("Done.")]
    theirs, ours = both(agent, answers, gemini, fail_first=True)
    assert theirs["events"][0]["error_code"] == "ValueError" and theirs["raised"] is None
    assert_same(theirs, ours)
    assert ours["state"] == {"label": "ok"}


def test_without_retry_config_the_error_event_comes_and_the_run_raises(gemini: StubServer) -> None:
    agent = ('root_agent = Agent(name="worker", model="gemini-2.5-flash", before_model_callback=guard,\n'
             '                   timeout=30)')  # a node setting, so ours runs it as google-adk's node runner
    theirs, ours = both(agent, [], gemini, fail_first=True)
    assert theirs["raised"][0] == "ValueError"
    assert_same(theirs, ours)


def test_retry_only_on_the_exceptions_named(gemini: StubServer) -> None:
    agent = ('root_agent = Agent(name="worker", model="gemini-2.5-flash", before_model_callback=guard,\n'
             '                   retry_config=RetryConfig(max_attempts=3, initial_delay=0, exceptions=["KeyError"]))')
    theirs, ours = both(agent, [], gemini, fail_first=True)
    assert theirs["raised"][0] == "ValueError" and theirs["model_calls"] == 1
    assert_same(theirs, ours)


# -- timeout -------------------------------------------------------------------------------


def test_an_agent_past_its_timeout_is_cancelled_and_fails(gemini: StubServer) -> None:
    agent = 'root_agent = Agent(name="slow", model="gemini-2.5-flash", timeout=0.5)'
    late = StubResponse(json=gemini_response("Too late.").json, delay=2.0)
    theirs, ours = both(agent, [late], gemini)
    assert theirs["raised"][0] == "NodeTimeoutError"
    assert_same(theirs, ours, calls_timed=True)  # CI beside two CPU burners: google-adk timed out before asking
    # each side words the message its own way; both name the agent and the seconds
    for run in (theirs, ours):
        assert "'slow'" in run["raised"][1] and "0.5" in run["raised"][1]


def test_a_timed_out_attempt_is_retried(gemini: StubServer) -> None:
    # google-adk's first attempt may spend a second or more importing before it calls
    # the model (a cold start): the deadline leaves the second attempt room for that
    agent = ('root_agent = Agent(name="slow", model="gemini-2.5-flash", timeout=2.5,\n'
             '                   retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0))')
    answers = [StubResponse(json=gemini_response("Too late.").json, delay=6.0), gemini_response("In time.")]
    theirs, ours = both(agent, answers, gemini)
    assert theirs["events"][-1]["text"] == "In time." and theirs["raised"] is None
    assert_same(theirs, ours)


# -- state_schema --------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "value"), [("count", "many"), ("colour", "red")])
def test_a_write_the_state_schema_refuses_fails_the_run(gemini: StubServer, key: str, value: str) -> None:
    agent = 'root_agent = Agent(name="planner", model="gemini-2.5-flash", tools=[note], state_schema=Plan)'
    answers = [calls(("note", {"key": key, "value": value})), gemini_response("unused")]
    theirs, ours = both(agent, answers, gemini)
    assert theirs["raised"][0] == "StateSchemaError"
    for field in ("events", "raised", "stored", "state", "model_calls"):
        assert ours[field] == theirs[field], field
    assert ours["errors"] == theirs["errors"]  # google-adk's message, word for word


def test_writes_the_schema_allows_and_scoped_keys_pass(gemini: StubServer) -> None:
    agent = 'root_agent = Agent(name="planner", model="gemini-2.5-flash", tools=[note], state_schema=Plan)'
    answers = [calls(("note", {"key": "count", "value": "3"}), ("note", {"key": "user:colour", "value": "red"}),
                     ("note", {"key": "label", "value": "x"})), gemini_response("Noted.")]
    theirs, ours = both(agent, answers, gemini)
    assert theirs["state"] == {"count": 3, "user:colour": "red", "label": "x"}
    assert_same(theirs, ours)


def test_a_sub_agent_inherits_its_parents_state_schema() -> None:
    from pydantic import BaseModel

    from adk_actors.agents import LlmAgent
    from adk_actors.engine._node_run import schema_for

    class Plan(BaseModel):
        count: int = 0

    class Other(BaseModel):
        label: str = ""

    child = LlmAgent(name="child")
    own = LlmAgent(name="own", state_schema=Other)
    root = LlmAgent(name="root", state_schema=Plan, sub_agents=[child, own])
    assert schema_for(root, "child") is Plan
    assert schema_for(root, "own") is Other
    assert schema_for(root, "root") is Plan
    assert schema_for(LlmAgent(name="plain"), "plain") is None


def test_state_schema_error_is_google_adks_type_at_its_path() -> None:
    from adk_actors.sessions.state import State, StateSchemaError

    assert issubclass(StateSchemaError, TypeError)
    from pydantic import BaseModel

    class Plan(BaseModel):
        count: int = 0

    state = State({}, {}, schema=Plan)
    state["count"] = 2
    state["temp:anything"] = object()
    with pytest.raises(StateSchemaError, match="count"):
        state["count"] = "two"
    with pytest.raises(StateSchemaError, match="Declared fields"):
        state["nope"] = 1


# -- as a workflow node ---------------------------------------------------------------------


def test_an_agent_nodes_timeout_and_retry_apply_in_our_workflow(gemini: StubServer) -> None:
    source = '''
from adk_actors.agents import Agent
from adk_actors.runners import InMemoryRunner
from adk_actors.workflow import RetryConfig, Workflow
from adk_actors import types

slow = Agent(name="slow", model="gemini-2.5-flash", timeout=0.5,
             retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0))
root_agent = Workflow(name="flow", edges=[("START", slow)])

async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="wf")
    session = await runner.session_service.create_session(app_name="wf", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    seen = []
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        seen.append((event.author, event.error_code, event.content.parts[0].text if event.content else None))
    await runner.close()
    return seen
'''
    answers = [StubResponse(json=gemini_response("Too late.").json, delay=2.0), gemini_response("In time.")]
    _, seen = run_program(source, answers, gemini)
    assert [code for _, code, _ in seen if code] == ["NodeTimeoutError"]
    assert seen[-1] == ("slow", None, "In time.")


# -- mode ------------------------------------------------------------------------------------

MODE_HEAD = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydantic import BaseModel


async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="modes")
    session = await runner.session_service.create_session(app_name="modes", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="modes", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''


def _mode_runs(agents: str, answers: list[StubResponse], turns: list[str], server: StubServer
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    runs = []
    for text in (MODE_HEAD + agents, rewritten(MODE_HEAD + agents)):
        _, (events, finals, state) = run_program(text, answers, server, turns)
        runs.append({"events": harness.event_rows(events), "finals": finals, "state": state,
                     "requests": harness.request_rows(server), "unused": len(server.responses)})
    return runs[0], runs[1]


def test_a_single_turn_sub_agent_is_its_parents_tool_as_in_google_adk(gemini: StubServer) -> None:
    agents = '''
helper = Agent(name="helper", model="gemini-2.5-flash", description="Looks things up.",
               instruction="Look it up.", mode="single_turn", output_key="found")
chatty = Agent(name="chatty", model="gemini-2.5-flash", description="Chats.")
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Be helpful.", sub_agents=[helper, chatty])
'''
    answers = [calls(("helper", {"request": "find x"})), gemini_response("X is 1."), gemini_response("x is 1.")]
    theirs, ours = _mode_runs(agents, answers, ["what is x?"], gemini)
    assert theirs["unused"] == 0 and ours["unused"] == 0
    # the root sees the helper as a tool (not a transfer target, which chatty stays);
    # the helper gets the request alone as its message
    root_tools = theirs["requests"][0]["tools"]
    assert [t["name"] for t in root_tools] == ["helper", "transfer_to_agent"]
    assert root_tools[1]["agents"] == ["chatty"]
    assert theirs["requests"][1]["contents"] == [{"parts": [{"text": "find x"}], "role": "user"}]
    assert ours["requests"] == theirs["requests"]
    assert ours["state"] == theirs["state"] == {"found": "X is 1."}
    # google-adk also yields the helper's own events (on a branch of the call) in the
    # root's stream, and so does ours (issue 52, tests/test_adk52_single_turn_events.py)
    helpers = [row for row in theirs["events"] if row["author"] == "helper"]
    assert [row["text"] for row in helpers] == ["X is 1."]
    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"] == ["X is 1.", "x is 1."]


def test_a_single_turn_sub_agents_input_schema_is_its_tools_parameters(gemini: StubServer) -> None:
    agents = '''
class Query(BaseModel):
    city: str
    days: int

forecaster = Agent(name="forecaster", model="gemini-2.5-flash", description="Forecasts.",
                   instruction="Forecast.", mode="single_turn", input_schema=Query)
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Ask the forecaster.", sub_agents=[forecaster])
'''
    answers = [calls(("forecaster", {"city": "Oslo", "days": "many"})),
               calls(("forecaster", {"city": "Oslo", "days": 2})), gemini_response("Rain."),
               gemini_response("Rain in Oslo.")]
    theirs, ours = _mode_runs(agents, answers, ["weather?"], gemini)
    first_result = theirs["events"][1]["responses"][0][2]["result"]
    assert first_result.startswith("Error validating input:")  # the agent did not run
    assert theirs["requests"][2]["contents"] == [{"parts": [{"text": '{"city": "Oslo", "days": 2}'}], "role": "user"}]
    assert ours["requests"] == theirs["requests"]
    assert ours["events"] == theirs["events"]  # the forecaster's own events too (issue 52)
    assert ours["finals"] == theirs["finals"]  # the first is the forecaster's own answer


def test_an_llm_sub_agent_without_a_mode_becomes_chat_and_a_root_single_turn_is_refused() -> None:
    from google.adk.agents import LlmAgent as TheirAgent
    from google.adk.runners import InMemoryRunner as TheirRunner
    from google.genai import types as their_types

    from adk_actors import types
    from adk_actors.agents import LlmAgent
    from adk_actors.runners import InMemoryRunner

    for agent_class in (TheirAgent, LlmAgent):
        plain, single = agent_class(name="plain"), agent_class(name="single", mode="single_turn")
        agent_class(name="root", sub_agents=[plain, single])
        assert (plain.mode, single.mode) == ("chat", "single_turn")

    async def refused(runner_class: Any, agent_class: Any, content: Any) -> str:
        runner = runner_class(agent=agent_class(name="alone", model="gemini-2.5-flash", mode="single_turn"),
                              app_name="modes")
        await runner.session_service.create_session(app_name="modes", user_id="ann", session_id="s")
        with pytest.raises(ValueError) as error:
            async for _ in runner.run_async(user_id="ann", session_id="s", new_message=content):
                pass
        stored = await runner.session_service.get_session(app_name="modes", user_id="ann", session_id="s")
        assert stored is not None and stored.events == []  # refused before anything is written
        return str(error.value)

    import asyncio

    theirs = asyncio.run(refused(TheirRunner, TheirAgent, their_types.Content(
        role="user", parts=[their_types.Part(text="hi")])))
    ours = asyncio.run(refused(InMemoryRunner, LlmAgent, types.Content(role="user", parts=[types.Part(text="hi")])))
    assert "mode='single_turn'" in theirs and "mode='single_turn'" in ours


def test_a_workflows_state_schema_governs_its_nodes_writes_as_in_google_adk() -> None:
    source = '''
from google.adk.runners import InMemoryRunner
from google.adk.workflow import Workflow
from google.genai import types
from pydantic import BaseModel


class Tally(BaseModel):
    count: int = 0


def good(ctx):
    ctx.state["count"] = 2
    ctx.state["temp:scratch"] = "anything"
    return "counted"


def bad(ctx, node_input):
    ctx.state["count"] = "lots"
    return "miscounted"


root_agent = Workflow(name="flow", edges=[("START", good, bad)], state_schema=Tally)


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="wf")
    session = await runner.session_service.create_session(app_name="wf", user_id="ann")
    rows, raised = [], None
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text="go")])):
            rows.append([event.author, event.error_code, event.error_message, event.output])
    except Exception as exc:
        raised = [type(exc).__name__, str(exc)]
    stored = await runner.session_service.get_session(app_name="wf", user_id="ann", session_id=session.id)
    return rows, raised, dict(stored.state)
'''
    import asyncio
    import sys
    import types as modules

    results = []
    for text in (source, rewritten(source)):
        module = modules.ModuleType("schema_case")
        sys.modules["schema_case"] = module
        try:
            exec(compile(text, "<schema case>", "exec"), module.__dict__)
            results.append(asyncio.run(asyncio.wait_for(module.main(), timeout=60)))
        finally:
            sys.modules.pop("schema_case", None)
    theirs, ours = results
    assert theirs[1][0] == "StateSchemaError" and theirs[2] == {"count": 2}
    assert ours == theirs
