"""Our wire format checked against the official SDKs' typed schemas (dev dependencies).

Requests we send are validated against the SDKs' request types (and no key of ours
is unknown to them); the stub server's responses, which our parsers are tested
against, are validated against the SDKs' response models, so both directions match
what the providers document.
"""

from __future__ import annotations

import json
import typing
from typing import Any

from pydantic import TypeAdapter
from test_models import HISTORY, WEATHER

from adk_actors import LlmRequest
from adk_actors.models import AnthropicModel, GeminiModel, OpenAIModel
from adk_actors.testing import (
    anthropic_message,
    anthropic_stream,
    gemini_response,
    gemini_stream,
    openai_chat,
    openai_stream,
)

JSON_MODE = HISTORY.model_copy(update={"config": {**HISTORY.config, "response_mime_type": "application/json",
                                                  "response_schema": {"type": "object",
                                                                      "properties": {"a": {"type": "string"}}}}})


def known_keys(typed_dict: Any) -> set[str]:
    return set(typing.get_type_hints(typed_dict))


def sse_payloads(response: Any) -> list[Any]:
    return [json.loads(item.split("data: ", 1)[1]) for item in response.sse
            if "data: " in item and not item.endswith("[DONE]")]


def test_openai_requests_match_the_sdk() -> None:
    from openai.types.chat import completion_create_params as params

    model = OpenAIModel("gpt-test", base_url="http://x", api_key="k")
    for request, stream, typed in ((HISTORY, False, params.CompletionCreateParamsNonStreaming),
                                   (JSON_MODE, True, params.CompletionCreateParamsStreaming)):
        payload = model.payload(request, stream)
        TypeAdapter(typed).validate_python(payload)
        assert set(payload) <= known_keys(typed)


def test_openai_stub_responses_parse_with_the_sdk() -> None:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    ChatCompletion.model_validate(openai_chat("hi").json)
    ChatCompletion.model_validate(openai_chat(tool_calls=[("c1", "f", {"a": 1})]).json)
    for chunk in sse_payloads(openai_stream(["a", "b"], tool_calls=[("c1", "f", ['{"a"', ": 1}"])])):
        ChatCompletionChunk.model_validate(chunk)


def test_anthropic_requests_match_the_sdk() -> None:
    from anthropic.types import message_create_params as params

    model = AnthropicModel("claude-test", base_url="http://x", api_key="k")
    for request, stream, typed in ((HISTORY, False, params.MessageCreateParamsNonStreaming),
                                   (JSON_MODE, True, params.MessageCreateParamsStreaming)):
        payload = model.payload(request, stream)
        TypeAdapter(typed).validate_python(payload)
        assert set(payload) <= known_keys(typed)
    assert model.payload(JSON_MODE, False)["output_config"]["format"]["type"] == "json_schema"


def test_anthropic_stub_responses_parse_with_the_sdk() -> None:
    from anthropic.types import Message, RawMessageStreamEvent

    Message.model_validate(anthropic_message("hi").json)
    Message.model_validate(anthropic_message(tool_uses=[("t1", "f", {"a": 1})]).json)
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    for event in sse_payloads(anthropic_stream(["a", "b"], tool_use=("t1", "f", ['{"a"', ": 1}"]))):
        if event["type"] != "ping":
            adapter.validate_python(event)


def test_gemini_requests_match_the_sdk() -> None:
    from google.genai import types

    model = GeminiModel("gemini-2.5-flash", base_url="http://x", api_key="k")
    payload = model.payload(JSON_MODE, False)
    for content in payload["contents"]:
        types.Content.model_validate(content)
    types.Content.model_validate(payload["systemInstruction"])
    for tool in payload["tools"]:
        types.Tool.model_validate(tool)
    types.GenerationConfig.model_validate(payload["generationConfig"])
    assert set(payload) <= {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
    declaration = types.Tool.model_validate(payload["tools"][0]).function_declarations[0]
    assert declaration.name == WEATHER.name


def test_gemini_stub_responses_parse_with_the_sdk() -> None:
    from google.genai import types

    parsed = types.GenerateContentResponse.model_validate(gemini_response("hi").json)
    assert parsed.text == "hi"
    types.GenerateContentResponse.model_validate(gemini_response(function_calls=[("f", {"a": 1})]).json)
    for chunk in sse_payloads(gemini_stream(["a", "b"])):
        types.GenerateContentResponse.model_validate(chunk)


def test_an_empty_request_still_validates() -> None:
    from openai.types.chat import completion_create_params as params

    payload = OpenAIModel("m", base_url="http://x", api_key="k").payload(LlmRequest(), False)
    TypeAdapter(params.CompletionCreateParamsNonStreaming).validate_python(payload)
