"""``LiteLlm`` (google-adk's model class on the ``litellm`` library, the ``litellm``
extra) against a real OpenAI Chat Completions stand-in on 127.0.0.1
(``adk_actors.testing.StubServer``), litellm pointed at it with ``api_base``.

Side by side with google-adk 2.13's ``LiteLlm`` given the same request: the same JSON
body reaches the server and the same answer becomes the same LlmResponse (text, tool
calls, thoughts, usage, finish reason), streamed or not. Then ours alone: a full tool
turn through the in-process ``InMemoryRunner`` (and the same program on google-adk),
partial events when streaming, a 429 / 500 retried by our retry policy and ending in
our typed error, the breaker opening on them, and the api key in no log, no error
and no event.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of litellm's price list at import
pytest.importorskip("litellm")
pytest.importorskip("google.adk")

import google_adk_harness as harness
from google_adk_harness import event_rows, rewritten, run_program

from adk_actors._types import (
    Blob,
    Content,
    FunctionCall,
    FunctionDeclaration,
    FunctionResponse,
    LlmRequest,
    Part,
)
from adk_actors.models import (
    AuthenticationError,
    BreakerModel,
    CircuitBreaker,
    CircuitOpen,
    HttpModel,
    LiteLlm,
    RateLimited,
    RetryPolicy,
    ServerError,
)
from adk_actors.models._lite_llm import LiteLlmModel
from adk_actors.testing import StubResponse, StubServer, openai_chat, openai_error, openai_stream

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning")

KEY = "sk-litellm-test-key-0123456789"
MODEL = "openai/gpt-4o-mini"
WEATHER = {"type": "object", "properties": {"city": {"type": "string", "description": "The city."}},
           "required": ["city"]}


@pytest.fixture(scope="module")
def server() -> Iterator[StubServer]:
    with StubServer() as stub:
        yield stub


@pytest.fixture
def stand_in(server: StubServer) -> StubServer:
    with server._lock:
        server.requests.clear()
        server.responses.clear()
    return server


def _api(server: StubServer) -> str:
    return server.url + "/v1"


# -- the same request on both sides -------------------------------------------------------------------


def _both_requests(schema: bool = False) -> tuple[LlmRequest, Any]:
    """One request as ours and as google-adk's: an instruction, a user turn with text
    and an image, a model turn with text and a tool call, its result, a user turn; a
    tool; sampling settings; tool choice "any"."""
    from google.adk.models.llm_request import LlmRequest as TheirRequest
    from google.genai import types as gt

    image = b"\x89PNG\r\n\x1a\n-not-really-an-image"
    config: dict[str, Any] = {"temperature": 0.3, "top_p": 0.9, "max_output_tokens": 256, "stop": ["END"],
                              "seed": 7, "presence_penalty": 0.1, "frequency_penalty": 0.2, "tool_choice": "any"}
    if schema:
        config = {"response_schema": {"title": "Report", "type": "object", "properties": {
            "city": {"type": "string"}, "temp": {"type": "integer"}}}}
    ours = LlmRequest(model=MODEL, system_instruction="Answer briefly.", contents=[
        Content(role="user", parts=[Part(text="What is in this picture, and the weather?"),
                                    Part(inline_data=Blob(mime_type="image/png", data=image))]),
        Content(role="model", parts=[Part(text="Let me look."), Part(function_call=FunctionCall(
            id="call_1", name="get_weather", args={"city": "Paris"}))]),
        Content(role="user", parts=[Part(function_response=FunctionResponse(
            id="call_1", name="get_weather", response={"report": "Sunny, 21 degrees."}))]),
        Content(role="user", parts=[Part(text="And tomorrow?")]),
    ], tools=[] if schema else [FunctionDeclaration(name="get_weather", description="Tells the weather.",
                                                    parameters=WEATHER)], config=config)
    settings: dict[str, Any] = {"temperature": 0.3, "top_p": 0.9, "max_output_tokens": 256, "stop_sequences": ["END"],
                                "seed": 7, "presence_penalty": 0.1, "frequency_penalty": 0.2,
                                "tools": [gt.Tool(function_declarations=[gt.FunctionDeclaration(
                                    name="get_weather", description="Tells the weather.",
                                    parameters_json_schema=WEATHER)])],
                                "tool_config": gt.ToolConfig(function_calling_config=gt.FunctionCallingConfig(
                                    mode=gt.FunctionCallingConfigMode.ANY))}
    if schema:
        settings = {"response_schema": config["response_schema"]}
    theirs = TheirRequest(model=MODEL, contents=[
        gt.Content(role="user", parts=[gt.Part(text="What is in this picture, and the weather?"),
                                       gt.Part(inline_data=gt.Blob(mime_type="image/png", data=image))]),
        gt.Content(role="model", parts=[gt.Part(text="Let me look."), gt.Part(function_call=gt.FunctionCall(
            id="call_1", name="get_weather", args={"city": "Paris"}))]),
        gt.Content(role="user", parts=[gt.Part(function_response=gt.FunctionResponse(
            id="call_1", name="get_weather", response={"report": "Sunny, 21 degrees."}))]),
        gt.Content(role="user", parts=[gt.Part(text="And tomorrow?")]),
    ], config=gt.GenerateContentConfig(system_instruction="Answer briefly.", **settings))
    return ours, theirs


def _row(response: Any) -> dict[str, Any]:
    """What a caller reads of an LlmResponse, the same way for google-adk's and ours
    (enums by value; the error message's words are each side's own: only its presence)."""
    content = response.content
    parts = []
    for part in (content.parts or []) if content else []:
        call = part.function_call
        parts.append({"text": part.text, "thought": bool(part.thought),
                      "call": (call.id, call.name, dict(call.args or {})) if call else None})
    usage = response.usage_metadata
    value = lambda v: getattr(v, "value", v)  # noqa: E731
    return {"role": content.role if content else None, "parts": parts, "partial": bool(response.partial),
            "finish_reason": value(response.finish_reason), "error_code": value(response.error_code),
            "error_message": bool(response.error_message), "model_version": response.model_version,
            "usage": None if usage is None else (usage.prompt_token_count, usage.candidates_token_count,
                                                 usage.total_token_count, usage.cached_content_token_count,
                                                 usage.thoughts_token_count)}


def _call(model: Any, request: Any, stream: bool) -> list[Any]:
    async def collect() -> list[Any]:
        return [r async for r in model.generate_content_async(request, stream=stream)]
    return asyncio.run(asyncio.wait_for(collect(), timeout=60))


def _side_by_side(server: StubServer, answer: Any, stream: bool, schema: bool = False
                  ) -> tuple[tuple[Any, list[dict[str, Any]]], tuple[Any, list[dict[str, Any]]]]:
    """google-adk's LiteLlm, then ours, on the same request and the same scripted
    answer (a function making a fresh StubResponse): each side's body and responses."""
    from google.adk.models.lite_llm import LiteLlm as TheirLiteLlm

    ours_request, theirs_request = _both_requests(schema)
    sides = []
    for model, request in ((TheirLiteLlm(model=MODEL, api_base=_api(server), api_key=KEY), theirs_request),
                           (LiteLlm(model=MODEL, api_base=_api(server), api_key=KEY), ours_request)):
        server.requests.clear()
        server.add(answer())
        responses = _call(model, request, stream)
        assert len(server.requests) == 1 and not server.responses
        sides.append((server.requests[0].body, [_row(r) for r in responses]))
    return sides[0], sides[1]


