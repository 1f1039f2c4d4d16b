"""google-adk's ``models`` names built here (issue 56), side by side with google-adk 2.13:
``apigee_llm.CompletionsHTTPClient`` and ``ChatCompletionsResponseHandler`` against one
loopback stand-in of an Apigee proxy speaking OpenAI's Chat Completions
(``adk_actors.testing.StubServer``): the same requests on the wire and the same parsed
answers, whole and streamed; and ``lite_llm``'s stream-piece classes (the same fields,
defaults and refusals).
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from adk_actors.models import ModelError
from adk_actors.models import apigee_llm as our_apigee
from adk_actors.models import lite_llm as our_lite
from adk_actors.models._gemma_mixin import GemmaFunctionCallingMixin
from adk_actors.models.llm_request import LlmRequest
from adk_actors.models.llm_response import LlmResponse
from adk_actors.testing import StubServer, openai_chat, openai_error, openai_stream
from adk_actors.types import (
    Content,
    FunctionCall,
    FunctionDeclaration,
    FunctionResponse,
    GenerateContentConfig,
    Part,
    generate_config_of,
)

pytest.importorskip("google.adk")

from google.adk.models import apigee_llm as their_apigee
from google.adk.models.llm_request import LlmRequest as TheirRequest
from google.adk.models.llm_response import LlmResponse as TheirResponse
from google.genai import types as genai

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

SECRET = "proxy-secret-7d2a"
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

NAMES = [
    ("google.adk.models.apigee_llm", "CompletionsHTTPClient"),
    ("google.adk.models.apigee_llm", "ChatCompletionsResponseHandler"),
    ("google.adk.models.lite_llm", "ChatCompletionFileUrlObject"),
    ("google.adk.models.lite_llm", "FunctionChunk"),
    ("google.adk.models.lite_llm", "ReasoningChunk"),
    ("google.adk.models.lite_llm", "TextChunk"),
    ("google.adk.models.lite_llm", "UsageMetadataChunk"),
    ("google.adk.models.gemma_llm", "GemmaFunctionCallingMixin"),
]


@pytest.mark.parametrize(("module", "name"), NAMES)
def test_each_name_resolves_at_google_adks_path(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name)
    ours = importlib.import_module("adk_actors." + module.removeprefix("google.adk."))
    assert name in ours.__all__ and hasattr(ours, name)


@pytest.fixture
def proxy() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


# -- the two requests, made of the same inputs ----------------------------------------------


def their_request() -> Any:
    tool = genai.Tool(function_declarations=[genai.FunctionDeclaration(
        name="get_weather", description="Tells the weather.", parameters_json_schema=WEATHER)])
    contents = [
        genai.Content(role="user", parts=[genai.Part(text="Weather in Lima?")]),
        genai.Content(role="model", parts=[genai.Part(function_call=genai.FunctionCall(
            id="call_0", name="get_weather", args={"city": "Lima"}))]),
        genai.Content(role="user", parts=[genai.Part(function_response=genai.FunctionResponse(
            id="call_0", name="get_weather", response={"report": "Warm."}))]),
    ]
    return TheirRequest(model="apigee/openai/gpt-4o", contents=contents, config=genai.GenerateContentConfig(
        system_instruction="Be brief.", temperature=0.2, max_output_tokens=64, seed=7, tools=[tool],
        frequency_penalty=0.5, presence_penalty=0.25, candidate_count=1, stop_sequences=["END"], top_p=0.9))


def our_request() -> LlmRequest:
    contents = [
        Content(role="user", parts=(Part(text="Weather in Lima?"),)),
        Content(role="model", parts=(Part(function_call=FunctionCall(id="call_0", name="get_weather",
                                                                     args={"city": "Lima"})),)),
        Content(role="user", parts=(Part(function_response=FunctionResponse(id="call_0", name="get_weather",
                                                                            response={"report": "Warm."})),)),
    ]
    return LlmRequest(model="apigee/openai/gpt-4o", system_instruction="Be brief.", contents=contents,
                      tools=[FunctionDeclaration(name="get_weather", description="Tells the weather.",
                                                 parameters_json_schema=WEATHER)],
                      config=generate_config_of(GenerateContentConfig(
                          temperature=0.2, max_output_tokens=64, seed=7, frequency_penalty=0.5, presence_penalty=0.25,
                          candidate_count=1, stop_sequences=["END"], top_p=0.9)))


def row(response: Any) -> dict[str, Any]:
    """What a user reads of a response, the same way for both sides' classes."""
    content = response.content
    parts = list(content.parts or []) if content is not None else []
    usage = response.usage_metadata
    return {
        "partial": bool(response.partial),
        "role": content.role if content is not None else None,
        "text": "".join(p.text or "" for p in parts),
        "calls": [(p.function_call.id, p.function_call.name, p.function_call.args, p.thought_signature)
                  for p in parts if p.function_call is not None and not response.partial],
        "finish": getattr(response.finish_reason, "value", response.finish_reason),
        "usage": None if usage is None else (usage.prompt_token_count, usage.candidates_token_count,
                                             usage.total_token_count, usage.thoughts_token_count),
        "model": response.model_version,
    }


