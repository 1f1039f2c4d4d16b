"""google-adk 2.x's graph workflows (issue 55, first slice): the same programs run on
google-adk 2.13 as written and here with only their imports rewritten
(tests/google_adk_harness.py), against one Gemini stand-in on 127.0.0.1 where a graph
has an LLM agent node. What is compared of a run: each event as a google-adk user
reads it (author, text, function calls and responses, ``node_info.path``,
``output_for``, ``message_as_output``, ``output``, route, branch, state delta), the
session's final state, and every request the model received (contents, tools,
instruction). Then: bad graphs refused when the ``Workflow`` is built, with a typed
error here and a ValueError on both sides; and a workflow app on a real host, its node
events committed to the session's store with their paths.

Fan-out branches run concurrently on both sides, so their events' order among
themselves is not defined: runs with a fan-out are compared as sets of events, with
the order checked where the graph fixes it (a join after all its branches).
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
import workflow_apps
from google_adk_harness import request_rows, rewritten, run_program

from adk_actors._exceptions import RunFailedError
from adk_actors.runtime import Host, HostConfig
from adk_actors.testing import StubServer, gemini_response
from adk_actors.workflow import GraphValidationError, Workflow, WorkflowConfigurationError
from supervision.testing import wait_until

pytest.importorskip("google.adk.workflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

MAIN = '''
async def main(turns):
    runner = InMemoryRunner(agent=root, app_name="graphs")
    session = await runner.session_service.create_session(app_name="graphs", user_id="ann")
    seen, error = [], None
    try:
        for text in turns:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
                seen.append(event)
    except Exception as exc:
        error = type(exc).__name__
    session = await runner.session_service.get_session(app_name="graphs", user_id="ann", session_id=session.id)
    return seen, dict(session.state), error
'''

HEAD = '''
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.runners import InMemoryRunner
from google.adk.workflow import DEFAULT_ROUTE, START, Edge, FunctionNode, JoinNode, RetryConfig, Workflow
from google.genai import types
'''


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def rows(events: list[Any]) -> list[dict[str, Any]]:
    """What a google-adk user reads of each event of a graph run."""
    found = []
    for event in events:
        content = event.content
        info = event.node_info
        found.append(_plain({
            "author": event.author,
            "text": "".join(p.text for p in (content.parts or []) if p.text) if content else "",
            "calls": [(c.name, c.args) for c in event.get_function_calls()],
            "responses": [(r.name, r.response) for r in event.get_function_responses()],
            "path": info.path,
            "output_for": info.output_for,
            "message_as_output": info.message_as_output,
            "output": event.output,
            "route": event.actions.route,
            "branch": event.branch,
            "state_delta": dict(event.actions.state_delta),
            "error_code": event.error_code,
            "error_message": event.error_message,
        }))
    return found


def both(source: str, turns: list[str], server: StubServer, answers: list[Any] | None = None
         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``source`` run on google-adk as written, then here rewritten: what is compared of each."""
    program = HEAD + source + MAIN
    runs = []
    for text in (program, rewritten(program)):
        _, (events, state, error) = run_program(text, list(answers or []), server, turns)
        runs.append({"events": rows(events), "state": _plain(state), "requests": request_rows(server),
                     "unused_answers": len(server.responses), "error": error})
    assert "google" not in rewritten(program)
    theirs, ours = runs
    assert theirs["events"], "the case must run on google-adk"
    assert theirs["unused_answers"] == 0 and ours["unused_answers"] == 0
    return theirs, ours


def assert_same(theirs: dict[str, Any], ours: dict[str, Any], *, ordered: bool = True) -> None:
    if ordered:
        assert ours["events"] == theirs["events"]
    else:
        key = lambda row: json.dumps(row, sort_keys=True)  # noqa: E731
        assert sorted(ours["events"], key=key) == sorted(theirs["events"], key=key)
    assert ours["state"] == theirs["state"]
    assert ours["requests"] == theirs["requests"]
    assert ours["error"] == theirs["error"]


# -- side by side with google-adk ---------------------------------------------------------

