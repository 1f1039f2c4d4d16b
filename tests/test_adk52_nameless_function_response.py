"""A ``FunctionResponse`` without a name, side by side with google-adk 2.13 (issue 52).

google.genai's ``FunctionResponse`` takes no name (``FunctionResponse(id=..., response=...)``):
a client may answer a long-running call by its id only. google-adk runs with it: the
user's event is stored as it came (no name), and ``generateContent`` is sent the
response without a ``name`` key. One whose id answers no call of the session fails the
run with a ``ValueError`` before the model is asked. A tool hook that answers a call with
one has it taken as the tool's value (under ``result``).

As tests/test_adk52_llm_request.py: one google-adk program run as written on
google-adk, then with its imports rewritten on ours, against one Gemini REST stand-in
(tests/google_adk_harness.py); compared: the function responses of the stored events,
the requests, and the error.
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, request_rows, rewritten, run_program

from adk_actors import types
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
import json

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types


ASKED = {"status": "asked"}


def ask(city: str):
    """Asks a human about a city; the answer comes later."""
    return ASKED


def lookup(city: str) -> dict:
    """Looks up a city."""
    return {"city": city}


def answered_by_hook(tool, args, tool_context):
    return types.FunctionResponse(response={"city": "from the hook"})


ANSWER_ID = "the call"
HOOK = None
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Be brief.",
                   tools=[LongRunningFunctionTool(ask), lookup], before_tool_callback=HOOK)


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="nn")
    session = await runner.session_service.create_session(app_name="nn", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text="Oslo?")])
    asked = []
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        asked += [c.id for c in event.get_function_calls() if c.name == "ask"]
    error = None
    if asked:  # the human's answer, by the call's id only
        answer = types.FunctionResponse(id=asked[0] if ANSWER_ID == "the call" else ANSWER_ID,
                                        response={"answer": "sunny"})
        message = types.Content(role="user", parts=[types.Part(function_response=answer)])
        try:
            async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
                pass
        except Exception as exc:
            error = (type(exc).__name__, str(exc))
    stored = await runner.session_service.get_session(app_name="nn", user_id="ann", session_id=session.id)
    await runner.close()
    responses = [(e.author, r.name, plain(r.response)) for e in stored.events for r in e.get_function_responses()]
    texts = [e.content.parts[0].text for e in stored.events if e.author != "user" and e.content and e.content.parts
             and e.content.parts[0].text]
    return responses, texts, error


def plain(value):
    """A value as JSON would carry it (a model inside it: its set fields)."""
    return json.loads(json.dumps(value, default=lambda o: o.model_dump(mode="json", exclude_none=True)))
'''


def _run(source: str, answers: list[StubResponse], server: StubServer) -> dict[str, Any]:
    _, (responses, texts, error) = run_program(source, answers, server)
    return {"responses": responses, "texts": texts, "error": error, "requests": request_rows(server),
            "unused_answers": len(server.responses)}


def both(answers: list[StubResponse], server: StubServer, *, answer_id: str = "the call",
         hook: bool = False, asked: str = '{"status": "asked"}') -> tuple[dict[str, Any], dict[str, Any]]:
    source = PROGRAM.replace('ANSWER_ID = "the call"', f"ANSWER_ID = {answer_id!r}")
    source = source.replace('ASKED = {"status": "asked"}', f"ASKED = {asked}")
    if hook:
        source = source.replace("HOOK = None", "HOOK = answered_by_hook")
    theirs = _run(source, answers, server)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    return theirs, _run(rewritten(source), answers, server)


def test_a_function_response_is_made_without_a_name_as_google_genais() -> None:
    from google.genai import types as genai

    theirs = genai.FunctionResponse(id="fc-1", response={"answer": "sunny"})
    ours = types.FunctionResponse(id="fc-1", response={"answer": "sunny"})
    assert ours.name is None is theirs.name
    assert ours.model_dump(mode="json", exclude_none=True) == theirs.model_dump(mode="json", exclude_none=True)


def function_responses(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The function responses a request carries, as the stand-in received them."""
    return [part["functionResponse"] for content in request["contents"] for part in content["parts"]
            if "functionResponse" in part]


def test_a_users_answer_by_id_only_is_stored_and_sent_without_a_name(gemini: StubServer) -> None:
    """The tool answered the call for now ("asked"), the model spoke; the human's answer
    comes by the call's id only."""
    theirs, ours = both([calls(("ask", {"city": "Oslo"})), gemini_response("Asked."), gemini_response("Sunny.")],
                        gemini)
    assert theirs["error"] is None and theirs["texts"] == ["Asked.", "Sunny."]
    assert theirs["responses"] == [("root", "ask", {"status": "asked"}), ("user", None, {"answer": "sunny"})]
    assert function_responses(theirs["requests"][-1]) == [{"response": {"answer": "sunny"}}]  # no name key
    assert ours["responses"] == theirs["responses"]
    assert ours["texts"] == theirs["texts"]
    assert [function_responses(r) for r in ours["requests"]] == [function_responses(r) for r in theirs["requests"]]
    assert ours["error"] is None and ours["unused_answers"] == 0


def test_an_answer_by_id_only_to_a_call_its_tool_left_open_reruns_the_call(gemini: StubServer) -> None:
    """The tool left the call open (None): google-adk takes a nameless answer as no
    answer, runs the call again (the tool again answers nothing), and asks no model."""
    theirs, ours = both([calls(("ask", {"city": "Oslo"}))], gemini, asked="None")
    assert theirs["responses"] == [("user", None, {"answer": "sunny"})] and theirs["texts"] == []
    assert ours["unused_answers"] == 0 and len(ours["requests"]) == 1
    assert ours["responses"] == theirs["responses"] and ours["texts"] == theirs["texts"]


def test_an_answer_by_an_id_no_call_has_fails_the_run_before_the_model_is_asked(gemini: StubServer) -> None:
    theirs, ours = both([calls(("ask", {"city": "Oslo"}))], gemini, answer_id="no such call", asked="None")
    assert theirs["error"] is not None and theirs["error"][0] == "ValueError"
    assert "Function call not found for function response ids: {'no such call'}" in theirs["error"][1]
    assert ours["error"] == theirs["error"]
    assert ours["requests"] == theirs["requests"] and len(ours["requests"]) == 1
    assert ours["responses"] == theirs["responses"]


def test_a_hook_answering_with_a_nameless_function_response_is_the_tools_value(gemini: StubServer) -> None:
    theirs, ours = both([calls(("lookup", {"city": "Oslo"})), gemini_response("Cold.")], gemini, hook=True)
    assert theirs["responses"][0][:2] == ("root", "lookup")
    assert theirs["responses"][0][2]["result"]["response"] == {"city": "from the hook"}
    assert ours["responses"] == theirs["responses"]
    assert ours["requests"] == theirs["requests"]
