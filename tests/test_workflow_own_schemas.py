"""Issue 52/55: a Workflow's own ``input_schema`` / ``output_schema``, side by side with
google-adk 2.13 (``Workflow`` is a node: its input is checked and coerced before its
graph starts, its terminal node's output when its graph ends, ``_finalize``).

The same program (google-adk's source, and the same with its imports rewritten for
ours) runs on both kits; what a user reads of each event (author, node path, output,
``output_for``, error code and message) and the error that ended the turn must be the
same. The cases: a root workflow whose input and output are coerced; one whose input
its schema refuses (the run fails with no event at all, the error titled ``dynamic
node '<name>'``, also when the root has a ``timeout``); one whose output its schema refuses (the terminal node's output event,
then the workflow's own error event at its path); a nested workflow whose output is
coerced for the node after it, or refused (its error event at its node path, none of
the parent's); a nested workflow whose input its schema refuses (the parent's error
event, at the parent's path, as for any node's input: see
``test_workflow_file_node_fields``). A workflow on an edge is checked against its
neighbours' schemas, as a node is. Around them: a node run by ``ctx.run_node`` has its
input checked before it runs (refused: the error of the node that ran it), and a
nested workflow's failed node is the run's only error event.
"""

from __future__ import annotations

import json
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import rewritten, run_program

from adk_actors.testing import gemini_response

pytest.importorskip("google.adk.workflow")

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"),
              pytest.mark.timeout(120)]

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
import logging

from pydantic import BaseModel

from google.adk.runners import InMemoryRunner
from google.adk.workflow import FunctionNode, Workflow
from google.genai import types

logging.disable(logging.CRITICAL)  # google-adk logs each failed node with its traceback


class Order(BaseModel):
    item: str
    qty: int = 1


class Receipt(BaseModel):
    item: str
    total: float
    coupon: str | None = None


def take(node_input):
    return node_input


def bill(node_input) -> dict:
    return {"item": node_input["item"], "total": str(node_input["qty"] * 2)}


def refused(node_input) -> dict:
    return {"total": 3}


def broken(node_input) -> dict:
    raise RuntimeError("out of stock")


def first(node_input) -> dict:
    return {"item": "tea", "qty": "2"}


def first_refused(node_input) -> dict:
    return {"qty": "2"}


def after(node_input):
    return node_input


def inner(last=bill, **schemas):
    schemas = schemas or {"input_schema": Order, "output_schema": Receipt}
    return Workflow(name="inner", **schemas, edges=[
        ("START", FunctionNode(name="take", func=take), FunctionNode(name="bill", func=last))])


def outer(head=first, last=bill):
    return Workflow(name="outer", edges=[
        ("START", FunctionNode(name="first", func=head), inner(last), FunctionNode(name="after", func=after))])


def child(node_input: Order):
    return node_input


async def parent(ctx, node_input):
    return await ctx.run_node(FunctionNode(name="child", func=child), node_input)


def agent_after(head):
    from google.adk.agents import Agent

    teller = Agent(name="teller", model="gemini-2.5-flash", instruction="Tell the order.", input_schema=Order)
    return Workflow(name="tell", edges=[("START", FunctionNode(name="first", func=head), teller)])


CASES = {
    "agent_input": lambda: agent_after(first),
    "agent_input_refused": lambda: agent_after(first_refused),
    "dynamic": lambda: Workflow(name="dyn", edges=[("START", FunctionNode(name="parent", func=parent, rerun_on_resume=True))]),
    "root": lambda: inner(),
    "root_timed": lambda: Workflow(name="inner", input_schema=Order, output_schema=Receipt, timeout=60, edges=[
        ("START", FunctionNode(name="take", func=take), FunctionNode(name="bill", func=bill))]),
    "root_output_refused": lambda: inner(refused),
    "json_schemas_kept": lambda: inner(refused, input_schema={"type": "object"}, output_schema={"type": "object"}),
    "nested": lambda: outer(),
    "nested_input_refused": lambda: outer(head=first_refused),
    "nested_output_refused": lambda: outer(last=refused),
    "nested_node_fails": lambda: outer(last=broken),
}


async def main(case, text):
    runner = InMemoryRunner(agent=CASES[case](), app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="ann")
    events, error = [], None
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
    except Exception as exc:
        error = (type(exc).__name__, str(exc))
    await runner.close()
    return events, error
'''

EDGES = '''
from pydantic import BaseModel