async def _collect(client: Any, request: Any, stream: bool) -> list[dict[str, Any]]:
    try:
        return [row(r) async for r in client.generate_content_async(request, stream=stream)]
    finally:
        await client.aclose()


def side_by_side(proxy: StubServer, answers: list[Any], *, stream: bool, retry: Any = None
                 ) -> tuple[Any, Any, list[Any], list[Any]]:
    """Both clients against the stand-in, each given ``answers``: (their rows or error,
    our rows or error, their requests, our requests)."""
    results: list[Any] = []
    recorded: list[Any] = []
    for module, request in ((their_apigee, their_request()), (our_apigee, our_request())):
        proxy.requests.clear()
        proxy.add(*answers)
        client = module.CompletionsHTTPClient(base_url=proxy.url + "/apigee", headers={"x-apigee-key": SECRET},
                                              retry_options=retry)
        try:
            results.append(asyncio.run(_collect(client, request, stream)))
        except Exception as exc:  # each side's failure is what is compared
            results.append(exc)
        recorded.append([(r.path, r.headers.get("x-apigee-key"), r.body) for r in proxy.requests])
        proxy.responses.clear()
    return results[0], results[1], recorded[0], recorded[1]


def test_the_client_sends_google_adks_request_and_reads_a_whole_answer_alike(proxy: StubServer) -> None:
    """The same path, header and Chat Completions body (system message, the call and
    its tool result, the tool, settings, ``stream: false``), and the same response."""
    answer = openai_chat(tool_calls=[("call_1", "get_weather", {"city": "Quito"})], model="gpt-4o")
    theirs, ours, their_wire, our_wire = side_by_side(proxy, [answer], stream=False)
    assert our_wire == their_wire
    assert our_wire[0][0] == "/apigee/chat/completions" and our_wire[0][1] == SECRET
    assert our_wire[0][2]["model"] == "gpt-4o" and our_wire[0][2]["stream"] is False
    assert {k: our_wire[0][2][k] for k in ("frequency_penalty", "presence_penalty", "n", "stop")} == {
        "frequency_penalty": 0.5, "presence_penalty": 0.25, "n": 1, "stop": ["END"]}
    assert ours == theirs
    assert ours[0]["calls"] == [("call_1", "get_weather", {"city": "Quito"}, None)]
    assert ours[0]["finish"] == "STOP" and ours[0]["usage"] == (11, 7, 18, None)


def test_the_client_streams_google_adks_partials_then_the_whole_answer(proxy: StubServer) -> None:
    """A streamed answer: ``stream: true`` on both; the same partial responses (a
    role-only chunk's empty one, each piece, the finish chunk's), the whole answer at
    the finish reason, then the usage chunk's partial."""
    theirs, ours, their_wire, our_wire = side_by_side(proxy, [openai_stream(["Warm ", "in ", "Lima."])],
                                                      stream=True)
    assert our_wire == their_wire and our_wire[0][2]["stream"] is True
    assert ours == theirs
    assert [r["text"] for r in ours if r["partial"]] == ["", "Warm ", "in ", "Lima.", "", ""]
    final = [r for r in ours if not r["partial"]]
    assert final == [{**final[0], "text": "Warm in Lima.", "finish": "STOP"}]
    assert ours[-1]["usage"] == (5, 3, 8, None)


def test_a_streamed_tool_call_comes_whole_in_the_final_response_as_there(proxy: StubServer) -> None:
    answer = openai_stream(tool_calls=[("call_9", "get_weather", ['{"ci', 'ty": "Cusco"}'])])
    theirs, ours, _, _ = side_by_side(proxy, [answer], stream=True)
    assert ours == theirs
    assert [r["calls"] for r in ours if not r["partial"]] == [[("call_9", "get_weather", {"city": "Cusco"}, None)]]