ROUTING = '''
def classify(node_input: str):
    kind = "refund" if "refund" in node_input else ("bug" if "bug" in node_input else "other")
    return Event(output={"kind": kind, "text": node_input}, route=kind)

def refund(node_input: dict, ctx):
    ctx.state["queue"] = "billing"
    return f"refund for {node_input['text']}"

def bug(node_input: dict, ctx):
    ctx.state["queue"] = "engineering"
    ctx.route = "urgent" if "crash" in node_input["text"] else "later"
    return "bug filed"

def fallback(node_input):
    return "forwarded to a human"

def page_oncall(node_input):
    return f"paged: {node_input}"

def backlog(node_input):
    return f"backlog: {node_input}"

def retry_count(ctx):
    tries = ctx.state.get("tries", 0) + 1
    ctx.state["tries"] = tries
    return Event(output=tries, route="again" if tries < 3 else DEFAULT_ROUTE)

def close(node_input, queue: str, tries: int = 0):
    return {"closed": node_input, "queue": queue, "tries": tries}

bug_node, page_node, backlog_node = FunctionNode(func=bug), FunctionNode(func=page_oncall), FunctionNode(func=backlog)
root = Workflow(name="triage", edges=[
    (START, classify, {"refund": refund, "bug": bug_node, DEFAULT_ROUTE: fallback}),
    Edge(from_node=bug_node, to_node=page_node, route="urgent"),
    Edge(from_node=bug_node, to_node=backlog_node, route=["later", "someday"]),
    (page_node, retry_count, {"again": retry_count, DEFAULT_ROUTE: close}),
    (refund, close),
    (backlog_node, close),
])
'''


def test_conditional_routes_event_routes_ctx_route_default_route_route_lists_and_a_loop_as_google_adk(
        gemini: StubServer) -> None:
    """A node's ``Event(route=)``, ``ctx.route``, a route map with DEFAULT_ROUTE, an
    ``Edge`` with a list of routes and a routed self-loop: the same nodes run, with the
    same run numbers (``retry_count@1..3``), outputs, state and routes, over four turns."""
    theirs, ours = both(ROUTING, ["a refund please", "bug: it crashed", "bug: typo", "hello"], gemini)
    assert_same(theirs, ours)
    paths = [row["path"] for row in ours["events"]]
    assert "triage@1/retry_count@3" in paths and "triage@1/fallback@1" in paths
    assert ours["state"] == {"queue": "engineering", "tries": 3}


CITY_TIME = '''
from pydantic import BaseModel

class Report(BaseModel):
    city: str
    time: str

def pick_city(node_input: str, ctx):
    ctx.state["city"] = node_input.split()[-1].strip("?")
    ctx.state["user:visits"] = ctx.state.get("user:visits", 0) + 1

async def look_up(city: str, ctx) -> dict:
    times = {"Paris": "10:00", "Tokyo": "17:00"}
    return {"city": city, "time": times.get(city, "unknown")}

def report(node_input: dict) -> Report:
    return Report(city=node_input["city"], time=node_input["time"])

def say(node_input: dict, city: str):
    return types.Content(role="model", parts=[types.Part(text=f"In {city} it is {node_input['time']}.")])

root = Workflow(name="city_time", edges=[(START, pick_city, look_up, report, say)])
'''


def test_function_nodes_bind_state_and_input_and_return_values_models_content_and_nothing_as_google_adk(
        gemini: StubServer) -> None:
    """Function nodes: sync and async, parameters from the node input and from the
    session state (written by an earlier node), a node that returns nothing but writes
    state, a pydantic model (its dict as the output) and a Content (a message, no output)."""
    theirs, ours = both(CITY_TIME, ["what time is it in Paris?", "and in Tokyo?"], gemini)
    assert_same(theirs, ours)
    assert [row["text"] for row in ours["events"] if row["text"]] == ["In Paris it is 10:00.", "In Tokyo it is 17:00."]


FAN_OUT = '''
def split(node_input: str):
    return node_input.split()

def count_words(node_input: list):
    return len(node_input)

def first_word(node_input: list, ctx):
    ctx.state["first"] = node_input[0]
    return node_input[0]

async def last_word(node_input: list):
    return node_input[-1]

def combine(node_input: dict):
    return f"{node_input['count_words']} words, {node_input['first_word']}..{node_input['last_word']}"

def tag(node_input):
    return Event(output=node_input, route=["short", "any"] if len(node_input) < 40 else "any")

def short(node_input):
    return "short: " + node_input

def anything(node_input):
    return "any: " + node_input

def gather(node_input: dict):
    return sorted(node_input.values())

join = JoinNode(name="join")
root = Workflow(name="words", edges=[
    (START, split, (count_words, first_word, last_word), join, combine, tag, {"short": short, "any": anything}),
    ((short, anything), JoinNode(name="both"), gather),
])
'''


