"""``Gemma3Ollama`` (google-adk's ``google.adk.models.gemma_llm.Gemma3Ollama``): Gemma 3
on Ollama through litellm with Gemma's function-calling shim, side by side with
google-adk 2.13 on one stand-in (``adk_actors.testing.StubServer``) speaking Ollama's
``/api/generate`` wire format: the same prompts (tools described in the system part,
calls and results as text) and the same events (a call read from the model's JSON
text, run, its result sent back, the final answer).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from google_adk_harness import event_rows, rewritten, run_program

from adk_actors.models import LLMRegistry
from adk_actors.testing import StubResponse, StubServer

pytest.importorskip("google.adk")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of litellm's price list at import
pytest.importorskip("litellm")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning")

PROGRAM = '''
import os
from google.adk.agents import LlmAgent
from google.adk.models.gemma_llm import Gemma3Ollama
from google.adk.runners import InMemoryRunner
from google.genai import types


def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}


agent = LlmAgent(name="weather", instruction="Use get_weather to answer.", tools=[get_weather],
                 model=Gemma3Ollama(api_base=os.environ["OLLAMA_STAND_IN"]))


async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="ollama_app")
    session = await runner.session_service.create_session(app_name="ollama_app", user_id="ann")
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
    await runner.close()
    return seen
'''


#: Ollama's ``/api/show`` answer: litellm asks for the model's details before a call
#: whose history holds a tool's result (on both sides)
SHOW = StubResponse(json={"modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
                          "details": {"family": "gemma3"}, "model_info": {"gemma3.context_length": 131072}})


def ollama(text: str) -> StubResponse:
    """Ollama's ``/api/generate`` answer (not streamed)."""
    return StubResponse(json={"model": "gemma3:12b", "created_at": "2026-01-01T00:00:00Z", "response": text,
                              "done": True, "done_reason": "stop", "prompt_eval_count": 12, "eval_count": 5})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    with StubServer() as stand_in:
        monkeypatch.setenv("OLLAMA_STAND_IN", stand_in.url)
        monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")
        yield stand_in


_ADK_ID = re.compile(r'"id":"adk-[0-9a-f-]+"')
_TITLE = re.compile(r'"title":"[A-Za-z_ ]+",?')


def _forget_model_details() -> None:
    """Empty litellm's in-process cache of model details, so that each side asks
    ``/api/show`` as a fresh process would (the script holds one answer for it)."""
    import litellm.utils

    litellm.utils.cached_get_model_info_helper.cache_clear()
    litellm.utils._cached_get_model_info.cache_clear()


def _prompts(server: StubServer) -> list[dict[str, Any]]:
    """What Ollama received (its generate calls), less the agent's identity sentence
    (worded apart), the framework's random call ids and google-adk's pydantic schema
    titles."""
    rows = []
    for request in server.requests:
        if request.path == "/api/show":
            rows.append({"path": request.path, "body": request.body})
            continue
        prompt = _TITLE.sub("", _ADK_ID.sub('"id":"adk-ID"', request.body["prompt"]))
        head, _, tail = prompt.partition("\n\nYou are ")
        rows.append({"path": request.path, "model": request.body["model"], "stream": request.body.get("stream"),
                     "head": head, "tail": tail.split("\n", 1)[1] if tail else ""})
    return rows


def test_a_gemma3_on_ollama_calls_a_tool_as_on_google_adk(server: StubServer) -> None:
    answers = [ollama('```json\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n```'),
               SHOW, ollama("It is sunny in Paris.")]
    sides = []
    for source in (PROGRAM, rewritten(PROGRAM)):
        _forget_model_details()
        _, events = run_program(source, answers, server, ["Weather in Paris?"])
        assert not server.responses
        sides.append({"events": event_rows(events), "prompts": _prompts(server)})
    theirs, ours = sides
    assert ours == theirs
    assert [r["path"] for r in ours["prompts"]] == ["/api/generate", "/api/show", "/api/generate"]
    assert ours["events"][0]["calls"][0][1:] == ("get_weather", {"city": "Paris"})
    assert ours["prompts"][0]["tail"].startswith("\nYou have access to the following functions")
    assert '"id":"adk-ID"' in ours["prompts"][2]["tail"]
    assert "Sunny, 21 degrees." in ours["prompts"][2]["tail"]  # the result went back as text
    assert ours["events"][-1]["text"] == "It is sunny in Paris." and ours["events"][-1]["final"]


def test_an_answer_that_is_not_a_call_stays_text(server: StubServer) -> None:
    _forget_model_details()
    _, events = run_program(rewritten(PROGRAM), [ollama("I think {it is} sunny.")], server, ["Weather?"])
    rows = event_rows(events)
    assert rows[-1]["calls"] == [] and rows[-1]["text"] == "I think {it is} sunny."


def test_an_ollama_that_fails_gives_a_typed_error_after_our_retries(server: StubServer) -> None:
    """Two 503s then an answer: our retry policy (litellm told not to retry) gets there."""
    busy = StubResponse(status=503, json={"error": "model is loading"})
    _, events = run_program(rewritten(PROGRAM), [busy, busy, ollama("Fine.")], server, ["Weather?"])
    assert event_rows(events)[-1]["text"] == "Fine." and len(server.requests) == 3


def test_the_registry_and_defaults_are_google_adks() -> None:
    from google.adk.models import LLMRegistry as Theirs
    from google.adk.models.gemma_llm import Gemma3Ollama as TheirClass

    from adk_actors.models.gemma_llm import Gemma3Ollama

    assert LLMRegistry.resolve("ollama/gemma3:12b").__name__ == Theirs.resolve("ollama/gemma3:12b").__name__
    assert LLMRegistry.resolve("ollama/llama3").__name__ == Theirs.resolve("ollama/llama3").__name__ == "LiteLlm"
    assert repr(Gemma3Ollama()) == repr(TheirClass()) == 'Gemma3Ollama(model="ollama/gemma3:12b")'
    assert Gemma3Ollama.supported_models() == TheirClass.supported_models()
