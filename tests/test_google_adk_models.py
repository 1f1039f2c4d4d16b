"""google-adk's model classes and registry at google-adk's import paths (issue 56,
"Model classes and backends": Gemini, Claude, BaseLlm, LLMRegistry, LiteLlm, Vertex AI).

Side by side with google-adk 2.13, the same program with its imports rewritten
(tests/google_adk_harness.py), each side reaching a stand-in on 127.0.0.1 through
environment variables only:

* ``Gemini(model=..., retry_options=...)`` on a Gemini REST stand-in: events, final
  texts, state and request bodies, plain, streamed and retried after a 503;
* ``AnthropicLlm(model=...)`` on an Anthropic Messages stand-in: events and requests
  (model, max_tokens, system instruction up to the identity sentence, messages
  without tool-use ids, tools, the credential sent);
* Vertex AI, with a service account's key file made for the test whose token
  endpoint is the stand-in (google-auth gets a token there): ``Claude`` (google-adk's
  Claude is Claude on Vertex AI) with the same paths, bodies and tokens; ``Gemini``
  with the same bodies and events (google.genai takes a non-googleapis base URL for
  an API gateway and drops the project path, so the path and token are asserted of
  ours alone);
* a program's own ``BaseLlm`` subclass registered with ``LLMRegistry`` and named by
  its agent; the registry's answers and its error for an unknown name.

Ours alone: the retry bound, ``Claude`` on Anthropic's API without Vertex AI's
variables (where google-adk refuses), a Gemini instance in a host's run worker behind
the shared breaker, Vertex AI's endpoints by location, and the errors for a missing
key, credentials that do not refresh, a bad registration and LiteLlm without its
extra.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
from collections.abc import Iterator
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import _plain, assert_alike, calls, event_rows, rewritten, run_program

from adk_actors.testing import (
    StubResponse,
    StubServer,
    anthropic_error,
    anthropic_message,
    gemini_error,
    gemini_response,
    gemini_stream,
)

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning")

stand_in, gemini = harness.stand_in, harness.gemini

_MAIN = '''
async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="models_app")
    session = await runner.session_service.create_session(app_name="models_app", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append("".join(p.text or "" for p in event.content.parts))
    stored = await runner.session_service.get_session(app_name="models_app", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

TOOL = '''
def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}
'''

GEMINI_PROGRAM = '''
from google.adk.agents import LlmAgent
from google.adk.models import Gemini
from google.adk.runners import InMemoryRunner
from google.genai import types
''' + TOOL + '''
agent = LlmAgent(name="weather", instruction="Use get_weather to answer.", tools=[get_weather],
                 model=Gemini(model="gemini-2.5-flash",
                              retry_options=types.HttpRetryOptions(initial_delay=0.05, max_delay=0.1, attempts=2)))
''' + _MAIN


def test_an_agent_given_a_gemini_instance_runs_as_on_google_adk(gemini: StubServer) -> None:
    assert_alike(GEMINI_PROGRAM, [calls(("get_weather", {"city": "Paris"})), gemini_response("Sunny in Paris.")],
                 ["Weather in Paris?"], gemini)


def test_gemini_retry_options_retry_a_failing_call_as_on_google_adk(gemini: StubServer) -> None:
    """attempts=2: a 503 is tried again, once, on both sides: the stand-in gets the
    same request twice and the turn answers."""
    assert_alike(GEMINI_PROGRAM, [gemini_error(503, "busy", "UNAVAILABLE"), gemini_response("Cloudy.")],
                 ["Weather in Oslo?"], gemini)
    assert [r.path.split("?")[0] for r in gemini.requests] == ["/v1beta/models/gemini-2.5-flash:generateContent"] * 2
    assert gemini.requests[0].body == gemini.requests[1].body


def test_gemini_retry_attempts_bound_the_tries_here(gemini: StubServer) -> None:
    """Ours alone: attempts=2 against three 503s: two requests, then the run raises
    the provider's error, as google-adk's run raises."""
    with pytest.raises(Exception, match="503"):
        run_program(rewritten(GEMINI_PROGRAM), [gemini_error(503, "busy", "UNAVAILABLE")] * 3, gemini,
                    ["Weather in Rome?"])
    assert len(gemini.requests) == 2


STREAMING_PROGRAM = GEMINI_PROGRAM.replace("from google.genai import types", """from google.genai import types
from google.adk.agents.run_config import RunConfig, StreamingMode""").replace(
    "new_message=message)", "new_message=message, run_config=RunConfig(streaming_mode=StreamingMode.SSE))")


def test_a_gemini_instance_streams_as_on_google_adk(gemini: StubServer) -> None:
    assert "StreamingMode.SSE" in STREAMING_PROGRAM
    assert_alike(STREAMING_PROGRAM, [gemini_stream(["It is ", "sunny ", "in Paris."])], ["Weather in Paris?"], gemini)
    assert gemini.requests[0].path.endswith(":streamGenerateContent?alt=sse")


# -- Anthropic ---------------------------------------------------------------------------------


@pytest.fixture
def anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    with StubServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-a-secret")
        monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")
        for name in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "ANTHROPIC_VERTEX_BASE_URL"):
            monkeypatch.delenv(name, raising=False)  # Claude on Anthropic's API
        yield server


def anthropic_program(import_line: str, model: str) -> str:
    return ('''
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types
''' + import_line + "\n" + TOOL + f'''
agent = LlmAgent(name="weather", instruction="Use get_weather to answer.", tools=[get_weather], model={model})
''' + _MAIN)


def anthropic_rows(server: StubServer) -> list[dict[str, Any]]:
    """What the Anthropic stand-in received, as the model reads it: tool-use ids left
    out (random on both sides), the system text up to our identity sentence,
    schema titles left out; the credential sent, wherever it went."""
    rows = []
    for request in server.requests:
        body = copy.deepcopy(request.body)
        system = body.get("system")
        if isinstance(system, list):
            system = "".join(block.get("text", "") for block in system)
        for message in body["messages"]:
            if isinstance(message["content"], str):
                message["content"] = [{"type": "text", "text": message["content"]}]
            for block in message["content"]:
                block.pop("id", None)
                block.pop("tool_use_id", None)
                if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    block["content"] = "".join(b.get("text", "") for b in block["content"])
                if block.get("type") == "tool_result":
                    block["content"] = json.loads(block["content"])
                    block.pop("is_error", None)
        rows.append({"path": request.path, "model": body.get("model"), "max_tokens": body["max_tokens"],
                     "anthropic_version": body.get("anthropic_version"),
                     "credential": _credential(request.headers),
                     "system": (system or "").split("\n\nYou are ")[0], "messages": body["messages"],
                     "tools": [{"name": t["name"], "description": t["description"],
                                "input_schema": harness._schema(t["input_schema"])} for t in body.get("tools", [])]})
    return rows


def _credential(headers: dict[str, str]) -> str | None:
    """The key or token a request carries: ``x-api-key``, or ``Authorization: Bearer``
    (the anthropic SDK sends its API key there; our connector in ``x-api-key``)."""
    return headers.get("x-api-key") or (headers.get("authorization") or "").removeprefix("Bearer ") or None


def run_anthropic(source: str, answers: list[StubResponse], turns: list[str], server: StubServer) -> dict[str, Any]:
    _, (events, finals, state) = run_program(source, answers, server, turns)
    return {"events": event_rows(events), "finals": _plain(finals), "state": _plain(state),
            "requests": anthropic_rows(server), "unused": len(server.responses)}


def test_an_agent_given_an_anthropic_llm_runs_as_on_google_adk(anthropic: StubServer) -> None:
    source = anthropic_program("from google.adk.models.anthropic_llm import AnthropicLlm",
                               'AnthropicLlm(model="claude-sonnet-4-5")')
    answers = [anthropic_message(tool_uses=[("toolu_1", "get_weather", {"city": "Paris"})]),
               anthropic_message("Sunny in Paris.")]
    theirs = run_anthropic(source, answers, ["Weather in Paris?"], anthropic)
    assert theirs["unused"] == 0 and theirs["finals"] == ["Sunny in Paris."]
    ours = run_anthropic(rewritten(source), answers, ["Weather in Paris?"], anthropic)
    assert ours == theirs
    assert ours["requests"][0]["max_tokens"] == 8192  # AnthropicLlm's default, on both


def test_claude_runs_here_on_anthropics_api_and_retries_behind_the_breaker(anthropic: StubServer) -> None:
    """Ours alone (google-adk's Claude is Claude on Vertex AI): ``Claude(model=...)``
    from google-adk's path, an overloaded answer (529) retried, then the tool and the
    answer; the key went in ``x-api-key``."""
    source = rewritten(anthropic_program("from google.adk.models import Claude",
                                         'Claude(model="claude-opus-4-1", max_tokens=1000)'))
    answers = [anthropic_error(529, "overloaded_error", "busy", retry_after_ms="10"),
               anthropic_message(tool_uses=[("toolu_1", "get_weather", {"city": "Lima"})]),
               anthropic_message("Sunny in Lima.")]
    _, (_events, finals, _) = run_program(source, answers, anthropic, ["Weather in Lima?"])
    assert finals == ["Sunny in Lima."]
    bodies = [r.body for r in anthropic.requests]
    assert len(bodies) == 3 and bodies[0] == bodies[1]  # the same request, tried again
    assert {b["model"] for b in bodies} == {"claude-opus-4-1"} and {b["max_tokens"] for b in bodies} == {1000}
    assert anthropic.requests[0].headers.get("x-api-key") == "test-key-not-a-secret"
    assert "Lima" in json.dumps(bodies[2]["messages"][-1])  # the tool's result went back


# -- a program's own BaseLlm --------------------------------------------------------------------

CUSTOM = '''
from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LLMRegistry
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

class ShoutLlm(BaseLlm):
    """Answers with the user's last words, shouted; calls the tool first when asked for weather."""

    @classmethod
    def supported_models(cls):
        return [r"shout-.*"]

    async def generate_content_async(self, llm_request, stream=False):
        last = llm_request.contents[-1]
        if last.parts[0].function_response is not None:
            text = "IT IS " + last.parts[0].function_response.response["report"].upper()
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
        elif "weather" in last.parts[0].text:
            call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
        else:
            text = self.model + ": " + last.parts[0].text.upper()
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))

