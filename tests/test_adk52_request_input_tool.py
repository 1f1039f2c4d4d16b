"""google-adk 2.13's ``google.adk.tools.request_input`` and
``google.adk.tools.example_tool.ExampleToolConfig`` (issue 52) side by side.

``request_input`` in a run (one program on google-adk and on ours, imports rewritten,
one Gemini stand-in): declared as ``adk_request_input`` with the same parameters (its
description is each side's own words, google-adk's long-running note ending both), the
model's question ends the turn as a long-running call, and the user's answer (a
function response of that name and id) goes to the model, which answers: the same
events and requests. ``ExampleToolConfig``: the same examples and names accepted, the
same inputs refused with pydantic's ValidationError.
"""

from __future__ import annotations

import copy
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program
from pydantic import ValidationError

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import request_input
from google.genai import types

root_agent = Agent(name="trip", model="gemini-2.5-flash", instruction="Plan a trip; ask what you need.",
                   tools=[request_input])


async def main(answer):
    runner = InMemoryRunner(agent=root_agent, app_name="trips")
    session = await runner.session_service.create_session(app_name="trips", user_id="u")
    first, second, asked = [], [], None
    message = types.Content(role="user", parts=[types.Part(text="Plan my trip.")])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        first.append(event)
        asked = next((c for c in event.get_function_calls() if c.name == "adk_request_input"), asked)
    reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        name="adk_request_input", id=asked.id, response=answer))])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=reply):
        second.append(event)
    stored = await runner.session_service.get_session(app_name="trips", user_id="u", session_id=session.id)
    await runner.close()
    return first, second, [e.author for e in stored.events]
'''

QUESTION = {"message": "Which city?", "response_schema": {"type": "string"}}
SCRIPT = [calls(("adk_request_input", QUESTION)), gemini_response("Rome it is.")]
NOTE = "NOTE: This is a long-running operation."


def _run(server: StubServer, source: str) -> dict[str, Any]:
    _, (first, second, authors) = run_program(source, SCRIPT, server, {"result": "Rome"})
    assert not server.responses, "the script is used"
    declared = [copy.deepcopy(d) for t in server.requests[0].body["tools"] for d in t["functionDeclarations"]]
    rows = request_rows(server)
    for row in rows:
        for tool in row["tools"]:
            tool.pop("description")
    return {"first": event_rows(first), "second": event_rows(second), "authors": authors,
            "declared": declared, "requests": rows}


def test_request_input_asks_waits_and_answers_as_on_google_adk(gemini: StubServer) -> None:
    theirs = _run(gemini, PROGRAM)
    ours = _run(gemini, rewritten(PROGRAM))
    assert ours["first"] == theirs["first"]
    assert ours["second"] == theirs["second"]
    assert ours["authors"] == theirs["authors"]
    assert ours["requests"] == theirs["requests"]
    # the question ends the turn: a long-running call, no response, no second request
    assert theirs["first"][-1]["calls"][0][1:] == ("adk_request_input", QUESTION)
    assert theirs["first"][-1]["long_running"] == ["call-0"]
    assert theirs["second"][-1]["text"] == "Rome it is." and len(theirs["requests"]) == 2
    their_declared, our_declared = theirs["declared"][0], ours["declared"][0]
    assert their_declared.pop("description").endswith(NOTE + " Do not call this tool again if it has already "
                                                      "returned some intermediate or pending status.")
    assert NOTE in our_declared.pop("description")
    assert our_declared == their_declared
    assert their_declared["name"] == "adk_request_input"


EXAMPLE = {"input": {"role": "user", "parts": [{"text": "hi"}]},
           "output": [{"role": "model", "parts": [{"text": "hello"}]}]}


def test_example_tool_config_takes_and_refuses_what_google_adks_does() -> None:
    from google.adk.tools.example_tool import ExampleToolConfig as Theirs

    from adk_actors.tools._example_tool_config import ExampleToolConfig as Ours

    given: dict[str, Any]
    for given in ({"examples": [EXAMPLE]}, {"examples": "my_pkg.examples.provider"}, {"examples": []}):
        theirs, ours = Theirs.model_validate(given), Ours.model_validate(given)
        assert ours.model_dump(mode="json", exclude_none=True) == theirs.model_dump(mode="json", exclude_none=True)
    bad: dict[str, Any]
    # (an example with a key of its own is not compared: google-adk's Example drops it,
    # ours, adk_actors.examples.Example, refuses it)
    for bad in ({}, {"examples": 3}, {"examples": [{"input": "hi"}]}, {"examples": [EXAMPLE], "extra": 1},
                {"examples": [{"output": []}]}, {"examples": None}):
        with pytest.raises(ValidationError):
            Theirs.model_validate(bad)
        with pytest.raises(ValidationError):
            Ours.model_validate(bad)