ANSWERS = {
    "text": lambda: openai_chat("Sunny tomorrow too."),
    "tool calls": lambda: openai_chat("Checking.", tool_calls=[("call_9", "get_weather", {"city": "Paris"}),
                                                               ("call_10", "get_weather", {"city": "Rome"})]),
    "malformed arguments": lambda: StubResponse(json={
        "id": "x", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                     "tool_calls": [{"id": "c", "type": "function",
                                     "function": {"name": "get_weather", "arguments": '{"city": "Par'}}]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}),
    "cut at the token limit": lambda: openai_chat("Sunny and", finish="length"),
    "content filter": lambda: openai_chat(None, finish="content_filter"),
    "reasoning and cached tokens": lambda: StubResponse(json={
        "id": "x", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Sunny.", "reasoning_content": "The report says sun."}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39,
                  "prompt_tokens_details": {"cached_tokens": 12},
                  "completion_tokens_details": {"reasoning_tokens": 4}}}),
}

STREAMS = {
    "text": lambda: openai_stream(["Sunny ", "tomorrow ", "too."]),
    "text and tool calls": lambda: openai_stream(["Checking."], tool_calls=[
        ("call_9", "get_weather", ['{"ci', 'ty": "Par', 'is"}']), ("call_10", "get_weather", ['{"city": "Rome"}'])]),
    "cut at the token limit": lambda: openai_stream(["Sunny ", "and"], finish="length"),
}


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_the_same_request_sends_the_same_body_and_the_answer_reads_the_same(stand_in: StubServer,
                                                                            answer: str) -> None:
    (theirs_body, theirs), (ours_body, ours) = _side_by_side(stand_in, ANSWERS[answer], stream=False)
    assert ours_body == theirs_body
    assert ours == theirs
    # what the body and the answer are, so that "the same" is about something
    assert ours_body["model"] == "gpt-4o-mini" and ours_body["messages"][0] == {"role": "system",
                                                                                "content": "Answer briefly."}
    assert [m["role"] for m in ours_body["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assert ours_body["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert ours_body["messages"][3] == {"role": "tool", "tool_call_id": "call_1",
                                        "content": '{"report": "Sunny, 21 degrees."}'}
    assert ours_body["tools"][0]["function"]["parameters"] == WEATHER and ours_body["tool_choice"] == "required"
    assert ours_body["temperature"] == 0.3 and ours_body["max_completion_tokens"] == 256
    assert ours_body["stop"] == ["END"]
    final = ours[-1]
    if answer == "tool calls":
        assert [p["call"] for p in final["parts"] if p["call"]] == [
            ("call_9", "get_weather", {"city": "Paris"}), ("call_10", "get_weather", {"city": "Rome"})]
    if answer == "malformed arguments":
        assert final["finish_reason"] == "MALFORMED_FUNCTION_CALL" and final["error_message"]
        assert not any(p["call"] for p in final["parts"])
    if answer == "cut at the token limit":
        assert final["error_code"] == "MAX_TOKENS"
    if answer == "content filter":
        assert final["error_code"] == final["finish_reason"] == "SAFETY" and final["parts"] == []
    if answer == "reasoning and cached tokens":
        assert final["parts"][0] == {"text": "The report says sun.", "thought": True, "call": None}
        assert final["usage"] == (30, 9, 39, 12, 4)


@pytest.mark.parametrize("answer", list(STREAMS))
def test_a_streamed_answer_reads_the_same_partial_then_final(stand_in: StubServer, answer: str) -> None:
    (theirs_body, theirs), (ours_body, ours) = _side_by_side(stand_in, STREAMS[answer], stream=True)
    assert ours_body == theirs_body
    assert ours_body["stream"] is True and ours_body["stream_options"] == {"include_usage": True}

    def texts(rows: list[dict[str, Any]]) -> list[Any]:
        return [r for r in rows if not any(p["call"] for p in r["parts"])]
    # google-adk also yields a partial per tool-call delta (arguments so far); ours does not
    assert texts(ours) == texts(theirs) if answer != "text and tool calls" else \
        [r for r in texts(ours) if r["partial"]] == [r for r in texts(theirs) if r["partial"]]
    assert ours[-1] == theirs[-1]
    assert [r["partial"] for r in ours][-1] is False and all(r["partial"] for r in ours[:-1])
    if answer == "text":
        assert [r["parts"][0]["text"] for r in ours] == ["Sunny ", "tomorrow ", "too.", "Sunny tomorrow too."]
        assert ours[-1]["usage"] == (5, 3, 8, 0, None)
    if answer == "text and tool calls":
        assert [p["call"] for p in ours[-1]["parts"] if p["call"]] == [
            ("call_9", "get_weather", {"city": "Paris"}), ("call_10", "get_weather", {"city": "Rome"})]


def test_a_response_schema_is_a_strict_json_schema_format_as_on_google_adk(stand_in: StubServer) -> None:
    (theirs_body, _), (ours_body, _) = _side_by_side(stand_in, ANSWERS["text"], stream=False, schema=True)
    assert ours_body == theirs_body
    assert ours_body["response_format"]["json_schema"]["name"] == "Report"
    assert ours_body["response_format"]["json_schema"]["schema"]["required"] == ["city", "temp"]
    assert "tools" not in ours_body or ours_body["tools"] is None


def test_extra_arguments_are_passed_on_and_the_managed_ones_are_not(stand_in: StubServer) -> None:
    model = LiteLlm(model=MODEL, api_base=_api(stand_in), api_key=KEY, user="ann-42", stream=True,
                    messages=[{"role": "user", "content": "not this"}], extra_headers={"x-trace": "t-1"})
    stand_in.add(openai_chat("ok"))
    [response] = _call(model, LlmRequest(contents=[Content.user("hi")]), stream=False)
    sent = stand_in.requests[0]
    assert sent.body["user"] == "ann-42" and "stream" not in sent.body
    assert sent.body["messages"] == [{"role": "user", "content": "hi"}]
    assert sent.headers["x-trace"] == "t-1" and sent.headers["authorization"] == f"Bearer {KEY}"
    assert response.content is not None and response.content.text == "ok"
    assert KEY not in repr(model) and KEY not in str(model.model_dump())


# -- a full tool turn through the runner ---------------------------------------------------------------

PROGRAM = '''
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.genai import types


def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}


agent = LlmAgent(name="weather", instruction="Use get_weather to answer.", tools=[get_weather],
                 model=LiteLlm(model="openai/gpt-4o-mini", api_base=API_BASE, api_key=API_KEY))


async def main(turns, streaming=False):
    runner = InMemoryRunner(agent=agent, app_name="litellm_app")
    session = await runner.session_service.create_session(app_name="litellm_app", user_id="ann")
    config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message,
                                            run_config=config):
            seen.append(event)
    await runner.close()
    return seen
'''


def _program(server: StubServer) -> str:
    return PROGRAM.replace("API_BASE", repr(_api(server))).replace("API_KEY", repr(KEY))


def _bodies(server: StubServer) -> list[dict[str, Any]]:
    """Each body without nulls, the system instruction up to the identity sentence
    (each side words it its own way), tool schemas without titles."""
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
        rows.append({"messages": messages, "tools": tools, **body})
    return rows


def test_an_agent_runs_a_tool_turn_through_litellm_as_on_google_adk(stand_in: StubServer) -> None:
    def answers() -> list[StubResponse]:
        return [openai_chat(tool_calls=[("call_1", "get_weather", {"city": "Paris"})]), openai_chat("Sunny in Paris.")]
    _, theirs = run_program(_program(stand_in), answers(), stand_in, ["Weather in Paris?"])
    theirs_bodies = _bodies(stand_in)
    _, ours = run_program(rewritten(_program(stand_in)), answers(), stand_in, ["Weather in Paris?"])
    ours_bodies = _bodies(stand_in)
    assert event_rows(ours) == event_rows(theirs)
    assert ours_bodies == theirs_bodies
    rows = event_rows(ours)
    assert rows[0]["calls"] == [("call-0", "get_weather", {"city": "Paris"})]
    assert rows[1]["responses"] == [("call-0", "get_weather", {"city": "Paris", "report": "Sunny, 21 degrees."})]
    assert rows[-1]["text"] == "Sunny in Paris." and rows[-1]["final"]
    assert ours_bodies[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1",
                                              "content": '{"city": "Paris", "report": "Sunny, 21 degrees."}'}
    assert ours[-1].usage_metadata.total_token_count == 18


def test_streaming_through_the_runner_yields_partial_events_then_the_final_one(stand_in: StubServer) -> None:
    answers = [openai_stream(tool_calls=[("call_1", "get_weather", ['{"city":', ' "Paris"}'])]),
               openai_stream(["Sunny ", "in ", "Paris."])]
    _, events = run_program(rewritten(_program(stand_in)), answers, stand_in, ["Weather in Paris?"], True)
    partial = [e.content.text for e in events if e.partial]
    assert partial == ["Sunny ", "in ", "Paris."]
    finals = [e for e in events if e.is_final_response()]
    assert [e.content.text for e in finals] == ["Sunny in Paris."]
    assert [c.name for e in events for c in e.get_function_calls()] == ["get_weather"]
    assert all(r.body["stream"] is True for r in stand_in.requests) and len(stand_in.requests) == 2


# -- failures: our typed errors, retries and breaker ------------------------------------------------


def _connector(server: StubServer, attempts: int = 3) -> LiteLlmModel:
    connector = LiteLlm(model=MODEL, api_base=_api(server), api_key=KEY).connector()
    assert isinstance(connector, LiteLlmModel) and isinstance(connector, HttpModel)  # the host's breaker guards it
    connector.retry = RetryPolicy(max_attempts=attempts, base_delay=0.0, max_delay=0.0)
    return connector


def _generate(model: Any, stream: bool = False) -> list[Any]:
    async def collect() -> list[Any]:
        return [r async for r in model.generate(LlmRequest(contents=[Content.user("hi")]), stream=stream)]
    return asyncio.run(asyncio.wait_for(collect(), timeout=60))


@pytest.mark.parametrize(("status", "error"), [(429, RateLimited), (500, ServerError), (503, ServerError)])
@pytest.mark.parametrize("stream", [False, True])
def test_a_retryable_status_is_retried_then_ends_in_our_typed_error(stand_in: StubServer, status: int,
                                                                     error: type[Exception], stream: bool) -> None:
    connector = _connector(stand_in)
    stand_in.add(*[openai_error(status, "busy", retry_after="0") for _ in range(3)])
    with pytest.raises(error) as raised:
        _generate(connector, stream)
    assert len(stand_in.requests) == 3  # our three attempts; litellm itself retried none
    assert raised.value.status == status and raised.value.retryable
    assert connector.slept == [0.0, 0.0]  # the provider's Retry-After: 0 was obeyed


def test_a_stream_cut_after_output_is_interrupted_and_not_retried(stand_in: StubServer) -> None:
    from adk_actors.models import StreamInterrupted

    connector = _connector(stand_in)
    head = openai_stream(["Sun", "ny"]).sse or []
    stand_in.add(StubResponse(sse=head[:3], truncate=True), openai_stream(["never"]))
    seen: list[Any] = []

    async def collect() -> None:
        async for response in connector.generate(LlmRequest(contents=[Content.user("hi")]), stream=True):
            seen.append(response)
    with pytest.raises(StreamInterrupted):
        asyncio.run(asyncio.wait_for(collect(), timeout=60))
    assert [r.content.text for r in seen] == ["Sun", "ny"] and all(r.partial for r in seen)
    assert len(stand_in.requests) == 1  # a retry would repeat what was already said
    stand_in.responses.clear()


def test_a_retry_that_succeeds_answers_and_a_bad_request_is_not_retried(stand_in: StubServer) -> None:
    connector = _connector(stand_in)
    stand_in.add(openai_error(429, "slow down", retry_after="0"), openai_chat("fine"))
    [answer] = _generate(connector)
    assert answer.content.text == "fine" and len(stand_in.requests) == 2
    stand_in.requests.clear()
    stand_in.add(openai_error(400, "bad", kind="invalid_request_error"), openai_chat("never"))
    with pytest.raises(Exception) as raised:
        _generate(connector)
    assert type(raised.value).__name__ == "BadRequestError" and raised.value.error_type == "bad_request"
    assert len(stand_in.requests) == 1
    stand_in.responses.clear()


def test_the_breaker_opens_on_litellm_failures_and_then_calls_nothing(stand_in: StubServer) -> None:
    breaker = CircuitBreaker(MODEL)
    guarded = BreakerModel(_connector(stand_in, attempts=1), breaker)
    stand_in.add(*[openai_error(500, "down") for _ in range(breaker.config.consecutive_failures)])
    for _ in range(breaker.config.consecutive_failures):
        with pytest.raises(ServerError):
            _generate(guarded)
    assert breaker.state == "open"
    before = len(stand_in.requests)
    with pytest.raises(CircuitOpen):
        _generate(guarded)
    assert len(stand_in.requests) == before == breaker.config.consecutive_failures


class _Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.text = io.StringIO()

    def emit(self, record: logging.LogRecord) -> None:
        self.text.write(self.format(record) + "\n")


def test_the_api_key_is_in_no_log_error_or_event(stand_in: StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    """The server echoes the key in its 401 body (some do): the error, the run's error
    event, every log line (litellm's own at DEBUG too) and the output leave it out."""
    captured = _Captured()
    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in ("LiteLLM", "LiteLLM Proxy", "LiteLLM Router"))]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(captured)
        lg.setLevel(logging.DEBUG)
    try:
        stand_in.add(openai_error(401, f"Incorrect API key provided: {KEY}", kind="invalid_request_error"))
        with pytest.raises(AuthenticationError) as raised:
            _generate(_connector(stand_in))
        stand_in.add(openai_error(401, f"Incorrect API key provided: {KEY}", kind="invalid_request_error"))
        with pytest.raises(Exception) as run_error:
            run_program(rewritten(_program(stand_in)), [openai_error(401, f"bad key {KEY}")], stand_in,
                        ["Weather?"])
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(captured)
            lg.setLevel(level)
    assert stand_in.requests[-1].headers["authorization"] == f"Bearer {KEY}"  # the key was sent, to the server only
    assert "Incorrect API key provided: ***" in str(raised.value) and KEY not in str(raised.value)
    assert raised.value.error_type == "authentication" and not raised.value.retryable
    assert KEY not in str(run_error.value)
    out = capsys.readouterr()
    assert captured.text.getvalue() and KEY not in captured.text.getvalue()
    assert KEY not in out.out and KEY not in out.err


def test_the_run_error_event_names_the_typed_error_without_the_key(stand_in: StubServer) -> None:
    """Through our InMemoryRunner: three 429s (our retries), then the turn's error
    event says ``rate_limited`` with the key blanked, and the run raises."""
    from adk_actors.agents import LlmAgent
    from adk_actors.runners import InMemoryRunner

    async def turn() -> tuple[list[Any], BaseException | None]:
        agent = LlmAgent(name="weather", instruction="Answer.",
                         model=LiteLlm(model=MODEL, api_base=_api(stand_in), api_key=KEY))
        runner = InMemoryRunner(agent=agent, app_name="litellm_app")
        session = await runner.session_service.create_session(app_name="litellm_app", user_id="ann")
        seen: list[Any] = []
        try:
            async for event in runner.run_async(user_id="ann", session_id=session.id,
                                                new_message=Content.user("Weather?")):
                seen.append(event)
        except Exception as exc:
            return seen, exc
        return seen, None

    stand_in.add(*[openai_error(429, f"quota of {KEY} used up", retry_after="0") for _ in range(3)])
    seen, raised = asyncio.run(asyncio.wait_for(turn(), timeout=60))
    errors = [e for e in seen if e.error_code]
    assert [e.error_code for e in errors] == ["rate_limited"]
    assert "quota of *** used up" in (errors[0].error_message or "")
    assert raised is not None and KEY not in str(raised)
    assert all(KEY not in e.model_dump_json() for e in seen)
    assert len(stand_in.requests) == 3


# -- without litellm --------------------------------------------------------------------------------


def test_without_litellm_making_one_names_the_extra_and_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from adk_actors._extras import missing_extra
    from adk_actors.models import LLMRegistry, ModelError, resolve_model

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "litellm" else real(name, *a))
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'adk-actors\[litellm\]'") as raised:
        LiteLlm(model=MODEL)
    assert raised.value.name == "litellm"
    assert missing_extra(raised.value) == ("the litellm extra (litellm) is not installed: "
                                           "pip install 'adk-actors[litellm]'")
    with pytest.raises(ValueError, match=r"adk-actors\[litellm\]"):
        LLMRegistry.resolve("groq/llama-3")
    with pytest.raises(ModelError, match=r"adk-actors\[litellm\]") as unresolved:
        resolve_model("groq/llama-3")
    assert unresolved.value.error_type == "unknown_model"
    monkeypatch.undo()
    assert LLMRegistry.resolve("groq/llama-3") is LiteLlm


