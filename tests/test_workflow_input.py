"""Human input in workflow graphs (issue 55): ``RequestInput``.

Side by side with google-adk 2.13 (the same programs, imports rewritten; see
tests/google_adk_harness.py): a node that yields or returns a ``RequestInput`` makes
google-adk's interrupt event (an ``adk_request_input`` function call, its
``long_running_tool_ids``, its node path), the run ends waiting, and a later message
whose function response answers it continues the graph at that node: the nodes that
had finished do not run again, the answer is the node's output (or, with
``rerun_on_resume=True``, the node runs again with ``ctx.resume_inputs``), checked
against its ``response_schema``; a fan-out with two questions answered one message at
a time joins once both are answered. Compared of each turn: its events as a google-adk
user reads them (request ids numbered in order of appearance), the final state, and
that a message answering nothing the graph asked is refused (a ValueError on both).

Ours only: bad answers refused, durable waiting. A run cut after its question was
committed (a branch still running) resumes still waiting, its question not asked
again; a continuation cut after a node resumes without running it again. On a real
host, the run worker is killed (kill -9) after the question was committed while a
branch still runs: resumed, it ends waiting, and the answer through the Runner
finishes the graph. On a real host served over HTTP
(``adk-actors serve``), the host is killed with kill -9 while the graph waits, a new
host starts on the same data, and the answer posted to ``/run`` as adk-web posts it
continues the graph: every side-effecting node ran exactly once (counted in a file,
outside the host).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import httpx
import pytest
from conftest import serving, wait_workers_gone
from google_adk_harness import rewritten, run_program
from pid_files import write_pid

from adk_actors import Content
from adk_actors._exceptions import RunFailedError
from adk_actors.engine import (
    CallDecision,
    NeedsDecision,
    SessionView,
    resume_invocation,
    run_invocation,
)
from adk_actors.events import RequestInput
from adk_actors.runtime import Host, HostConfig
from adk_actors.workflow import (
    START,
    FunctionNode,
    JoinNode,
    Workflow,
    WorkflowDataError,
    request_input_response,
)
from supervision.testing import wait_until

pytest.importorskip("google.adk.workflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

HEAD = '''
from google.adk.events import RequestInput
from google.adk.runners import InMemoryRunner
from google.adk.workflow import START, FunctionNode, JoinNode, Workflow
from google.genai import types
from pydantic import BaseModel
'''

MAIN = '''
async def main(turns):
    runner = InMemoryRunner(agent=root, app_name="asks")
    session = await runner.session_service.create_session(app_name="asks", user_id="ann")
    batches, asked, error = [], [], None
    try:
        for turn in turns:
            if isinstance(turn, str):
                parts = [types.Part(text=turn)]
            else:  # (which request: its number in the order they were asked, or its id; the response)
                which, response = turn
                parts = [types.Part(function_response=types.FunctionResponse(
                    id=asked[which] if isinstance(which, int) else which, name="adk_request_input",
                    response=response))]
            batch = []
            async for event in runner.run_async(user_id="ann", session_id=session.id,
                                                new_message=types.Content(role="user", parts=parts)):
                batch.append(event)
                asked.extend(c.id for c in event.get_function_calls() if c.name == "adk_request_input")
            batches.append(batch)
    except Exception as exc:
        error = exc
    session = await runner.session_service.get_session(app_name="asks", user_id="ann", session_id=session.id)
    return batches, dict(session.state), error
'''


def _rows(batch: list[Any], ids: dict[str, str]) -> list[str]:
    """What a google-adk user reads of each event of one turn, as JSON, each request id
    that is a default (a random uuid) replaced by its number in order of appearance."""
    found = []
    for event in batch:
        for call in event.get_function_calls():
            if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", call.id or ""):
                ids.setdefault(call.id, f"request-{len(ids)}")
        content = event.content
        info = event.node_info
        row = json.dumps({
            "author": event.author,
            "role": content.role if content else None,
            "text": "".join(p.text for p in (content.parts or []) if p.text) if content else "",
            "calls": [(c.id, c.name, c.args) for c in event.get_function_calls()],
            "long_running": sorted(event.long_running_tool_ids or []),
            "path": info.path,
            "output_for": info.output_for,
            "output": event.output,
            "route": event.actions.route,
            "branch": event.branch,
            "state_delta": dict(event.actions.state_delta),
            "error_code": event.error_code,
        }, default=str, sort_keys=True)
        for raw, named in ids.items():
            row = row.replace(raw, named)
        found.append(row)
    return found


def both(source: str, turns: list[Any], server: Any, *, ordered: bool = True) -> tuple[Any, Any]:
    """``source`` on google-adk as written, then here rewritten: per turn, its event rows
    (sorted when ``ordered`` is False: fan-out branches run concurrently on both sides),
    the final state and the error that ended it (or None)."""
    program = HEAD + source + MAIN
    runs = []
    for text in (program, rewritten(program)):
        _, (batches, state, error) = run_program(text, [], server, turns)
        ids: dict[str, str] = {}
        turns_rows = [_rows(batch, ids) for batch in batches]
        if not ordered:
            turns_rows = [sorted(rows) for rows in turns_rows]
        runs.append({"turns": turns_rows, "state": json.loads(json.dumps(state, sort_keys=True, default=str)),
                     "error": error})
    assert "google" not in rewritten(program)
    return runs[0], runs[1]


LINEAR = '''
calls = []

def prepare(node_input: str):
    calls.append("prepare")
    return {"draft": f"draft for {node_input}"}

async def ask(node_input):
    yield RequestInput(message="Approve the draft?", payload=node_input)

def finish(node_input, ctx):
    ctx.state["answer"] = node_input
    ctx.state["prepared"] = len(calls)
    return f"final: {node_input}"

root = Workflow(name="review", edges=[(START, prepare, ask, finish)])
'''


def test_a_node_asks_the_run_ends_waiting_and_the_answer_continues_at_that_node_as_google_adk(
        gemini: Any) -> None:
    """google-adk's interrupt event (the ``adk_request_input`` call with interruptId,
    payload, message and response_schema, and its ``long_running_tool_ids``) ends the
    first turn; the answer (``{"result": "yes"}``) is the asking node's output and the
    graph goes on from there: ``prepare`` is not run again, ``finish`` gets the answer."""
    theirs, ours = both(LINEAR, ["the report", (0, {"result": "yes"})], gemini)
    assert theirs["error"] is None and ours["error"] is None
    asked = [json.loads(row) for row in theirs["turns"][0]]
    assert asked[-1]["calls"] == [["request-0", "adk_request_input", {
        "interruptId": "request-0", "message": "Approve the draft?", "payload": {"draft": "draft for the report"},
        "response_schema": None}]]
    assert asked[-1]["long_running"] == ["request-0"] and asked[-1]["path"] == "review@1/ask@1"
    assert ours["turns"] == theirs["turns"]
    assert ours["state"] == theirs["state"] == {"answer": "yes", "prepared": 1}


RERUN = '''
class Verdict(BaseModel):
    ok: bool
    note: str = ""

def check(node_input, ctx):
    got = ctx.resume_inputs.get("verdict-1")
    if got is None:
        return RequestInput(interrupt_id="verdict-1", message="Approve?", payload={"n": 3}, response_schema=Verdict)
    ctx.state["verdict"] = got
    return {"got": got}

def close(node_input):
    return node_input

root = Workflow(name="gate", edges=[(START, FunctionNode(func=check, rerun_on_resume=True), close)])
'''


def test_a_node_that_reruns_on_resume_runs_again_with_the_checked_answer_in_resume_inputs(gemini: Any) -> None:
    """``rerun_on_resume=True``: the answered node runs again with the answer in
    ``ctx.resume_inputs[interrupt_id]``, coerced to its ``response_schema`` (a JSON
    schema of a pydantic model: ``"true"`` becomes True, a missing field None), its
    own output event and then the next node's, as on google-adk."""
    theirs, ours = both(RERUN, ["go", (0, {"ok": "true"})], gemini)
    assert theirs["error"] is None and ours["error"] is None
    schema = json.loads(theirs["turns"][0][0])["calls"][0][2]["response_schema"]
    assert schema["required"] == ["ok"] and schema["properties"]["ok"]["type"] == "boolean"
    assert ours["turns"] == theirs["turns"]
    assert ours["state"] == theirs["state"] == {"verdict": {"ok": True, "note": None}}


