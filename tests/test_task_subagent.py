"""google-adk 2.x's task delegation (issue 55): an ``LlmAgent(mode="task")`` that is a
SUB-AGENT of a parent LlmAgent. The same programs run on google-adk 2.13 as written
and here with only their imports rewritten (tests/google_adk_harness.py), against one
Gemini stand-in on 127.0.0.1.

The parent's model sees the task sub-agent as a tool named after it (its input schema,
else one ``request`` string; its description plus google-adk's "delegates" sentence;
no ``transfer_to_agent`` to it); a call runs the sub-agent with ``finish_task`` (from
its ``output_schema``), its one message the call's arguments as JSON, its events shown
on the branch ``<sub-agent>@<call id>``; ``finish_task``'s accepted arguments are the
call's answer, in a user-authored response event, and the parent's model goes on.

Compared: each event as a google-adk user reads it (author, text, calls, responses,
``output``, branch with the call id numbered by order, state delta), the final state,
and every model request (contents, instruction up to the identity line, tools by name,
description and parameters). Left out by design, as tests/test_workflow_task.py leaves
them out: the wording of ``finish_task``'s description, of its instruction line and of
its refusal of bad arguments, and its schema's ``description``/``title``/
``additionalProperties`` keys. Left out as a known gap: ``node_info.path`` and
``isolation_scope`` (google-adk runs a root LlmAgent as a graph node, ``host@1``, and
the task as ``host@1/booker@<call id>``; ours gives a root agent's events no node path).

Only a single-turn task is built: google-adk's task sub-agent may ask the user and wait
across turns; ours answers the parent with an error naming the sub-agent instead (the
last test shows it).
"""

from __future__ import annotations

import json
import re
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import request_rows, rewritten, run_program
from test_workflow_task import _compared, _events
from test_workflows import HEAD, MAIN

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk.workflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def rows(events: list[Any]) -> list[dict[str, Any]]:
    """What a google-adk user reads of each event (the call ids in branches numbered by
    order: they are random on both sides)."""
    ids: dict[str, str] = {}

    def branch(value: str | None) -> str | None:
        if value is None:
            return None
        return re.sub(r"@([^.]+)", lambda m: "@" + ids.setdefault(m.group(1), f"call-{len(ids)}"), value)

    found = []
    for event in events:
        content = event.content
        found.append(_plain({
            "author": event.author,
            "text": "".join(p.text for p in (content.parts or []) if p.text) if content else "",
            "calls": [(c.name, c.args) for c in event.get_function_calls()],
            "responses": [(r.name, r.response) for r in event.get_function_responses()],
            "output": event.output,
            "branch": branch(event.branch),
            "state_delta": dict(event.actions.state_delta),
            "error_message": event.error_message,
        }))
    return found


def both(source: str, turns: list[str], server: StubServer, answers: list[Any]) -> tuple[dict[str, Any], ...]:
    """``source`` run on google-adk as written, then here rewritten: what is compared of
    each; both must have used the whole script of answers."""
    program = HEAD + source + MAIN
    runs = []
    for text in (program, rewritten(program)):
        _, (events, state, error) = run_program(text, list(answers), server, turns)
        runs.append({"events": rows(events), "state": _plain(state), "requests": request_rows(server),
                     "unused_answers": len(server.responses), "error": error})
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


BOOKING = '''
from pydantic import BaseModel

class Booking(BaseModel):
    people: int
    time: str

def check_table(time: str) -> dict:
    """Whether a table is free at a time."""
    return {"time": time, "free": True}

booker = LlmAgent(name="booker", model="gemini-2.0-flash", description="Books tables.", instruction="Book a table.",
                  mode="task", tools=[check_table], output_schema=Booking, output_key="booking")
root = LlmAgent(name="host", model="gemini-2.0-flash", instruction="Help the guest.", sub_agents=[booker])
'''


