"""google-adk 2.x's per-node settings in graph workflows (issues 55 and 52): one
``RetryConfig`` class for agents and nodes, ``NodeTimeoutError`` worded as
google-adk's, ``wait_for_output`` (a node that finishes with neither an output nor a
route triggers nothing and runs again when triggered again), a node's own
``state_schema`` (checked as it writes), and an LlmAgent node by ``mode``. Each is run
side by side: google-adk 2.13 as written, ours with only the imports rewritten, against
one Gemini stand-in (tests/google_adk_harness.py), comparing what a google-adk user
reads of each event, the final state and the model's requests.
"""

from __future__ import annotations

import asyncio
from typing import Any

import google_adk_harness as harness
import pytest
from test_workflows import assert_same, both

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk.workflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini


# -- one RetryConfig -----------------------------------------------------------------------


def test_one_retry_config_class_for_agents_workflows_and_nodes() -> None:
    """``adk_actors.workflow.RetryConfig`` is the class every agent's ``retry_config``
    holds (an LlmAgent's, a Workflow's, a node's), and google-adk's given to any of them
    becomes it, with its values; a bad ``exceptions`` entry is a ValueError on both sides."""
    from google.adk.workflow import RetryConfig as TheirRetry

    from adk_actors._node_settings import RetryConfig as Shared
    from adk_actors.agents import LlmAgent
    from adk_actors.workflow import START, FunctionNode, RetryConfig, Workflow, node

    def step(node_input: Any) -> Any:
        return node_input

    assert RetryConfig is Shared
    config = RetryConfig(max_attempts=3, exceptions=[KeyError, "ValueError"])
    holders = [LlmAgent(name="a", retry_config=config).retry_config,
               Workflow(name="w", edges=[(START, step)], retry_config=config).retry_config,
               FunctionNode(func=step, retry_config=config).retry_config,
               node(step, retry_config=config).retry_config,
               FunctionNode(func=step, retry_config=TheirRetry(max_attempts=3, exceptions=[KeyError, "ValueError"])
                            ).retry_config]
    for held in holders:
        assert type(held) is RetryConfig
        assert held.model_dump() == config.model_dump() == TheirRetry(
            max_attempts=3, exceptions=[KeyError, "ValueError"]).model_dump()
    for cls in (TheirRetry, RetryConfig):
        with pytest.raises(ValueError, match="exceptions"):
            cls(exceptions=[3])


# -- NodeTimeoutError ------------------------------------------------------------------------

TIMEOUT = '''
import asyncio

async def slow(node_input):
    await asyncio.sleep(30)

def after(node_input):
    return node_input

root = Workflow(name="wf", edges=[(START, FunctionNode(func=slow, timeout=0.2), after)])
'''


def test_a_node_timeout_error_is_worded_as_google_adks(gemini: StubServer) -> None:
    """A node past its ``timeout``: its error event names the node and the timeout in
    google-adk's words, the same text on both sides, and the run fails with
    NodeTimeoutError."""
    theirs, ours = both(TIMEOUT, ["go"], gemini)
    assert_same(theirs, ours)
    last = ours["events"][-1]
    assert (last["error_code"], last["error_message"]) == (
        "NodeTimeoutError", "Node 'slow' timed out after 0.2 seconds.")
    assert ours["error"] == "NodeTimeoutError"


# -- wait_for_output ---------------------------------------------------------------------------

WAIT_FOR_OUTPUT = '''
def left(node_input: str):
    return "left:" + node_input

def right(node_input: str):
    return "right:" + node_input

def collect(node_input: str, ctx):
    seen = sorted([*ctx.state.get("seen", []), node_input])
    ctx.state["seen"] = seen
    if len(seen) == 2:
        return " + ".join(seen)

def finish(node_input, ctx):
    ctx.state["finished"] = ctx.state.get("finished", 0) + 1
    return f"done: {node_input}"

collector = FunctionNode(func=collect)
collector.wait_for_output = {WAIT}
root = Workflow(name="wf", edges=[(START, (left, right), collector, finish)])
'''


