"""google-adk's tool confirmation flow (issue 52), side by side with google-adk 2.13:
``tool_context.request_confirmation(hint=, payload=)``, ``FunctionTool(require_confirmation=)``,
the ``adk_request_confirmation`` call a run emits, and the user's function response that
confirms or rejects (after which the tool sees ``tool_context.tool_confirmation``).

Each case is one google-adk program run twice, as in tests/test_google_adk_parity.py:
as written on google-adk, then with its imports rewritten on ours, against one Gemini
REST stand-in named by environment variables only. Compared: every event of both turns
through google-adk's readers (the harness's ``event_rows``, call ids by order of
appearance), the confirmation call's arguments, what the tool saw, the stored events,
the final state, and the model requests.
"""

from __future__ import annotations

import json
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

SEEN = []


def transfer(amount: int, tool_context: ToolContext) -> dict:
    """Moves money."""
    confirmation = tool_context.tool_confirmation
    SEEN.append(None if confirmation is None else [confirmation.confirmed, confirmation.payload])
    if ASKS and confirmation is None:
        tool_context.request_confirmation(hint="Approve the transfer?", payload={"limit": 0})
        return {"status": "waiting"}
    if confirmation is not None and not confirmation.confirmed:
        return {"status": "rejected"}
    tool_context.state["moved"] = amount
    return {"status": "done", "limit": (confirmation.payload or {}).get("limit") if confirmation else None}


ASKS = True
ANSWER_ID = None
TOOL = transfer
root_agent = Agent(name="bank", model="gemini-2.5-flash", instruction="Move money when asked.", tools=[TOOL])


async def main(answer):
    runner = InMemoryRunner(agent=root_agent, app_name="conf")
    session = await runner.session_service.create_session(app_name="conf", user_id="ann")
    first, second, asked = [], [], None
    message = types.Content(role="user", parts=[types.Part(text="send money")])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        first.append(event)
        asked = next((c for c in event.get_function_calls() if c.name == "adk_request_confirmation"), asked)
    if asked is not None and answer is not None:
        reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="adk_request_confirmation", id=ANSWER_ID or asked.id, response=answer))])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=reply):
            second.append(event)
    stored = await runner.session_service.get_session(app_name="conf", user_id="ann", session_id=session.id)
    await runner.close()
    return {"first": first, "second": second, "asked": None if asked is None else dict(asked.args),
            "seen": list(SEEN), "stored": stored.events, "state": dict(stored.state)}
