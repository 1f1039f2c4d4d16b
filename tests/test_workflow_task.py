"""google-adk 2.x's task mode (``LlmAgent(mode="task")``) as a workflow node (issue 55):
the same programs run on google-adk 2.13 as written and here with only their imports
rewritten (tests/google_adk_harness.py), against one Gemini stand-in on 127.0.0.1.

A task agent talks with the user until it calls ``finish_task``: a question in text
ends the turn and the node waits (nothing after it runs); the user's next message
takes it up again, over its own scope (its input, its own events, the user's answers);
``finish_task``'s accepted arguments are the node's output (the value under ``result``
when the output schema is not an object's), handed to the next node, and go to
``output_key``; arguments the schema refuses get an error response and the model is
asked again. Compared, as tests/test_workflows.py compares graph runs: each event as a
google-adk user reads it (author, text, calls, responses, ``node_info.path``,
``output_for``, ``message_as_output``, ``output``, route, branch, state delta), the
final state, and every request the model received: its contents, its instruction up
to the identity line, and its tools by name and parameters. What differs by design:
the wording of ``finish_task``'s description, of the instruction line it adds and
of its refusal of bad arguments (ours are our own words; a refusal must name the field), and the schema's ``description``, ``title`` and
``additionalProperties`` keys (our Gemini wire sends ``parameters``, which has no
``additionalProperties``); each is checked to be there on our side.

Then on a real host: a task node that waits across a kill -9 of its session's
partition, taken up from the store on the next turn; and in process, a task node run
cut after each of its committed events and resumed.
"""

from __future__ import annotations

import asyncio
import copy
import os
import signal
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
import workflow_task_apps
from google_adk_harness import request_rows, rewritten, run_program
from test_workflows import HEAD, MAIN, rows

from adk_actors import Content, LlmAgent
from adk_actors._exceptions import AgentDefinitionError
from adk_actors.engine import SessionView, resume_invocation, run_invocation
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host, HostConfig
from adk_actors.testing import StubServer, gemini_response
from adk_actors.tools import FunctionTool
from adk_actors.workflow import START, FunctionNode, Workflow, WorkflowConfigurationError
from supervision import SupervisorClient
from supervision.testing import wait_until

pytest.importorskip("google.adk.workflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

WORDED = {"description", "title", "additionalProperties"}


def _schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _schema(v) for k, v in schema.items() if k not in WORDED}
    if isinstance(schema, list):
        return [_schema(v) for v in schema]
    return schema


def _refusal(response: dict[str, Any]) -> dict[str, Any]:
    """``finish_task``'s refusal with its wording left out; it must name the field."""
    if set(response) == {"error"}:
        assert "people" in response["error"], response
        return {"error": "(worded by each side)"}
    return response


def _events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The event rows with the wording of ``finish_task``'s refusals left out."""
    found = copy.deepcopy(events)
    for event in found:
        event["responses"] = [[name, _refusal(response) if name == "finish_task" else response]
                              for name, response in event["responses"]]
    return found