LLMRegistry.register(ShoutLlm)
assert LLMRegistry.resolve("shout-2") is ShoutLlm
''' + TOOL + '''
agent = LlmAgent(name="shouter", model="shout-1", instruction="Shout.", tools=[get_weather])
''' + _MAIN


def test_a_programs_own_base_llm_registered_and_named_by_its_agent_runs_as_on_google_adk(gemini: StubServer) -> None:
    theirs = harness.run_case(CUSTOM, [], ["hello there", "the weather?"], gemini)
    assert theirs["finals"] == ["shout-1: HELLO THERE", "IT IS SUNNY, 21 DEGREES."]
    ours = harness.run_case(rewritten(CUSTOM), [], ["hello there", "the weather?"], gemini)
    assert ours["events"] == theirs["events"] and ours["finals"] == theirs["finals"]
    assert ours["requests"] == [] == theirs["requests"]  # nothing reached Gemini


@pytest.mark.parametrize("path,names", [("models.google_llm", ["Gemini"]), ("models.anthropic_llm", ["AnthropicLlm", "Claude"]),
                                        ("models.registry", ["LLMRegistry"]), ("models.base_llm", ["BaseLlm"]),
                                        ("models.lite_llm", ["LiteLlm"])])
def test_google_adks_module_paths_give_the_same_classes_here(path: str, names: list[str]) -> None:
    import adk_actors.models

    module = importlib.import_module("adk_actors." + path)
    for name in names:
        assert getattr(module, name) is getattr(adk_actors.models, name)


def test_a_base_llm_without_generate_content_async_cannot_be_made_on_either_side() -> None:
    for package in ("google.adk.models", "adk_actors.models"):
        base = importlib.import_module(package).BaseLlm

        class Empty(base):  # type: ignore[misc,valid-type]
            pass

        with pytest.raises(TypeError, match="abstract"):
            Empty(model="x")


# -- the registry ------------------------------------------------------------------------------------

REGISTRY = '''
from google.adk.models import LLMRegistry, BaseLlm
from google.adk.models.registry import LLMRegistry as SamePath

