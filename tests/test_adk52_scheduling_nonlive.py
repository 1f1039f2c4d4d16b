"""``response_scheduling`` and ``FunctionResponse.scheduling`` in a run that is not live,
side by side with google-adk 2.13 (issue 52).

google-adk builds every tool's function response the same way, live or not: a tool's
``response_scheduling`` goes on the response of each of its calls (the event's
``FunctionResponse.scheduling``), and google-genai sends it to ``generateContent`` as
it is (``"scheduling": "SILENT"``): the Gemini API is told even though only a live
model acts on it. A ``FunctionResponse`` a (non-streaming) tool returns is not taken
apart: it is the tool's value, sent under ``result`` with its set fields, its
``scheduling`` with them. A ``FunctionResponse`` with a ``scheduling`` in a user's
message (the answer to a long-running call) is sent as it is.

As tests/test_adk52_llm_request.py: one google-adk program run as written on
google-adk, then with its imports rewritten on ours, against one Gemini REST stand-in
(tests/google_adk_harness.py); compared: the function responses of the events and the
requests' bodies (function-call ids aside: google-adk sends none of its own).
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, request_rows, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
import json

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types


def lookup(city: str) -> dict:
    """Looks up a city."""
    return {"city": city}


def scheduled(city: str):
    """Looks up a city, its result with a scheduling of its own."""
    return types.FunctionResponse(name="scheduled", response={"city": city},
                                  scheduling=types.FunctionResponseScheduling.INTERRUPT)


def ask(city: str):
    """Asks a human about a city; the answer comes later."""
    return None


silent = FunctionTool(lookup)
silent.response_scheduling = types.FunctionResponseScheduling.SILENT
TOOLS = []
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Be brief.", tools=TOOLS)


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="sc")
    session = await runner.session_service.create_session(app_name="sc", user_id="ann")
    events = []
    message = types.Content(role="user", parts=[types.Part(text="Oslo?")])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        events.append(event)
    asked = [c.id for e in events for c in e.get_function_calls() if c.name == "ask"]
    if asked:  # the human's answer, with a scheduling
        answer = types.FunctionResponse(id=asked[0], name="ask", response={"answer": "sunny"},
                                        scheduling=types.FunctionResponseScheduling.WHEN_IDLE)
        message = types.Content(role="user", parts=[types.Part(function_response=answer)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            events.append(event)
    await runner.close()
    return [[(r.name, plain(r.response), r.scheduling and getattr(r.scheduling, "value", r.scheduling))
             for r in e.get_function_responses()] for e in events if e.get_function_responses()]


def plain(value):
    """A value as JSON would carry it (a model inside it: its set fields)."""
    return json.loads(json.dumps(value, default=lambda o: o.model_dump(mode="json", exclude_none=True)))
'''


def _run(source: str, answers: list[StubResponse], server: StubServer) -> dict[str, Any]:
    _, responses = run_program(source, answers, server)
    return {"responses": responses, "requests": request_rows(server), "unused_answers": len(server.responses)}


def both(tools: str, answers: list[StubResponse], server: StubServer) -> tuple[dict[str, Any], dict[str, Any]]:
    source = PROGRAM.replace("TOOLS = []", f"TOOLS = [{tools}]")
    theirs = _run(source, answers, server)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    return theirs, _run(rewritten(source), answers, server)


def function_responses(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function responses of the last request, as the stand-in received them."""
    return [part["functionResponse"] for content in rows[-1]["contents"] for part in content["parts"]
            if "functionResponse" in part]


def test_a_tools_response_scheduling_goes_on_its_response_and_to_generate_content(gemini: StubServer) -> None:
    theirs, ours = both("silent", [calls(("lookup", {"city": "Oslo"})), gemini_response("Cold.")], gemini)
    assert theirs["responses"] == [[("lookup", {"city": "Oslo"}, "SILENT")]]
    assert function_responses(theirs["requests"]) == [
        {"name": "lookup", "response": {"city": "Oslo"}, "scheduling": "SILENT"}]
    assert ours["responses"] == theirs["responses"]
    assert ours["requests"] == theirs["requests"]


def test_a_function_response_a_tool_returns_is_its_value_scheduling_and_all(gemini: StubServer) -> None:
    theirs, ours = both("scheduled", [calls(("scheduled", {"city": "Oslo"})), gemini_response("Cold.")], gemini)
    value = {"result": {"name": "scheduled", "response": {"city": "Oslo"}, "scheduling": "INTERRUPT"}}
    assert theirs["responses"] == [[("scheduled", value, None)]]
    assert function_responses(theirs["requests"]) == [{"name": "scheduled", "response": value}]
    assert ours["responses"] == theirs["responses"]
    assert ours["requests"] == theirs["requests"]


def test_a_users_function_response_with_a_scheduling_is_sent_with_it(gemini: StubServer) -> None:
    theirs, ours = both("LongRunningFunctionTool(ask)", [calls(("ask", {"city": "Oslo"})), gemini_response("Sunny.")],
                        gemini)
    assert function_responses(theirs["requests"]) == [
        {"name": "ask", "response": {"answer": "sunny"}, "scheduling": "WHEN_IDLE"}]
    assert ours["responses"] == theirs["responses"]
    assert ours["requests"] == theirs["requests"]