def _compared(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The requests with ``finish_task``'s wording left out (see the module)."""
    found = copy.deepcopy(requests)
    for request in found:
        for content in request["contents"]:
            for part in content.get("parts", []):
                answered = part.get("functionResponse")
                if answered and answered["name"] == "finish_task":
                    answered["response"] = _refusal(answered["response"])
        for tool in request["tools"]:
            if tool["name"] == "finish_task":
                assert tool["description"], "finish_task is described to the model"
                tool["description"] = "(worded by each side)"
                tool["parameters"] = _schema(tool["parameters"])
    return found


def both(source: str, turns: list[str], server: StubServer, answers: list[Any]) -> tuple[dict[str, Any], ...]:
    """``source`` run on google-adk as written, then here rewritten: what is compared of
    each; both must have used the whole script of answers."""
    program = HEAD + source + MAIN
    runs = []
    for text in (program, rewritten(program)):
        _, (events, state, error) = run_program(text, list(answers), server, turns)
        raw = [r.body for r in server.requests]
        runs.append({"events": rows(events), "state": harness._plain(state), "requests": request_rows(server),
                     "raw": raw, "unused_answers": len(server.responses), "error": error})
    assert "google" not in rewritten(program)
    theirs, ours = runs
    assert theirs["events"] and theirs["error"] is None, theirs["error"]
    assert theirs["unused_answers"] == 0 and ours["unused_answers"] == 0
    return theirs, ours


def assert_same(theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    assert _events(ours["events"]) == _events(theirs["events"])
    assert ours["state"] == theirs["state"]
    assert _compared(ours["requests"]) == _compared(theirs["requests"])
    assert ours["error"] == theirs["error"]
    for body in ours["raw"]:  # our own instruction line about finish_task is there
        instruction = "".join(p.get("text", "") for p in body["systemInstruction"]["parts"])
        assert "`finish_task`" in instruction


BOOKING = '''
def confirm(node_input, ctx):
    ctx.state["confirmed"] = node_input
    return f"confirmed: {node_input['result']}"

booker = LlmAgent(name="booker", model="gemini-2.0-flash", instruction="Book a table for the user.", mode="task")
root = Workflow(name="booking", edges=[(START, booker, confirm)])
'''


def test_a_task_node_asks_the_user_waits_and_hands_finish_tasks_result_to_the_next_node_as_google_adk(
        gemini: StubServer) -> None:
    """Turn 1: the task agent asks a question (its text, no output): the node waits and
    ``confirm`` does not run. Turn 2: the user's answer takes the node up again (the
    model gets the answer as the task's input, the question, and the answer); it calls
    ``finish_task``, whose response ends the task (the model is not asked again): its
    arguments are the node's output and ``confirm``'s input. Turn 3, after the task
    ended: the node runs again with the new message as its input, and its scope holds
    the earlier task's events but not the new message a second time (it answers no
    waiting task)."""
    answers = [gemini_response(text="For how many people?"),
               harness.calls(("finish_task", {"result": "a table for two at 19:00"})),
               gemini_response(text="Which day?")]
    theirs, ours = both(BOOKING, ["book me a table", "two of us", "and another one"], gemini, answers)
    assert_same(theirs, ours)
    events = ours["events"]
    assert [e["path"] for e in events] == ["booking@1/booker@1"] * 3 + ["booking@1/confirm@1", "booking@1/booker@1"]
    assert events[0]["text"] == "For how many people?" and events[0]["output"] is None
    assert events[2]["output"] == {"result": "a table for two at 19:00"}
    assert events[2]["output_for"] == ["booking@1/booker@1"]
    assert ours["state"] == {"confirmed": {"result": "a table for two at 19:00"}}
    assert [r["contents"][-1]["parts"][0]["text"] for r in ours["requests"][:2]] == ["book me a table", "two of us"]
    assert ours["requests"][2]["contents"][0]["parts"][0]["text"] == "and another one"
    assert len(ours["requests"][2]["contents"]) == 5
    assert [t["name"] for t in ours["requests"][0]["tools"]] == ["finish_task"]


SCHEMA = '''
from pydantic import BaseModel

class Booking(BaseModel):
    people: int
    time: str

def check_table(time: str) -> dict:
    """Whether a table is free at a time."""
    return {"time": time, "free": True}

def confirm(node_input, booking):
    return f"{node_input['people']} at {node_input['time']} (saved: {booking == node_input})"

booker = LlmAgent(name="booker", model="gemini-2.0-flash", instruction="Book a table.", mode="task",
                  tools=[check_table], output_schema=Booking, output_key="booking")
root = Workflow(name="booking", edges=[(START, booker, confirm)])
'''


def test_a_task_nodes_output_schema_checks_finish_task_and_its_result_goes_to_output_key_as_google_adk(
        gemini: StubServer) -> None:
    """With an ``output_schema`` (an object) and tools: the model uses its tool, calls
    ``finish_task`` with arguments the schema refuses (an error response, and the model
    is asked again), then with valid ones: those arguments are the output, stored under
    ``output_key`` with the event that ends the task."""
    answers = [harness.calls(("check_table", {"time": "19:00"})),
               harness.calls(("finish_task", {"people": "many", "time": "19:00"})),
               harness.calls(("finish_task", {"people": 2, "time": "19:00"}))]
    theirs, ours = both(SCHEMA, ["a table for two at 19:00"], gemini, answers)
    assert_same(theirs, ours)
    refused = next(e for e in ours["events"] if e["responses"] and e["responses"][0][0] == "finish_task")
    assert "error" in refused["responses"][0][1] and refused["output"] is None
    ended = next(e for e in ours["events"] if e["output"] is not None)
    assert ended["output"] == {"people": 2, "time": "19:00"}
    assert ended["state_delta"] == {"booking": {"people": 2, "time": "19:00"}}
    assert ours["events"][-1]["output"] == "2 at 19:00 (saved: True)"
    declared = {t["name"]: t for t in ours["requests"][0]["tools"]}
    assert _schema(declared["finish_task"]["parameters"])["required"] == ["people", "time"]


WRAPPED = '''
def report(node_input: int):
    return f"{node_input} seats"

counter = LlmAgent(name="counter", model="gemini-2.0-flash", instruction="Count the seats.", mode="task",
                   output_schema=int)
root = Workflow(name="seats", edges=[(START, counter, report)])
'''


def test_a_task_node_whose_schema_is_not_an_object_takes_it_wrapped_under_result_as_google_adk(
        gemini: StubServer) -> None:
    """``output_schema=int``: ``finish_task`` takes ``{"result": <int>}`` and the node's
    output is the number itself."""
    answers = [harness.calls(("finish_task", {"result": 12}))]
    theirs, ours = both(WRAPPED, ["how many seats?"], gemini, answers)
    assert_same(theirs, ours)
    assert [e["output"] for e in ours["events"] if e["output"] is not None] == [12, "12 seats"]
    declared = ours["requests"][0]["tools"][0]["parameters"]
    assert _schema(declared) == {"type": "object", "properties": {"result": {"type": "integer"}},
                                 "required": ["result"]}


def test_a_task_node_after_another_node_and_a_schema_pydantic_cannot_check_are_refused_when_built() -> None:
    """A task agent after a node other than START is refused here (google-adk takes it
    up where it waited; ours would run the graph again from START): a
    WorkflowConfigurationError naming both nodes. A task agent whose ``output_schema``
    is no type pydantic checks values with is refused when built."""

    def prepare(node_input: str) -> str:
        return node_input

    agent = LlmAgent(name="booker", model="gemini-2.0-flash", mode="task")
    with pytest.raises(WorkflowConfigurationError, match=r"'booker' has mode='task' and follows node 'prepare'"):
        Workflow(name="wf", edges=[(START, prepare, agent)])
    with pytest.raises(AgentDefinitionError, match=r"'odd': output_schema of a task agent must be a type"):
        LlmAgent(name="odd", model="gemini-2.0-flash", mode="task", output_schema=object())


# -- on a real host -----------------------------------------------------------------------


def test_a_task_node_on_a_host_waits_across_a_partition_kill_and_finishes_on_the_next_turn(
        gemini: StubServer, actor_system: Any, tmp_path: Path) -> None:
    """A task agent node served by a real host: turn 1 asks (the node waits, ``confirm``
    does not run), its events stored with their node path; kill -9 of the session's
    partition between the turns; turn 2, on the restarted partition, takes the task up
    from the store (the model gets the task's input, its question and the answer),
    ``finish_task`` ends it and ``confirm`` gets its result."""
    with gemini._lock:
        gemini.requests.clear()
        gemini.responses.clear()
    gemini.add(gemini_response(text="For how many people?"),
               harness.calls(("finish_task", {"result": "a table for two"})))
    config = HostConfig(apps=workflow_task_apps.APPS, data_dir=str(tmp_path / "data"), partitions=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("booking")
        runner.create_session("ann", "s1")
        first = [e for e in runner.run("ann", "s1", "book me a table") if e.node_info is not None]
        assert [(e.node_info.path, e.content.text if e.content else "", e.output) for e in first] == [
            ("booking@1/booker@1", "For how many people?", None)]
        sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
        owner = next(i for i in sessions.which_children() if i.address == host.partition_for("booking", "ann", "s1"))
        assert owner.pid is not None
        os.kill(owner.pid, signal.SIGKILL)
        wait_until(lambda: sessions.child(owner.id).status == "running" and sessions.child(owner.id).pid != owner.pid,
                   timeout=20)
        second = [e for e in runner.run("ann", "s1", "two of us") if e.node_info is not None]
        assert [e.node_info.path for e in second] == ["booking@1/booker@1"] * 2 + ["booking@1/confirm@1"]
        assert second[1].output == {"result": "a table for two"}
        assert second[2].output == "confirmed: a table for two"
        assert runner.get_state("ann", "s1") == {"confirmed": {"result": "a table for two"}}
        stored = [e.node_info.path for e in runner.get_session("ann", "s1").events if e.node_info is not None]
        assert stored == ["booking@1/booker@1"] * 3 + ["booking@1/confirm@1"]
    texts = [[p.get("text") for c in r.body["contents"] for p in c["parts"]] for r in gemini.requests]
    assert texts == [["book me a table"], ["two of us", "For how many people?", "two of us"]]


# -- resumed after a crash (in process) ---------------------------------------------------


def _booking_model(request: Any) -> Any:
    """A lookup of the task's input, then finish_task with what it found; asked after
    finish_task's response (which a task never is), it says so."""
    last = request.contents[-1]
    answered = [p.function_response for p in last.parts if p.function_response is not None]
    if answered and answered[0].name == "look_up":
        return call("finish_task", result=f"booked {answered[0].response['found']}")
    if answered:
        return "asked again after finish_task"
    return call("look_up", what="".join(p.text or "" for p in last.parts))


def look_up(what: str) -> dict[str, Any]:
    """Look a table up."""
    return {"found": what.upper()}


def test_a_task_node_cut_after_any_committed_event_resumes_to_the_same_output() -> None:
    """A task node (a tool call, then finish_task) and the node after it run once
    uninterrupted; then, for every k, a session holding only the first k committed
    events is resumed: the model is asked only for the steps not committed, never after
    finish_task's response, and the node's output and the final state are the
    uninterrupted run's."""
    model = ScriptedModel(fallback=_booking_model)
    booker = LlmAgent(name="booker", model=model, instruction="Book.", mode="task",
                      tools=[FunctionTool(look_up, idempotent=True)], output_key="booked")

    def confirm(node_input: Any, ctx: Any) -> str:
        ctx.state["confirmed"] = True
        return f"confirmed {node_input['result']}"

    graph = Workflow(name="wf", edges=[(START, booker, FunctionNode(func=confirm, rerun_on_resume=True))])

    async def run(session: SessionView) -> list[Any]:
        return [e async for e in run_invocation(graph, session, Content.user("a table"), invocation_id="e-1")]

    async def resume(session: SessionView) -> list[Any]:
        return [e async for e in resume_invocation(graph, session, invocation_id="e-1")]

    full_session = SessionView()
    full = [e for e in asyncio.run(run(full_session)) if not e.partial]
    expected = [e.output for e in full if e.output is not None]
    assert expected == [{"result": "booked A TABLE"}, "confirmed booked A TABLE"]
    assert dict(full_session.state) == {"booked": {"result": "booked A TABLE"}, "confirmed": True}
    model_steps = sum(1 for e in full if e.author == "booker" and e.content is not None and e.content.role == "model")
    assert model_steps == len(model.requests) == 2
    for k in range(1, len(full)):
        session = SessionView()
        for event in full[:k]:
            session.commit(event)
        asked = len(model.requests)
        asyncio.run(resume(session))
        events = [e for e in session.events if not e.partial]
        assert [e.output for e in events if e.output is not None] == expected, f"cut {k}"
        assert dict(session.state) == dict(full_session.state), f"cut {k}"
        committed_steps = sum(1 for e in full[:k] if e.author == "booker" and e.content is not None
                              and e.content.role == "model")
        assert len(model.requests) - asked == model_steps - committed_steps, f"cut {k}: model asked again"


def test_the_graph_view_of_a_task_node_is_google_adks() -> None:
    """adk-web's ``build_graph`` JSON of a workflow with a task agent node (it waits for
    its output, with an output schema and tools): google-adk's ``serialize_agent`` and
    our ``workflow_info`` give the same graph and edges."""
    from google.adk.agents import LlmAgent as TheirAgent
    from google.adk.cli.utils.graph_serialization import serialize_agent
    from google.adk.workflow import START as THEIR_START
    from google.adk.workflow import Workflow as TheirWorkflow

    from adk_actors.workflow import workflow_info

    def after(node_input: Any) -> str:
        return str(node_input)

    def build(agent: Any, workflow: Any, start: Any) -> Any:
        task = agent(name="booker", model="gemini-2.0-flash", mode="task", instruction="Book.", output_schema=int,
                     tools=[look_up])
        return workflow(name="wf", edges=[(start, task, after)])

    theirs = serialize_agent(build(TheirAgent, TheirWorkflow, THEIR_START))
    ours = workflow_info(build(LlmAgent, Workflow, START))
    assert ours["graph"] == theirs["graph"] and ours["edges"] == theirs["edges"]
    booker = next(node for node in ours["graph"]["nodes"] if node["name"] == "booker")
    assert (booker["mode"], booker["wait_for_output"]) == ("task", True)
