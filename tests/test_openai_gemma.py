"""``Gemma`` (Gemma 3 with google-adk's function-calling shim), side by side with
google-adk 2.13 on the same Gemini stand-in (``adk_actors.testing.StubServer``):
the tools described in the prompt, the system instruction as the first user turn,
calls and results in the history as text, and calls parsed from the model's text --
the same requests and the same events on both sides. ``OpenAILlm`` is not built
(see docs/models.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import event_rows, rewritten, run_program

from adk_actors.models import LLMRegistry
from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import LlmAgent
from google.adk.models.gemma_llm import Gemma
from google.adk.runners import InMemoryRunner
from google.genai import types


def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}


agent = LlmAgent(name="weather", instruction="Use get_weather to answer.", tools=[get_weather],
                 model=Gemma(model="gemma-3-27b-it"))


async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="gemma_app")
    session = await runner.session_service.create_session(app_name="gemma_app", user_id="ann")
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
    await runner.close()
    return seen
'''

_TOOLS = re.compile(r"You have access to the following functions:\n(\[.*\n\])\n", re.DOTALL)


def _request_rows(server: StubServer) -> list[dict[str, Any]]:
    """Each request as Gemma reads it: the first turn's instruction (up to the identity
    sentence), the tools listed there (parsed; schema titles dropped, google-adk's
    pydantic-made schemas have them) and the text around them, and the other turns."""
    rows = []
    for request in server.requests:
        body = request.body
        first, *rest = body["contents"]
        text = first["parts"][0]["text"]
        found = _TOOLS.search(text)
        tools = [{**t, "parameters_json_schema": harness._schema(t.get("parameters_json_schema"))}
                 for t in json.loads(found.group(1))] if found else None
        rows.append({"path": request.path, "first_role": first["role"], "instruction": text.split("\n\nYou are ")[0],
                     "tools": tools, "format": text[found.end():] if found else None,
                     "rest": rest, "keys": sorted(k for k in body if k not in ("generationConfig",))})
    return rows


def _side(source: str, answers: list[Any], turns: list[str], server: StubServer) -> tuple[list[Any], list[Any]]:
    _, events = run_program(source, answers, server, turns)
    assert not server.responses
    return event_rows(events), _request_rows(server)


@pytest.mark.parametrize("answer", [
    '```json\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n```',
    'Let me look.\n{"function": "get_weather", "args": {"city": "Paris"}}',
])
def test_gemma_calls_a_tool_through_its_text_as_on_google_adk(gemini: StubServer, answer: str) -> None:
    def answers() -> list[Any]:
        return [gemini_response(answer), gemini_response("Sunny in Paris."), gemini_response("Bye.")]
    theirs_events, theirs_requests = _side(PROGRAM, answers(), ["Weather in Paris?", "Thanks"], gemini)
    ours_events, ours_requests = _side(rewritten(PROGRAM), answers(), ["Weather in Paris?", "Thanks"], gemini)
    assert ours_events == theirs_events
    assert [e["calls"] for e in ours_events if e["calls"]] == [[("call-0", "get_weather", {"city": "Paris"})]]
    assert ours_requests == theirs_requests
    first = ours_requests[0]
    assert first["keys"] == ["contents"]  # no tools, no systemInstruction: all in the text
    assert first["tools"][0]["name"] == "get_weather" and first["instruction"] == "Use get_weather to answer."
    # the call and its result in the history, as text turns
    assert [c["role"] for c in ours_requests[1]["rest"]] == ["user", "model", "user"]
    assert ours_requests[1]["rest"][2]["parts"][0]["text"].startswith("Invoking tool `get_weather` produced:")


def test_text_that_is_not_a_call_stays_text_as_on_google_adk(gemini: StubServer) -> None:
    answers = [gemini_response("It is {not json} but sunny.")]
    theirs = _side(PROGRAM, list(answers), ["Weather?"], gemini)
    ours = _side(rewritten(PROGRAM), [gemini_response("It is {not json} but sunny.")], ["Weather?"], gemini)
    assert ours == theirs
    assert ours[0][-1]["text"] == "It is {not json} but sunny." and ours[0][-1]["final"]


def test_gemma_names_resolve_as_google_adks_registry_and_other_models_are_refused() -> None:
    from google.adk.models.registry import LLMRegistry as Theirs
    for name in ("gemma-3-27b-it", "gemma-3-1b-it", "gemma-4-31b-it", "gemini-2.5-flash"):
        assert LLMRegistry.resolve(name).__name__ == Theirs.resolve(name).__name__


def test_gemma_refuses_a_non_gemma_model_name_with_google_adks_error(gemini: StubServer) -> None:
    import asyncio

    from adk_actors.models import Gemma, LlmRequest

    async def call() -> None:
        async for _ in Gemma().generate_content_async(LlmRequest(model="gemini-2.5-flash")):
            pass
    before = len(gemini.requests)
    with pytest.raises(ValueError, match=r"non-Gemma model \(gemini-2.5-flash\)"):
        asyncio.run(call())
    assert len(gemini.requests) == before  # refused before any request


# -- OpenAILlm -------------------------------------------------------------------------------------------

OPENAI_PROGRAM = PROGRAM.replace("from google.adk.models.gemma_llm import Gemma", "from google.adk.models import OpenAILlm") \
    .replace('Gemma(model="gemma-3-27b-it")', 'OpenAILlm(model="MODEL")')


@pytest.fixture
def openai(stand_in: StubServer, monkeypatch: pytest.MonkeyPatch) -> StubServer:
    monkeypatch.setenv("OPENAI_BASE_URL", stand_in.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")
    return stand_in


def _openai_rows(server: StubServer) -> list[dict[str, Any]]:
    """Each request: path, key, and the body (google-adk's instruction up to the
    identity sentence; tool schemas without titles; nulls left out, which the SDK
    sends for unset options)."""
    rows = []
    for request in server.requests:
        body = {k: v for k, v in request.body.items() if v is not None}
        messages = []
        for message in body.pop("messages"):
            message = {k: v for k, v in message.items() if v is not None}
            if message["role"] == "system":
                message["content"] = message["content"].split("\n\nYou are ")[0]
            messages.append(message)
        tools = [{**t, "function": {**t["function"], "parameters": harness._schema(t["function"]["parameters"])}}
                 for t in body.pop("tools", [])]
        rows.append({"path": request.path, "auth": request.headers.get("authorization"), "messages": messages,
                     "tools": tools, **body})
    return rows


@pytest.mark.parametrize("model", ["gpt-4o", "o3-mini"])
def test_openai_llm_calls_chat_completions_as_on_google_adk(openai: StubServer, model: str) -> None:
    """A tool call and the answer after it: the same events and the same request
    bodies (``max_tokens`` 4096, ``tool_choice`` auto; a reasoning model's
    ``max_completion_tokens``)."""
    from adk_actors.testing import openai_chat
    source = OPENAI_PROGRAM.replace("MODEL", model)

    def answers() -> list[Any]:
        return [openai_chat(tool_calls=[("call_1", "get_weather", {"city": "Paris"})]), openai_chat("Sunny in Paris.")]
    _, theirs = run_program(source, answers(), openai, ["Weather in Paris?"])
    theirs_rows = _openai_rows(openai)
    _, ours = run_program(rewritten(source), answers(), openai, ["Weather in Paris?"])
    ours_rows = _openai_rows(openai)
    assert event_rows(ours) == event_rows(theirs)
    assert ours_rows == theirs_rows
    assert ours_rows[0]["tool_choice"] == "auto" and ours_rows[0]["auth"] == "Bearer test-key-not-a-secret"
    limit = "max_completion_tokens" if model.startswith("o") else "max_tokens"
    assert ours_rows[0][limit] == 4096 and len(ours_rows) == 2
    assert [e["text"] for e in event_rows(ours)][-1] == "Sunny in Paris."


def test_openai_llm_names_resolve_as_google_adks_and_a_missing_key_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.models.registry import LLMRegistry as Theirs

    from adk_actors.models import OpenAILlm, resolve_model
    from adk_actors.models._errors import AuthenticationError
    for name in ("gpt-4o", "o3-mini", "gpt-5.1"):
        assert LLMRegistry.resolve(name).__name__ == Theirs.resolve(name).__name__ == "OpenAILlm"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        OpenAILlm(model="gpt-4o").connector()
    assert isinstance(resolve_model("gpt-4o"), OpenAILlm)
