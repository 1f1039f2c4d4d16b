"""Answers to function calls that come later, side by side with google-adk 2.13 (issue 52).

A user answers a call with a function response: by id and name, by id only, or by
nothing that matches a call. Compared on google-adk and, its imports rewritten, on
ours, against one Gemini REST stand-in (tests/google_adk_harness.py, and the helpers
of tests/test_adk52_nameless_function_response.py): the stored events and every
request the model was sent.

* When the answer does not settle the call it answers (it names no call: an answer by
  id only), the call runs again before any model is asked (google-adk's resume); a
  long-running tool that leaves it open again ends the turn there. A named answer is
  the call's answer: the model is asked with it.
* The request after a late answer ends at the answered call and its answer: the
  model's words after the call's first response, and turns in between, are not sent.
* An answer to no call (no id) is not sent; a request left with nothing to send gets
  one user turn pointing at the system instruction (a model API refuses empty
  contents). Its words are ours, as those of the turn after a model's last turn.
"""

from __future__ import annotations

import copy
from typing import Any

import google_adk_harness as harness
import pytest
import test_adk52_nameless_function_response as nameless
from google_adk_harness import calls, rewritten

from adk_actors.models._gemini import ANSWER_THE_INSTRUCTION, GO_ON
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
import json

from google.adk.agents import Agent
from google.adk.events import Event
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