def test_fan_out_then_join_and_a_route_list_that_fans_out_as_google_adk(gemini: StubServer) -> None:
    """A tuple fans out to three concurrent branches (each on branch ``<node>@1``); a
    JoinNode waits for all three and gives their outputs by name; a node's list of
    routes takes two routed edges at once, joined again."""
    theirs, ours = both(FAN_OUT, ["the quick brown fox"], gemini)
    assert_same(theirs, ours, ordered=False)
    paths = [row["path"] for row in ours["events"]]
    branches = {row["path"]: row["branch"] for row in ours["events"]}
    assert branches["words@1/first_word@1"] == "first_word@1" and branches["words@1/join@1"] is None
    for branch in ("count_words@1", "first_word@1", "last_word@1"):
        assert paths.index(f"words@1/{branch}") < paths.index("words@1/join@1")
    assert ours["events"][-1]["output"] == ["any: 4 words, the..fox", "short: 4 words, the..fox"]
    assert ours["events"][-1]["output_for"] == ["words@1/gather@1", "words@1"]


NESTED = '''
from google.adk import Workflow as RootWorkflow  # the package's root import path too

def clean(node_input: str):
    return node_input.strip().lower()

def measure(node_input: str, ctx):
    ctx.state["length"] = len(node_input)
    return len(node_input)

def double(node_input: int):
    return node_input * 2

def describe(node_input: int):
    return f"twice the length is {node_input}"

measuring = Workflow(name="measuring", edges=[(START, measure, double)])
describing = RootWorkflow(name="describing", edges=[(START, describe)])
root = Workflow(name="outer", edges=[(START, clean, measuring, describing)])
'''


def test_a_nested_workflow_runs_under_its_node_path_and_gives_its_terminal_output_as_google_adk(
        gemini: StubServer) -> None:
    """Two nested workflows: their events authored by them, under ``outer@1/<inner>@1/``;
    the inner terminal node's output stands for the inner workflow (and, for the last,
    for the outer one too)."""
    theirs, ours = both(NESTED, ["  Hello There  "], gemini)
    assert_same(theirs, ours)
    last = ours["events"][-1]
    assert last["author"] == "describing" and last["output_for"] == [
        "outer@1/describing@1/describe@1", "outer@1/describing@1", "outer@1"]


LLM_NODE = '''
def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "sky": "sunny"}

def topic(node_input: str, ctx):
    ctx.state["city"] = node_input.split()[-1]
    return f"Tell me the weather in {ctx.state['city']}."

def sign(node_input: str, forecast: str):
    return f"{node_input} (signed; saved: {forecast == node_input})"

forecaster = LlmAgent(name="forecaster", model="gemini-2.0-flash",
                      instruction="You forecast for {city}. Use the tool.", tools=[get_weather],
                      output_key="forecast")
root = Workflow(name="weather", edges=[(START, topic, forecaster, sign)])
'''


def test_an_llm_agent_node_sees_its_input_as_the_message_and_its_own_turn_only_as_google_adk(
        gemini: StubServer) -> None:
    """An LlmAgent node between function nodes, against one Gemini stand-in: the model
    gets the node input as the user's message (not the session's history), its own tool
    call and result, the same tools and instruction; its answer is the node's output
    (``message_as_output``) and goes to ``output_key``; a second turn starts afresh."""
    answers = [harness.calls(("get_weather", {"city": "Oslo"})), gemini_response(text="Sunny in Oslo."),
               gemini_response(text="Still sunny.")]
    theirs, ours = both(LLM_NODE, ["weather in Oslo", "weather in Oslo"], gemini, answers)
    assert_same(theirs, ours)
    assert [r["contents"][0] for r in ours["requests"]] == [
        {"role": "user", "parts": [{"text": "Tell me the weather in Oslo."}]}] * 3
    answer = next(row for row in ours["events"] if row["text"] == "Sunny in Oslo.")
    assert answer["path"] == "weather@1/forecaster@1" and answer["message_as_output"] is True