@pytest.mark.parametrize("wait", [True, False])
def test_a_node_that_waits_for_its_output_triggers_nothing_until_it_gives_one_as_google_adk(
        gemini: StubServer, wait: bool) -> None:
    """A node with ``wait_for_output`` fed by two branches: its first run gives no
    output (it writes state), so nothing after it runs; its second run gives one and
    the next node runs once. Without the setting the next node runs after each run
    (the first time with no input)."""
    theirs, ours = both(WAIT_FOR_OUTPUT.replace("{WAIT}", str(wait)), ["x"], gemini)
    assert_same(theirs, ours, ordered=False)
    finish_runs = {row["path"] for row in ours["events"] if row["path"].startswith("wf@1/finish@")}
    if wait:
        assert ours["error"] is None
        assert finish_runs == {"wf@1/finish@1"}
        assert ours["state"] == {"seen": ["left:x", "right:x"], "finished": 1}
        assert ours["events"][-1]["output"] == "done: left:x + right:x"
    else:
        assert finish_runs == {"wf@1/finish@1", "wf@1/finish@2"}
        assert ours["state"]["finished"] == 2
        assert "done: None" in [row["output"] for row in ours["events"]]


# -- state_schema per node ---------------------------------------------------------------------

STATE_SCHEMA = '''
from pydantic import BaseModel

class Trip(BaseModel):
    city: str = ""
    legs: int = 0

class Notes(BaseModel):
    note: str = ""

def pick(node_input: str, ctx):
    ctx.state["city"] = node_input.split()[-1]
    ctx.state["user:trips"] = ctx.state.get("user:trips", 0) + 1  # a scoped key passes every schema
    return node_input

def annotate(node_input: str, ctx, city: str):
    ctx.state["note"] = f"about {city}"
    return city

def count(node_input: str, ctx, legs: int = 0):
    ctx.state["legs"] = {LEGS}
    return f"{node_input}: {ctx.state['legs']} legs"

root = Workflow(name="trip", state_schema=Trip, edges=[
    (START, pick, FunctionNode(func=annotate, state_schema={NOTES}), count)])
'''


@pytest.mark.parametrize(("notes", "legs", "error"), [
    ("Notes", "legs + 1", None),  # each node's writes fit the schema it is checked with
    ("None", "legs + 1", "StateSchemaError"),  # annotate inherits Trip, which has no "note"
    ("Notes", '"many"', "StateSchemaError"),  # a value Trip's field refuses
])
def test_a_nodes_state_writes_are_checked_by_its_own_schema_else_its_workflows_as_google_adk(
        gemini: StubServer, notes: str, legs: str, error: str | None) -> None:
    """A workflow's ``state_schema`` checks its function nodes' writes as they are made;
    a node with a ``state_schema`` of its own is checked by that one instead; keys
    holding ``:`` pass. A refused write fails the node (an error event with
    google-adk's words) and the run, with StateSchemaError; nothing it wrote is stored."""
    source = STATE_SCHEMA.replace("{NOTES}", notes).replace("{LEGS}", legs)
    theirs, ours = both(source, ["go to Oslo", "then Rome"], gemini)
    assert_same(theirs, ours)
    assert ours["error"] == error
    if error is None:
        assert ours["state"] == {"city": "Rome", "note": "about Rome", "legs": 2, "user:trips": 2}
    else:
        failed = [row for row in ours["events"] if row["error_code"]]
        assert failed and failed[0]["error_code"] == "StateSchemaError"
        refused = "note" if notes == "None" else "legs"
        assert refused not in ours["state"]  # the refused write is not stored


def test_a_workflow_refuses_a_function_node_parameter_its_state_schema_does_not_declare() -> None:
    """As google-adk's: a function node bound to a state key the workflow's schema does
    not declare is refused when the workflow is built (StateSchemaError, a TypeError,
    naming the node and the parameter)."""
    from google.adk.workflow import START as THEIR_START
    from google.adk.workflow import Workflow as TheirWorkflow
    from pydantic import BaseModel

    from adk_actors.sessions.state import StateSchemaError
    from adk_actors.workflow import START, Workflow

    class Trip(BaseModel):
        city: str = ""

    def plan(node_input: str, ctx: Any, budget: int = 0) -> str:
        return node_input

    with pytest.raises(TypeError, match="budget"):
        TheirWorkflow(name="trip", state_schema=Trip, edges=[(THEIR_START, plan)])
    with pytest.raises(StateSchemaError, match="budget") as refused:
        Workflow(name="trip", state_schema=Trip, edges=[(START, plan)])
    assert "plan" in str(refused.value) and isinstance(refused.value, TypeError)


