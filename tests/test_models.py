"""Provider connectors against real HTTP stub servers on 127.0.0.1 speaking each wire format."""

from __future__ import annotations

import asyncio
import base64
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from engine_helpers import run, summary

from adk_actors import (
    Blob,
    Content,
    FunctionCall,
    FunctionDeclaration,
    FunctionResponse,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    Part,
)
from adk_actors.models import (
    AnthropicModel,
    AuthenticationError,
    BadRequestError,
    ContentBlocked,
    GeminiModel,
    MalformedResponse,
    ModelError,
    ModelTimeout,
    OpenAIModel,
    Overloaded,
    RetryPolicy,
    ServerError,
    StreamInterrupted,
    gemini_schema,
    resolve_model,
)
from adk_actors.testing import (
    StubResponse,
    StubServer,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    gemini_error,
    gemini_response,
    gemini_stream,
    openai_chat,
    openai_error,
    openai_stream,
)

WEATHER = FunctionDeclaration(name="get_weather", description="Weather for a city.", parameters={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False})
PNG = b"\x89PNG\r\n\x1a\nfake"

HISTORY = LlmRequest(
    model="m",
    system_instruction="You are a bot.",
    contents=(
        Content(role="user", parts=(Part(text="Weather in Oslo and Rome?"), Part(inline_data=Blob(mime_type="image/png", data=PNG)))),
        Content(role="model", parts=(Part(function_call=FunctionCall(id="c1", name="get_weather", args={"city": "Oslo"})),
                                     Part(function_call=FunctionCall(id="c2", name="get_weather", args={"city": "Rome"})))),
        Content(role="user", parts=(Part(function_response=FunctionResponse(id="c1", name="get_weather", response={"t": -3})),
                                    Part(function_response=FunctionResponse(id="c2", name="get_weather", response={"t": 30})))),
    ),
    tools=(WEATHER,),
    config={"temperature": 0.2, "max_tokens": 100, "stop": ["END"]},
)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