TURNS = ["Oslo?", "ANSWER"]
ANSWER_TO = "ask"
ANSWER_NAME = None
OPEN_CALL = None
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Be brief.",
                   tools=[LongRunningFunctionTool(ask), lookup])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="lr")
    session = await runner.session_service.create_session(app_name="lr", user_id="ann")
    called = {}
    if OPEN_CALL:  # a call of the agent's with no response (its run ended before one)
        call = types.FunctionCall(id="open-call", name=OPEN_CALL, args={"city": "Oslo"})
        await runner.session_service.append_event(session, Event(
            invocation_id="e-open", author="root",
            content=types.Content(role="model", parts=[types.Part(function_call=call)])))
        called[OPEN_CALL] = "open-call"
    for turn in TURNS:
        if turn == "ANSWER":  # the human's answer to the first call of ANSWER_TO (None: no id)
            answer = types.FunctionResponse(id=called[ANSWER_TO] if ANSWER_TO else None, name=ANSWER_NAME,
                                            response={"answer": "sunny"})
            message = types.Content(role="user", parts=[types.Part(function_response=answer)])
        else:
            message = types.Content(role="user", parts=[types.Part(text=turn)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            for c in event.get_function_calls():
                called.setdefault(c.name, c.id)
    stored = await runner.session_service.get_session(app_name="lr", user_id="ann", session_id=session.id)
    await runner.close()
    rows = [(e.author, [c.name for c in e.get_function_calls()],
             [(r.name, plain(r.response)) for r in e.get_function_responses()],
             "".join(p.text or "" for p in (e.content.parts or [])) if e.content else "") for e in stored.events]
    return rows, None, None


def plain(value):
    return json.loads(json.dumps(value, default=lambda o: o.model_dump(mode="json", exclude_none=True)))
'''


def both(answers: list[StubResponse], server: StubServer, **settings: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The program with ``settings`` (its upper-case names: TURNS, ANSWER_TO,
    ANSWER_NAME, OPEN_CALL, ASKED, as Python source) run on google-adk, then on ours."""
    source = PROGRAM
    for name, value in settings.items():
        default = next(line for line in PROGRAM.splitlines() if line.startswith(f"{name.upper()} = "))
        source = source.replace(default, f"{name.upper()} = {value}")
    theirs = nameless._run(source, answers, server)
    assert theirs["error"] is None and theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    return theirs, nameless._run(rewritten(source), answers, server)


def _events(result: dict[str, Any]) -> list[Any]:
    rows: list[Any] = result["responses"]  # (the program's return value: one row per stored event)
    return rows


def contents(result: dict[str, Any], index: int = -1) -> list[dict[str, Any]]:
    """The contents of a request, a turn one side adds in its own words as ``<turn>``
    (google-adk's after a model's last turn or for empty contents, and ours)."""
    theirs_words = ("Continue processing previous requests as instructed.",
                    "Handle the requests as specified in the System Instruction.")
    rows: list[dict[str, Any]] = copy.deepcopy(result["requests"][index]["contents"])
    for content in rows:
        for part in content.get("parts", []):
            if part.get("text", "").startswith((*theirs_words, GO_ON, ANSWER_THE_INSTRUCTION)):
                part["text"] = "<turn>"
    return rows


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


ASK_CALL = {"role": "model", "parts": [{"functionCall": {"name": "ask", "args": {"city": "Oslo"}}}]}


# -- 1. an answer that does not settle the call: the call runs again ----------------------


def test_an_answer_by_id_only_to_an_open_call_of_a_tool_that_answers_now_runs_it_then_asks_the_model(
        gemini: StubServer) -> None:
    theirs, ours = both([gemini_response("Cold.")], gemini, turns='["ANSWER"]', open_call='"lookup"',
                        answer_to='"lookup"')
    assert [row[:3] for row in _events(theirs)] == [
        ("root", ["lookup"], []), ("user", [], [(None, {"answer": "sunny"})]),
        ("root", [], [("lookup", {"city": "Oslo"})]), ("root", [], [])]
    # the tool's answer, in place of the user's
    assert contents(theirs) == [
        {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"city": "Oslo"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"city": "Oslo"}}}]}]
    assert _events(ours) == _events(theirs)
    assert ours["requests"] == theirs["requests"] and ours["unused_answers"] == 0


def test_a_named_answer_to_an_open_call_of_a_tool_is_its_answer(gemini: StubServer) -> None:
    theirs, ours = both([gemini_response("Sunny.")], gemini, turns='["ANSWER"]', open_call='"lookup"',
                        answer_to='"lookup"', answer_name='"lookup"')
    assert [row[:3] for row in _events(theirs)] == [
        ("root", ["lookup"], []), ("user", [], [("lookup", {"answer": "sunny"})]), ("root", [], [])]
    assert _events(ours) == _events(theirs)
    assert ours["requests"] == theirs["requests"] and ours["unused_answers"] == 0


def test_a_named_answer_to_a_call_its_long_running_tool_left_open_asks_the_model(gemini: StubServer) -> None:
    theirs, ours = both([calls(("ask", {"city": "Oslo"})), gemini_response("Sunny.")], gemini,
                        asked="None", answer_name='"ask"')
    assert contents(theirs) == [user("Oslo?"), ASK_CALL, {"role": "user", "parts": [
        {"functionResponse": {"name": "ask", "response": {"answer": "sunny"}}}]}]
    assert _events(ours) == _events(theirs)
    assert ours["requests"] == theirs["requests"] and ours["unused_answers"] == 0


# -- 2. the request after a late answer ---------------------------------------------------


@pytest.mark.parametrize("name", ["None", '"ask"'], ids=["by id only", "by id and name"])
def test_the_request_after_a_late_answer_leaves_out_the_models_words_after_the_first_response(
        gemini: StubServer, name: str) -> None:
    theirs, ours = both([calls(("ask", {"city": "Oslo"})), gemini_response("Asked."), gemini_response("Sunny.")],
                        gemini, answer_name=name)
    answer = {"response": {"answer": "sunny"}} | ({"name": "ask"} if name != "None" else {})
    assert contents(theirs) == [user("Oslo?"), ASK_CALL, {"role": "user", "parts": [{"functionResponse": answer}]}]
    assert contents(ours) == contents(theirs)
    assert ours["requests"] == theirs["requests"]
    assert _events(ours) == _events(theirs)


def test_a_late_answer_after_other_turns_leaves_them_out_of_its_request_not_of_later_ones(
        gemini: StubServer) -> None:
    script = [calls(("ask", {"city": "Oslo"})), gemini_response("Asked."),
              calls(("lookup", {"city": "Bergen"})), gemini_response("Cold."),
              gemini_response("Sunny."), gemini_response("Bye.")]
    theirs, ours = both(script, gemini, turns='["Oslo?", "Bergen?", "ANSWER", "Thanks."]', answer_name='"ask"')
    answer = {"role": "user", "parts": [{"functionResponse": {"name": "ask", "response": {"answer": "sunny"}}}]}
    assert contents(theirs, 4) == [user("Oslo?"), ASK_CALL, answer]
    assert [contents(ours, i) for i in range(6)] == [contents(theirs, i) for i in range(6)]
    assert ours["requests"] == theirs["requests"]
    assert _events(ours) == _events(theirs)


# -- 3. an answer to no call ---------------------------------------------------------------


def test_an_answer_to_no_call_alone_is_sent_as_one_user_turn(gemini: StubServer) -> None:
    theirs, ours = both([gemini_response("Hello.")], gemini, turns='["ANSWER"]', answer_to="None",
                        answer_name='"ask"')
    assert contents(theirs) == [user("<turn>")]
    assert contents(ours) == contents(theirs)
    assert ours["requests"][0]["contents"][0]["parts"][0]["text"] == ANSWER_THE_INSTRUCTION
    assert _events(ours) == _events(theirs)


def test_an_answer_to_no_call_after_a_conversation_is_left_out(gemini: StubServer) -> None:
    theirs, ours = both([gemini_response("Hi."), gemini_response("Hello.")], gemini, turns='["Oslo?", "ANSWER"]',
                        answer_to="None")
    assert contents(theirs) == [user("Oslo?"), {"role": "model", "parts": [{"text": "Hi."}]}, user("<turn>")]
    assert contents(ours) == contents(theirs)
    assert _events(ours) == _events(theirs)


# -- the rule itself, event by event, against google-adk's -------------------------------


def _scenario(types: Any, event: Any) -> list[Any]:
    """A history with two late answers in one message (to calls of two turns) and a
    text beside them, built with ``types`` and ``event`` (google-adk's or ours)."""
    def made(author: str, *parts: Any, role: str = "model") -> Any:
        return event(author=author, invocation_id="e-1", content=types.Content(role=role, parts=list(parts)))

    def text(value: str) -> Any:
        return types.Part(text=value)

    def call(call_id: str, name: str) -> Any:
        return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args={}))

    def answer(call_id: str, name: str | None, value: str) -> Any:
        return types.Part(function_response=types.FunctionResponse(id=call_id, name=name, response={"v": value}))

    return [made("user", text("Oslo?"), role="user"), made("root", call("a", "ask")),
            made("root", answer("a", "ask", "asked"), role="user"), made("root", text("Asked.")),
            made("user", text("Bergen?"), role="user"), made("root", call("b", "lookup"), call("c", "ask")),
            made("root", answer("b", "lookup", "cold"), answer("c", "ask", "asked"), role="user"),
            made("root", text("Cold; asked.")),
            made("user", answer("a", None, "sunny"), answer("c", "ask", "rain"), answer("z", "ask", "orphan"),
                 text("Both."), role="user")]


def _rows(events: Any) -> list[Any]:
    return [(e.author, [(p.text, p.function_call and p.function_call.id,
                         p.function_response and (p.function_response.id, p.function_response.response))
                        for p in e.content.parts]) for e in events]


def test_the_rearranged_history_is_google_adks_event_by_event() -> None:
    from google.adk.events import Event as TheirEvent
    from google.adk.flows.llm_flows.tools._rearranger import (
        rearrange_events_for_latest_function_response,
    )
    from google.genai import types as theirs

    from adk_actors import types as our_types
    from adk_actors.compiler._answers import latest_answer_history
    from adk_actors.events import Event as OurEvent

    expected = _rows(rearrange_events_for_latest_function_response(_scenario(theirs, TheirEvent)))
    # cut after c's call (the words after it gone), a's answer after a's call, c's (and the text) after c's
    assert [part[0] for _, parts in expected for part in parts if part[0]] == ["Oslo?", "Asked.", "Bergen?", "Both."]
    assert expected[2][1] == [(None, None, ("a", {"v": "sunny"}))]
    assert _rows(latest_answer_history(_scenario(our_types, OurEvent), "root", None)) == expected