# -- an LlmAgent node by mode -------------------------------------------------------------------

AGENT_MODES = '''
def prep(node_input: str, ctx):
    ctx.state["asked"] = ctx.state.get("asked", 0) + 1
    return "about: " + node_input

def after(node_input):
    return f"after {node_input}"

def lookup(topic: str) -> dict:
    """Facts on a topic."""
    return {"topic": topic, "facts": 3}

helper = LlmAgent(name="helper", model="gemini-2.0-flash", instruction="Help.", tools=[lookup], {MODE})
root = Workflow(name="wf", edges=[{EDGES}])
'''


def test_a_chat_agent_node_talks_over_the_sessions_history_and_gives_no_output_as_google_adk(
        gemini: StubServer) -> None:
    """An LlmAgent of ``mode="chat"`` right after START: each turn the model gets the
    session's whole conversation (earlier turns, its tool call and result), its answer
    is no node output (no ``message_as_output``), so the node after it never runs."""
    answers = [harness.calls(("lookup", {"topic": "owls"})), gemini_response(text="Owls have 3 facts."),
               gemini_response(text="Ask me more.")]
    source = AGENT_MODES.replace("{MODE}", 'mode="chat"').replace("{EDGES}", "(START, helper, after)")
    theirs, ours = both(source, ["tell me about owls", "and more?"], gemini, answers)
    assert_same(theirs, ours)
    assert [len(request["contents"]) for request in ours["requests"]] == [1, 3, 5]
    assert ours["requests"][2]["contents"][0] == {"role": "user", "parts": [{"text": "tell me about owls"}]}
    assert not any(row["path"].startswith("wf@1/after") for row in ours["events"])
    assert not any(row["output"] is not None or row["message_as_output"] for row in ours["events"])


@pytest.mark.parametrize("mode", ['mode="single_turn"', "mode=None"])
def test_a_single_turn_agent_node_sees_its_input_only_and_gives_its_answer_as_google_adk(
        gemini: StubServer, mode: str) -> None:
    """``mode="single_turn"``, as the default: the model gets the node's input as the
    user's message and this node run's own tool call and result only, each turn
    afresh; its answer is the node's output and the next node runs on it."""
    answers = [harness.calls(("lookup", {"topic": "owls"})), gemini_response(text="Three facts."),
               gemini_response(text="Still three.")]
    source = AGENT_MODES.replace("{MODE}", mode).replace("{EDGES}", "(START, prep, helper, after)")
    theirs, ours = both(source, ["owls", "owls again"], gemini, answers)
    assert_same(theirs, ours)
    assert [request["contents"][0]["parts"][0]["text"] for request in ours["requests"]] == [
        "about: owls", "about: owls", "about: owls again"]
    assert [row["output"] for row in ours["events"] if row["path"].startswith("wf@1/after")] == [
        "after Three facts.", "after Still three."]


def test_a_chat_agent_after_another_node_is_refused_when_the_workflow_is_built() -> None:
    """As google-adk refuses it (a ValueError on both sides; here a
    GraphValidationError naming the agent and the node before it). A task-mode agent
    node is refused here (not supported yet), with a WorkflowConfigurationError."""
    from google.adk.agents import LlmAgent as TheirAgent
    from google.adk.workflow import START as THEIR_START
    from google.adk.workflow import Workflow as TheirWorkflow

    from adk_actors.agents import LlmAgent
    from adk_actors.workflow import (
        START,
        GraphValidationError,
        Workflow,
        WorkflowConfigurationError,
    )

    def prep(node_input: str) -> str:
        return node_input

    with pytest.raises(ValueError, match="chat"):
        TheirWorkflow(name="wf", edges=[(THEIR_START, prep, TheirAgent(name="helper", mode="chat"))])
    with pytest.raises(GraphValidationError, match=r"helper.*chat.*prep"):
        Workflow(name="wf", edges=[(START, prep, LlmAgent(name="helper", mode="chat"))])
    Workflow(name="wf", edges=[(START, LlmAgent(name="helper", mode="chat"))])  # right after START: taken
    with pytest.raises(WorkflowConfigurationError, match="task"):
        Workflow(name="wf", edges=[(START, prep, LlmAgent(name="helper", mode="task"))])


