"""``output_schema`` as a typing type (``list[Model]``, ``list[str]``, ``dict[str, int]``),
side by side with google-adk 2.13 (issue 52): the same program on both against one
Gemini stand-in gives the same events, final texts, state, model requests and
``generationConfig`` (the response schema), with and without tools
(``set_model_response``)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from google_adk_harness import calls, gemini, rewritten, run_case, stand_in  # noqa: F401

from adk_actors import LlmAgent
from adk_actors.testing import StubServer, gemini_response

HEAD = '''
from pydantic import BaseModel
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types


class City(BaseModel):
    name: str
    country: str | None = None


def lookup(city: str) -> dict:
    """Look a city up."""
    return {"city": city, "found": True}
'''

MAIN = '''
async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="schemas")
    session = await runner.session_service.create_session(app_name="schemas", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="schemas", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''


def _agent(schema: str, tools: bool) -> str:
    return (f'root_agent = Agent(name="a", model="gemini-2.5-flash", instruction="Answer.", '
            f'output_schema={schema}, output_key="k"{", tools=[lookup]" if tools else ""})\n')


CASES: dict[str, tuple[str, bool, list[Any]]] = {
    "list_of_models": ("list[City]", False, [gemini_response('[{"name": "Oslo", "country": null}, {"name": "Rome"}]')]),
    "list_of_str": ("list[str]", False, [gemini_response('["Oslo", "Rome"]')]),
    "list_of_models_tools": ("list[City]", True, [
        calls(("lookup", {"city": "Oslo"})),
        calls(("set_model_response", {"items": [{"name": "Oslo", "country": None}, {"name": "Rome"}]}))]),
    "list_of_str_tools": ("list[str]", True, [
        calls(("lookup", {"city": "Oslo"})), calls(("set_model_response", {"response": ["Oslo", "Rome"]}))]),
    "dict_str_int_tools": ("dict[str, int]", True, [
        calls(("lookup", {"city": "Oslo"})), calls(("set_model_response", {"response": {"Oslo": 1}}))]),
}


def _plain_schema(schema: Any) -> Any:
    """A response schema as the model reads it: type names in lower case, no ``title`` or
    ``property_ordering`` (google-genai adds them), ``nullable`` as an ``anyOf`` with null
    (google-genai's spelling of pydantic's ``X | None``; ours keeps pydantic's)."""
    if isinstance(schema, list):
        return [_plain_schema(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _plain_schema(v) for k, v in schema.items() if k not in ("title", "property_ordering", "nullable")}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    if schema.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def _requests(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The requests without ``set_model_response``'s description (its words are our own)."""
    for row in rows:
        for tool in row["tools"]:
            if tool["name"] == "set_model_response":
                tool.pop("description", None)
    return rows


AGENT_TOOL = '''
from google.adk.tools.agent_tool import AgentTool

finder = Agent(name="finder", model="gemini-2.5-flash", instruction="Find.", output_schema=list[City],
               output_key="found")
root_agent = Agent(name="a", model="gemini-2.5-flash", instruction="Answer.", tools=[AgentTool(finder)])
'''


@pytest.mark.parametrize("tools", [False, True])
def test_agent_tool_of_list_schema_agent_alike(tools: bool, gemini: StubServer) -> None:  # noqa: F811
    """An AgentTool of an agent whose output_schema is list[City]: its answer comes back
    to the caller and its state as google-adk's."""
    source = HEAD + AGENT_TOOL + MAIN
    if tools:
        source = source.replace('output_schema=list[City],', 'output_schema=list[City], tools=[lookup],')
        child = [calls(("set_model_response", {"items": [{"name": "Oslo"}]}))]
    else:
        child = [gemini_response('[{"name": "Oslo"}]')]
    answers = [calls(("finder", {"request": "Oslo"})), *child, gemini_response("Oslo it is.")]
    theirs = run_case(source, answers, ["Cities?"], gemini)
    assert theirs["unused_answers"] == 0 and theirs["finals"]
    ours = run_case(rewritten(source), answers, ["Cities?"], gemini)
    assert _requests(ours["requests"]) == _requests(theirs["requests"])
    for key in ("events", "finals", "state"):
        assert ours[key] == theirs[key], key
    assert ours["unused_answers"] == 0


def _configs(server: StubServer) -> list[Any]:
    """Each request's ``generationConfig`` (an empty one as none), its schema made plain."""
    return [_plain_schema(request.body.get("generationConfig") or None) for request in server.requests]


@pytest.mark.parametrize("case", sorted(CASES))
def test_typing_output_schema_alike(case: str, gemini: StubServer) -> None:  # noqa: F811
    schema, tools, answers = CASES[case]
    source = HEAD + _agent(schema, tools) + MAIN
    theirs = run_case(source, answers, ["Cities?"], gemini)
    their_configs = _configs(gemini)
    assert theirs["unused_answers"] == 0 and theirs["finals"]
    ours = run_case(rewritten(source), answers, ["Cities?"], gemini)
    assert _configs(gemini) == their_configs
    assert _requests(ours["requests"]) == _requests(theirs["requests"])
    for key in ("events", "finals", "state"):
        assert ours[key] == theirs[key], key
    assert ours["unused_answers"] == 0
    assert "k" in ours["state"]


def test_typing_output_schema_agent_is_accepted_and_pickles() -> None:
    agent = LlmAgent(name="a", model="gemini-2.5-flash", output_schema=list[str], output_key="k")
    again = pickle.loads(pickle.dumps(agent))
    assert again.output_schema == list[str]