FAILURES = '''
tries = {"flaky": 0}

def flaky(node_input: str):
    tries["flaky"] += 1
    if tries["flaky"] % 3:
        raise ConnectionError(f"attempt {tries['flaky']} failed")
    return node_input

def check(node_input: str, ctx):
    ctx.state["checked"] = True
    if "bad" in node_input:
        raise KeyError(node_input)
    return node_input

def after(node_input):
    return f"got {node_input}"

root = Workflow(name="wf", edges=[
    (START, FunctionNode(func=flaky, retry_config=RetryConfig(max_attempts=3, initial_delay=0.01, jitter=0.0)),
     check, after),
])
'''


def test_a_failing_node_is_retried_by_its_retry_config_then_fails_the_run_as_google_adk(gemini: StubServer) -> None:
    """Each failed attempt of a node is an error event on its path (the exception's
    class and text); RetryConfig tries it again; a node that raises past its attempts
    fails the run with its own exception, after its error event (with the state it
    wrote); the nodes after it do not run."""
    theirs, ours = both(FAILURES, ["fine", "bad input"], gemini)
    assert_same(theirs, ours)
    assert ours["error"] == "KeyError"
    codes = [(row["path"], row["error_code"]) for row in ours["events"] if row["error_code"]]
    assert codes == [("wf@1/flaky@1", "ConnectionError")] * 4 + [("wf@1/check@1", "KeyError")]


TIMEOUT_AND_TWO_OUTPUTS = '''
import asyncio

async def slow(node_input):
    await asyncio.sleep(30)

def chatty(node_input, ctx):
    ctx.state["first"] = 1
    yield "one"
    ctx.state["second"] = 2
    yield "two"

def after(node_input):
    return node_input

root = Workflow(name="wf", edges=[(START, {KIND}, after)])
'''


@pytest.mark.parametrize(("kind", "code", "error"), [
    ("FunctionNode(func=slow, timeout=0.2)", "NodeTimeoutError", "NodeTimeoutError"),
    ("chatty", "ValueError", "ValueError")])
def test_a_node_past_its_timeout_or_with_two_outputs_fails_the_run_as_google_adk(
        gemini: StubServer, kind: str, code: str, error: str) -> None:
    """A node past its ``timeout`` fails with NodeTimeoutError; a node that yields a
    second output fails with a ValueError (the first output and the state of both stay
    committed). The error texts are worded apart: compared by class."""
    theirs, ours = both(TIMEOUT_AND_TWO_OUTPUTS.replace("{KIND}", kind), ["go"], gemini)
    for run in (theirs, ours):
        for row in run["events"]:
            row["error_message"] = bool(row["error_message"])
    assert_same(theirs, ours)
    assert ours["error"] == error and ours["events"][-1]["error_code"] == code


STRUCTURED = '''
from pydantic import BaseModel

class Verdict(BaseModel):
    label: str
    score: int

judge = LlmAgent(name="judge", model="gemini-2.0-flash", instruction="Judge the message.",
                 output_schema=Verdict, output_key="verdict")

def act(node_input: dict, ctx):
    ctx.state["acted"] = node_input["label"]
    return Event(output=node_input["score"], route="high" if node_input["score"] > 5 else "low")

def high(node_input):
    return f"high {node_input}"

def low(node_input):
    return f"low {node_input}"

root = Workflow(name="review", edges=[(START, judge, act, {"high": high, "low": low})])
'''


def test_an_llm_agent_node_first_with_an_output_schema_gives_its_parsed_answer_as_google_adk(
        gemini: StubServer) -> None:
    """An LlmAgent right after START gets the user's message; with an ``output_schema``
    its answer's event carries the parsed answer as its ``output`` (not
    ``message_as_output``), which the next node routes on."""
    answers = [gemini_response(text='{"label": "good", "score": 8}'),
               gemini_response(text='{"label": "meh", "score": 2}')]
    theirs, ours = both(STRUCTURED, ["great product", "meh"], gemini, answers)
    assert_same(theirs, ours)
    assert [row["output"] for row in ours["events"] if row["path"].startswith("review@1/judge")] == [
        {"label": "good", "score": 8}, {"label": "meh", "score": 2}]
    assert [row["output"] for row in ours["events"] if row["output_for"] and "review@1" in row["output_for"]] == [
        "high 8", "low 2"]


# -- bad graphs ---------------------------------------------------------------------------


def _a(node_input: Any) -> int:
    return 1


def _b(node_input: Any) -> int:
    return 2


def _c(node_input: Any) -> int:
    return 3