FAN_OUT = '''
def prepare(node_input: str):
    return node_input.upper()

def ask_a(node_input: str):
    return RequestInput(interrupt_id="a1", message=f"A? {node_input}")

def ask_b(node_input: str):
    return RequestInput(interrupt_id="b1", message=f"B? {node_input}", response_schema=int)

def side(node_input: str):
    return f"side {node_input}"

def finish(node_input: dict, ctx):
    ctx.state["seen"] = node_input
    return node_input

root = Workflow(name="fan", edges=[(START, prepare, (ask_a, ask_b, side), JoinNode(name="meet"), finish)])
'''


def test_two_questions_in_a_fan_out_are_answered_one_message_at_a_time_and_the_join_waits_for_both(
        gemini: Any) -> None:
    """Two branches ask, the third finishes; answering one (``"7"`` coerced to its int
    schema) makes nothing run (the join still waits for the other); answering the other
    runs the join and the last node with all three outputs, as on google-adk."""
    turns = ["topic", ("b1", {"result": "7"}), ("a1", {"result": "fine"})]
    theirs, ours = both(FAN_OUT, turns, gemini, ordered=False)
    assert theirs["error"] is None and ours["error"] is None
    assert theirs["turns"][1] == []
    assert ours["turns"] == theirs["turns"]
    assert ours["state"] == theirs["state"] == {"seen": {"ask_a": "fine", "ask_b": 7, "side": "side TOPIC"}}


