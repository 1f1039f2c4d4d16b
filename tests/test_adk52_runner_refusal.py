"""google-adk 2.13's Runner refuses a new message whose function response id answers no
function call of the session, before the run starts (issue 52), side by side.

One google-adk program runs as written on google-adk, then with its imports rewritten
on ours, against one Gemini REST stand-in (as tests/test_google_adk_parity.py). A first
turn makes a tool call; then a message answers an id no call has, and, after a rewind
of the first turn, the call's own id (a rewound call answers nothing either). Compared:
the error's type and text, how many events the session holds after each refusal (none
added: the message is not stored), and that the model was not asked again.
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, rewritten, run_program

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types


def note(text: str) -> dict:
    """Notes something down."""
    return {"noted": text}


root_agent = Agent(name="noter", model="gemini-2.5-flash", instruction="Take notes.", tools=[note])


def answer(call_id):
    return types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id=call_id, name="note", response={"noted": "late"}))])


async def refused(runner, session_id, message):
    """(error type, text) of the refusal, or None when the turn ran."""
    try:
        async for _ in runner.run_async(user_id="ann", session_id=session_id, new_message=message):
            pass
    except Exception as exc:
        return (type(exc).__name__, str(exc))
    return None


async def count(runner, session_id):
    session = await runner.session_service.get_session(app_name="notes", user_id="ann", session_id=session_id)
    return len(session.events)


async def main():
    runner = Runner(agent=root_agent, app_name="notes", session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="notes", user_id="ann")
    events = []
    message = types.Content(role="user", parts=[types.Part(text="note milk")])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        events.append(event)
    call = next(c for e in events for c in e.get_function_calls())
    first_turn = await count(runner, session.id)
    unknown = await refused(runner, session.id, answer("no-such-call"))
    after_unknown = await count(runner, session.id)
    await runner.rewind_async(user_id="ann", session_id=session.id,
                              rewind_before_invocation_id=events[0].invocation_id)
    after_rewind = await count(runner, session.id)
    rewound = await refused(runner, session.id, answer(call.id))
    after_rewound = await count(runner, session.id)
    await runner.close()
    return {"counts": [first_turn, after_unknown, after_rewind, after_rewound],
            "unknown": unknown, "rewound": rewound and (rewound[0], rewound[1].replace(call.id, "CALL"))}
'''


def _run(source: str, server: StubServer) -> dict[str, Any]:
    answers = [calls(("note", {"text": "milk"})), gemini_response("Noted.")]
    _, result = run_program(source, answers, server)
    result["unused_answers"] = len(server.responses)
    result["model_requests"] = len(server.requests)
    return result


def test_a_function_response_that_answers_no_call_is_refused_before_the_run(gemini: StubServer) -> None:
    theirs = _run(PROGRAM, gemini)
    # what google-adk does, so that the comparison means something
    assert theirs["unknown"] == ("ValueError", "Function call not found for function response ids: "
                                 "{'no-such-call'}. Ensure each function response ID matches an existing "
                                 "function call in the session history.")
    assert theirs["rewound"] is not None and "{'CALL'}" in theirs["rewound"][1]
    counts = theirs["counts"]
    assert counts[0] == counts[1] and counts[2] == counts[3] and counts[0] > 0  # nothing stored by a refusal
    assert theirs["unused_answers"] == 0 and theirs["model_requests"] == 2  # the model was not asked again

    ours = _run(rewritten(PROGRAM), gemini)
    assert "google" not in rewritten(PROGRAM)
    for key in ("unknown", "rewound", "counts", "unused_answers", "model_requests"):
        assert ours[key] == theirs[key], key