def _bad_graphs(adk: Any) -> dict[str, Any]:
    w = adk

    def unreachable() -> Any:
        return w.Workflow(name="wf", edges=[(w.START, _a), w.Edge(from_node=w.FunctionNode(func=_b),
                                                                   to_node=w.FunctionNode(func=_c))])

    return {
        "an edge to a node START does not reach": (unreachable, "not in the graph from START"),
        "a cycle with no exit": (lambda: w.Workflow(name="wf", edges=[(w.START, _a, _b), (_b, _a)]), "no exit"),
        "two nodes of one name": (lambda: w.Workflow(name="wf", edges=[
            (w.START, _a), (_a, w.FunctionNode(func=_b, name="_a"))]), "named '_a'"),
        "no START": (lambda: w.Workflow(name="wf", edges=[(_a, _b)]), "START"),
        "a routing map with no route": (lambda: w.Workflow(name="wf", edges=[(w.START, _a, {})]), "no route"),
        "a routed edge from START": (lambda: w.Workflow(name="wf", edges=[
            w.Edge(from_node=w.START, to_node=w.FunctionNode(func=_a), route="x")]), "has a route"),
    }


@pytest.mark.parametrize("case", list(_bad_graphs(Workflow).keys()))
def test_bad_graphs_are_refused_when_built_on_both_sides(case: str) -> None:
    """Each bad graph raises a ValueError on google-adk and here, when the Workflow is
    built (before any run); ours is a GraphValidationError (a WorkflowConfigurationError)
    that names the workflow and what is wrong."""
    import google.adk.workflow as theirs_module

    import adk_actors.workflow as ours_module

    build, words = _bad_graphs(theirs_module)[case]
    with pytest.raises(ValueError):
        build()
    build, words = _bad_graphs(ours_module)[case]
    with pytest.raises(WorkflowConfigurationError) as raised:
        build()
    assert "'wf'" in str(raised.value) and words in str(raised.value)


def test_an_edge_to_a_node_named_by_a_string_the_graph_does_not_have_is_refused() -> None:
    """A node given by a name that no node of the graph has (only ``"START"`` is known
    by name): refused at build."""
    with pytest.raises(GraphValidationError, match="'summarize', which is not in the graph"):
        Workflow(name="wf", edges=[("START", _a, "summarize")])


def test_a_route_with_no_edge_ends_its_branch_as_google_adk(gemini: StubServer) -> None:
    """A route that none of a node's routed edges takes (and no DEFAULT_ROUTE): google-adk
    ends that branch (a warning) and so do we; a route map whose route leads nowhere is
    refused when built."""
    source = '''
def pick(node_input: str):
    return Event(output=node_input, route="nowhere")

def yes(node_input):
    return "yes"

root = Workflow(name="wf", edges=[(START, pick, {"yes": yes})])
'''
    theirs, ours = both(source, ["hi"], gemini)
    assert_same(theirs, ours)
    assert [row["path"] for row in ours["events"]] == ["wf@1/pick@1"]
    with pytest.raises(GraphValidationError, match="route 'yes' has no edge"):
        Workflow(name="wf", edges=[("START", _a, {"yes": None})])


def test_two_terminal_outputs_fail_the_run_as_in_google_adk() -> None:
    """A fan-out whose branches both end the graph with an output: google-adk fails the
    run (a workflow has at most one terminal output); so do we, after their events."""
    import asyncio

    from adk_actors import types
    from adk_actors.runners import InMemoryRunner
    from adk_actors.workflow import START

    root = Workflow(name="wf", edges=[(START, (_a, _b))])

    async def main() -> list[Any]:
        runner = InMemoryRunner(agent=root, app_name="graphs")
        session = await runner.session_service.create_session(app_name="graphs", user_id="ann")
        seen = []
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text="x")])):
            seen.append(event)
        return seen

    with pytest.raises(WorkflowConfigurationError, match="2 terminal nodes gave an output"):
        asyncio.run(asyncio.wait_for(main(), timeout=30))