LOOP = '''
from google.adk.events.event import Event

def draft(node_input, ctx):
    n = ctx.state.get("round", 0) + 1
    ctx.state["round"] = n
    return f"draft {n}"

def ask(node_input: str, ctx):
    return RequestInput(interrupt_id=INTERRUPT_ID.format(ctx.state["round"]), message=f"OK? {node_input}")

def judge(node_input: str):
    return Event(output=node_input, route="yes" if node_input == "yes" else "no")

def done(node_input):
    return "approved"

root = Workflow(name="review", edges=[(START, draft, ask, judge), (judge, {"no": draft, "yes": done})])
'''


@pytest.mark.parametrize("interrupt_id", ["approve-{}", "approve"], ids=["an id per round", "one id reused"])
def test_a_question_asked_again_round_a_loop_takes_one_answer_per_round_as_google_adk(
        gemini: Any, interrupt_id: str) -> None:
    """A rejection loops back to the draft and the same node asks again (a new node
    run), with a new interrupt id each round or the same one reused (matched by count):
    each answer continues the round it answers, the graph runs on from there, and the
    second answer ends it; the nodes of the first round never run again."""
    source = f"INTERRUPT_ID = {interrupt_id!r}\n" + LOOP
    theirs, ours = both(source, ["topic", (0, {"result": "no"}), (1, {"result": "yes"})], gemini)
    assert theirs["error"] is None and ours["error"] is None
    assert [json.loads(row)["path"] for row in theirs["turns"][2]] == ["review@1/judge@2", "review@1/done@1"]
    assert ours["turns"] == theirs["turns"]
    assert ours["state"] == theirs["state"] == {"round": 2}


AGAIN = '''
def prepare(node_input: str):
    return node_input.upper()

def ask(node_input: str, ctx):
    if "q" in ctx.resume_inputs:
        return f"{node_input}:{ctx.resume_inputs['q']}"
    return RequestInput(interrupt_id="q", message=f"Q? {node_input}")

def finish(node_input):
    return f"got {node_input}"

root = Workflow(name="asker", edges=[(START, prepare, FunctionNode(func=ask, rerun_on_resume=True), finish)])
'''


