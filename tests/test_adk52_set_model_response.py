"""``set_model_response`` is declared as google-adk 2.13 declares it (issue 52).

An agent with an ``output_schema`` and tools answers through ``set_model_response``.
google-adk 2.13 declares it under ``parameters_json_schema``: pydantic's schema of a
model named ``set_model_responseParams`` made of the output schema's fields (their
types and defaults, titles kept, each field's description put back), or one
``response`` object for a JSON-schema dict. The same program runs in process on
google-adk and on ours (imports rewritten) against one Gemini stand-in: the first
request's declarations must be equal key by key as received, our own description
aside, and a ``set_model_response`` call ends the turn with the same structured answer
(final text and state) on both sides.

google-adk declares no ``set_model_response`` in a live conversation (it skips its
output-schema step when live): neither do we, and the live request's instruction does
not ask for it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google_adk_harness import calls, gemini, rewritten, run_program, stand_in  # noqa: F401
from pydantic import BaseModel

from adk_actors import Content, LlmAgent, RunConfig
from adk_actors._types import LiveRequest
from adk_actors.compiler import CompileContext, build_request
from adk_actors.engine import SessionView, run_live_invocation
from adk_actors.models import ScriptedModel
from adk_actors.testing import StubServer

pytest.importorskip("google.adk")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

OUR_WORDS = "Give your final answer, structured as the schema requires."

PROGRAM = '''
from typing import Optional

from pydantic import BaseModel, Field

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types


class Stop(BaseModel):
    place: str = Field(description="Where the stop is.")
    hours: Optional[int] = None


class Plan(BaseModel):
    """A trip plan."""
    city: str = Field(description="The city to visit.")
    nights: int = 2
    stops: list[Stop] = Field(default_factory=list, description="The stops, in order.")
    note: Optional[str] = None


def weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "sky": "clear"}


root_agent = Agent(name="planner", model="gemini-2.5-flash", instruction="Plan a trip.",
                   tools=[weather], output_schema=Plan, output_key="plan")


async def main(text):
    runner = InMemoryRunner(agent=root_agent, app_name="trips")
    session = await runner.session_service.create_session(app_name="trips", user_id="u")
    finals = []
    async for event in runner.run_async(user_id="u", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
        if event.is_final_response() and event.content and event.content.parts:
            finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="trips", user_id="u", session_id=session.id)
    await runner.close()
    return finals, dict(stored.state)
'''

ANSWER = {"city": "Rome", "stops": [{"place": "Forum", "hours": 3}]}


def _run(server: StubServer, source: str) -> tuple[list[dict[str, Any]], list[str], dict[str, Any], int]:
    """The first request's declarations as received, the final texts, the state and how
    many requests the model got, for one set_model_response call."""
    _, (finals, state) = run_program(source, [calls(("set_model_response", ANSWER))], server, "Plan Rome.")
    assert not server.responses, "the script is used"
    declarations = [d for tool in server.requests[0].body.get("tools", []) for d in tool.get("functionDeclarations", [])]
    return declarations, finals, state, len(server.requests)


def test_set_model_response_is_declared_and_answers_as_on_google_adk(gemini: StubServer) -> None:  # noqa: F811
    their_declarations, their_finals, their_state, their_requests = _run(gemini, PROGRAM)
    our_declarations, our_finals, our_state, our_requests = _run(gemini, rewritten(PROGRAM))
    assert [d["name"] for d in their_declarations] == ["set_model_response", "weather"]
    assert [d["name"] for d in our_declarations] == ["set_model_response", "weather"]
    theirs, ours = their_declarations[0], our_declarations[0]
    schema: dict[str, Any] = theirs.get("parametersJsonSchema") or theirs["parameters_json_schema"]
    assert schema["title"] == "set_model_responseParams" and "parameters" not in theirs
    assert schema["properties"]["city"]["description"] == "The city to visit."
    assert ours["description"] == OUR_WORDS  # our words, not google-adk's docstring
    theirs.pop("description"), ours.pop("description")
    assert ours == theirs
    assert our_declarations[1] == their_declarations[1]
    # the call ends the turn: one request, the answer as the final text and under output_key
    assert our_requests == their_requests == 1
    assert our_finals == their_finals and len(their_finals) == 1
    assert our_state == their_state == {"plan": {"city": "Rome", "nights": 2,
                                                 "stops": [{"place": "Forum", "hours": 3}]}}


DICT_PROGRAM = PROGRAM.replace("output_schema=Plan", 'output_schema={"type": "object", "properties": '
                                                     '{"city": {"type": "string"}}, "required": ["city"]}')


def test_a_dict_output_schema_is_one_response_object_as_on_google_adk(gemini: StubServer) -> None:  # noqa: F811
    """For a JSON-schema dict google-adk declares one ``response`` object and takes the
    answer from it: the same declaration, final text and state here."""
    answer = {"response": {"city": "Rome"}}
    runs = []
    for source in (DICT_PROGRAM, rewritten(DICT_PROGRAM)):
        _, (finals, state) = run_program(source, [calls(("set_model_response", answer))], gemini, "Plan Rome.")
        declared = gemini.requests[0].body["tools"][0]["functionDeclarations"][0]
        declared.pop("description")
        runs.append((declared, finals, state, len(gemini.requests)))
    theirs, ours = runs
    assert theirs[0]["name"] == "set_model_response"
    assert ours == theirs
    assert theirs[2] == {"plan": {"city": "Rome"}} and theirs[3] == 1


class _Plan(BaseModel):
    city: str


def _weather(city: str) -> dict[str, str]:
    """The weather in a city."""
    return {"city": city}


def test_a_live_conversation_declares_no_set_model_response() -> None:
    """Live, as google-adk: no set_model_response declaration and no sentence asking for
    it, while the agent's own tool and the schema's instruction stay; a turn of the same
    agent still declares it."""
    model = ScriptedModel(["Hi."])
    agent = LlmAgent(name="planner", model=model, instruction="Plan a trip.", tools=[_weather], output_schema=_Plan)
    turn_request = build_request(agent, CompileContext())
    assert [d.name for d in turn_request.tools] == ["set_model_response", "_weather"]
    assert "set_model_response" in turn_request.system_instruction
    session = SessionView()
    inputs: asyncio.Queue[LiveRequest] = asyncio.Queue()
    inputs.put_nowait(LiveRequest(content=Content.user("hi")))

    async def run() -> None:
        async for event in run_live_invocation(agent, session, inputs,
                                               run_config=RunConfig(response_modalities=("TEXT",))):
            if event.turn_complete:
                inputs.put_nowait(LiveRequest(close=True))

    asyncio.run(asyncio.wait_for(run(), timeout=30))
    live_request = model.requests[0]
    assert [d.name for d in live_request.tools] == ["_weather"]
    assert "set_model_response" not in live_request.system_instruction
    assert "Plan a trip." in live_request.system_instruction and '"city"' in live_request.system_instruction
