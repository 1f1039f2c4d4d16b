"""google.genai's ``types`` as google-adk programs use them (issue 52), here as
``adk_actors.types``: ``Schema`` and ``Type`` for a custom tool's declared parameters
and an agent's ``output_schema``, and every other google.genai name (``SpeechConfig``,
``Modality``, ...) as google.genai's own class, looked up on first use.

The programs run as in tests/test_google_adk_parity.py: as written on google-adk 2.13,
then with their imports rewritten on ours, against one Gemini REST stand-in. google-adk
sends a ``types.Schema`` as Gemini's OpenAPI dialect (``"type": "OBJECT"``); we send the
same schema as a JSON schema (``"type": "object"``, which the Gemini API reads alike):
the requests are compared with type names in one case.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any, cast

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, rewritten, run_case
from pydantic.alias_generators import to_camel

from adk_actors import types
from adk_actors.agents import Agent
from adk_actors.testing import StubServer, gemini_response
from adk_actors.types import FunctionDeclaration

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

RUN = '''
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

CUSTOM_TOOL = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import BaseTool
from google.genai import types


class Weather(BaseTool):
    def __init__(self):
        super().__init__(name="get_weather", description="The weather of a city.")

    def _get_declaration(self):
        return types.FunctionDeclaration(
            name=self.name, description=self.description,
            parameters=types.Schema(type=types.Type.OBJECT, required=["city"], properties={
                "city": types.Schema(type=types.Type.STRING, description="The city."),
                "days": types.Schema(type=types.Type.INTEGER, nullable=True, minimum=1),
                "units": types.Schema(type="STRING", enum=["C", "F"]),
                "stops": types.Schema(type=types.Type.ARRAY, items=types.Schema(type=types.Type.STRING),
                                      min_items=1)}))

    async def run_async(self, *, args, tool_context):
        return {"city": args["city"], "days": args.get("days"), "sky": "clear"}


root_agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer about the weather.",
                   tools=[Weather()])
''' + RUN

OUTPUT_SCHEMA = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

root_agent = Agent(name="capital", model="gemini-2.5-flash", instruction="Name the capital.",
                   output_key="answer",
                   output_schema=types.Schema(type=types.Type.OBJECT, required=["country", "capital"],
                                              properties={"country": types.Schema(type=types.Type.STRING),
                                                          "capital": types.Schema(type=types.Type.STRING)}))
''' + RUN


def _one_case(value: Any, names: bool = False) -> Any:
    """A request's schemas in one spelling: type names in lower case, keywords in
    camelCase (google-genai sends ``min_items``, a name Gemini's JSON reads as
    ``minItems``); ``names``: ``value`` maps property names, kept as they are."""
    if isinstance(value, dict):
        return {(k if names else to_camel(k)): (v.lower() if k == "type" and isinstance(v, str) and not names
                                                else _one_case(v, k == "properties" and not names))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_one_case(v) for v in value]
    return value


def _both(source: str, answers: list[Any], server: StubServer) -> tuple[dict[str, Any], dict[str, Any]]:
    theirs = run_case(source, answers, ["go"], server)
    their_bodies = [r.body for r in server.requests]
    assert theirs["unused_answers"] == 0 and theirs["finals"], "the case must use its script on google-adk"
    ours = run_case(rewritten(source), answers, ["go"], server)
    our_bodies = [r.body for r in server.requests]
    assert "google" not in rewritten(source)
    theirs["bodies"], ours["bodies"] = their_bodies, our_bodies
    return theirs, ours


def test_a_custom_tools_schema_declaration_runs_as_on_google_adk(gemini: StubServer) -> None:
    answers = [calls(("get_weather", {"city": "Oslo", "days": 2})), gemini_response("Clear in Oslo.")]
    theirs, ours = _both(CUSTOM_TOOL, answers, gemini)
    assert ours["events"] == theirs["events"] and ours["finals"] == theirs["finals"] == ["Clear in Oslo."]
    assert ours["state"] == theirs["state"] and ours["unused_answers"] == 0
    assert _one_case(ours["requests"]) == _one_case(theirs["requests"])
    [declared] = ours["bodies"][0]["tools"][0]["functionDeclarations"]
    assert declared["parameters"] == {
        "type": "object", "required": ["city"], "properties": {
            "city": {"type": "string", "description": "The city."},
            "days": {"type": "integer", "nullable": True, "minimum": 1},
            "units": {"type": "string", "enum": ["C", "F"]},
            "stops": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}


def test_an_output_schema_given_as_a_schema_is_sent_and_kept_as_on_google_adk(gemini: StubServer) -> None:
    answers = [gemini_response('{"country": "Norway", "capital": "Oslo"}')]
    theirs, ours = _both(OUTPUT_SCHEMA, answers, gemini)
    assert ours["events"] == theirs["events"] and ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"] == {"answer": {"country": "Norway", "capital": "Oslo"}}
    their_config, our_config = (b[0]["generationConfig"] for b in (theirs["bodies"], ours["bodies"]))
    assert our_config["responseMimeType"] == their_config["responseMimeType"] == "application/json"
    # google-genai adds the properties' order to a response schema (Gemini then answers in
    # it); ours sends the properties in their order and no ordering hint
    their_schema = _one_case(their_config["responseSchema"])
    assert their_schema.pop("propertyOrdering") == ["country", "capital"]
    assert _one_case(our_config["responseSchema"]) == their_schema


def test_a_schema_is_kept_as_its_json_schema_for_every_provider() -> None:
    """Ours and google.genai's Schema alike, nested and nullable, as the JSON schema the
    OpenAI and Anthropic wires send as given; a value that is not a schema is refused."""
    from google.genai import types as genai

    for made in (types, genai):
        declaration = FunctionDeclaration(name="f", parameters=made.Schema(
            type=made.Type.OBJECT, properties={"tags": made.Schema(
                type="ARRAY", items=made.Schema(type="STRING"), nullable=True, max_items=3),
                "any": made.Schema(any_of=[made.Schema(type="INTEGER"), made.Schema(type="STRING")])}))
        assert declaration.parameters_schema == {"type": "object", "properties": {
            "tags": {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 3},
            "any": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}
    agent = Agent(name="a", model="gemini-2.5-flash",
                  output_schema=types.Schema(type=types.Type.OBJECT, properties={"n": types.Schema(type=types.Type.NUMBER)}))
    assert agent.output_schema == {"type": "object", "properties": {"n": {"type": "number"}}}
    with pytest.raises(ValueError, match="no_such_field"):
        types.Schema.model_validate({"type": "OBJECT", "no_such_field": 1})  # google.genai refuses an unknown field too


def test_every_other_genai_name_is_google_genais_own_class() -> None:
    from google.genai import types as genai

    assert types.SpeechConfig is genai.SpeechConfig and types.Modality.AUDIO == "AUDIO"
    assert types.GenerateContentResponse is genai.GenerateContentResponse
    assert types.Content is not cast(object, genai.Content)  # ours, as before
    with pytest.raises(AttributeError, match="no attribute 'NoSuchType'"):
        _ = types.NoSuchType


def test_without_google_genai_a_name_it_gives_says_what_to_install() -> None:
    code = ("import sys; sys.modules['google.genai'] = None\n"
            "from adk_actors import types\n"
            "assert types.Schema(type='STRING').type == 'STRING'\n"
            "try:\n    types.SpeechConfig\nexcept AttributeError as e:\n    print(e)\n")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "adk_actors.types.SpeechConfig is google-genai's" in shown.stdout
    assert "pip install 'adk-actors[genai]'" in shown.stdout