def test_a_new_message_while_a_question_waits_starts_a_new_run_and_the_answer_goes_to_the_newest(
        gemini: Any) -> None:
    """A text message while the graph waits runs it again from START (a second
    question, same interrupt id); the answer then continues the newest run, as on
    google-adk."""
    theirs, ours = both(AGAIN, ["one", "two", (1, {"result": "ok"})], gemini)
    assert theirs["error"] is None and ours["error"] is None
    assert [json.loads(row)["output"] for row in theirs["turns"][2]] == ["TWO:ok", "got TWO:ok"]
    assert ours["turns"] == theirs["turns"]


ASKED_AND_ROUTED = '''
def ask(node_input: str, ctx):
    ctx.state["asked"] = 1
    ctx.route = "x"
    return RequestInput(interrupt_id="q", message="Q?")

async def ask_after(node_input, ctx):
    yield "partial"
    yield RequestInput(interrupt_id="q2", message="Q2?")

def finish(node_input):
    return f"got {node_input}"

root = Workflow(name="both", edges=[(START, (ask, ask_after)), (ask, finish), (ask_after, finish)])
'''


@pytest.mark.parametrize("answered", ["q", "q2"], ids=["the node that chose a route", "the node that gave an output"])
def test_what_a_node_made_in_the_run_that_asked_is_not_its_result_but_its_route_stays(
        gemini: Any, answered: str) -> None:
    """A node that chose a route (and wrote state) while asking finishes, once answered,
    on that route with no output (google-adk's rule: its route stays), the next node
    getting None; one that gave an output before asking finishes with the answer, not
    that output. The same events, in any order of the two branches, as on google-adk."""
    theirs, ours = both(ASKED_AND_ROUTED, ["go", (answered, {"result": "ok"})], gemini, ordered=False)
    assert theirs["error"] is None and ours["error"] is None
    finished = [json.loads(row)["output"] for row in theirs["turns"][1]]
    assert finished == (["got None"] if answered == "q" else ["got ok"])
    assert ours["turns"] == theirs["turns"]
    assert ours["state"] == theirs["state"] == {"asked": 1}


COLLECT = '''
def collect(node_input, ctx):
    got = dict(ctx.resume_inputs)
    if "name" not in got:
        return RequestInput(interrupt_id="name", message="Name?")
    if "age" not in got:
        return RequestInput(interrupt_id="age", message=f"Age of {got['name']}?", response_schema=int)
    return got

def finish(node_input):
    return f"got {node_input}"

root = Workflow(name="form", edges=[(START, FunctionNode(func=collect, rerun_on_resume=True), finish)])
'''


def test_a_node_that_reruns_asks_one_question_after_another_and_gets_all_answers_so_far(gemini: Any) -> None:
    """A ``rerun_on_resume`` node asks for a name; answered, it runs again and asks for
    an age; answered, it runs again with both answers in ``ctx.resume_inputs`` (the
    age coerced to its int schema) and finishes, as on google-adk."""
    theirs, ours = both(COLLECT, ["go", ("name", {"result": "Ann"}), ("age", {"result": "41"})], gemini)
    assert theirs["error"] is None and ours["error"] is None
    assert [json.loads(row)["output"] for row in theirs["turns"][2]] == [
        {"age": 41, "name": "Ann"}, "got {'name': 'Ann', 'age': 41}"]
    assert ours["turns"] == theirs["turns"]


NESTED = '''
def prepare(node_input: str):
    return node_input.upper()

def ask(node_input: str):
    return RequestInput(interrupt_id="q", message=f"Q? {node_input}")

def inner_done(node_input):
    return f"inner got {node_input}"

inner = Workflow(name="inner", edges=[(START, ask, inner_done)])

def finish(node_input, ctx):
    ctx.state["seen"] = node_input
    return node_input

root = Workflow(name="outer", edges=[(START, prepare, inner, finish)])
'''


