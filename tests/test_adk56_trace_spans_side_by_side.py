"""Issue 56: the OpenTelemetry spans of a turn, google-adk 2.13's and ours, side by side.

The same program (google-adk's source, and the same with its imports rewritten for
ours) runs against one Gemini REST stand-in on 127.0.0.1: on google-adk in this
process (its ``InMemoryRunner``, its spans through an in-memory exporter on the
process's OpenTelemetry provider); on ours in this process (our ``InMemoryRunner``, its
spans through our trace recorder, ``adk_actors.tracing``, and through the
OpenTelemetry bridge, ``adk_actors.otel``); and on a host (``adk-actors serve``), the
session's trace as ``/dev/apps/{app}/debug/trace/session/{id}`` serves it. Three apps:

* ``helped``: an agent that asks ``helper`` (an ``AgentTool``). The helper's spans sit
  under the tool's span, in the turn's trace, and name the helper's own session (a new
  one, google-adk's ``AgentTool`` runs its agent in a new in-memory session: a UUID) as
  their ``gen_ai.conversation.id``, and the helper's own invocation on its model call.
* ``flow``: a ``Workflow`` whose nodes are an agent and a nested workflow of one agent.
  Each workflow run is an ``invoke_workflow <name>`` span (no ``invoke_agent`` span
  of its own) with ``gen_ai.workflow.name``, and ``gen_ai.workflow.nested`` on the
  nested one only; its nodes' spans under it.
* ``nodes``: a ``Workflow`` of function nodes (one runs a child by ``ctx.run_node``, one
  is retried once), a join, a nested workflow of one generator node, and an agent.
  Each attempt of a function node is an ``invoke_node <name>`` span under its
  workflow's (the child's under its caller's), with the ids of the events it made
  (``gcp.vertex.agent.associated_event_ids``, compared as those events' node paths);
  the failed attempt's span has none and is failed (google-adk: its status; ours:
  ``error.type``).

What is compared of each span: its name, its place in the tree (children in the order
they started), ``gen_ai.operation.name``, ``gen_ai.agent.name``, ``gen_ai.tool.name``,
``gen_ai.workflow.name``, ``gen_ai.workflow.nested``, a node's associated events, whether
it failed, ``gen_ai.conversation.id`` (the
caller's session, or another, UUID, session by order of appearance; a span that names
none, as google-adk's ``execute_tool`` span, compared as naming none) and, on a model
call's span, its invocation (the turn's, or another by order of appearance). A model
call's span is compared by its name and operation as they are (``generate_content``).
What is left out, on purpose, and why:

* google-adk 2.13 (telemetry schema 2, its default) opens an ``invoke_workflow <root>``
  span for every runner invocation, also one whose root is an agent (the turn's, and
  the AgentTool's run of ``helper``), around that agent's ``invoke_agent`` span. Ours
  opens one for a ``Workflow`` only: such a wrapper of one ``invoke_agent`` span of
  the same name is folded into it on google-adk's side.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google_adk_harness import rewritten
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_actors.testing import StubServer, gemini_answers, gemini_response

TESTS = Path(__file__).resolve().parent
THEIRS, OURS = "their_traced56", "our_traced56"
ASSOCIATED = "gcp.vertex.agent.associated_event_ids"
USER = "ida"

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.tools.agent_tool import AgentTool
from google.adk.workflow import FunctionNode, JoinNode, RetryConfig, Workflow

helper = Agent(name="helper", model="gemini-2.5-flash", instruction="Take notes.", description="Takes notes.")
helped = Agent(name="helped", model="gemini-2.5-flash", instruction="Help.", tools=[AgentTool(agent=helper)])

writer = Agent(name="writer", model="gemini-2.5-flash", instruction="Write a line.")
summer = Agent(name="summer", model="gemini-2.5-flash", instruction="Sum it up.")
inner = Workflow(name="inner", edges=[("START", summer)])
flow = Workflow(name="flow", edges=[("START", writer, inner)])

closer = Agent(name="closer", model="gemini-2.5-flash", instruction="Write a line.")
tries = []


def parse(node_input):
    return {"n": 1}


def double(node_input):
    return {"n": node_input["n"] * 2}


async def fan(ctx, node_input):
    return await ctx.run_node(FunctionNode(name="kid", func=double), node_input)


def note(ctx, node_input):
    ctx.state["noted"] = True
    yield "noted"


def flaky(node_input):
    tries.append(1)
    if len(tries) < 2:
        raise RuntimeError("not yet")
    return "steady"


deep = Workflow(name="deep", edges=[("START", FunctionNode(name="note", func=note))])
nodes = Workflow(name="nodes", edges=[
    ("START", parse, (FunctionNode(name="fan", func=fan, rerun_on_resume=True), deep), JoinNode(name="meet"),
     FunctionNode(name="flaky", func=flaky, retry_config=RetryConfig(max_attempts=2, initial_delay=0.01)), closer)])
'''


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """By the agent's instruction: the helper, the writer and the summer answer in text;
    ``helped`` asks the helper, then says "Done." once it answered."""
    system = json.dumps(body.get("systemInstruction") or body.get("system_instruction") or "")
    for instruction, text in (("Take notes.", "Noted."), ("Write a line.", "A line."), ("Sum it up.", "Summed.")):
        if instruction in system:
            return dict(gemini_response(text).json)
    last = (body.get("contents") or [{}])[-1].get("parts") or []
    if any("functionResponse" in part for part in last):
        return dict(gemini_response("Done.").json)
    return dict(gemini_response(function_calls=[("helper", {"request": "note this"})]).json)


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(answer)) as server:
        yield server.url


@pytest.fixture
def programs(stand_in: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The stand-in named by google-genai's variables alone (google-adk's default
    telemetry schema); the program as two importable packages under ``tmp_path/agents``
    (google-adk's, and ours rewritten), forgotten afterwards."""
    for name in ("GEMINI_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
                 "GOOGLE_CLOUD_LOCATION", "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", stand_in)
    for package, text in ((THEIRS, PROGRAM), (OURS, rewritten(PROGRAM))):
        (tmp_path / "agents" / package).mkdir(parents=True)
        (tmp_path / "agents" / package / "__init__.py").write_text("from . import agent\n")
        (tmp_path / "agents" / package / "agent.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path / "agents"))
    yield tmp_path
    for name in [n for n in sys.modules if n.split(".")[0] in (THEIRS, OURS)]:
        del sys.modules[name]


# -- the spans, as rows: name, span id, parent's id, start, attributes -------------------


def otel_rows(spans: Any) -> list[dict[str, Any]]:
    return [{"name": s.name, "span_id": s.context.span_id, "parent_span_id": s.parent.span_id if s.parent else None,
             "start_time": s.start_time, "attributes": dict(s.attributes or {}),
             "failed": s.status.status_code.name == "ERROR"} for s in spans]


@contextlib.contextmanager
def google_adk_exporter() -> Iterator[InMemorySpanExporter]:
    """google-adk's spans made inside the block, in memory. Its tracer is the process's
    OpenTelemetry provider's: when none is set, an SDK one is (OpenTelemetry allows one
    per process); an in-memory exporter is added to it, and shut down on the way out
    (the provider keeps the processor, the exporter takes nothing more)."""
    from opentelemetry import trace

    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider), f"the process's tracer provider is not the SDK's: {provider!r}"
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield exporter
    finally:
        exporter.shutdown()