def test_a_task_sub_agent_is_its_parents_tool_and_hands_finish_tasks_arguments_back_as_google_adk(
        gemini: StubServer) -> None:
    """The parent calls the task sub-agent as a tool; the sub-agent (its message the
    call's arguments as JSON) uses its own tool, calls ``finish_task`` with arguments
    its schema refuses (an error response, asked again), then with valid ones: the run
    ends there, that event carries the output (and ``output_key``), and the parent gets
    the arguments in a user-authored response, then answers."""
    answers = [harness.calls(("booker", {"request": "two at 19:00"})),
               harness.calls(("check_table", {"time": "19:00"})),
               harness.calls(("finish_task", {"people": "many", "time": "19:00"})),
               harness.calls(("finish_task", {"people": 2, "time": "19:00"})),
               gemini_response(text="Booked for two at 19:00.")]
    theirs, ours = both(BOOKING, ["book two at 19:00"], gemini, answers)
    assert_same(theirs, ours)
    events = ours["events"]
    assert [(e["author"], e["branch"]) for e in events] == [
        ("host", None), *[("booker", "booker@call-0")] * 6, ("user", None), ("host", None)]
    handed = events[-2]
    assert handed["responses"] == [["booker", {"people": 2, "time": "19:00"}]]
    ended = next(e for e in events if e["output"] is not None)
    assert ended["output"] == {"people": 2, "time": "19:00"}
    assert ended["state_delta"] == {"booking": {"people": 2, "time": "19:00"}}
    assert ours["state"] == {"booking": {"people": 2, "time": "19:00"}}
    parent_tools = {t["name"]: t for t in ours["requests"][0]["tools"]}
    assert list(parent_tools) == ["booker"]  # a tool, not a transfer target
    assert "delegates execution" in parent_tools["booker"]["description"]
    assert ours["requests"][1]["contents"] == [{"role": "user", "parts": [{"text": '{"request": "two at 19:00"}'}]}]
    assert ours["events"][-1]["text"] == "Booked for two at 19:00."


PLAIN = '''
from pydantic import BaseModel

class Ask(BaseModel):
    topic: str
    words: int

def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"

writer = LlmAgent(name="writer", model="gemini-2.0-flash", description="Writes notes.", instruction="Write a note.",
                  mode="task", input_schema=Ask)
counter = LlmAgent(name="counter", model="gemini-2.0-flash", instruction="Count.", mode="task", output_schema=int)
helper = LlmAgent(name="helper", model="gemini-2.0-flash", instruction="Chat along.")
root = LlmAgent(name="host", model="gemini-2.0-flash", instruction="Help.", tools=[weather],
                sub_agents=[writer, helper, counter])
'''


def test_task_sub_agents_with_an_input_schema_no_output_schema_or_a_wrapped_one_beside_a_chat_one_as_google_adk(
        gemini: StubServer) -> None:
    """A task sub-agent with an ``input_schema`` (its parameters, its message the
    arguments as JSON) and no ``output_schema`` (``finish_task`` takes one
    ``result`` string, handed back as ``{"result": ...}``); one whose schema is
    ``int`` (its output the number, handed back as ``{"output": 12}``); a chat
    sub-agent stays the only transfer target; the parent's own tool is there too."""
    answers = [harness.calls(("writer", {"topic": "rain", "words": 5})),
               harness.calls(("finish_task", {"result": "Rain falls on roofs."})),
               harness.calls(("counter", {"request": "count the seats"})),
               harness.calls(("finish_task", {"result": 12})),
               gemini_response(text="Done: a note and 12 seats.")]
    theirs, ours = both(PLAIN, ["write a note and count"], gemini, answers)
    assert_same(theirs, ours)
    handed = [e["responses"][0] for e in ours["events"] if e["author"] == "user"]
    assert handed == [["writer", {"result": "Rain falls on roofs."}], ["counter", {"output": 12}]]
    tools = {t["name"]: t for t in ours["requests"][0]["tools"]}
    assert sorted(tools) == ["counter", "transfer_to_agent", "weather", "writer"]
    assert tools["transfer_to_agent"]["agents"] == ["helper"]
    assert tools["writer"]["parameters"]["required"] == ["topic", "words"]


def test_a_task_sub_agent_that_asks_the_user_instead_is_answered_with_an_error_here(gemini: StubServer) -> None:
    """Not built: google-adk's task sub-agent that answers in text waits for the user's
    next turn. Ours ends the call there: the parent gets an ``{"error": ...}`` naming
    the sub-agent and saying such a task is not supported, and its model goes on."""
    answers = [harness.calls(("booker", {"request": "a table"})),
               gemini_response(text="For how many people?"),
               gemini_response(text="Sorry, I could not book it.")]
    _, (events, _, error) = run_program(rewritten(HEAD + BOOKING + MAIN), answers, gemini, ["book a table"])
    assert error is None and len(gemini.responses) == 0
    found = rows(events)
    assert [(e["author"], e["text"]) for e in found] == [
        ("host", ""), ("booker", "For how many people?"), ("user", ""), ("host", "Sorry, I could not book it.")]
    (name, response), = found[2]["responses"]
    assert name == "booker" and "'booker'" in response["error"] and "not supported" in response["error"]