from google.adk.workflow import FunctionNode, Workflow


class Order(BaseModel):
    item: str


class Receipt(BaseModel):
    total: float


def step(node_input):
    return node_input


def gives_order(node_input) -> Order:
    return Order(item="tea")


async def main(given, taken):
    """The error building a workflow whose node gives ``given`` (its return hint) to a
    nested workflow that takes ``taken`` (None when it builds)."""
    schemas = {"Order": Order, "Receipt": Receipt, None: None}
    inner = Workflow(name="inner", input_schema=schemas[taken], edges=[("START", FunctionNode(name="i", func=step))])
    head = FunctionNode(name="s", func=gives_order if given else step)
    try:
        Workflow(name="outer", edges=[("START", head, inner)])
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None
'''


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    """What a google-adk user reads of each event."""
    return [json.loads(json.dumps({
        "author": e.author, "path": e.node_info.path if e.node_info else None, "output": e.output,
        "output_for": e.node_info.output_for if e.node_info else None, "error_code": e.error_code,
        "error_message": e.error_message}, default=str, sort_keys=True)) for e in events]


def run_both(server: Any, case: str, text: str, answers: tuple[str, ...] = ()) -> tuple[dict[str, Any], dict[str, Any]]:
    """The case on google-adk, then on ours (the model's ``answers`` scripted): its event
    rows, its error (class, text) and what the model was sent."""
    seen = []
    for source in (PROGRAM, rewritten(PROGRAM)):
        _, (events, error) = run_program(source, [gemini_response(a) for a in answers], server, case, text)
        sent = [[p.get("text") for c in r.body.get("contents", []) for p in c.get("parts", [])] for r in server.requests]
        seen.append({"events": _rows(events), "error": list(error) if error else None, "sent": sent})
    return seen[0], seen[1]


ORDER = '{"item": "tea", "qty": "3"}'


def _outputs(run: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(row["path"], row["output"]) for row in run["events"] if row["output"] is not None]


def _errors(run: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(row["author"], row["path"], row["error_code"]) for row in run["events"] if row["error_code"]]


def test_a_root_workflows_input_is_coerced_by_its_schema_as_in_google_adk(gemini: Any) -> None:
    theirs, ours = run_both(gemini, "root", ORDER)
    assert ours == theirs
    assert theirs["error"] is None
    # the message's JSON made an Order (qty a number) before the first node took it
    assert _outputs(theirs)[0] == ("inner@1/take@1", {"item": "tea", "qty": 3})


@pytest.mark.parametrize("case", ["root", "root_timed"])
def test_a_root_workflows_input_its_schema_refuses_fails_the_run_with_no_event(gemini: Any, case: str) -> None:
    """The same error ends the run on both, before any node ran, and with no event at
    all (google-adk checks the root's input before its node runner starts): also when
    the root workflow has node settings of its own (a ``timeout``)."""
    theirs, ours = run_both(gemini, case, '{"qty": 3}')
    assert ours == theirs
    assert theirs["error"][0] == "ValidationError"
    assert theirs["error"][1].startswith("1 validation error for dynamic node 'inner'\nitem\n  Field required")
    assert theirs["events"] == []


def test_a_root_workflows_output_its_schema_refuses_is_its_own_error_event(gemini: Any) -> None:
    theirs, ours = run_both(gemini, "root_output_refused", ORDER)
    assert ours == theirs
    assert _outputs(theirs)[-1] == ("inner@1/bill@1", {"total": 3})
    assert _errors(theirs) == [("inner", "inner@1", "ValidationError")]
    assert theirs["events"][-1]["error_message"].startswith("1 validation error for Receipt")
    assert theirs["error"][0] == "ValidationError"


def test_json_schemas_of_a_workflow_are_kept_and_not_enforced(gemini: Any) -> None:
    theirs, ours = run_both(gemini, "json_schemas_kept", ORDER)
    assert ours == theirs
    assert theirs["error"] is None
    assert _outputs(theirs)[-1] == ("inner@1/bill@1", {"total": 3})


def test_a_nested_workflows_output_is_coerced_for_the_node_after_it(gemini: Any) -> None:
    theirs, ours = run_both(gemini, "nested", "go")
    assert ours == theirs
    assert theirs["error"] is None
    outputs = dict(_outputs(theirs))
    assert outputs["outer@1/inner@1/take@1"] == {"item": "tea", "qty": 2}  # its input coerced
    assert outputs["outer@1/inner@1/bill@1"] == {"item": "tea", "total": "4"}  # the node's event as it gave it
    assert outputs["outer@1/after@1"] == {"item": "tea", "total": 4.0}  # the workflow's output, coerced


def test_a_nested_workflows_output_its_schema_refuses_is_its_own_error_event(gemini: Any) -> None:
    theirs, ours = run_both(gemini, "nested_output_refused", "go")
    assert ours == theirs
    assert _errors(theirs) == [("inner", "outer@1/inner@1", "ValidationError")]
    assert "outer@1/after@1" not in dict(_outputs(theirs))
    assert theirs["error"][0] == "ValidationError"


def test_a_nested_workflows_failed_node_is_the_only_error_event(gemini: Any) -> None:
    """A node of a nested workflow fails: its error event (at its path, authored by the
    nested workflow) is the run's only one: neither workflow makes one of its own."""
    theirs, ours = run_both(gemini, "nested_node_fails", "go")
    assert ours == theirs
    assert _errors(theirs) == [("inner", "outer@1/inner@1/bill@1", "RuntimeError")]
    assert theirs["error"] == ["RuntimeError", "out of stock"]


def test_a_nested_workflows_input_its_schema_refuses_is_the_parents_error_event(gemini: Any) -> None:
    theirs, ours = run_both(gemini, "nested_input_refused", "go")
    assert ours == theirs
    assert _errors(theirs) == [("outer", "outer@1", "ValidationError")]
    assert theirs["events"][-1]["error_message"].startswith("1 validation error for dynamic node 'inner'")
    assert not [path for path, _ in _outputs(theirs) if path.startswith("outer@1/inner@1")]


@pytest.mark.parametrize("text", [ORDER, '{"qty": 3}'], ids=["taken", "refused"])
def test_a_dynamic_nodes_input_is_checked_before_it_runs_as_in_google_adk(gemini: Any, text: str) -> None:
    """A node run by ``ctx.run_node``: its input coerced before it runs; refused, it
    makes no event of its own: the error is raised to the node that ran it, which
    fails with it (its error event, titled ``dynamic node 'child'``)."""
    theirs, ours = run_both(gemini, "dynamic", text)
    assert ours == theirs
    if text == ORDER:
        assert _outputs(theirs)[0] == ("dyn@1/parent@1/child@1", {"item": "tea", "qty": 3})
        return
    assert _errors(theirs) == [("dyn", "dyn@1/parent@1", "ValidationError")]
    assert theirs["events"][-1]["error_message"].startswith("1 validation error for dynamic node 'child'")


@pytest.mark.parametrize("case", ["agent_input", "agent_input_refused"])
def test_an_agent_nodes_input_is_checked_before_it_starts_as_in_google_adk(gemini: Any, case: str) -> None:
    """An agent node with an ``input_schema``: its input coerced before it starts (the
    model is sent the coerced input); refused, the agent does not start and the
    workflow makes the error event (``tell@1``)."""
    theirs, ours = run_both(gemini, case, "go", answers=("One tea.",) if case == "agent_input" else ())
    assert ours == theirs
    if case == "agent_input":
        assert theirs["error"] is None and theirs["sent"] == [['{"item": "tea", "qty": 2}']]
        return
    assert theirs["sent"] == []
    assert _errors(theirs) == [("tell", "tell@1", "ValidationError")]
    assert theirs["events"][-1]["error_message"].startswith("1 validation error for dynamic node 'teller'")


@pytest.mark.parametrize(("given", "taken"), [("Order", "Receipt"), ("Order", "Order"), (None, "Receipt")])
def test_a_workflow_on_an_edge_is_checked_against_its_neighbours_schema(gemini: Any, given: str | None,
                                                                        taken: str) -> None:
    _, theirs = run_program(EDGES, [], gemini, given, taken)
    _, ours = run_program(rewritten(EDGES), [], gemini, given, taken)
    if given == taken or given is None:
        assert theirs is None and ours is None
        return
    # google-adk's GraphValidationError reaches the user wrapped in pydantic's ValidationError
    assert theirs is not None and "Schema mismatch on edge s -> inner" in theirs[1]
    assert ours is not None and ours[0] == "GraphValidationError"
    assert "Schema mismatch on edge s -> inner" in ours[1] and "Order" in ours[1] and "Receipt" in ours[1]