async def _turn(runner: Any, app: str, message: Any) -> tuple[str, str, dict[str, str]]:
    """One turn in a new session: (the session's id, the turn's invocation id, each
    event's node path (its author outside a graph) by its id)."""
    session = await runner.session_service.create_session(app_name=app, user_id=USER)
    events = [event async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message)]
    assert events, "the turn made no event"
    paths = {e.id: e.node_info.path if e.node_info is not None and e.node_info.path else e.author for e in events}
    return session.id, events[-1].invocation_id, paths


def google_adk_turn(app: str) -> tuple[list[dict[str, Any]], str, str, dict[str, str]]:
    """``app`` of the program run on google-adk, one turn: its spans, the session's id,
    the turn's invocation id, its events' node paths by id."""
    import importlib

    from google.adk.runners import InMemoryRunner
    from google.genai import types

    root = getattr(importlib.import_module(f"{THEIRS}.agent"), app)
    runner = InMemoryRunner(agent=root, app_name=app)
    message = types.Content(role="user", parts=[types.Part(text="Go.")])
    with google_adk_exporter() as exporter:
        session, invocation, paths = asyncio.run(asyncio.wait_for(_turn(runner, app, message), timeout=60))
        spans = otel_rows(exporter.get_finished_spans())
    return spans, session, invocation, paths


def our_turn(app: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str, str, dict[str, str]]:
    """``app`` of the program run on ours in this process, one turn: its spans as our
    trace recorder keeps them (``web_ui``) and as the OpenTelemetry bridge gives them,
    the session's id, the turn's invocation id, its events' node paths by id."""
    import importlib

    from adk_actors import types
    from adk_actors.otel import attach_opentelemetry, detach_opentelemetry
    from adk_actors.runners import InMemoryRunner
    from adk_actors.tracing import TraceRecorder

    root = getattr(importlib.import_module(f"{OURS}.agent"), app)
    runner = InMemoryRunner(agent=root, app_name=app)
    message = types.Content(role="user", parts=[types.Part(text="Go.")])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = TraceRecorder()
    recorder.attach("test-adk56-trace")
    attach_opentelemetry(provider.get_tracer("test"))
    try:
        session, invocation, paths = asyncio.run(asyncio.wait_for(_turn(runner, app, message), timeout=60))
    finally:
        detach_opentelemetry()
        recorder.detach("test-adk56-trace")
    recorded = [span.web_ui() for span in recorder.take(invocation)]
    return recorded, otel_rows(exporter.get_finished_spans()), session, invocation, paths