def test_retry_options_retry_a_busy_proxy_as_there_and_none_is_one_attempt(proxy: StubServer) -> None:
    retry = genai.HttpRetryOptions(attempts=2, initial_delay=0.01, max_delay=0.02)
    theirs, ours, their_wire, our_wire = side_by_side(proxy, [openai_error(503, "busy"), openai_chat("Cool.")],
                                                      stream=False, retry=retry)
    assert len(our_wire) == len(their_wire) == 2 and ours == theirs and ours[0]["text"] == "Cool."
    theirs, ours, their_wire, our_wire = side_by_side(proxy, [openai_error(503, "busy")], stream=False)
    assert len(our_wire) == len(their_wire) == 1
    assert isinstance(theirs, Exception) and isinstance(ours, ModelError)  # httpx's error there, ours typed here
    assert getattr(ours, "status", None) == 503


def test_a_closed_client_refuses_a_call() -> None:
    client = our_apigee.CompletionsHTTPClient(base_url="http://127.0.0.1:9")
    client.close()

    async def call() -> None:
        async for _ in client.generate_content_async(our_request()):
            pass

    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(call())


# -- the answer reader on its own -------------------------------------------------------------


WHOLE = {
    "id": "chatcmpl-7", "object": "chat.completion", "created": 3, "model": "gpt-4o",
    "choices": [{"index": 0, "finish_reason": "length", "message": {
        "role": "assistant", "content": "Partly.", "refusal": "No more.",
        "function_call": {"name": "lookup", "arguments": "{\"q\": \"x\"}"},
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                                    "arguments": "{\"city\": \"Lima\"}"},
                        "extra_content": {"google": {"thought_signature": base64.b64encode(b"sig").decode()}}}]}}],
    "usage": {"prompt_tokens": 4, "completion_tokens": 9, "total_tokens": 13,
              "completion_tokens_details": {"reasoning_tokens": 2}},
}


@pytest.mark.parametrize("reason", ["stop", "length", "tool_calls", "content_filter", "other"])
def test_the_handler_reads_a_whole_answer_as_there(reason: str) -> None:
    """Text with its refusal marked, the calls in order (the legacy function call
    too, the thought signature kept), finish reason, usage with reasoning tokens."""
    answer = json.loads(json.dumps(WHOLE))
    answer["choices"][0]["finish_reason"] = reason
    theirs = their_apigee.ChatCompletionsResponseHandler().process_response(answer)
    ours = our_apigee.ChatCompletionsResponseHandler().process_response(answer)
    assert row(ours) == row(theirs)
    assert row(ours)["text"] == "Partly.\n[[REFUSAL]]: No more."
    assert [c[1] for c in row(ours)["calls"]] == ["get_weather", "lookup"] and row(ours)["calls"][0][3] == b"sig"


def test_the_handler_refuses_an_answer_without_choices_as_there() -> None:
    for module in (their_apigee, our_apigee):
        with pytest.raises(ValueError):
            module.ChatCompletionsResponseHandler().process_response({"choices": []})


