"""``ApigeeLlm`` (google-adk's ``google.adk.models.apigee_llm``), side by side with
google-adk 2.13 on one stand-in (``adk_actors.testing.StubServer``) playing the Apigee
proxy: Gemini's wire format under the proxy's path for ``apigee/[gemini/][vN/]...``,
Vertex AI's for ``apigee/vertex_ai/...``, OpenAI's Chat Completions for
``apigee/openai/...``; the same paths, custom headers, bodies and events on both
sides; our breaker's retries behind it; and the model strings, variables and
arguments google-adk refuses, refused here the same way.
"""

from __future__ import annotations

import json
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import assert_alike, calls, event_rows, rewritten, run_program

from adk_actors.models import LLMRegistry, ModelError
from adk_actors.testing import (
    StubResponse,
    StubServer,
    gemini_error,
    gemini_response,
    gemini_stream,
    openai_chat,
    openai_stream,
)

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning", "ignore::pytest.PytestUnraisableExceptionWarning")

stand_in, gemini = harness.stand_in, harness.gemini

SECRET = "proxy-secret-4b1c9e"

PROGRAM = '''
import os
from google.adk.agents import LlmAgent
from google.adk.models.apigee_llm import ApigeeLlm
from google.adk.runners import InMemoryRunner
from google.genai import types


def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}


agent = LlmAgent(name="weather", instruction="Use get_weather to answer.", tools=[get_weather],
                 model=ApigeeLlm(model=MODEL, custom_headers={"x-apigee-key": "SECRET"},
                                 retry_options=types.HttpRetryOptions(initial_delay=0.05, max_delay=0.1, attempts=2)))


async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="apigee_app")
    session = await runner.session_service.create_session(app_name="apigee_app", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append("".join(p.text or "" for p in event.content.parts))
    stored = await runner.session_service.get_session(app_name="apigee_app", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''


def program(model: str) -> str:
    return PROGRAM.replace("MODEL", repr(model)).replace("SECRET", SECRET)


@pytest.fixture
def proxy(gemini: StubServer, monkeypatch: pytest.MonkeyPatch) -> StubServer:
    """The stand-in as the Apigee proxy, named by ``APIGEE_PROXY_URL`` (a path under it)."""
    monkeypatch.setenv("APIGEE_PROXY_URL", gemini.url + "/apigee")
    for name in ("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    return gemini


@pytest.mark.parametrize(("model", "path"), [
    ("apigee/gemini-2.5-flash", "/apigee/v1beta/models/gemini-2.5-flash:generateContent"),
    ("apigee/gemini/v1/gemini-2.5-flash", "/apigee/v1/models/gemini-2.5-flash:generateContent"),
    ("apigee/v1alpha/gemini-2.5-flash", "/apigee/v1alpha/models/gemini-2.5-flash:generateContent"),
])
def test_a_gemini_model_behind_the_proxy_runs_as_on_google_adk(proxy: StubServer, model: str, path: str) -> None:
    """The same requests (path with the string's version, body) and events on both
    sides; each request carries the custom header and the Gemini key on both."""
    answers = [calls(("get_weather", {"city": "Paris"})), gemini_response("Sunny in Paris.")]
    assert_alike(program(model), answers, ["Weather in Paris?"], proxy)
    assert [r.path for r in proxy.requests] == [path, path]  # ours, the last run
    for request in proxy.requests:
        assert request.headers.get("x-apigee-key") == SECRET
        assert request.headers.get("x-goog-api-key") == "test-key-not-a-secret"


def test_the_proxy_is_retried_by_the_retry_options_here_as_there(proxy: StubServer) -> None:
    """attempts=2: a 503 from the proxy is tried once more on both sides."""
    assert_alike(program("apigee/gemini-2.5-flash"), [gemini_error(503, "busy", "UNAVAILABLE"),
                                                       gemini_response("Cloudy.")], ["Weather in Oslo?"], proxy)
    assert len(proxy.requests) == 2 and proxy.requests[0].body == proxy.requests[1].body


def test_a_gemini_model_behind_the_proxy_streams_as_on_google_adk(proxy: StubServer) -> None:
    source = program("apigee/gemini-2.5-flash").replace("from google.genai import types", """from google.genai import types
from google.adk.agents.run_config import RunConfig, StreamingMode""").replace(
        "new_message=message)", "new_message=message, run_config=RunConfig(streaming_mode=StreamingMode.SSE))")
    assert "StreamingMode.SSE" in source
    assert_alike(source, [gemini_stream(["It is ", "sunny ", "in Paris."])], ["Weather in Paris?"], proxy)
    assert proxy.requests[0].path == "/apigee/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def _chat_rows(server: StubServer) -> list[dict[str, Any]]:
    """The Chat Completions requests as the proxy reads them: path, the custom header,
    and the body with the tool schemas' titles dropped (google-adk's are pydantic-made)
    and the system message up to the agent's identity sentence (worded apart, as in
    google_adk_harness)."""
    rows = []
    for request in server.requests:
        body = json.loads(json.dumps(request.body))
        for tool in body.get("tools", []):
            tool["function"]["parameters"] = harness._schema(tool["function"].get("parameters"))
        for message in body["messages"]:
            if message["role"] == "system":
                message["content"] = message["content"].split("\n\nYou are ")[0]
        rows.append({"path": request.path, "header": request.headers.get("x-apigee-key"),
                     "authorization": request.headers.get("authorization"), "body": body})
    return rows


def test_an_openai_model_behind_the_proxy_sends_chat_completions_as_google_adk(proxy: StubServer) -> None:
    """``apigee/openai/gpt-4o``: both sides post the same Chat Completions bodies to
    ``{proxy}/chat/completions`` with the custom header and no key of their own, and
    answer the same."""
    answers = [openai_chat(tool_calls=[("call_1", "get_weather", {"city": "Lima"})]), openai_chat("Sunny in Lima.")]
    _, (events, finals, _) = run_program(program("apigee/openai/gpt-4o"), answers, proxy, ["Weather in Lima?"])
    theirs = {"events": event_rows(events), "finals": finals, "requests": _chat_rows(proxy)}
    assert finals == ["Sunny in Lima."] and not proxy.responses
    _, (events, finals, _) = run_program(rewritten(program("apigee/openai/gpt-4o")), answers, proxy,
                                         ["Weather in Lima?"])
    ours = {"events": event_rows(events), "finals": finals, "requests": _chat_rows(proxy)}
    assert ours["requests"] == theirs["requests"]
    assert ours == theirs
    assert {r["path"] for r in ours["requests"]} == {"/apigee/chat/completions"}
    assert {r["header"] for r in ours["requests"]} == {SECRET}
    assert ours["requests"][0]["body"]["model"] == "gpt-4o" and ours["requests"][0]["body"]["stream"] is False


def test_a_streamed_chat_completion_through_the_proxy_gives_its_pieces_then_the_whole(proxy: StubServer) -> None:
    """Ours alone (google-adk yields empty partials for role-only chunks): the pieces
    as partial events, then one final answer; the body says ``stream: true``."""
    source = rewritten(program("apigee/openai/gpt-4o")).replace(
        "new_message=message)", "new_message=message, run_config=RunConfig(streaming_mode=StreamingMode.SSE))"
    ).replace("from adk_actors import types", "from adk_actors import types\n"
              "from adk_actors.agents.run_config import RunConfig, StreamingMode")
    _, (events, finals, _) = run_program(source, [openai_stream(["Warm ", "in ", "Lima."])], proxy, ["Lima?"])
    rows = event_rows(events)
    assert [r["text"] for r in rows if r["partial"]] == ["Warm ", "in ", "Lima."]
    assert finals == ["Warm in Lima."]
    assert proxy.requests[0].body["stream"] is True and proxy.requests[0].path == "/apigee/chat/completions"


def test_a_vertex_model_behind_the_proxy_calls_vertex_paths_with_the_credentials(
        proxy: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``apigee/vertex_ai/...`` with the project and location variables and
    google-auth credentials given: both sides post the same bodies to Vertex AI's path
    under the proxy with the credentials' bearer token and the custom header."""
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    source = program("apigee/vertex_ai/gemini-2.5-flash").replace(
        'custom_headers=', 'credentials=Credentials(token="ya29.given"), custom_headers=').replace(
        "import os\n", "import os\nfrom google.oauth2.credentials import Credentials\n")
    answers = [calls(("get_weather", {"city": "Rome"})), gemini_response("Sunny in Rome.")]
    rows = []
    for side in (source, rewritten(source).replace("from adk_actors.oauth2", "from google.oauth2")):
        _, (events, finals, _) = run_program(side, answers, proxy, ["Weather in Rome?"])
        assert finals == ["Sunny in Rome."]
        rows.append({"events": event_rows(events), "requests": harness.request_rows(proxy),
                     "auth": [(r.headers.get("authorization"), r.headers.get("x-apigee-key")) for r in proxy.requests]})
    assert rows[0] == rows[1]
    path = "/apigee/v1beta1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    assert [r["path"] for r in rows[1]["requests"]] == [path + ":generateContent"] * 2
    assert set(rows[1]["auth"]) == {("Bearer ya29.given", SECRET)}


def _refusal(source: str) -> str:
    try:
        exec(compile(source, "<refusal>", "exec"), {})
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "accepted"


@pytest.mark.parametrize("model", ["apigee/anthropic/v1/claude", "apigee/gemini/x1/gemini-2.5-flash",
                                   "apigee/a/b/c/d", "gemini-2.5-flash"])
def test_a_bad_model_string_is_refused_when_made_as_on_google_adk(model: str) -> None:
    source = f"from google.adk.models.apigee_llm import ApigeeLlm\nApigeeLlm(model={model!r})"
    theirs = _refusal(source)
    assert theirs.startswith("ValueError: Invalid model string")
    assert _refusal(rewritten(source)) == theirs


def test_vertex_without_a_project_is_refused_when_made_as_on_google_adk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    source = "from google.adk.models.apigee_llm import ApigeeLlm\nApigeeLlm(model='apigee/vertex_ai/gemini-2.5-flash')"
    theirs = _refusal(source)
    assert "GOOGLE_CLOUD_PROJECT" in theirs
    assert _refusal(rewritten(source)) == theirs
    monkeypatch.setenv("GOOGLE_GENAI_USE_ENTERPRISE", "true")  # no provider: the variable decides
    assert "GOOGLE_CLOUD_PROJECT" in _refusal(rewritten(source).replace("vertex_ai/", ""))


def test_no_proxy_url_fails_the_call_before_anything_is_sent(proxy: StubServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("APIGEE_PROXY_URL")
    with pytest.raises(Exception, match=r"configuration: Apigee proxy URL is not set\. .*APIGEE_PROXY_URL") as caught:
        run_program(rewritten(program("apigee/gemini-2.5-flash")), [], proxy, ["Weather?"])
    assert isinstance(caught.value.__cause__, ModelError) and proxy.requests == []


def test_the_custom_headers_never_show_in_the_models_repr_dump_or_errors(proxy: StubServer) -> None:
    """A 400 from the proxy echoing the secret header: our error has it blanked out."""
    from adk_actors.models.apigee_llm import ApigeeLlm

    llm = ApigeeLlm(model="apigee/openai/gpt-4o", custom_headers={"x-apigee-key": SECRET})
    assert SECRET not in repr(llm) and SECRET not in str(llm.model_dump())
    echo = StubResponse(status=400, json={"error": {"message": f"bad key {SECRET}"}})
    with pytest.raises(Exception) as caught:
        run_program(rewritten(program("apigee/openai/gpt-4o")), [echo], proxy, ["Weather?"])
    assert "bad key" in str(caught.value) and SECRET not in str(caught.value)


def test_the_registry_resolves_apigee_names_as_google_adk_does() -> None:
    from google.adk.models import LLMRegistry as Theirs

    assert Theirs.resolve("apigee/gemini-2.5-flash").__name__ == LLMRegistry.resolve("apigee/gemini-2.5-flash").__name__
    assert LLMRegistry.resolve("apigee/openai/gpt-4o").__name__ == "ApigeeLlm"