# -- what is compared: the tree of spans --------------------------------------------------


class _Labels:
    """An id as what it is: the caller's (``mine``), or another id of the same kind
    (``kind`` #n, by order of appearance: ids are random on both sides); anything
    else (an id of no such kind) as it is, so that it does not compare equal."""

    def __init__(self, mine: str, own: str, kind: str, uuid_only: bool) -> None:
        self.mine, self.own, self.kind, self.uuid_only = mine, own, kind, uuid_only
        self.seen: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        if value == self.mine:
            return self.own
        if self.uuid_only:
            try:
                uuid.UUID(str(value))
            except ValueError:
                return value
        return self.seen.setdefault(str(value), f"{self.kind} #{len(self.seen) + 1}")


def tree(rows: list[dict[str, Any]], session: str, invocation: str,
         paths: dict[str, str] | None = None) -> list[Any]:
    """The spans as a tree of comparable nodes (see the module): each a name, what is
    compared of its attributes, and its children in the order they started; google-adk's
    runner's wrapper of one agent's span folded into it. A node's associated events
    are read as their node paths (``paths``: by event id)."""
    by_id = {row["span_id"]: row for row in rows}
    children: dict[Any, list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: r["start_time"]):
        parent = row["parent_span_id"] if row["parent_span_id"] in by_id else None
        children.setdefault(parent, []).append(row)
    sessions = _Labels(session, "the caller's session", "another session", uuid_only=True)
    invocations = _Labels(invocation, "the turn's invocation", "another invocation", uuid_only=False)

    def node(row: dict[str, Any]) -> Any:
        kids = children.get(row["span_id"], [])
        name, attributes = row["name"], row["attributes"]
        if (name.startswith("invoke_workflow ") and len(kids) == 1
                and kids[0]["name"] == "invoke_agent " + name.removeprefix("invoke_workflow ")):
            return node(kids[0])  # google-adk's runner's span around an agent's run
        operation = attributes.get("gen_ai.operation.name")
        kept: dict[str, Any] = {"operation": operation}
        for key in ("gen_ai.agent.name", "gen_ai.tool.name", "gen_ai.workflow.name", "gen_ai.workflow.nested"):
            if key in attributes:
                kept[key] = attributes[key]
        if ASSOCIATED in attributes:
            kept["events"] = [(paths or {}).get(i, f"no event of the turn: {i}") for i in attributes[ASSOCIATED]]
        if row.get("failed") or "error.type" in attributes:  # google-adk's: its status; ours: also error.type
            kept["failed"] = True
        if "gen_ai.conversation.id" in attributes:  # google-adk's execute_tool span names none
            kept["conversation"] = sessions(attributes["gen_ai.conversation.id"])
        if kept["operation"] == "generate_content":
            kept["invocation"] = invocations(attributes.get("gcp.vertex.agent.invocation_id"))
        return [name, kept, [node(kid) for kid in kids]]

    return [node(row) for row in children.get(None, [])]


def assert_alike(theirs: list[Any], ours: list[Any], what: str) -> None:
    assert ours == theirs, (f"{what}:\nours:   {json.dumps(ours, indent=1)}\n"
                            f"theirs: {json.dumps(theirs, indent=1)}")


def _agent(name: str, session: str, *children: Any) -> Any:
    return [f"invoke_agent {name}", {"operation": "invoke_agent", "gen_ai.agent.name": name, "conversation": session},
            list(children)]


def _model(agent: str, session: str, invocation: str) -> Any:
    return ["generate_content gemini-2.5-flash", {"operation": "generate_content", "gen_ai.agent.name": agent,
                                                  "conversation": session, "invocation": invocation}, []]


#: what both must give for ``helped`` (google-adk's, as read here)
HELPED = [_agent(
    "helped", "the caller's session",
    _model("helped", "the caller's session", "the turn's invocation"),
    ["execute_tool helper", {"operation": "execute_tool", "gen_ai.agent.name": "helped", "gen_ai.tool.name": "helper"},
     [_agent("helper", "another session #1", _model("helper", "another session #1", "another invocation #1"))]],
    _model("helped", "the caller's session", "the turn's invocation"))]