def test_an_output_that_cannot_be_stored_fails_its_node_with_a_typed_error() -> None:
    """A node output is stored with its event, as JSON: an object that cannot be is a
    WorkflowDataError of that node (an error event on its path, then the run fails),
    not an error in the session's store."""
    import asyncio

    from adk_actors import types
    from adk_actors.runners import InMemoryRunner
    from adk_actors.workflow import START, WorkflowDataError

    def opaque(node_input: Any) -> object:
        return object()

    root = Workflow(name="wf", edges=[(START, opaque, _a)])
    seen: list[Any] = []

    async def main() -> None:
        runner = InMemoryRunner(agent=root, app_name="graphs")
        session = await runner.session_service.create_session(app_name="graphs", user_id="ann")
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text="x")])):
            seen.append(event)

    with pytest.raises(WorkflowDataError, match="'opaque' gave an output that cannot be stored as JSON"):
        asyncio.run(asyncio.wait_for(main(), timeout=30))
    assert [(e.node_info.path, e.error_code) for e in seen] == [("wf@1/opaque@1", "WorkflowDataError")]


# -- on a real host -----------------------------------------------------------------------


def test_a_workflow_app_runs_on_a_host_and_its_node_events_are_stored_with_their_paths(
        actor_system: Any, tmp_path: Path) -> None:
    """An app whose root is a Workflow (a route, a fan-out to two functions and a nested
    workflow, a join) served by a real host: the run's events come back with their node
    paths and outputs, the session's stored events keep them, and the state the nodes
    wrote is the session's."""
    config = HostConfig(apps=workflow_apps.APPS, data_dir=str(tmp_path / "data"), partitions=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("graph")
        runner.create_session("ann", "s1")
        events = list(runner.run("ann", "s1", "hello world"))
        nodes = [e for e in events if e.node_info is not None]
        paths = [e.node_info.path for e in nodes]
        assert paths[:2] == ["graph_app@1/classify@1", "graph_app@1/long_path@1"]
        assert sorted(paths[2:5]) == ["graph_app@1/inner@1/shout@1", "graph_app@1/left@1", "graph_app@1/right@1"]
        assert paths[5:] == ["graph_app@1/gather@1", "graph_app@1/summary@1"]
        summary = "inner=long:HELLO WORLD! + left=L(long:HELLO WORLD) + right=R(long:HELLO WORLD)"
        assert nodes[-1].output == summary and nodes[-1].node_info.output_for == [
            "graph_app@1/summary@1", "graph_app@1"]
        assert runner.get_state("ann", "s1") == {"path": "long", "summary": summary}
        stored = [e for e in runner.get_session("ann", "s1").events if e.node_info is not None]
        assert [(e.node_info.path, e.output, e.branch) for e in stored] == [
            (e.node_info.path, e.output, e.branch) for e in nodes]
        assert {e.author for e in stored} == {"graph_app", "inner"}
        short = [e for e in runner.run("ann", "s1", "hi") if e.node_info is not None]
        assert short[1].node_info.path == "graph_app@1/short_path@1"
        assert runner.get_state("ann", "s1")["path"] == "short"


def test_a_killed_workflow_run_is_not_resumed_by_running_its_finished_nodes_again(
        actor_system: Any, tmp_path: Path) -> None:
    """A workflow run whose worker is killed (kill -9) in its second node, a function
    node not marked safe to rerun, once resumed stops for a decision on that node (its
    path as the call id), and its first node (a side effect counted outside the host)
    has run once, its committed output event still in the session (the full resume
    tests: tests/test_workflow_resume.py)."""
    config = HostConfig(apps=workflow_apps.APPS, data_dir=str(tmp_path / "data"), partitions=1)
    counts = tmp_path / "counts.txt"
    with Host(config, system=actor_system) as host:
        runner = host.runner("held")
        runner.create_session("ann", "s1", state={"counts_file": str(counts)})
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["events"] = list(runner.run("ann", "s1", "go", run_id="run-first"))
            except Exception as exc:
                box["error"] = exc

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        pid = int(wait_until(lambda: Path(f"{counts}.pid").exists() and Path(f"{counts}.pid").read_text().strip(),
                             timeout=20))
        os.kill(pid, signal.SIGKILL)
        thread.join(15)
        assert not thread.is_alive() and isinstance(box.get("error"), RunFailedError)
        with pytest.raises(RunFailedError, match=r"needs_decision.*held_app@1/hold@1"):
            list(runner.resume("ann", "s1", "run-first"))
        assert counts.read_text() == "step\n"
        stored = [e.node_info.path for e in runner.get_session("ann", "s1").events if e.node_info is not None]
        assert stored == ["held_app@1/count_step@1"]