def test_the_graph_view_shows_each_agent_nodes_mode_and_wait_for_output_as_google_adk() -> None:
    """adk-web's ``build_graph`` JSON of a workflow with a chat agent (its node waits
    for its output), an agent with ``wait_for_output`` set and a single-turn one:
    google-adk's ``serialize_agent`` and our ``workflow_info`` give the same."""
    from google.adk.agents import LlmAgent as TheirAgent
    from google.adk.cli.utils.graph_serialization import serialize_agent
    from google.adk.workflow import START as THEIR_START
    from google.adk.workflow import Workflow as TheirWorkflow

    from adk_actors.agents import LlmAgent
    from adk_actors.workflow import START, Workflow, workflow_info

    def prep(node_input: str) -> str:
        return node_input

    def build(agent: Any, workflow: Any, start: Any) -> Any:
        chat = agent(name="chat", model="gemini-2.0-flash", mode="chat")
        waiting = agent(name="waiting", model="gemini-2.0-flash", wait_for_output=True)
        plain = agent(name="plain", model="gemini-2.0-flash", include_contents="default")
        return workflow(name="wf", edges=[(start, chat), (start, prep, waiting), (prep, plain)])

    theirs = serialize_agent(build(TheirAgent, TheirWorkflow, THEIR_START))
    ours = workflow_info(build(LlmAgent, Workflow, START))
    assert ours["graph"] == theirs["graph"] and ours["edges"] == theirs["edges"]
    by_name = {node["name"]: node for node in ours["graph"]["nodes"]}
    assert (by_name["chat"]["mode"], by_name["chat"]["wait_for_output"]) == ("chat", True)
    assert (by_name["waiting"]["mode"], by_name["waiting"]["wait_for_output"]) == ("single_turn", True)
    assert (by_name["plain"]["include_contents"], by_name["plain"]["wait_for_output"]) == ("default", False)


# -- ctx.run_node of an agent ---------------------------------------------------------------------

RUN_AGENT = '''
helper = LlmAgent(name="helper", model="gemini-2.0-flash", instruction="Summarize.", output_key="summary")

async def outer(node_input: str, ctx):
    first = await ctx.run_node(helper, node_input=f"summarize: {node_input}")
    second = await ctx.run_node(helper, node_input={"again": first})
    return f"got {first} / {second}"

def after(node_input: str, summary: str):
    return node_input + " | " + summary

root = Workflow(name="wf", edges=[(START, FunctionNode(func=outer, rerun_on_resume=True), after)])
'''


def test_ctx_run_node_runs_an_agent_as_a_child_node_and_returns_its_answer_as_google_adk(
        gemini: StubServer) -> None:
    """A function node runs an LlmAgent twice with ``ctx.run_node``: each run a child
    node run (``outer@1/helper@1``, ``@2``) that sees its own input only, as the user's
    message (a dict as JSON), and gives its answer as the output it returns; the
    agent's ``output_key`` is written each time."""
    answers = [gemini_response(text="short"), gemini_response(text="shorter")]
    theirs, ours = both(RUN_AGENT, ["a long text"], gemini, answers)
    assert_same(theirs, ours)
    assert [request["contents"] for request in ours["requests"]] == [
        [{"role": "user", "parts": [{"text": "summarize: a long text"}]}],
        [{"role": "user", "parts": [{"text": '{"again": "short"}'}]}]]
    assert [(row["path"], row["text"]) for row in ours["events"] if row["author"] == "helper"] == [
        ("wf@1/outer@1/helper@1", "short"), ("wf@1/outer@1/helper@2", "shorter")]
    assert ours["events"][-1]["output"] == "got short / shorter | shorter"
    assert ours["state"] == {"summary": "shorter"}


def test_a_single_turn_agent_node_with_include_contents_default_sees_the_history_then_its_input_as_google_adk(
        gemini: StubServer) -> None:
    """``include_contents="default"`` set on a single-turn agent node: the model gets
    the session's conversation so far (the users' messages, its earlier answers), then
    the node's input as the last user message; its answer is still the node's output."""
    answers = [gemini_response(text="Three facts."), gemini_response(text="Still three.")]
    source = AGENT_MODES.replace("{MODE}", 'include_contents="default"').replace(
        "{EDGES}", "(START, prep, helper, after)")
    theirs, ours = both(source, ["owls", "owls again"], gemini, answers)
    assert_same(theirs, ours)
    assert [[part["parts"][0]["text"] for part in request["contents"]] for request in ours["requests"]] == [
        ["owls", "about: owls"], ["owls", "Three facts.", "owls again", "about: owls again"]]
    assert [row["output"] for row in ours["events"] if row["path"].startswith("wf@1/after")] == [
        "after Three facts.", "after Still three."]