#: what both must give for ``flow`` (google-adk's, as read here)
FLOW = [["invoke_workflow flow", {"operation": "invoke_workflow", "gen_ai.workflow.name": "flow",
                                  "conversation": "the caller's session"},
         [_agent("writer", "the caller's session", _model("writer", "the caller's session", "the turn's invocation")),
          ["invoke_workflow inner", {"operation": "invoke_workflow", "gen_ai.workflow.name": "inner",
                                     "gen_ai.workflow.nested": True, "conversation": "the caller's session"},
           [_agent("summer", "the caller's session",
                   _model("summer", "the caller's session", "the turn's invocation"))]]]]]


def _node(name: str, *events: str, failed: bool = False, children: tuple[Any, ...] = ()) -> Any:
    kept: dict[str, Any] = {"operation": "invoke_node"}
    if events:
        kept["events"] = list(events)
    if failed:
        kept["failed"] = True
    kept["conversation"] = "the caller's session"
    return [f"invoke_node {name}", kept, list(children)]


#: what both must give for ``nodes`` (google-adk's, as read here): one span per attempt
#: of a function node (a join's too), under its workflow's (a ``ctx.run_node`` child's
#: under its caller's), with the node paths of the events it made; a failed attempt's
#: with none, marked failed
NODES = [["invoke_workflow nodes", {"operation": "invoke_workflow", "gen_ai.workflow.name": "nodes",
                                    "conversation": "the caller's session"},
          [_node("parse", "nodes@1/parse@1"),
           _node("fan", "nodes@1/fan@1", children=(_node("kid", "nodes@1/fan@1/kid@1"),)),
           ["invoke_workflow deep", {"operation": "invoke_workflow", "gen_ai.workflow.name": "deep",
                                     "gen_ai.workflow.nested": True, "conversation": "the caller's session"},
            [_node("note", "nodes@1/deep@1/note@1")]],
           _node("meet", "nodes@1/meet@1"),
           _node("flaky", failed=True),
           _node("flaky", "nodes@1/flaky@1"),
           _agent("closer", "the caller's session",
                  _model("closer", "the caller's session", "the turn's invocation"))]]]


@pytest.mark.parametrize(("app", "expected"), [("helped", HELPED), ("flow", FLOW), ("nodes", NODES)],
                         ids=["agent_tool", "workflow", "function_nodes"])
def test_in_process_spans_are_google_adks(programs: Path, app: str, expected: list[Any] | None) -> None:
    """The turn's spans on ours in this process, through the trace recorder and through
    the OpenTelemetry bridge, are google-adk's (see the module): an AgentTool's child
    spans name its own session; a Workflow's run is an invoke_workflow span."""
    theirs = tree(*google_adk_turn(app))
    assert theirs == expected, json.dumps(theirs, indent=1)  # what this file reads of google-adk's still holds
    recorded, bridged, session, invocation, paths = our_turn(app)
    assert_alike(theirs, tree(recorded, session, invocation, paths), "our trace recorder")
    assert_alike(theirs, tree(bridged, session, invocation, paths), "our OpenTelemetry bridge")


@pytest.mark.timeout(300)  # a host to start on a loaded machine
def test_a_hosts_session_traces_are_google_adks(programs: Path) -> None:
    """Both apps served by a host: each session's trace, as ``/dev/apps/{app}/debug/trace/session/{id}``
    serves it, is google-adk's spans of the same turn (see the module)."""
    from conftest import serving

    apps_run = ("helped", "flow", "nodes")
    theirs = {app: tree(*google_adk_turn(app)) for app in apps_run}
    assert theirs == {"helped": HELPED, "flow": FLOW, "nodes": NODES}, json.dumps(theirs, indent=1)
    (programs / "host").mkdir()
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), str(programs / "agents")])}
    apps = "".join(f'{app} = "{OURS}.agent:{app}"\n' for app in apps_run)
    with serving(programs / "host", apps=apps, env=env) as info, \
            httpx.Client(base_url=info["url"], timeout=60) as http:
        for app in apps_run:
            session = http.post(f"/apps/{app}/users/{USER}/sessions").json()["id"]
            ran = http.post("/run", json={"appName": app, "userId": USER, "sessionId": session,
                                          "newMessage": {"role": "user", "parts": [{"text": "Go."}]}})
            assert ran.status_code == 200, ran.text
            invocation = ran.json()[-1]["invocationId"]
            paths = {e["id"]: (e.get("nodeInfo") or {}).get("path") or e["author"] for e in ran.json()}
            served = http.get(f"/dev/apps/{app}/debug/trace/session/{session}")
            assert served.status_code == 200, served.text
            assert_alike(theirs[app], tree(served.json(), session, invocation, paths), f"a host's trace of {app}")
