"""A ``mode="single_turn"`` sub-agent's own events in its parent's stream (issue 52),
side by side with google-adk 2.13: while the parent's call of it runs, its model calls,
tool responses and answer show (and are stored) on the branch
``<sub-agent>@<the parent's function call id>``; the parent's later model requests leave
them out; the parent's stream then goes on as before.

As tests/test_google_adk_parity.py: one google-adk program run as written on google-adk,
then with its imports rewritten on ours, against one Gemini REST stand-in named by
environment variables only. Compared over two turns: every event (through google-adk's
readers, with its author and branch, the call id in the branch by order of appearance),
the stored events, the final state, and the model requests.

Not compared, because ours does not run it yet: ``mode="task"`` (google-adk runs a task
sub-agent as a tool that ends with ``finish_task``; ours offers it no tool).
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types


def lookup(city: str, tool_context: ToolContext) -> dict:
    """Looks up a city."""
    tool_context.state["looked_up"] = city
    return {"city": city, "temp": 20}


helper = Agent(name="helper", model="gemini-2.5-flash", description="Finds weather.", instruction="Find weather.",
               mode="single_turn", tools=[lookup])
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Be brief.", sub_agents=[helper])


async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="st")
    session = await runner.session_service.create_session(app_name="st", user_id="ann")
    events = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            events.append(event)
    stored = await runner.session_service.get_session(app_name="st", user_id="ann", session_id=session.id)
    await runner.close()
    return events, stored.events, dict(stored.state)
'''


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    """``event_rows`` with each event's branch, a call id in it by order of appearance."""
    ids = {c.id: f"call-{n}" for n, c in enumerate(c for e in events for c in e.get_function_calls())}
    rows = event_rows(events)
    for row, event in zip(rows, events, strict=True):
        branch = event.branch or ""
        for raw, mapped in ids.items():
            branch = branch.replace(raw or "-", mapped)
        row["branch"] = branch
    return rows


def _run(source: str, server: StubServer) -> dict[str, Any]:
    answers = [calls(("helper", {"request": "Oslo"})), calls(("lookup", {"city": "Oslo"})),
               gemini_response("Oslo 20C."), gemini_response("It is 20C."), gemini_response("You asked about Oslo.")]
    _, (events, stored, state) = run_program(source, answers, server, ["weather?", "what did I ask?"])
    return {"events": _rows(events), "stored": _rows(stored), "state": state, "requests": request_rows(server),
            "unused_answers": len(server.responses)}


def test_the_sub_agents_events_show_on_its_branch(gemini: StubServer) -> None:
    theirs = _run(PROGRAM, gemini)
    assert theirs["unused_answers"] == 0
    ours = _run(rewritten(PROGRAM), gemini)
    shown = [(r["author"], r["branch"]) for r in theirs["events"]]
    assert shown[1:4] == [("helper", "helper@call-0")] * 3  # google-adk shows them, on the call's branch
    assert theirs["state"] == {"looked_up": "Oslo"}
    for key in ("events", "stored", "state", "requests", "unused_answers"):
        assert ours[key] == theirs[key], key
    # the parent's second turn does not see the sub-agent's events (its lookup), only its answer
    last = str(theirs["requests"][-1]["contents"])
    assert "lookup" not in last and "'result': 'Oslo 20C.'" in last