# -- resumed at every committed event -------------------------------------------------------------

RAN: list[str] = []


def _w_left(node_input: Any, ctx: Any) -> str:
    RAN.append(f"left@{ctx.run_id}")
    return "left"


def _w_right(node_input: Any, ctx: Any) -> str:
    RAN.append(f"right@{ctx.run_id}")
    return "right"


def _w_collect(node_input: str, ctx: Any, seen: list[str] | None = None) -> str | None:
    RAN.append(f"collect@{ctx.run_id}")
    ctx.state["seen"] = sorted([*(seen or []), node_input])
    return " + ".join(ctx.state["seen"]) if len(ctx.state["seen"]) == 2 else None


def _w_finish(node_input: str, ctx: Any) -> str:
    RAN.append(f"finish@{ctx.run_id}")
    ctx.state["note"] = "done"
    return f"done: {node_input}"


def test_a_graph_with_a_waiting_node_and_node_schemas_cut_after_any_committed_event_resumes_to_the_same_end(
) -> None:
    """In process: a fan-out into a node that waits for its output (its first run
    gives none), then a node with a state schema of its own. Cut after each committed
    event and resumed (``rerun`` decided for the function nodes that had not
    finished): the same output and state as the uninterrupted run, ``finish`` run
    once in all, no node run on record run again."""
    from pydantic import BaseModel

    from adk_actors import Content
    from adk_actors.engine import (
        CallDecision,
        NeedsDecision,
        SessionView,
        resume_invocation,
        run_invocation,
    )
    from adk_actors.workflow import START, FunctionNode, Workflow

    class Flow(BaseModel):
        seen: list[str] = []

    class Finishing(BaseModel):
        note: str = ""

    collector = FunctionNode(func=_w_collect, name="collect")
    collector.wait_for_output = True
    graph = Workflow(name="wf", state_schema=Flow, edges=[
        (START, (FunctionNode(func=_w_left, name="left"), FunctionNode(func=_w_right, name="right")), collector,
         FunctionNode(func=_w_finish, name="finish", state_schema=Finishing))])

    async def run(session: SessionView) -> list[Any]:
        return [e async for e in run_invocation(graph, session, Content.user("go"), invocation_id="e-1")]

    async def resume(session: SessionView, decisions: dict[str, CallDecision]) -> list[Any]:
        return [e async for e in resume_invocation(graph, session, invocation_id="e-1", decisions=decisions)]

    RAN.clear()
    full_session = SessionView()
    full = [e for e in asyncio.run(run(full_session)) if not e.partial]
    assert sorted(RAN) == ["collect@1", "collect@2", "finish@1", "left@1", "right@1"]
    expected = [e.output for e in full if "wf@1" in ((e.node_info and e.node_info.output_for) or [])]
    assert expected == ["done: left + right"]
    assert dict(full_session.state) == {"seen": ["left", "right"], "note": "done"}

    for k in range(1, len(full)):
        session = SessionView()
        for event in full[:k]:
            session.commit(event)
        RAN.clear()
        decisions: dict[str, CallDecision] = {}
        for _ in range(6):
            try:
                asyncio.run(resume(session, decisions))
                break
            except NeedsDecision as stop:
                for pending in stop.calls:
                    decisions[pending.call_id] = CallDecision("rerun")
        else:
            pytest.fail(f"cut {k}: the resumed run kept stopping for decisions")
        events = [e for e in session.events if not e.partial and e.invocation_id == "e-1"]
        output = [e.output for e in events if "wf@1" in ((e.node_info and e.node_info.output_for) or [])]
        assert output == expected, f"cut {k}"
        assert dict(session.state) == dict(full_session.state), f"cut {k}"
        finished_before = {e.node_info.path.removeprefix("wf@1/") for e in full[1:k]
                           if e.node_info is not None and e.node_info.path and e.author == "wf"}
        assert not finished_before & set(RAN), f"cut {k}: a node run on record ran again: {RAN}"
        assert sum(1 for e in events if e.node_info and e.node_info.path == "wf@1/finish@1"
                   and e.output is not None) == 1, f"cut {k}"
