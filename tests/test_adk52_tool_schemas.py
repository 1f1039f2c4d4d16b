"""Issue 52: our tools' declarations reach Gemini as google-adk 2.13 sends them.

google-adk 2.13 (its ``JSON_SCHEMA_FOR_FUNC_DECL`` feature, stable and on by default)
declares a FunctionTool's parameters under ``parameters_json_schema``: pydantic's JSON
schema of a model named ``<function>Params`` made of the parameters' types and
defaults, the whole cleaned docstring as the description, and no response schema on
the Gemini API. ``load_memory`` declares ``{"query": string}`` the same way. The same
program runs in process on google-adk and on ours (imports rewritten) against one
Gemini stand-in on 127.0.0.1, and the ``tools`` of the request bodies must be equal,
key by key, as received.

The tools the flow adds are declared the same way: ``transfer_to_agent`` (pydantic's
schema of its function, ``agent_name``'s enum the agent's targets, first among the
request's declarations), a ``mode="task"`` sub-agent's delegation tool (its
``input_schema``'s schema, else google-adk's one-string ``request``) and the task
agent's ``finish_task`` (its ``output_schema``'s schema, a non-object one wrapped under
``result``), all under ``parameters_json_schema``; only the descriptions of
``transfer_to_agent`` and ``finish_task`` are our own words.
"""

from __future__ import annotations

from typing import Any

import pytest
from google_adk_harness import gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

PROGRAM = '''
from typing import Optional

from pydantic import BaseModel

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import FunctionTool
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.load_artifacts_tool import load_artifacts_tool
from google.adk.tools.load_memory_tool import load_memory_tool
from google.genai import types


class Address(BaseModel):
    street: str
    zip_code: Optional[str] = None


def book_trip(city: str, nights: int, guests: list[str], address: Address,
              note: Optional[str] = None, tool_context=None) -> dict:
    """Book a trip to a city.

    Args:
      city: Where to go.
      nights: How many nights.
    """
    return {"ok": True}


def ping() -> str:
    """Say hello."""
    return "pong"


def shrug(mood: str) -> str:
    return mood


class Question(BaseModel):
    topic: str
    depth: int = 1


expert = Agent(name="expert", model="gemini-2.5-flash", description="Answers travel questions.",
               instruction="Answer.", input_schema=Question)

root_agent = Agent(name="planner", model="gemini-2.5-flash", instruction="Plan trips.",
                   tools=[FunctionTool(book_trip), ping, shrug, load_memory_tool, load_artifacts_tool,
                          AgentTool(agent=expert)])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="trips")
    session = await runner.session_service.create_session(app_name="trips", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id,
                                    new_message=types.Content(role="user", parts=[types.Part(text="go")])):
        pass
'''


def _tools_sent(server: StubServer, source: str) -> list[dict[str, Any]]:
    run_program(source, [gemini_response(text="done")], server)
    assert len(server.requests) == 1
    tools: list[dict[str, Any]] = server.requests[0].body["tools"]
    return tools


def _declarations(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for tool in tools for d in tool.get("functionDeclarations", [])}


# built-in tools whose description is google-adk's own prose (its docstring), which we
# word ourselves: everything else of their declaration must be equal
OWN_WORDS = {"load_memory", "load_artifacts"}


def test_tool_declarations_reach_gemini_as_google_adk_sends_them(gemini: StubServer) -> None:  # noqa: F811
    theirs = _declarations(_tools_sent(gemini, PROGRAM))
    ours = _declarations(_tools_sent(gemini, rewritten(PROGRAM)))
    assert sorted(ours) == sorted(theirs) == ["book_trip", "expert", "load_artifacts", "load_memory", "ping", "shrug"]
    # what google-adk sends, as observed: a plain JSON schema, not google-genai's Schema
    assert all("parameters" not in d for d in theirs.values())
    assert "parametersJsonSchema" in theirs["book_trip"] or "parameters_json_schema" in theirs["book_trip"]
    for name in theirs:
        if name in OWN_WORDS:
            assert ours[name]["description"] and theirs[name]["description"]
            ours[name].pop("description"), theirs[name].pop("description")
        assert ours[name] == theirs[name], name


# -- the tools the flow adds: transfer_to_agent, task delegation, finish_task -------------

TEAM = '''
from pydantic import BaseModel

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types


class Trip(BaseModel):
    city: str
    nights: int = 1


class Ask(BaseModel):
    topic: str


def ping() -> str:
    """Say hello."""
    return "pong"


helper = Agent(name="helper", model="gemini-2.5-flash", description="Helps.", instruction="Help.")
booker = Agent(name="booker", model="gemini-2.5-flash", description="Books trips.", instruction="Book.",
               mode="task", input_schema=Ask, output_schema=Trip, tools=[ping])
counter = Agent(name="counter", model="gemini-2.5-flash", description="Counts.", instruction="Count.",
                mode="task", output_schema=list[str])
root_agent = Agent(name="desk", model="gemini-2.5-flash", instruction="Route.", tools=[ping],
                   sub_agents=[helper, booker, counter])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="trips")
    session = await runner.session_service.create_session(app_name="trips", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id,
                                    new_message=types.Content(role="user", parts=[types.Part(text="go")])):
        pass
'''

#: the desk delegates to each task agent, each finishes its task, the desk answers
TEAM_SCRIPT = [
    ("booker", {"topic": "Paris"}),
    ("finish_task", {"city": "Paris", "nights": 2}),
    ("counter", {"request": "count the cities"}),
    ("finish_task", {"result": ["Paris"]}),
]

# the flow's tools whose description is our own wording (the seeds' concise transfer
# tool; finish_task's sentence): everything else of their declaration must be equal
FLOW_OWN_WORDS = {"transfer_to_agent", "finish_task"}


def _every_request_declares(server: StubServer, source: str) -> list[list[dict[str, Any]]]:
    answers = [gemini_response(function_calls=[call]) for call in TEAM_SCRIPT] + [gemini_response(text="done")]
    run_program(source, answers, server)
    assert not server.responses, "the whole script is used"
    return [[d for tool in r.body.get("tools", []) for d in tool.get("functionDeclarations", [])]
            for r in server.requests]


def test_the_flows_own_tools_reach_gemini_as_google_adk_declares_them(gemini: StubServer) -> None:  # noqa: F811
    """transfer_to_agent, a task agent's delegation tool and its finish_task (an object
    schema, and a list wrapped under ``result``), in every request of a run that uses
    them all: the same declarations in the same order, key by key as received (the
    JSON schema under ``parameters_json_schema``, pydantic's titles and defaults kept,
    ``agent_name``'s enum the targets of each agent), our own words aside."""
    theirs = _every_request_declares(gemini, TEAM)
    ours = _every_request_declares(gemini, rewritten(TEAM))
    names = [[d["name"] for d in request] for request in theirs]
    assert names == [["transfer_to_agent", "ping", "booker", "counter"],
                     ["transfer_to_agent", "ping", "finish_task"],
                     ["transfer_to_agent", "ping", "booker", "counter"],
                     ["transfer_to_agent", "finish_task"],
                     ["transfer_to_agent", "ping", "booker", "counter"]]
    assert [[d["name"] for d in request] for request in ours] == names
    for their_request, our_request in zip(theirs, ours, strict=True):
        for their, our in zip(their_request, our_request, strict=True):
            assert "parameters" not in their and ("parameters_json_schema" in their or their["name"] == "ping")
            if their["name"] in FLOW_OWN_WORDS:
                assert our.pop("description") and their.pop("description")
            assert our == their, their["name"]