def test_the_handler_gathers_streamed_chunks_as_there() -> None:
    """Pieces of two parallel calls and of the text, a refusal, usage in a chunk of
    its own: the same partial texts and the same final answer."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    deltas: list[dict[str, Any]] = [
        {"role": "assistant", "content": "Che"},
        {"content": "cking."},
        {"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\""}},
                        {"index": 1, "id": "b", "type": "function", "function": {"name": "g", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}},
                        {"index": 1, "function": {"arguments": "{\"y\": 2}"}}]},
        {"refusal": "Stop."},
        {"content": "dropped"},
    ]
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**base, "choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    rows = []
    for module in (their_apigee, our_apigee):
        handler = module.ChatCompletionsResponseHandler()
        rows.append([row(r) for chunk in chunks for r in handler.process_chunk(json.loads(json.dumps(chunk)))])
    assert rows[1] == rows[0]
    final = rows[1][-1]
    assert final["text"] == "Checking.\n[[REFUSAL]]: Stop." and final["usage"] == (2, 3, 5, None)
    assert final["calls"] == [("a", "f", {"x": 1}, None), ("b", "g", {"y": 2}, None)]


# -- lite_llm's stream pieces -----------------------------------------------------------------


def _their_lite() -> Any:
    return importlib.import_module("google.adk.models.lite_llm")


@pytest.mark.parametrize(("name", "given"), [
    ("TextChunk", {"text": "hi"}),
    ("FunctionChunk", {"id": "c1", "name": "f", "args": "{\"a\""}),
    ("FunctionChunk", {"id": None, "name": None, "args": None, "index": 2, "thought_signature": b"s"}),
    ("UsageMetadataChunk", {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}),
    ("UsageMetadataChunk", {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3,
                            "cached_prompt_tokens": 1, "reasoning_tokens": 1, "cache_creation_tokens": 4}),
])
def test_the_stream_pieces_take_and_default_fields_as_there(name: str, given: dict[str, Any]) -> None:
    theirs = getattr(_their_lite(), name)(**given)
    ours = getattr(our_lite, name)(**given)
    assert ours.model_dump() == theirs.model_dump()


@pytest.mark.parametrize(("name", "given"), [
    ("TextChunk", {}),
    ("FunctionChunk", {"id": "c1", "name": "f"}),
    ("UsageMetadataChunk", {"prompt_tokens": 1, "completion_tokens": 2}),
    ("UsageMetadataChunk", {"prompt_tokens": "many", "completion_tokens": 2, "total_tokens": 3}),
])
def test_the_stream_pieces_refuse_what_google_adk_refuses(name: str, given: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        getattr(_their_lite(), name)(**given)
    with pytest.raises(ValidationError):
        getattr(our_lite, name)(**given)


def test_a_reasoning_piece_holds_thought_parts_ours_or_google_genais() -> None:
    theirs = _their_lite().ReasoningChunk(parts=[genai.Part(text="hmm", thought=True)])
    ours = our_lite.ReasoningChunk(parts=[Part(text="hmm", thought=True)])
    from_genai = our_lite.ReasoningChunk(parts=[genai.Part(text="hmm", thought=True)])
    assert [(p.text, p.thought) for p in ours.parts] == [(p.text, p.thought) for p in theirs.parts]
    assert from_genai.parts == ours.parts


def test_the_file_object_has_google_adks_keys() -> None:
    theirs, ours = _their_lite().ChatCompletionFileUrlObject, our_lite.ChatCompletionFileUrlObject
    assert set(ours.__annotations__) == set(theirs.__annotations__) == {"file_data", "file_id", "format"}
    assert ours.__total__ is theirs.__total__ is False


# -- gemma_llm's function-calling mixin (at google-adk's path once gemma_llm re-exports it) --


def _their_gemma() -> Any:
    return importlib.import_module("google.adk.models.gemma_llm")


def _rows(contents: Any) -> list[tuple[str, list[str]]]:
    return [(c.role, [p.text for p in c.parts]) for c in contents]


def test_the_gemma_mixin_moves_calls_and_tools_into_text_as_there() -> None:
    """The history's call and result as text turns, the tools described after the
    system instruction and taken out, in place, on both sides."""
    theirs, ours = their_request(), our_request()

    class TheirShim(_their_gemma().GemmaFunctionCallingMixin):
        pass

    class OurShim(GemmaFunctionCallingMixin):
        pass

    TheirShim()._move_function_calls_into_system_instruction(theirs)
    OurShim()._move_function_calls_into_system_instruction(ours)
    assert _rows(ours.contents) == _rows(theirs.contents)
    assert _rows(ours.contents)[1] == ("model", ['{"id":"call_0","args":{"city":"Lima"},"name":"get_weather"}'])
    assert ours.system_instruction == theirs.config.system_instruction
    assert ours.system_instruction.startswith("Be brief.\n\nYou have access to the following functions:")
    assert ours.tools == [] and theirs.config.tools == []


@pytest.mark.parametrize(("text", "partial", "complete"), [
    ('```json\n{"name": "get_weather", "parameters": {"city": "Oslo"}}\n```', None, None),
    ('I will call it: {"function": "get_weather", "args": {"city": "Oslo"}}', None, None),
    ('{"name": "get_weather", "parameters": {"city": "Oslo"}}', True, None),
    ('{"name": "get_weather", "parameters": {"city": "Oslo"}}', None, True),
    ("Just words.", None, None),
])
def test_the_gemma_mixin_reads_a_call_from_text_as_there(text: str, partial: Any, complete: Any) -> None:
    theirs = TheirResponse(content=genai.Content(role="model", parts=[genai.Part(text=text)]), partial=partial,
                           turn_complete=complete)
    ours = LlmResponse(content=Content(role="model", parts=(Part(text=text),)), partial=partial,
                       turn_complete=complete)
    _their_gemma().GemmaFunctionCallingMixin()._extract_function_calls_from_response(theirs)
    GemmaFunctionCallingMixin()._extract_function_calls_from_response(ours)

    def calls(response: Any) -> list[Any]:
        return [(p.text, p.function_call.name if p.function_call else None,
                 p.function_call.args if p.function_call else None) for p in response.content.parts]

    assert calls(ours) == calls(theirs)