class Clock:
    """A controllable clock: records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def collect(model: Any, request: LlmRequest = HISTORY, stream: bool = False) -> list[LlmResponse]:
    async def go() -> list[LlmResponse]:
        return [r async for r in model.generate(request, stream=stream)]

    return asyncio.run(go())


def models(url: str, clock: Clock | None = None, **kwargs: Any) -> dict[str, Any]:
    options = {"sleep": clock.sleep} if clock else {}
    options.update(kwargs)
    return {
        "openai": OpenAIModel("gpt-test", base_url=url + "/v1", api_key="sk-test", **options),
        "anthropic": AnthropicModel("claude-test", base_url=url, api_key="ak-test", **options),
        "gemini": GeminiModel("gemini-2.5-flash", base_url=url, api_key="gk-test", **options),
    }


# -- request mapping ---------------------------------------------------------------------------


def test_openai_request_payload(stub: StubServer) -> None:
    stub.add(openai_chat("ok"))
    collect(models(stub.url)["openai"])
    request = stub.requests[0]
    assert request.path == "/v1/chat/completions" and request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "gpt-test" and body["temperature"] == 0.2 and body["max_tokens"] == 100
    assert body["stop"] == ["END"]
    system, user, assistant, tool1, tool2 = body["messages"]
    assert system == {"role": "system", "content": "You are a bot."}
    assert user["content"][0] == {"type": "text", "text": "Weather in Oslo and Rome?"}
    assert user["content"][1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2"]
    assert assistant["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    assert (tool1["role"], tool1["tool_call_id"], tool1["content"]) == ("tool", "c1", '{"t": -3}')
    assert tool2["tool_call_id"] == "c2"
    assert body["tools"][0] == {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                                                 "parameters": WEATHER.parameters}}


def test_anthropic_request_payload(stub: StubServer) -> None:
    stub.add(anthropic_message("ok"))
    collect(models(stub.url)["anthropic"])
    request = stub.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "ak-test" and request.headers["anthropic-version"] == "2023-06-01"
    body = request.body
    assert body["system"] == "You are a bot." and body["max_tokens"] == 100 and body["stop_sequences"] == ["END"]
    user, assistant, results = body["messages"]
    assert [b["type"] for b in user["content"]] == ["text", "image"]
    assert user["content"][1]["source"] == {"type": "base64", "media_type": "image/png",
                                            "data": base64.b64encode(PNG).decode()}
    assert assistant == {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Oslo"}},
        {"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Rome"}}]}
    assert results["role"] == "user" and [b["tool_use_id"] for b in results["content"]] == ["c1", "c2"]
    assert body["tools"][0]["input_schema"] == WEATHER.parameters


def test_gemini_request_payload_and_schema_dialect(stub: StubServer) -> None:
    stub.add(gemini_response("ok"))
    request = HISTORY.model_copy(update={"config": {**HISTORY.config, "response_mime_type": "application/json",
                                                    "response_schema": {"type": "object", "title": "Answer",
                                                                        "properties": {"x": {"$ref": "#/$defs/X"}},
                                                                        "$defs": {"X": {"type": "integer"}}}}})
    collect(models(stub.url)["gemini"], request)
    recorded = stub.requests[0]
    assert recorded.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert recorded.headers["x-goog-api-key"] == "gk-test"
    body = recorded.body
    assert body["systemInstruction"] == {"parts": [{"text": "You are a bot."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][0]["parts"][1] == {"inlineData": {"mimeType": "image/png",
                                                              "data": base64.b64encode(PNG).decode()}}
    assert body["contents"][1]["parts"][0] == {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"},
                                                                "id": "c1"}}
    assert body["contents"][2]["parts"][1]["functionResponse"] == {"name": "get_weather", "response": {"t": 30},
                                                                   "id": "c2"}
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert "additionalProperties" not in declaration["parameters"]
    generation = body["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseSchema"] == {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert generation["maxOutputTokens"] == 100 and generation["stopSequences"] == ["END"]
    assert gemini_schema({"anyOf": [{"$ref": "#/definitions/A"}], "definitions": {"A": {"type": "string"}}}) == {
        "anyOf": [{"type": "string"}]}


def test_json_mode_for_openai() -> None:
    model = OpenAIModel("gpt-test", base_url="http://unused", api_key="k")
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    payload = model.payload(HISTORY.model_copy(update={"config": {"response_schema": schema,
                                                                  "response_mime_type": "application/json"}}), False)
    assert payload["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
    plain_json = model.payload(HISTORY.model_copy(update={"config": {"response_mime_type": "application/json"}}), False)
    assert plain_json["response_format"] == {"type": "json_object"}


# -- responses ----------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_text_and_parallel_tool_calls(stub: StubServer, provider: str) -> None:
    text = {"openai": openai_chat("Hello!"), "anthropic": anthropic_message("Hello!"),
            "gemini": gemini_response("Hello!")}[provider]
    calls = {"openai": openai_chat(tool_calls=[("a", "get_weather", {"city": "Oslo"}), ("b", "get_weather", {"city": "Rome"})]),
             "anthropic": anthropic_message(tool_uses=[("a", "get_weather", {"city": "Oslo"}),
                                                       ("b", "get_weather", {"city": "Rome"})]),
             "gemini": gemini_response(function_calls=[("get_weather", {"city": "Oslo"}),
                                                       ("get_weather", {"city": "Rome"})])}[provider]
    stub.add(text, calls)
    model = models(stub.url)[provider]
    first = collect(model)[-1]
    assert first.content is not None and first.content.text == "Hello!" and first.turn_complete
    assert first.usage_metadata and first.usage_metadata.prompt_token_count and first.usage_metadata.total_token_count
    usage_wire = json.loads(first.to_json())["usageMetadata"]  # google-adk's names, from every provider
    assert set(usage_wire) >= {"promptTokenCount", "candidatesTokenCount", "totalTokenCount"}
    second = collect(model)[-1]
    assert second.content is not None
    assert [(c.name, c.args) for c in second.content.function_calls] == [("get_weather", {"city": "Oslo"}),
                                                                        ("get_weather", {"city": "Rome"})]
    if provider != "gemini":  # Gemini gives no ids; the engine adds its own
        assert [c.id for c in second.content.function_calls] == ["a", "b"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_streaming_partials_then_one_aggregated_final(stub: StubServer, provider: str) -> None:
    stream = {"openai": openai_stream(["It ", "is ", "sunny"], tool_calls=[("c9", "get_weather", ['{"ci', 'ty": "Oslo"}'])]),
              "anthropic": anthropic_stream(["It ", "is ", "sunny"], tool_use=("c9", "get_weather", ['{"city"', ': "Oslo"}'])),
              "gemini": gemini_stream(["It ", "is ", "sunny"])}[provider]
    stub.add(stream)
    responses = collect(models(stub.url)[provider], stream=True)
    assert [r.content.text for r in responses if r.partial] == ["It ", "is ", "sunny"]  # type: ignore[union-attr]
    final = responses[-1]
    assert not final.partial and final.content is not None and final.content.text == "It is sunny"
    if provider != "gemini":
        assert final.content.function_calls == [FunctionCall(id="c9", name="get_weather", args={"city": "Oslo"})]
    assert stub.requests[0].body.get("stream", True) is True


# -- failures ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider, make", [
    ("openai", lambda: openai_error(429, "slow down", "rate_limit_error", retry_after="2")),
    ("anthropic", lambda: anthropic_error(429, "rate_limit_error", "slow down", retry_after_ms="1500")),
    ("gemini", lambda: gemini_error(429, "quota", "RESOURCE_EXHAUSTED", retry_after="3")),
])
def test_rate_limits_are_retried_honouring_retry_after(stub: StubServer, provider: str, make: Any) -> None:
    ok = {"openai": openai_chat("ok"), "anthropic": anthropic_message("ok"), "gemini": gemini_response("ok")}[provider]
    stub.add(make(), ok)
    clock = Clock()
    final = collect(models(stub.url, clock)[provider])[-1]
    assert final.content is not None and final.content.text == "ok"
    assert clock.waits == [{"openai": 2.0, "anthropic": 1.5, "gemini": 3.0}[provider]]
    assert len(stub.requests) == 2


def test_full_jitter_backoff_on_server_errors_then_give_up(stub: StubServer) -> None:
    stub.add(openai_error(500), openai_error(503), openai_error(502), openai_error(504))
    clock = Clock()
    model = OpenAIModel("gpt-test", base_url=stub.url, api_key="k", sleep=clock.sleep, rng=random.Random(3),
                        retry=RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=3.0))
    with pytest.raises(ServerError, match="HTTP 504"):
        collect(model)
    assert len(clock.waits) == 3 and len(stub.requests) == 4
    expected = random.Random(3)
    assert clock.waits == pytest.approx([expected.uniform(0, 1.0), expected.uniform(0, 2.0), expected.uniform(0, 3.0)])


def test_overloaded_529_is_retried_other_4xx_are_not(stub: StubServer) -> None:
    stub.add(anthropic_error(529, "overloaded_error", "Overloaded"), anthropic_message("ok"))
    clock = Clock()
    assert collect(models(stub.url, clock)["anthropic"])[-1].content.text == "ok"  # type: ignore[union-attr]
    stub.add(openai_error(400, "bad schema", "invalid_request_error"), openai_chat("never"))
    with pytest.raises(BadRequestError, match="bad schema"):
        collect(models(stub.url, clock)["openai"])
    assert len(stub.responses) == 1  # the answer a retry would have taken is still there
    stub.responses.clear()
    stub.add(openai_error(401, "bad key", "authentication_error"))
    with pytest.raises(AuthenticationError):
        collect(models(stub.url, clock)["openai"])
    assert len(stub.requests) == 4  # neither 400 nor 401 was retried
    stub.add(*(anthropic_error(529, "overloaded_error") for _ in range(3)))
    with pytest.raises(Overloaded):
        collect(models(stub.url, clock)["anthropic"])


def test_content_blocks_are_errors_not_empty_replies(stub: StubServer) -> None:
    stub.add(gemini_response("x", finish="SAFETY"), gemini_response(block_reason="PROHIBITED_CONTENT"),
             openai_chat("", finish="content_filter"), anthropic_message("", stop_reason="refusal"))
    m = models(stub.url)
    for name in ("gemini", "gemini", "openai", "anthropic"):
        with pytest.raises(ContentBlocked):
            collect(m[name])


def test_malformed_truncated_and_mid_stream_errors(stub: StubServer) -> None:
    stub.add(StubResponse(body=b"{not json"))
    with pytest.raises(MalformedResponse):
        collect(models(stub.url)["openai"])
    stub.add(openai_stream(["part"], truncate=True))
    with pytest.raises(StreamInterrupted):
        collect(models(stub.url)["openai"], stream=True)
    broken = anthropic_stream(["Hel"])
    assert broken.sse is not None
    broken.sse = [*broken.sse[:4], 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
                                   '"message": "Overloaded"}}']
    stub.add(broken)
    with pytest.raises(StreamInterrupted, match="Overloaded"):
        collect(models(stub.url)["anthropic"], stream=True)
    unfinished = gemini_stream(["a", "b"])
    assert unfinished.sse is not None
    unfinished.sse = unfinished.sse[:1]  # no finishReason ever: the stream was cut cleanly
    stub.add(unfinished)
    with pytest.raises(StreamInterrupted, match="truncated"):
        collect(models(stub.url)["gemini"], stream=True)


def test_timeouts_and_connection_errors_end_with_a_typed_error(stub: StubServer) -> None:
    stub.add(StubResponse(json={}, delay=1.0), StubResponse(json={}, delay=1.0))
    clock = Clock()
    model = OpenAIModel("gpt-test", base_url=stub.url, api_key="k", timeout=0.2, sleep=clock.sleep,
                        retry=RetryPolicy(max_attempts=2))
    with pytest.raises(ModelTimeout):
        collect(model)
    assert len(clock.waits) == 1
    dead = OpenAIModel("gpt-test", base_url="http://127.0.0.1:9", api_key="k", sleep=clock.sleep,
                       retry=RetryPolicy(max_attempts=1))
    with pytest.raises(ModelError) as failure:
        collect(dead)
    assert failure.value.error_type == "connection_error"


def test_keys_never_show_in_reprs() -> None:
    model = OpenAIModel("gpt-test", base_url="http://x", api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(model)


# -- resolution and the engine ------------------------------------------------------------------------------


def test_resolution_by_name_and_missing_keys_name_the_variable() -> None:
    env = {"GEMINI_API_KEY": "g", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    assert isinstance(resolve_model("gemini-2.5-flash", env=env), GeminiModel)
    assert isinstance(resolve_model("claude-sonnet-4", env=env), AnthropicModel)
    openai = resolve_model("openai/gpt-4o", env=env)
    assert isinstance(openai, OpenAIModel) and openai.name == "gpt-4o"
    local = resolve_model("llama3", env={}, base_urls={"llama3": "http://127.0.0.1:11434/v1"})
    assert isinstance(local, OpenAIModel) and local.base_url == "http://127.0.0.1:11434/v1"
    with pytest.raises(AuthenticationError, match="GEMINI_API_KEY"):
        resolve_model("gemini-2.5-flash", env={})
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        resolve_model("claude-x", env={})
    with pytest.raises(ModelError, match="no provider"):
        resolve_model("mystery-model", env=env)


def get_weather(city: str) -> dict[str, Any]:
    return {"city": city, "temp": 21}


def test_an_agent_runs_a_tool_round_trip_against_a_provider(stub: StubServer) -> None:
    stub.add(openai_chat(tool_calls=[("call_1", "get_weather", {"city": "Paris"})]), openai_chat("21 degrees in Paris."))
    agent = LlmAgent(name="bot", model="openai/gpt-test", instruction="Help.", tools=[get_weather])
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": stub.url}
    events = run(agent, "Weather in Paris?", resolve_model=lambda name: resolve_model(name, env=env))
    assert summary(events)[-1] == ("bot", "21 degrees in Paris.")
    second = stub.requests[1].body["messages"]
    assert second[-2]["tool_calls"][0]["id"] == "call_1" and second[-1] == {
        "role": "tool", "tool_call_id": "call_1", "content": '{"city": "Paris", "temp": 21}'}


def test_a_broken_stream_ends_the_step_with_an_error_event(stub: StubServer) -> None:
    from adk_actors import RunConfig, StreamingMode

    stub.add(openai_stream(["It is "], truncate=True))
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": stub.url}
    agent = LlmAgent(name="bot", model="openai/gpt-test")
    events = run(agent, "hi", resolve_model=lambda name: resolve_model(name, env=env),
                 run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert [e.content.text for e in events if e.partial] == ["It is "]  # type: ignore[union-attr]
    assert events[-1].error_code == "stream_interrupted"


def test_tool_choice_is_mapped_for_each_provider() -> None:
    def payload(model: Any, choice: Any) -> dict[str, Any]:
        return model.payload(HISTORY.model_copy(update={"config": {"tool_choice": choice}}), False)

    m = models("http://unused")
    assert payload(m["openai"], "any")["tool_choice"] == "required"
    assert payload(m["openai"], {"name": "get_weather"})["tool_choice"] == {
        "type": "function", "function": {"name": "get_weather"}}
    assert "tool_choice" not in payload(m["openai"], "auto")
    assert payload(m["anthropic"], "any")["tool_choice"] == {"type": "any"}
    assert payload(m["anthropic"], {"name": "get_weather"})["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert payload(m["gemini"], "any")["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert payload(m["gemini"], "none")["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}


def test_model_calls_of_one_loop_reuse_one_pooled_connection(stub: StubServer) -> None:
    """Issue 20: a new httpx client per attempt paid a TCP (and TLS) handshake on every
    call; one pooled client per endpoint per loop keeps the connection, until closed."""
    from adk_actors.models import close_pooled_clients

    stub.add(*(openai_chat(f"answer {n}") for n in range(4)))
    model = OpenAIModel("gpt-test", base_url=stub.url + "/v1", api_key="sk-test")
    other = OpenAIModel("gpt-other", base_url=stub.url + "/v1", api_key="sk-test")

    async def calls() -> None:
        for each in (model, model, other):
            [r async for r in each.generate(HISTORY)]
        await close_pooled_clients()
        [r async for r in model.generate(HISTORY)]  # after closing: a new client, a new connection
        await close_pooled_clients()

    asyncio.run(calls())
    peers = [r.peer for r in stub.requests]
    assert peers[0] == peers[1] == peers[2]  # one connection for the endpoint, both models
    assert peers[3] != peers[0]