def test_a_question_inside_a_nested_workflow_is_answered_and_both_graphs_go_on(gemini: Any) -> None:
    """The asking node is in a nested workflow (its event authored by it): the answer
    finishes the nested graph (its terminal node's output is the nested node's) and
    the outer graph goes on after it, as on google-adk."""
    theirs, ours = both(NESTED, ["topic", (0, {"result": "ok"})], gemini)
    assert theirs["error"] is None and ours["error"] is None
    assert ours["turns"] == theirs["turns"]
    assert ours["state"] == theirs["state"] == {"seen": "inner got ok"}


def test_an_answer_to_a_request_nobody_made_is_refused_on_both(gemini: Any) -> None:
    """A function response whose id no request has: google-adk raises a ValueError and
    so do we (:class:`WorkflowDataError`), and nothing runs."""
    program = HEAD + LINEAR + MAIN.replace("id=asked[which] if", 'id="no-such-request" if')
    for text in (program, rewritten(program)):
        _, (batches, state, error) = run_program(text, [], gemini, ["the report", (0, {"result": "yes"})])
        assert isinstance(error, ValueError), error
        assert "answer" not in state and len(batches) == 1


# -- ours: bad answers, durable waiting -----------------------------------------------


def _answer(interrupt_id: str, response: Any) -> Content:
    return Content(role="user", parts=(request_input_response(interrupt_id, response),))