def test_a_provider_prefixed_name_resolves_to_litellm_and_reaches_the_provider(
        stand_in: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent's ``model="deepseek/deepseek-chat"`` (a string): LiteLlm, which reads
    litellm's variables for that provider; ``openai/...`` stays our own connector."""
    from adk_actors.models import OpenAIModel, resolve_model

    monkeypatch.setenv("DEEPSEEK_API_BASE", _api(stand_in))
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    model = resolve_model("deepseek/deepseek-chat")
    assert isinstance(model, LiteLlm) and model.model == "deepseek/deepseek-chat"
    assert isinstance(resolve_model(MODEL, env={"OPENAI_BASE_URL": _api(stand_in)}), OpenAIModel)
    stand_in.add(openai_chat("Hello from deepseek."))
    [answer] = _generate(model.connector())
    assert answer.content.text == "Hello from deepseek."
    assert stand_in.requests[0].body["model"] == "deepseek-chat"
    assert stand_in.requests[0].headers["authorization"] == f"Bearer {KEY}"


# -- in a host: a run worker's LiteLlm behind the host's breaker -----------------------------------


@pytest.fixture
def host_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    """A stand-in named to tests/lite_llm_agents.py by the environment, set before the
    actor system forks."""
    with StubServer() as stub:
        monkeypatch.setenv("LITELLM_TEST_BASE", _api(stub))
        monkeypatch.setenv("LITELLM_TEST_CREDENTIAL", KEY)
        yield stub


def test_a_litellm_agent_in_a_host_answers_and_opens_the_hosts_breaker(host_env: StubServer, actor_system: Any,
                                                                        tmp_path: Any) -> None:
    """In a run worker (its own process): LiteLlm answers; two runs that fail with
    500 after our retries open the host's breaker for the model, and the next run fails
    fast without calling the provider. The key the provider echoed is in no event, no
    stored file and no log of the host."""
    from adk_actors import RunFailedError
    from adk_actors.models import BreakerConfig
    from adk_actors.runtime import Host, HostConfig

    config = HostConfig(apps={"l": "lite_llm_agents:litellm_agent"}, data_dir=str(tmp_path / "data"),
                        breaker=BreakerConfig(consecutive_failures=2, open_seconds=60))
    seen: list[Any] = []
    with Host(config, system=actor_system) as host:
        runner = host.runner("l")

        def turn(session: str) -> Any:
            runner.create_session("ann", session)
            events: list[Any] = []
            try:
                events.extend(runner.run("ann", session, "hi"))
            except RunFailedError:
                pass
            seen.extend(events)
            return events[-1]

        host_env.add(openai_chat("fine"))
        assert turn("s0").content.text == "fine"
        host_env.add(*[openai_error(500, f"down, key {KEY}", retry_after="0") for _ in range(6)])
        first = turn("s1")
        assert first.error_code == "server_error" and "down, key ***" in first.error_message
        assert turn("s2").error_code == "server_error"
        before = len(host_env.requests)
        failed = turn("s3")
        assert failed.error_code == "circuit_open" and "openai/gpt-4o-mini" in failed.error_message
        assert len(host_env.requests) == before == 1 + 3 + 3  # three attempts per failed run, none once open
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in host_env.requests)
    assert all(KEY not in e.model_dump_json() for e in seen)
    leaked = [str(p) for p in tmp_path.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaked == []
    assert any(p.is_file() for p in (tmp_path / "logs").rglob("*"))  # the host's logs were there to look in


# -- what reaches litellm, for providers the stand-in does not speak -------------------------------


def _recorder(base: type, message: dict[str, Any]) -> Any:
    """An ``llm_client`` (google-adk's hook, ours too: a ``LiteLLMClient`` of its side)
    that keeps the arguments of each ``acompletion`` and answers with a litellm
    ModelResponse carrying ``message``."""

    class Recorder(base):  # type: ignore[misc, valid-type]
        calls: list[dict[str, Any]]

        async def acompletion(self, model: Any, messages: Any, tools: Any, **kwargs: Any) -> Any:
            import litellm
            self.calls.append({"model": model, "messages": messages, "tools": tools, **kwargs})
            return litellm.ModelResponse(model="recorded", choices=[
                {"index": 0, "finish_reason": "stop", "message": message}],
                usage={"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6})

    recorder = Recorder()
    recorder.calls = []
    return recorder


def _recorded(model: str, ours_request: LlmRequest, theirs_request: Any, message: dict[str, Any],
              **kwargs: Any) -> tuple[tuple[dict[str, Any], list[dict[str, Any]]], tuple[dict[str, Any],
                                                                                        list[dict[str, Any]]]]:
    from google.adk.models.lite_llm import LiteLlm as TheirLiteLlm
    from google.adk.models.lite_llm import LiteLLMClient as TheirClient

    from adk_actors.models.lite_llm import LiteLLMClient

    ours_request.model = theirs_request.model = model  # a request names its model (it wins over the instance's)
    sides = []
    for cls, client, request in ((TheirLiteLlm, TheirClient, theirs_request), (LiteLlm, LiteLLMClient, ours_request)):
        recorder = _recorder(client, message)
        responses = _call(cls(model=model, llm_client=recorder, **kwargs), request, stream=False)
        [sent] = recorder.calls
        sent.pop("max_retries", None)  # ours only: litellm does not retry under our retry policy
        sent.pop("timeout", None)  # ours only: every call has a deadline
        if cls is TheirLiteLlm and model.startswith(("gemini/", "vertex_ai/")):
            assert "google-adk" in sent.pop("headers")["user-agent"]  # theirs only: google-adk's own user agent
        sides.append((sent, [_row(r) for r in responses]))
    return sides[0], sides[1]


def _with_config(ours: LlmRequest, theirs: Any, **settings: Any) -> tuple[LlmRequest, Any]:
    from google.genai import types as gt
    for key, value in settings.items():
        ours.config[key] = value
        setattr(theirs.config, key, gt.ThinkingConfig(**value) if key == "thinking_config" else value)
    return ours, theirs


@pytest.mark.parametrize(("model", "thinking", "limit", "wanted"), [
    ("openai/o3-mini", {"thinking_budget": 2000}, 256, {"reasoning_effort": "medium"}),
    ("openai/o3-mini", {"thinking_budget": 0}, 256, {}),
    ("anthropic/claude-sonnet-4-5", {"thinking_budget": 3000}, 8000,
     {"thinking": {"type": "enabled", "budget_tokens": 3000}}),
    ("anthropic/claude-sonnet-4-5", {"thinking_budget": 3000}, 2000,  # under the token limit
     {"thinking": {"type": "enabled", "budget_tokens": 1999}}),
    ("anthropic/claude-sonnet-4-5", {"thinking_budget": 3000}, 256, {}),  # no room to think
    ("anthropic/claude-sonnet-4-5", {"include_thoughts": True}, 8000,
     {"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    ("gemini/gemini-2.5-flash", {"thinking_budget": 0}, 256, {"thinking": {"type": "enabled", "budget_tokens": 0}}),
    ("gemini/gemini-2.5-flash", {"include_thoughts": False}, 256, {"thinking": {"type": "disabled"}}),
    ("openai/gpt-4o-mini", {"thinking_budget": 2000}, 256, {}),  # a model that does not reason: nothing sent
])
def test_thinking_settings_reach_litellm_as_on_google_adk(model: str, thinking: dict[str, Any], limit: int,
                                                          wanted: dict[str, Any]) -> None:
    ours, theirs = _with_config(*_both_requests(), thinking_config=thinking, max_output_tokens=limit)
    message = {"role": "assistant", "content": "Sunny.", "reasoning_content": "Thinking about sun."}
    (theirs_sent, theirs_rows), (ours_sent, ours_rows) = _recorded(model, ours, theirs, message)
    assert ours_sent == theirs_sent
    assert ours_rows == theirs_rows
    assert {k: ours_sent[k] for k in ("thinking", "reasoning_effort") if k in ours_sent} == wanted
    if "thinking" in wanted and model.startswith("anthropic/"):
        assert "temperature" not in ours_sent and "top_p" not in ours_sent  # Anthropic refuses them while thinking
    thoughts = [p for p in ours_rows[-1]["parts"] if p["thought"]]
    assert thoughts == ([] if thinking.get("include_thoughts") is False else
                        [{"text": "Thinking about sun.", "thought": True, "call": None}])


@pytest.mark.parametrize("model", ["ollama_chat/llama3.1", "ollama/gemma4:e2b", "bedrock/anthropic.claude-v2",
                                   "groq/llama-3.3-70b"])
def test_provider_specific_messages_reach_litellm_as_on_google_adk(model: str) -> None:
    """ollama_chat's text content as one string, Gemma 4's ``tool_responses`` role,
    a Bedrock Claude's sampling rules: the same arguments reach litellm on both sides."""
    ours, theirs = _both_requests()
    (theirs_sent, theirs_rows), (ours_sent, ours_rows) = _recorded(
        model, ours, theirs, {"role": "assistant", "content": "ok"}, api_base="http://127.0.0.1:9")
    assert ours_sent == theirs_sent and ours_rows == theirs_rows
    roles = [m["role"] for m in ours_sent["messages"]]
    assert roles == ["system", "user", "assistant", "tool_responses" if "gemma4" in model else "tool", "user"]
    assert ours_sent["api_base"] == "http://127.0.0.1:9"


def test_tool_calls_written_into_the_text_are_read_as_calls_as_on_google_adk() -> None:
    ours, theirs = _both_requests()
    text = 'I will check. {"name": "get_weather", "arguments": {"city": "Oslo"}} Done.'
    (_, theirs_rows), (_, ours_rows) = _recorded(MODEL, ours, theirs, {"role": "assistant", "content": text})

    def without_ids(rows: list[dict[str, Any]]) -> list[Any]:  # made up at random on both sides
        return [[{**p, "call": p["call"] and p["call"][1:]} for p in r["parts"]] for r in rows]
    assert without_ids(ours_rows) == without_ids(theirs_rows)
    assert without_ids(ours_rows)[-1] == [{"text": "I will check.  Done.", "thought": False, "call": None},
                                          {"text": None, "thought": False, "call": ("get_weather", {"city": "Oslo"})}]