'''


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    """``event_rows``, with the original call's id a confirmation request names (random
    on both sides) given as whether it is the id of the call before it."""
    call_ids = [c.id for e in events for c in e.get_function_calls() if c.name != "adk_request_confirmation"]
    rows = event_rows(events)
    for row in rows:
        for _, name, args in row["calls"]:
            if name == "adk_request_confirmation":
                original = args["originalFunctionCall"]
                original["id"] = "the call's" if original.get("id") in call_ids else original.get("id")
    return rows


def _run(source: str, answers: list[StubResponse], answer: Any, server: StubServer) -> dict[str, Any]:
    _, result = run_program(source, answers, server, answer)
    original = (result["asked"] or {}).get("originalFunctionCall", {})
    return {"first": _rows(result["first"]), "second": _rows(result["second"]),
            "asked": None if result["asked"] is None else {
                "original": (original.get("name"), original.get("args")),
                "confirmation": result["asked"]["toolConfirmation"]},
            "seen": result["seen"], "stored": _rows(result["stored"]), "state": result["state"],
            "requests": request_rows(server), "unused_answers": len(server.responses)}


TRANSFERRED = ('bank = Agent(name="bank", model="gemini-2.5-flash", description="Banking.", '
               'instruction="Move money when asked.", tools=[TOOL])\n'
               'root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Route.", sub_agents=[bank])')


def both(answers: list[StubResponse], answer: Any, server: StubServer, *, tool: str = "transfer",
         asks: bool = True, transferred: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The program (its tool as ``tool``; ``asks``: the tool asks for a confirmation
    itself; ``transferred``: the tool is a sub-agent's, reached by a transfer) run on
    google-adk, then on ours, the user answering ``answer``."""
    source = PROGRAM.replace("TOOL = transfer", f"TOOL = {tool}").replace("ASKS = True", f"ASKS = {asks}")
    if transferred:
        source = source.replace('root_agent = Agent(name="bank", model="gemini-2.5-flash", '
                                'instruction="Move money when asked.", tools=[TOOL])', TRANSFERRED)
        assert TRANSFERRED.split("\n")[1] in source
    theirs = _run(source, answers, answer, server)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    ours = _run(rewritten(source), answers, answer, server)
    assert "google" not in rewritten(source)
    return theirs, ours


def assert_same(theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    for key in ("first", "second", "asked", "seen", "stored", "state", "requests", "unused_answers"):
        assert ours[key] == theirs[key], key


SCRIPT = [calls(("transfer", {"amount": 5})), gemini_response("Waiting for approval."), gemini_response("Sent.")]


def test_a_tool_asks_and_the_user_confirms_with_a_payload(gemini: StubServer) -> None:
    theirs, ours = both(SCRIPT, {"confirmed": True, "payload": {"limit": 9}}, gemini)
    assert theirs["asked"] == {"original": ("transfer", {"amount": 5}),
                               "confirmation": {"hint": "Approve the transfer?", "confirmed": False,
                                                "payload": {"limit": 0}}}
    assert theirs["seen"] == [None, [True, {"limit": 9}]] and theirs["state"] == {"moved": 5}
    assert any(row["long_running"] for row in theirs["first"])  # the request is long-running
    assert_same(theirs, ours)


def test_the_answer_reaches_the_sub_agent_that_asked(gemini: StubServer) -> None:
    script = [calls(("transfer_to_agent", {"agent_name": "bank"})), *SCRIPT]
    theirs, ours = both(script, {"confirmed": True, "payload": {"limit": 4}}, gemini, transferred=True)
    assert theirs["seen"] == [None, [True, {"limit": 4}]]
    assert {row["author"] for row in theirs["second"]} == {"bank"}
    assert_same(theirs, ours)


def test_a_tool_asks_and_the_user_rejects(gemini: StubServer) -> None:
    theirs, ours = both(SCRIPT, {"confirmed": False}, gemini)
    assert theirs["seen"] == [None, [False, None]] and theirs["state"] == {}
    assert_same(theirs, ours)


def test_adk_webs_answer_a_json_string_under_response(gemini: StubServer) -> None:
    answer = {"response": json.dumps({"confirmed": True, "payload": {"limit": 3}})}
    theirs, ours = both(SCRIPT, answer, gemini)
    assert theirs["seen"][-1] == [True, {"limit": 3}]
    assert_same(theirs, ours)


def test_a_tool_that_is_never_answered_leaves_the_run_as_google_adks(gemini: StubServer) -> None:
    theirs, ours = both(SCRIPT[:2], None, gemini)
    assert theirs["second"] == [] and theirs["seen"] == [None]
    assert_same(theirs, ours)


GATED = [calls(("transfer", {"amount": 5})), gemini_response("Sent.")]


@pytest.mark.parametrize("answer", [{"confirmed": True}, {"confirmed": False}])
def test_require_confirmation_holds_the_call_until_answered(gemini: StubServer, answer: dict[str, Any]) -> None:
    theirs, ours = both(GATED, answer, gemini, tool="FunctionTool(transfer, require_confirmation=True)", asks=False)
    # held: the tool did not run, the turn ended at the held call (no model call after it)
    assert theirs["seen"] == ([[True, None]] if answer["confirmed"] else [])
    assert len(theirs["requests"]) == 2 and theirs["asked"]["original"] == ("transfer", {"amount": 5})
    assert_same(theirs, ours)


def test_require_confirmation_by_a_callable_of_the_arguments(gemini: StubServer) -> None:
    big = "FunctionTool(transfer, require_confirmation=lambda amount, tool_context: amount > 50)"
    theirs, ours = both([calls(("transfer", {"amount": 5})), gemini_response("Sent.")], None, gemini, tool=big,
                        asks=False)
    assert theirs["asked"] is None and theirs["state"] == {"moved": 5}  # small: no confirmation needed
    assert_same(theirs, ours)
    theirs, ours = both(GATED, {"confirmed": True}, gemini,
                        tool="FunctionTool(transfer, require_confirmation=lambda amount, tool_context: amount < 50)", asks=False)
    assert theirs["asked"] is not None and theirs["state"] == {"moved": 5}
    assert_same(theirs, ours)


def test_an_answer_to_no_request_is_google_adks_value_error(gemini: StubServer) -> None:
    """google-adk's runner refuses it before the run (the message not stored); ours
    refuses it when the agent's flow starts (the message stored), with the same error."""
    source = PROGRAM.replace("ANSWER_ID = None", 'ANSWER_ID = "adk-no-such-request"')
    raised = []
    for text in (source, rewritten(source)):
        with pytest.raises(ValueError) as error:
            _run(text, SCRIPT, {"confirmed": True}, gemini)
        raised.append(str(error.value))
    assert raised[0] == raised[1] and "Function call not found for function response ids" in raised[0]


def test_tool_confirmation_is_google_adks_model() -> None:
    from google.adk.tools.tool_confirmation import ToolConfirmation as Theirs
    from pydantic import ValidationError

    from adk_actors.tools.tool_confirmation import ToolConfirmation as Ours

    for given in ({}, {"hint": "h", "confirmed": True, "payload": [1]}, {"response": '{"confirmed": true}'}):
        assert Ours.from_response_dict(given).model_dump(by_alias=True) == \
            Theirs.from_response_dict(given).model_dump(by_alias=True)
    with pytest.raises(ValidationError):
        Ours.from_response_dict({"confirmed": True, "bogus": 1})


def test_request_confirmation_outside_a_call_is_a_value_error_as_in_google_adk() -> None:
    from types import SimpleNamespace

    from adk_actors.tools import ToolContext

    context = ToolContext(SimpleNamespace(session=SimpleNamespace(state={})), None)
    with pytest.raises(ValueError, match="function call id"):
        context.request_confirmation(hint="sure?")
    asked = ToolContext(SimpleNamespace(session=SimpleNamespace(state={})), "call-1")
    assert asked.tool_confirmation is None and asked.request_confirmation(hint="sure?", payload={"a": 1}) is None
    confirmation = asked.actions.requested_tool_confirmations["call-1"]
    assert (confirmation.hint, confirmation.confirmed, confirmation.payload) == ("sure?", False, {"a": 1})