async def main():
    assert LLMRegistry is SamePath
    out = {}
    for name in ("gemini-2.5-flash", "gemma-4-e2b", "claude-sonnet-4-5", "gemini:custom-tuned"):
        out[name] = LLMRegistry.resolve(name).__name__
    made = LLMRegistry.new_llm("gemini:custom-tuned")
    out["new_llm"] = [type(made).__name__, made.model]
    out["claude_new_llm"] = [type(LLMRegistry.new_llm("claude-3-7")).__name__, LLMRegistry.new_llm("claude-3-7").model]
    for bad in ("no-such-model", "llama-3"):
        try:
            LLMRegistry.resolve(bad)
        except ValueError as exc:
            out[bad] = str(exc).splitlines()[0]
    return out
'''


def test_the_registry_resolves_and_refuses_names_as_google_adk_does(gemini: StubServer) -> None:
    _, theirs = run_program(REGISTRY, [], gemini)
    _, ours = run_program(rewritten(REGISTRY), [], gemini)
    assert ours == theirs
    assert theirs["no-such-model"] == "Model no-such-model not found."


def test_an_unknown_name_a_bad_registration_and_litellm_get_clear_errors() -> None:
    from adk_actors.models import BaseLlm, LiteLlm, LLMRegistry, ModelError, resolve_model

    with pytest.raises(TypeError, match="BaseLlm subclass"):
        LLMRegistry.register(dict)  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="no provider for model 'no-such-model'"):
        resolve_model("no-such-model", env={})
    from adk_actors.models.lite_llm import LiteLlm as SamePath
    assert SamePath is LiteLlm and issubclass(LiteLlm, BaseLlm)
    if importlib.util.find_spec("litellm") is None:  # without the extra: its pip command (tests/test_lite_llm.py)
        with pytest.raises(ValueError, match=r"adk-actors\[litellm\]"):
            LLMRegistry.resolve("groq/llama-3")
        with pytest.raises(ModuleNotFoundError, match=r"adk-actors\[litellm\]"):
            LiteLlm(model="groq/llama-3")
    else:
        assert LLMRegistry.resolve("groq/llama-3") is LiteLlm


def test_a_gemini_without_a_key_fails_the_run_with_an_error_naming_it(
        gemini: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY")
    with pytest.raises(Exception, match="needs GEMINI_API_KEY"):
        run_program(rewritten(GEMINI_PROGRAM), [], gemini, ["Weather?"])
    assert gemini.requests == []


# -- Vertex AI ----------------------------------------------------------------------------------------


def token(value: str) -> StubResponse:
    """An OAuth token endpoint's answer to a refresh."""
    return StubResponse(json={"access_token": value, "expires_in": 3600, "token_type": "Bearer"})


@pytest.fixture
def vertex(gemini: StubServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> StubServer:
    """The stand-in as Vertex AI, by google.genai's variables; application default
    credentials from a service account's key file (a key made for the test) whose
    token endpoint is the stand-in too (google-auth gets the token there before the
    first call)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    credentials = tmp_path / "adc.json"
    credentials.write_text(json.dumps({"type": "service_account", "project_id": "my-project", "private_key_id": "k1",
                                       "private_key": key, "client_email": "agent@my-project.iam.gserviceaccount.com",
                                       "client_id": "1", "token_uri": gemini.url + "/token",
                                       "quota_project_id": "billing-project"}))
    monkeypatch.delenv("GOOGLE_API_KEY")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.url)
    return gemini


def test_a_gemini_on_vertex_ai_calls_as_on_google_adk(vertex: StubServer) -> None:
    """GOOGLE_GENAI_USE_VERTEXAI with a project and location: ours gets a token from
    the service account's token endpoint once, then calls Vertex AI's path for the
    model with it; the bodies and events are google-adk's. (google.genai takes a
    base URL outside googleapis.com given with an environment-only project for an API
    gateway: it posts the same bodies to the URL itself without credentials, so its
    paths and headers are not compared, only asserted of ours.)"""
    model_answers = [calls(("get_weather", {"city": "Paris"})), gemini_response("Sunny in Paris.")]
    _, (events, finals, _) = run_program(GEMINI_PROGRAM, model_answers, vertex, ["Weather in Paris?"])
    theirs = {"events": event_rows(events), "finals": finals, "bodies": harness.request_rows(vertex)}
    assert finals == ["Sunny in Paris."] and not vertex.responses
    _, (events, finals, _) = run_program(rewritten(GEMINI_PROGRAM), [token("ya29.token-one"), *model_answers],
                                         vertex, ["Weather in Paris?"])
    token_request, *model_requests = vertex.requests
    assert token_request.path == "/token" and "jwt-bearer" in str(token_request.body)
    vertex.requests = model_requests
    ours = {"events": event_rows(events), "finals": finals, "bodies": harness.request_rows(vertex)}
    for row in (*ours["bodies"], *theirs["bodies"]):
        row.pop("path")
    assert ours == theirs
    path = "/v1beta1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
    assert [r.path for r in model_requests] == [path, path]
    assert {r.headers.get("authorization") for r in model_requests} == {"Bearer ya29.token-one"}


def test_a_gemini_on_vertex_ai_whose_credentials_do_not_refresh_fails_naming_why(vertex: StubServer) -> None:
    failing = StubResponse(status=400, json={"error": "invalid_grant", "error_description": "Token has been revoked."})
    with pytest.raises(Exception, match="could not be refreshed"):
        run_program(rewritten(GEMINI_PROGRAM), [failing], vertex, ["Weather?"])
    assert [r.path for r in vertex.requests] == ["/token"]  # the model was not called


# -- in a host: the run workers' shared breaker ------------------------------------------------------


@pytest.fixture
def gemini_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    """A Gemini stand-in named by the environment, set before the actor system forks."""
    with StubServer() as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-a-secret")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        yield server


def test_a_gemini_instance_in_a_host_runs_behind_the_shared_breaker(gemini_env: StubServer, actor_system: Any,
                                                                      tmp_path: Any) -> None:
    """An agent module's ``Gemini(...)`` in a host's run worker: it answers; two
    failures in a row (one attempt each, as its retry_options say) open the host's
    breaker for the model, and the next run fails fast without calling the provider."""
    from adk_actors import RunFailedError
    from adk_actors.models import BreakerConfig
    from adk_actors.runtime import Host, HostConfig

    config = HostConfig(apps={"g": "models_agents:gemini_agent"}, data_dir=str(tmp_path),
                        breaker=BreakerConfig(consecutive_failures=2, open_seconds=60))
    with Host(config, system=actor_system) as host:
        runner = host.runner("g")

        def turn(session: str) -> Any:
            runner.create_session("ann", session)
            events: list[Any] = []
            try:
                events.extend(runner.run("ann", session, "hi"))
            except RunFailedError:
                pass
            return events[-1]

        gemini_env.add(gemini_response("fine"))
        assert turn("s0").content.text == "fine"
        gemini_env.add(gemini_error(500, "down"), gemini_error(500, "down"))
        assert turn("s1").error_code == "server_error"
        assert turn("s2").error_code == "server_error"
        before = len(gemini_env.requests)
        failed = turn("s3")
        assert failed.error_code == "circuit_open" and "gemini-2.5-flash" in failed.error_message
        assert len(gemini_env.requests) == before == 3


@pytest.mark.parametrize("env,url", [
    ({"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "europe-west4"},
     "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/p/locations/europe-west4/publishers/google/"
     "models/gemini-2.5-flash:generateContent"),
    ({"GOOGLE_CLOUD_PROJECT": "p"},
     "https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/publishers/google/models/"
     "gemini-2.5-flash:generateContent"),
    ({"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "eu"},
     "https://aiplatform.eu.rep.googleapis.com/v1beta1/projects/p/locations/eu/publishers/google/models/"
     "gemini-2.5-flash:generateContent"),
    ({"GOOGLE_API_KEY": "express-key"},
     "https://aiplatform.googleapis.com/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"),
])
def test_vertex_ai_endpoints_follow_google_genais_rules(env: dict[str, str], url: str) -> None:
    from adk_actors.models._vertex import vertex_gemini

    connector = vertex_gemini("gemini-2.5-flash", env)
    assert connector.endpoint(False) == url
    assert (connector.headers() == {"x-goog-api-key": "express-key"}) == ("GOOGLE_API_KEY" in env)


def test_a_gemini_model_named_by_a_string_goes_to_vertex_ai_too(vertex: StubServer) -> None:
    """google-adk resolves ``model="gemini-..."`` to its Gemini class, which reads the
    same variables: ours resolves the name to Vertex AI's connector likewise."""
    source = rewritten(GEMINI_PROGRAM).replace('model=Gemini(model="gemini-2.5-flash",', 'model=("gemini-2.5-flash"') \
        .replace("retry_options=types.HttpRetryOptions(initial_delay=0.05, max_delay=0.1, attempts=2)))", "))")
    assert 'model=("gemini-2.5-flash"\n' in source
    _, (_events, finals, _) = run_program(source, [token("ya29.by-name"), gemini_response("Sunny.")], vertex,
                                          ["Weather?"])
    assert finals == ["Sunny."]
    assert vertex.requests[1].path.startswith("/v1beta1/projects/my-project/locations/us-central1/publishers/google/")
    assert vertex.requests[1].headers.get("authorization") == "Bearer ya29.by-name"


def test_claude_on_vertex_ai_calls_as_on_google_adk(vertex: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """google-adk's Claude is Claude on Vertex AI: with GOOGLE_CLOUD_PROJECT and
    GOOGLE_CLOUD_LOCATION both sides get a token from the service account's token
    endpoint, then post Anthropic's body (without ``model``, with Vertex AI's
    ``anthropic_version``) to the model's ``rawPredict`` path with the token: the same
    paths, bodies, tokens and events."""
    from adk_actors.models._vertex import VERTEX_ANTHROPIC_VERSION

    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-east5")
    monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", vertex.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    source = anthropic_program("from google.adk.models import Claude", 'Claude(model="claude-sonnet-4-5")')
    answers = [token("ya29.claude"), anthropic_message(tool_uses=[("toolu_1", "get_weather", {"city": "Oslo"})]),
               anthropic_message("Sunny in Oslo.")]

    def run(program: str) -> dict[str, Any]:
        _, (events, finals, _) = run_program(program, answers, vertex, ["Weather in Oslo?"])
        token_request, *calls_made = vertex.requests
        assert token_request.path == "/token" and "jwt-bearer" in str(token_request.body)
        vertex.requests = calls_made
        return {"events": event_rows(events), "finals": finals, "requests": anthropic_rows(vertex),
                "unused": len(vertex.responses)}

    theirs = run(source)
    assert theirs["finals"] == ["Sunny in Oslo."] and theirs["unused"] == 0
    ours = run(rewritten(source))
    assert ours == theirs
    path = "/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5:rawPredict"
    assert [row["path"] for row in ours["requests"]] == [path, path]
    assert {row["credential"] for row in ours["requests"]} == {"ya29.claude"}
    assert {r.headers.get("authorization") for r in vertex.requests} == {"Bearer ya29.claude"}
    assert {row["anthropic_version"] for row in ours["requests"]} == {VERTEX_ANTHROPIC_VERSION}
    assert {row["model"] for row in ours["requests"]} == {None}


def test_claude_without_vertex_ai_or_an_anthropic_key_names_all_three_variables(
        anthropic: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    source = rewritten(anthropic_program("from google.adk.models import Claude", 'Claude(model="claude-sonnet-4-5")'))
    with pytest.raises(Exception, match=r"GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION .* or ANTHROPIC_API_KEY"):
        run_program(source, [], anthropic, ["Weather?"])
    assert anthropic.requests == []


def test_a_programs_own_base_llm_named_by_its_agent_runs_in_a_hosts_run_worker(actor_system: Any,
                                                                              tmp_path: Any) -> None:
    """The agent module registers its BaseLlm subclass as it is imported in the run
    worker; the worker resolves the agent's model name to it."""
    from adk_actors.runtime import Host, HostConfig

    config = HostConfig(apps={"echo": "models_agents:echo_agent"}, data_dir=str(tmp_path))
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s0")
        events = list(runner.run("ann", "s0", "hello"))
    assert events[-1].content.text == "reverse-echo-1: olleh"


def test_a_gemini_instance_holds_a_live_conversation(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LlmAgent(model=Gemini(model=..., base_url=...))`` in a live run: the Live API
    stand-in gets the setup for the model with the key from the environment, and the
    model's answer comes back as the run's events."""
    from live_stub import LiveServer, live_server

    from adk_actors import Content, Event, LiveRequest
    from adk_actors.agents import LlmAgent
    from adk_actors.engine import SessionView, run_live_invocation
    from adk_actors.models import Gemini

    monkeypatch.setenv("GEMINI_API_KEY", "live-key-not-a-secret")
    for name in ("GOOGLE_GENAI_USE_VERTEXAI", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

    def script(message: dict[str, Any]) -> list[dict[str, Any]]:
        if "clientContent" in message and message["clientContent"].get("turnComplete"):
            return [{"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "Hello from live."}]}}},
                    {"serverContent": {"turnComplete": True}}]
        return []

    server = LiveServer(script)

    async def scenario() -> list[Any]:
        async with live_server(server) as base_url:
            agent = LlmAgent(name="voice", instruction="Be brief.",
                             model=Gemini(model="gemini-live-2.5-flash", base_url=base_url))
            inputs: asyncio.Queue[Any] = asyncio.Queue()
            inputs.put_nowait(LiveRequest(content=Content.user("hi")))
            events: list[Any] = []
            session = SessionView(events=[Event(author="user", content=Content.user("before"))])
            async for event in run_live_invocation(agent, session, inputs):
                events.append(event)
                if event.turn_complete:
                    inputs.put_nowait(LiveRequest(close=True))
            return events

    events = asyncio.run(asyncio.wait_for(scenario(), timeout=30))
    assert server.received[0]["setup"]["model"] == "models/gemini-live-2.5-flash"
    assert server.headers["x-goog-api-key"] == "live-key-not-a-secret"
    said = [(e.author, e.content.text) for e in events if not e.partial and e.content and e.content.text]
    assert said == [("user", "hi"), ("voice", "Hello from live.")]