def _run(graph: Any, session: SessionView, message: Content, **kw: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [e async for e in run_invocation(graph, session, message, **kw)]
    return asyncio.run(go())


def _resume(graph: Any, session: SessionView, invocation_id: str, **decisions: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [e async for e in resume_invocation(graph, session, invocation_id=invocation_id,
                                                   decisions=dict(decisions.get("decisions") or {}))]
    return asyncio.run(go())


DONE: Counter[str] = Counter()


def counted_prepare(node_input: str) -> str:
    DONE["prepare"] += 1
    return node_input.upper()


def ask_amount(node_input: str) -> RequestInput:
    DONE["ask"] += 1
    return RequestInput(interrupt_id="amount", message=f"How much for {node_input}?", response_schema=int)


def counted_side(node_input: str) -> str:
    DONE["side"] += 1
    return f"side {node_input}"


def counted_finish(node_input: dict[str, Any], ctx: Any) -> str:
    DONE["finish"] += 1
    ctx.state["total"] = node_input["ask_amount"] * 2
    return f"{node_input['counted_side']}: {node_input['ask_amount'] * 2}"


def _graph() -> Workflow:
    return Workflow(name="order", edges=[
        (START, counted_prepare, (ask_amount, FunctionNode(func=counted_side, rerun_on_resume=True)),
         JoinNode(name="meet"), counted_finish)])


def _final(events: list[Any]) -> list[Any]:
    return [e.output for e in events if e.node_info is not None and "order@1" in (e.node_info.output_for or [])]


def test_a_bad_answer_is_refused_before_anything_runs_and_the_request_stays_open() -> None:
    """An answer its schema refuses (``"many"`` for an int), and an answer to a request
    answered already, are :class:`WorkflowDataError` and run nothing; the request stays
    open for a good answer, which continues the graph."""
    DONE.clear()
    graph, session = _graph(), SessionView()
    _run(graph, session, Content.user("tea"))
    with pytest.raises(WorkflowDataError, match="response_schema"):
        _run(graph, session, _answer("amount", "many"))
    assert Counter(prepare=1, ask=1, side=1) == DONE
    events = _run(graph, session, _answer("amount", "21"))
    assert _final(events) == ["side TEA: 42"] and session.state["total"] == 42
    with pytest.raises(WorkflowDataError, match="answered already"):
        _run(graph, session, _answer("amount", 5))
    assert Counter(prepare=1, ask=1, side=1, finish=1) == DONE


def _cut_after(events: list[Any], wanted: Any) -> SessionView:
    """A session holding ``events`` up to and with the first for which ``wanted`` holds
    (as a run killed right after that commit left it)."""
    session = SessionView()
    for event in events:
        session.commit(event)
        if wanted(event):
            break
    return session


def test_a_run_cut_while_a_node_waits_resumes_still_waiting_and_its_answer_continues_it() -> None:
    """The first run is cut right after the question was committed, before the other
    branch gave its output: resumed, the branch finishes (it is safe to rerun), the
    asking node does not run again nor ask again, and the run ends waiting; the answer
    then continues the graph to the same end as an uninterrupted run, ``prepare`` run
    once in all. The continuation itself, cut after the join, resumes to the same end
    without running the join again (the last node, which may have run, on a decision,
    as a tool call)."""
    DONE.clear()
    graph = _graph()
    full = _run(graph, SessionView(), Content.user("tea"), invocation_id="first")
    asked = lambda e: bool(e.get_function_calls())  # noqa: E731
    session = SessionView()
    for event in full:  # the question committed, the side branch's output not yet
        if event.node_info is not None and event.node_info.path == "order@1/counted_side@1":
            continue
        session.commit(event)
        if asked(event):
            break
    DONE.clear()
    resumed = _resume(graph, session, "first")
    assert Counter(side=1) == DONE, "only the unfinished side branch runs again"
    assert not [e for e in resumed if asked(e)], "the question is not asked again"
    assert [e.node_info.path for e in resumed] == ["order@1/counted_side@1"]

    DONE.clear()
    continued = _run(graph, session, _answer("amount", 21), invocation_id="second")
    assert _final(continued) == ["side TEA: 42"]
    assert Counter(finish=1) == DONE
    cut = _cut_after([e for e in session.events], lambda e: e.node_info is not None
                     and e.node_info.path == "order@1/meet@1")
    DONE.clear()
    with pytest.raises(NeedsDecision) as stopped:  # it may have run: decided as a tool call is
        _resume(graph, cut, "second")
    assert [c.call_id for c in stopped.value.calls] == ["order@1/counted_finish@1"] and not DONE
    again = _resume(graph, cut, "second", decisions={"order@1/counted_finish@1": CallDecision("rerun")})
    assert [e.node_info.path for e in again if e.node_info is not None] == ["order@1/counted_finish@1"]
    assert not [e for e in again if asked(e)]
    assert _final(again) == ["side TEA: 42"] and cut.state["total"] == 42
    assert Counter(finish=1) == DONE


def collect_form(node_input: Any, ctx: Any) -> Any:
    DONE["collect"] += 1
    got = dict(ctx.resume_inputs)
    if "name" not in got:
        return RequestInput(interrupt_id="name", message="Name?")
    if "age" not in got:
        return RequestInput(interrupt_id="age", message=f"Age of {got['name']}?", response_schema=int)
    return got


def test_a_continuation_cut_after_its_node_asked_again_resumes_waiting_for_the_new_question() -> None:
    """The continuation that answered the first question ends with the node, run
    again, asking the second (its last committed event, as a kill right after that
    commit leaves it): resumed, it neither runs the node again nor asks again, and
    ends waiting; the second answer then finishes the node with both answers."""
    graph = Workflow(name="form", edges=[(START, FunctionNode(func=collect_form, rerun_on_resume=True))])
    session = SessionView()
    DONE.clear()
    _run(graph, session, Content.user("go"), invocation_id="first")
    _run(graph, session, _answer("name", "Ann"), invocation_id="second")
    assert Counter(collect=2) == DONE
    DONE.clear()
    resumed = _resume(graph, session, "second")
    assert resumed == [] and not DONE
    finished = _run(graph, session, _answer("age", 41), invocation_id="third")
    assert [e.output for e in finished if e.output is not None] == [{"name": "Ann", "age": 41}]
    assert Counter(collect=1) == DONE


def fails_once(node_input: str) -> None:
    DONE["fails_once"] += 1
    if DONE["fails_once"] == 1:
        raise RuntimeError("the first attempt fails")


def test_a_node_that_failed_in_the_run_that_asked_runs_again_when_the_answer_continues_it() -> None:
    """The run asks on one branch and fails on the other (the run ends with that
    error); the answer continues the graph: the failed node runs again (it had failed,
    nothing of it was running), the answered branch goes on."""
    graph = Workflow(name="mixed", edges=[(START, (ask_amount, fails_once)), (ask_amount, counted_finish_one)])
    session = SessionView()
    DONE.clear()
    with pytest.raises(RuntimeError, match="first attempt"):
        _run(graph, session, Content.user("tea"))
    events = _run(graph, session, _answer("amount", 4))
    assert [e.output for e in events if e.output is not None] == ["8"]
    assert Counter(ask=1, fails_once=2, finish=1) == DONE


def counted_finish_one(node_input: int) -> str:
    DONE["finish"] += 1
    return str(node_input * 2)


# -- on a real host, over HTTP, across a kill -9 of the host -------------------------------


def _mark(state_file: str, name: str) -> None:
    with open(state_file, "a") as done:
        done.write(name + "\n")


def host_prepare(node_input: str, ctx: Any) -> str:
    _mark(ctx.state["done_file"], "prepare")
    return node_input.upper()


def host_ask(node_input: str, ctx: Any) -> RequestInput:
    _mark(ctx.state["done_file"], "ask")
    return RequestInput(interrupt_id="ship-it", message=f"Ship {node_input}?", payload={"item": node_input})


def host_ship(node_input: Any, ctx: Any) -> str:
    _mark(ctx.state["done_file"], "ship")
    ctx.state["shipped"] = node_input
    return f"shipped: {node_input}"


review_app = Workflow(name="ship_app", edges=[(START, host_prepare, host_ask, host_ship)])


def host_slow(node_input: str, ctx: Any) -> str:
    """Marks its start and its pid, then waits (30 s at most) for ``release`` to exist."""
    work = Path(ctx.state["done_file"]).parent
    _mark(ctx.state["done_file"], "slow-started")
    write_pid(work / "slow.pid")
    deadline = time.monotonic() + 30
    while not (work / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    _mark(ctx.state["done_file"], "slow")
    return f"slow {node_input}"


def host_pack(node_input: dict[str, Any], ctx: Any) -> str:
    _mark(ctx.state["done_file"], "pack")
    ctx.state["packed"] = node_input
    return f"{node_input['host_slow']} + {node_input['host_ask']}"


waiting_app = Workflow(name="pack_app", edges=[
    (START, host_prepare, (host_ask, FunctionNode(func=host_slow, rerun_on_resume=True)), JoinNode(name="meet"),
     host_pack)])


def test_on_a_host_a_run_killed_while_a_node_waits_resumes_waiting_and_the_answer_finishes_it(
        actor_system: Any, tmp_path: Path) -> None:
    """The question is committed while the other branch still runs; the run worker is
    killed (kill -9). Resumed (``Runner.resume``): the other branch runs again (it is
    safe to), the asking node neither runs nor asks again, and the run ends waiting.
    Then the answer (through the Runner, a function response) runs the join and the
    last node: ``prepare`` and ``ask`` ran once, ``pack`` once, with both outputs."""
    done = tmp_path / "done.txt"
    config = HostConfig(apps={"packing": "test_workflow_input:waiting_app"}, data_dir=str(tmp_path / "data"),
                        partitions=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("packing")
        runner.create_session("ann", "s1", state={"done_file": str(done)})
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["events"] = list(runner.run("ann", "s1", "tea", run_id="first"))
            except Exception as exc:
                box["error"] = exc

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        pid = int(wait_until(lambda: (tmp_path / "slow.pid").exists() and (tmp_path / "slow.pid").read_text(),
                             timeout=30))
        wait_until(lambda: any(e.long_running_tool_ids == ("ship-it",)
                               for e in runner.get_session("ann", "s1").events), timeout=20)
        os.kill(pid, signal.SIGKILL)
        thread.join(20)
        assert not thread.is_alive() and isinstance(box.get("error"), RunFailedError)
        wait_workers_gone(host, "packing", "ann", "s1", [pid])
        (tmp_path / "release").write_text("go")

        resumed = list(runner.resume("ann", "s1", "first"))
        made = [(e.node_info.path, e.output) for e in resumed if e.node_info is not None]
        assert made == [("pack_app@1/host_slow@1", "slow TEA")], made
        assert Counter(done.read_text().split()) == Counter(prepare=1, ask=1, slow=1, **{"slow-started": 2})

        answer = Content(role="user", parts=(request_input_response("ship-it", "now"),))
        events = list(runner.run("ann", "s1", answer))
        made = [(e.node_info.path, e.output) for e in events if e.node_info is not None]
        assert made == [("pack_app@1/meet@1", {"host_ask": "now", "host_slow": "slow TEA"}),
                        ("pack_app@1/host_pack@1", "slow TEA + now")]
        assert Counter(done.read_text().split()) == Counter(prepare=1, ask=1, slow=1, pack=1,
                                                            **{"slow-started": 2})
        assert runner.get_state("ann", "s1")["packed"] == {"host_ask": "now", "host_slow": "slow TEA"}


def _sse(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]


def test_over_http_a_waiting_graph_outlives_a_kill_9_of_its_host_and_the_answer_continues_it(
        tmp_path: Path) -> None:
    """``adk-actors serve`` runs the app; ``/run`` returns the interrupt event
    (camelCase, as adk-web reads it); the host process is killed with kill -9; a new
    host on the same data shows the question in the session, and the answer posted to
    ``/run_sse`` as adk-web posts it (a ``functionResponse`` part) continues the graph
    at the asking node: ``prepare`` and ``ask`` ran once, ``ship`` once with the
    answer; a second answer to it is refused with a clear error."""
    done = tmp_path / "done.txt"
    apps = 'shipping = "test_workflow_input:review_app"\n'
    base = "/apps/shipping/users/ann/sessions"
    with serving(tmp_path, apps=apps) as served, httpx.Client(base_url=served["url"], timeout=60) as http:
        assert http.post(f"{base}/s1", json={"done_file": str(done)}).status_code == 200
        events = http.post("/run", json={"appName": "shipping", "userId": "ann", "sessionId": "s1",
                                         "newMessage": {"role": "user", "parts": [{"text": "tea"}]}}).json()
        assert isinstance(events, list), events
        question = events[-1]
        assert question["longRunningToolIds"] == ["ship-it"]
        call = question["content"]["parts"][0]["functionCall"]
        assert call["name"] == "adk_request_input" and call["id"] == "ship-it"
        assert call["args"] == {"interruptId": "ship-it", "message": "Ship TEA?", "payload": {"item": "TEA"},
                                "response_schema": None}
        assert question["nodeInfo"]["path"] == "ship_app@1/host_ask@1"
        os.kill(served["process"].pid, signal.SIGKILL)
        served["process"].wait(30)
    assert Counter(done.read_text().split()) == Counter(prepare=1, ask=1)

    with serving(tmp_path, apps=apps) as served, httpx.Client(base_url=served["url"], timeout=60) as http:
        # the killed host's lease on the session runs out first (its host never answers)
        stored = wait_until(lambda: (r := http.get(f"{base}/s1")).status_code == 200 and r.json(), timeout=60)
        assert any(e.get("longRunningToolIds") == ["ship-it"] for e in stored["events"])
        answer = {"role": "user", "parts": [{"functionResponse": {
            "id": "ship-it", "name": "adk_request_input", "response": {"result": "yes, today"}}}]}
        reply = http.post("/run_sse", json={"appName": "shipping", "userId": "ann", "sessionId": "s1",
                                            "newMessage": answer, "streaming": False})
        assert reply.status_code == 200
        made = [e for e in _sse(reply.content) if e.get("nodeInfo")]
        assert [(e["nodeInfo"]["path"], e.get("output")) for e in made] == [
            ("ship_app@1/host_ship@1", "shipped: yes, today")]
        assert Counter(done.read_text().split()) == Counter(prepare=1, ask=1, ship=1)
        state = http.get(f"{base}/s1").json()["state"]
        assert state["shipped"] == "yes, today"
        again = http.post("/run_sse", json={"appName": "shipping", "userId": "ann", "sessionId": "s1",
                                            "newMessage": answer, "streaming": False})
        assert re.search(r"answered already", again.text), again.text
        assert Counter(done.read_text().split())["ship"] == 1
