"""``OpenAIResponsesLlm`` / ``AzureOpenAIResponsesLlm`` (issue 56), side by side with
google-adk 2.13's (on the openai SDK) where both can run: the same agent program on
both, against one stand-in of OpenAI's Responses API (a real HTTP server on
127.0.0.1, ``adk_actors.testing.StubServer``, answering in the Responses wire format)
named by the environment; the same request bodies and the same events. Then what
only ours is asked here: streamed tool calls, retries, typed errors and the key
kept out of errors, events and logs.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import event_rows, rewritten, run_program

from adk_actors.models import BadRequestError, RetryPolicy
from adk_actors.testing import StubResponse, StubServer, openai_error

pytest.importorskip("google.adk.integrations.openai._openai_responses_llm")  # needs the openai SDK

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning")

stand_in = harness.stand_in
KEY = "sk-test-responses-0123456789abcdef"


# -- the Responses wire format --------------------------------------------------------------------

USAGE = {"input_tokens": 31, "input_tokens_details": {"cached_tokens": 4}, "output_tokens": 9,
         "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 40}


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": arguments, "status": "completed"}


def _response(output: list[dict[str, Any]], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": status, "model": "gpt-4.1-test",
            "output": output, "usage": USAGE, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "error": None, "incomplete_details": None, **extra}


def answer(text: str | None = None, calls: list[tuple[str, str, dict[str, Any]]] = ()) -> StubResponse:  # type: ignore[assignment]
    output = ([_message(text)] if text else []) + [_call(i, n, json.dumps(a)) for i, n, a in calls]
    return StubResponse(json=_response(output))


def _sse(kind: str, **payload: Any) -> str:
    return f"event: {kind}\ndata: " + json.dumps({"type": kind, **payload})


def streamed(pieces: list[str] = (), call: tuple[str, str, list[str]] | None = None,  # type: ignore[assignment]
             completed_output: bool = True, arguments_done: bool = True, **options: Any) -> StubResponse:
    """A stream: created, the text's deltas, a call's argument deltas (and their
    ``.done`` event unless ``arguments_done`` is false), completed (with the whole
    output, or with none when ``completed_output`` is false)."""
    events = [_sse("response.created", response={**_response([], status="in_progress"), "usage": None})]
    output: list[dict[str, Any]] = []
    if pieces:
        events.append(_sse("response.output_item.added", output_index=0,
                           item={"type": "message", "id": "msg_1", "role": "assistant", "content": []}))
        events += [_sse("response.output_text.delta", output_index=0, item_id="msg_1", content_index=0, delta=p)
                   for p in pieces]
        events.append(_sse("response.output_text.done", output_index=0, item_id="msg_1", content_index=0,
                           text="".join(pieces)))
        output.append(_message("".join(pieces)))
    if call is not None:
        call_id, name, arg_pieces = call
        index = len(output)
        events.append(_sse("response.output_item.added", output_index=index,
                           item={"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
                                 "arguments": ""}))
        events += [_sse("response.function_call_arguments.delta", output_index=index, item_id=f"fc_{call_id}",
                        delta=a) for a in arg_pieces]
        if arguments_done:
            events.append(_sse("response.function_call_arguments.done", output_index=index,
                               item_id=f"fc_{call_id}", arguments="".join(arg_pieces)))
        output.append(_call(call_id, name, "".join(arg_pieces)))
    events.append(_sse("response.completed", response=_response(output if completed_output else [])))
    return StubResponse(sse=events, **options)


# -- the program, on both sides ---------------------------------------------------------------------

PROGRAM = '''
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.integrations.openai import OpenAIResponsesLlm
from google.adk.runners import InMemoryRunner
from google.genai import types


def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}


agent = LlmAgent(name="weather", instruction="Use get_weather to answer.", tools=[get_weather],
                 model=MODEL, generate_content_config=CONFIG)


async def main(turns, streaming=False):
    runner = InMemoryRunner(agent=agent, app_name="responses_app")
    session = await runner.session_service.create_session(app_name="responses_app", user_id="ann")
    config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        try:
            async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message,
                                                run_config=config):
                seen.append(event)
        except Exception as error:  # the run's error, after its error event
            seen.append(error)
    await runner.close()
    return seen
'''


def program(model: str = 'OpenAIResponsesLlm(model="gpt-4.1")', config: str = "None") -> str:
    source = PROGRAM.replace("MODEL", model).replace("CONFIG", config)
    if "OpenAIGenerateContentConfig" in config:
        source = source.replace("import OpenAIResponsesLlm", "import OpenAIGenerateContentConfig, OpenAIResponsesLlm")
    if "Azure" in model:
        source = source.replace("import OpenAIResponsesLlm", "import AzureOpenAIResponsesLlm")
    return source


@pytest.fixture
def server(stand_in: StubServer, monkeypatch: pytest.MonkeyPatch) -> StubServer:
    """The stand-in, named to both sides by the openai SDK's own variables."""
    for name in ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", stand_in.url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")
    return stand_in


def rows(server: StubServer) -> list[dict[str, Any]]:
    """Each request: path, key, and its body (the instruction up to google-adk's identity
    sentence; tool schemas without pydantic's titles)."""
    found = []
    for request in server.requests:
        body = dict(request.body)
        if "instructions" in body:
            body["instructions"] = body["instructions"].split("\n\nYou are ")[0]
        body["tools"] = [{**t, "parameters": harness._schema(t["parameters"])} for t in body.get("tools", [])]
        found.append({"path": request.path, "auth": request.headers.get("authorization"),
                      "trace": request.headers.get("x-trace"), **body})
    return found


def both(source: str, answers: Any, server: StubServer, *args: Any) -> tuple[Any, Any, Any, Any]:
    """Run ``source`` on google-adk, then ours, on the same script: (their events, their
    requests, our events, our requests); each side uses its whole script."""
    _, theirs = run_program(source, answers(), server, *args)
    theirs_rows = rows(server)
    assert not server.responses
    _, ours = run_program(rewritten(source), answers(), server, *args)
    assert not server.responses
    return theirs, theirs_rows, ours, rows(server)


def test_a_tool_round_trip_sends_and_reads_what_google_adks_does(server: StubServer) -> None:
    """Turn one: a function call, its output in the next request with the same
    ``call_id``, the answer; the same bodies and events as google-adk's, usage read."""
    def answers() -> list[StubResponse]:
        return [answer(calls=[("call_7", "get_weather", {"city": "Paris"})]), answer("Sunny in Paris."),
                answer("Bye.")]
    theirs, theirs_rows, ours, ours_rows = both(program(), answers, server, ["Weather in Paris?", "Thanks"])
    assert event_rows(ours) == event_rows(theirs)
    assert ours_rows == theirs_rows
    first, second = ours_rows[0], ours_rows[1]
    assert first["path"] == "/responses" and first["auth"] == f"Bearer {KEY}" and first["stream"] is False
    assert first["instructions"] == "Use get_weather to answer."
    assert first["input"] == [{"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": "Weather in Paris?"}]}]
    assert first["tools"][0]["type"] == "function" and first["tools"][0]["name"] == "get_weather"
    assert second["input"][1:] == [
        {"type": "function_call", "call_id": "call_7", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "call_7",
         "output": '{"city": "Paris", "report": "Sunny, 21 degrees."}'}]
    assert [e["text"] for e in event_rows(ours) if e["final"]] == ["Sunny in Paris.", "Bye."]
    final = next(e for e in ours if e.content and e.content.parts and e.content.parts[0].text == "Sunny in Paris.")
    theirs_final = next(e for e in theirs if e.is_final_response())
    assert final.usage_metadata.prompt_token_count == theirs_final.usage_metadata.prompt_token_count == 31
    assert (final.usage_metadata.candidates_token_count, final.usage_metadata.total_token_count,
            final.usage_metadata.cached_content_token_count, final.usage_metadata.thoughts_token_count) == (9, 40, 4, 2)


def test_a_streamed_turn_gives_google_adks_partial_events(server: StubServer) -> None:
    """Text deltas as partial text events; a call's start and each argument delta as
    partial call events (the call made from the final one); then the answer."""
    def answers() -> list[StubResponse]:
        return [streamed(["Let me ", "look."], call=("call_9", "get_weather", ['{"ci', 'ty": "Par', 'is"}'])),
                streamed(["It is ", "sunny ", "in Paris."])]
    theirs, theirs_rows, ours, ours_rows = both(program(), answers, server, ["Weather in Paris?"], True)
    assert event_rows(ours) == event_rows(theirs)
    assert ours_rows == theirs_rows and ours_rows[0]["stream"] is True
    assert [(e["text"], e["calls"], e["partial"]) for e in event_rows(ours) if not e["responses"]] == [
        ("Let me ", [], True), ("look.", [], True),
        *[("", [("call-0", "get_weather", {})], True)] * 4,
        ("Let me look.", [("call-0", "get_weather", {"city": "Paris"})], False),
        ("It is ", [], True), ("sunny ", [], True), ("in Paris.", [], True), ("It is sunny in Paris.", [], False)]
    assert ours_rows[1]["input"][-1]["type"] == "function_call_output"
    assert ours[-1].usage_metadata.total_token_count == 40


def test_effort_and_sampling_reach_the_body_as_google_adks(server: StubServer) -> None:
    """``OpenAIGenerateContentConfig(effort=...)`` is ``reasoning`` (with a concise
    summary); a reasoning model's non-default temperature is dropped; stop sequences,
    max output tokens and the function-calling mode as google-adk sends them."""
    config = ('OpenAIGenerateContentConfig(effort="high", temperature=0.3, max_output_tokens=200, '
              'stop_sequences=["END"])')
    for model in ('OpenAIResponsesLlm(model="o3-mini", store=False, parallel_tool_calls=False)',
                  'OpenAIResponsesLlm(model="gpt-4.1")'):
        _, theirs_rows, _, ours_rows = both(program(model, config), lambda: [answer("Sunny.")], server,
                                            ["Weather?"])
        assert ours_rows == theirs_rows
        assert ours_rows[0]["reasoning"] == {"effort": "high", "summary": "concise"}
        assert ours_rows[0]["stop"] == ["END"] and ours_rows[0]["max_output_tokens"] == 200
    assert "temperature" in ours_rows[0]  # kept for gpt-4.1, dropped for o3-mini (compared above)


def test_extra_request_args_reach_the_call_as_google_adks(server: StubServer) -> None:
    """Body fields over the computed ones, ``extra_body`` merged, and the openai SDK's
    call options (headers, query parameters) on the request."""
    model = ('OpenAIResponsesLlm(model="gpt-4.1", truncation="auto", extra_request_args={"user": "ann", '
             '"max_output_tokens": 50, "extra_body": {"metadata": {"team": "a"}}, "extra_headers": {"X-Trace": "t1"}, '
             '"extra_query": {"api-version": "preview"}})')
    config = 'types.GenerateContentConfig(max_output_tokens=10, stop_sequences=["END"])'
    _, theirs_rows, _, ours_rows = both(program(model, config), lambda: [answer("Sunny.")], server, ["Weather?"])
    assert ours_rows == theirs_rows
    first = ours_rows[0]
    assert (first["path"], first["trace"]) == ("/responses?api-version=preview", "t1")
    assert (first["user"], first["max_output_tokens"], first["truncation"]) == ("ann", 50, "auto")
    assert (first["metadata"], first["stop"]) == ({"team": "a"}, ["END"])


FORCE_TOOL = """

def force_tool(callback_context, llm_request):
    mode = "ANY" if not llm_request.contents[-1].parts[0].function_response else "NONE"
    llm_request.config.tool_config = types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode=mode))


agent.before_model_callback = force_tool
"""


def test_the_function_calling_mode_is_tool_choice_as_google_adks(server: StubServer) -> None:
    def answers() -> list[StubResponse]:
        return [answer(calls=[("call_1", "get_weather", {"city": "Oslo"})]), answer("Cold.")]
    _, theirs_rows, _, ours_rows = both(program() + FORCE_TOOL, answers, server, ["Weather in Oslo?"])
    assert ours_rows == theirs_rows
    assert [r["tool_choice"] for r in ours_rows] == ["required", "none"]


def test_azure_goes_to_the_v1_path_with_azures_key_as_google_adks(server: StubServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-0123456789")
    model = f'AzureOpenAIResponsesLlm(model="my-deployment", azure_endpoint="{server.url}/")'
    _, theirs_rows, _, ours_rows = both(program(model), lambda: [answer("Sunny.")], server, ["Weather?"])
    assert ours_rows == theirs_rows
    assert ours_rows[0]["path"] == "/openai/v1/responses" and ours_rows[0]["model"] == "my-deployment"
    assert ours_rows[0]["auth"] == "Bearer azure-key-0123456789"


# -- ours only -----------------------------------------------------------------------------------------


def _ask(server: StubServer, *answers: StubResponse, stream: bool = False, **fields: Any) -> Any:
    """The responses of one call of ``OpenAIResponsesLlm`` at the stand-in (no waits
    between retries); the connector too."""
    from adk_actors.integrations.openai import OpenAIResponsesLlm
    from adk_actors.models import LlmRequest
    from adk_actors.types import Content

    with server._lock:
        server.requests.clear()
        server.responses.clear()
    server.add(*answers)
    llm = OpenAIResponsesLlm(model="gpt-4.1", base_url=server.url, **{"api_key": KEY, **fields})
    connector = llm.connector()
    connector.retry = RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0)

    async def call() -> list[Any]:
        request = LlmRequest(model="gpt-4.1", contents=[Content.user("Weather?")])
        return [r async for r in connector.generate(request, stream=stream)]
    return asyncio.run(asyncio.wait_for(call(), timeout=30)), connector


def test_a_streamed_tool_call_joins_its_argument_deltas(server: StubServer) -> None:
    # the call from completed's output; else from the .done event; else the deltas joined
    for completed_output, arguments_done in ((True, True), (False, True), (False, False)):
        answer = streamed(["Let me look."], call=("call_9", "get_weather", ['{"ci', 'ty": "Par', 'is"}']),
                          completed_output=completed_output, arguments_done=arguments_done)
        found, _ = _ask(server, answer, stream=True)
        *partials, final = found
        assert all(p.partial for p in partials) and partials[0].content.text == "Let me look."
        assert {(c.id, c.name, tuple(c.args)) for p in partials[1:] for c in p.content.function_calls} == \
            {("call_9", "get_weather", ())}
        assert final.content.text == "Let me look." and not final.partial
        assert [(c.id, c.name, c.args) for c in final.content.function_calls] == \
            [("call_9", "get_weather", {"city": "Paris"})]
        assert final.usage_metadata.prompt_token_count == 31 and final.finish_reason == "STOP"


def test_a_429_and_a_500_are_retried_and_a_400_is_a_typed_error_without_the_key(
        server: StubServer, caplog: pytest.LogCaptureFixture) -> None:
    found, connector = _ask(server, openai_error(429, "slow down", "rate_limit_exceeded"),
                            openai_error(500, "oops"), answer("Sunny."))
    assert [r.content.text for r in found] == ["Sunny."] and len(server.requests) == 3
    assert len(connector.slept) == 2
    caplog.set_level(logging.DEBUG)
    with pytest.raises(BadRequestError) as raised:
        _ask(server, openai_error(400, f"Incorrect API key provided: {KEY}", "invalid_request_error"),
             answer("never sent"))
    assert raised.value.status == 400 and len(server.requests) == 1  # not retried
    assert "Incorrect API key provided" in str(raised.value)
    assert KEY not in str(raised.value) and KEY not in repr(connector) and KEY not in caplog.text


def test_a_stream_that_fails_or_ends_early_is_an_error(server: StubServer) -> None:
    from adk_actors.models import RateLimited, StreamInterrupted

    failed = StubResponse(sse=[_sse("response.created", response=_response([], status="in_progress")),
                               _sse("response.failed", response=_response([], status="failed", error={
                                   "code": "rate_limit_exceeded", "message": "too many"}))])
    with pytest.raises(RateLimited, match="too many"):
        _ask(server, failed, failed, failed, stream=True)
    assert len(server.requests) == 3  # retried: nothing had been sent on
    cut = streamed(["Sunny"])
    assert cut.sse is not None
    cut.sse = cut.sse[:-1]  # no response.completed
    with pytest.raises(StreamInterrupted, match=r"without response\.completed"):
        _ask(server, cut, stream=True)


def test_a_key_in_an_error_never_reaches_the_events(server: StubServer) -> None:
    _, events = run_program(rewritten(program()), [openai_error(400, f"bad key {KEY}", "invalid_request_error")],
                            server, ["Weather?"])
    *events, raised = events
    errors = [e for e in events if e.error_code]
    assert errors and errors[-1].error_code == "bad_request" and "bad key" in errors[-1].error_message
    assert all(KEY not in e.model_dump_json() for e in events)
    assert isinstance(raised, Exception) and KEY not in str(raised)


def test_the_names_fields_and_defaults_are_google_adks() -> None:
    import google.adk.integrations.openai as theirs

    import adk_actors.integrations.openai as ours
    from adk_actors.models import OpenAILlm

    assert sorted(ours.__all__) == sorted(theirs.__all__)
    assert ours.OpenAILlm is OpenAILlm
    for name in ("OpenAIResponsesLlm", "AzureOpenAIResponsesLlm"):
        mine, reference = getattr(ours, name), getattr(theirs, name)
        assert set(mine.model_fields) == set(reference.model_fields)
        assert {f: mine.model_fields[f].get_default(call_default_factory=True) for f in mine.model_fields} == \
            {f: reference.model_fields[f].get_default(call_default_factory=True) for f in reference.model_fields}
        assert mine.supported_models() == reference.supported_models() == []
    assert ours.OpenAIGenerateContentConfig(effort="max").effort == "max"
    with pytest.raises(ValueError, match="effort"):
        ours.OpenAIGenerateContentConfig.model_validate({"thinking_config": {"thinking_budget": 100}})


def test_on_openais_host_an_effort_the_model_does_not_take_is_refused_before_sending(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.integrations.openai._openai_common import supported_efforts as theirs

    from adk_actors.integrations.openai import OpenAIGenerateContentConfig, OpenAIResponsesLlm
    from adk_actors.models import LlmRequest
    from adk_actors.models._openai_responses_llm import supported_efforts
    from adk_actors.types import Content, generate_config_of

    for model in ("gpt-4o", "o1-mini", "o3-mini", "gpt-5", "gpt-5-mini", "gpt-5.1", "gpt-5.5", "gpt-6-astra",
                  "gpt-5-chat-latest", "openai/o4-mini"):
        for api in ("chat", "responses"):
            assert supported_efforts(model, api) == theirs(model, api), (model, api)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    config = generate_config_of(OpenAIGenerateContentConfig(effort="minimal"))
    request = LlmRequest(contents=[Content.user("hi")], config=config)
    with pytest.raises(ValueError, match="not supported by model 'o3-mini'"):
        OpenAIResponsesLlm(model="o3-mini").request_body(request, False)
    assert OpenAIResponsesLlm(model="gpt-5").request_body(request, False)["reasoning"]["effort"] == "minimal"
    # another endpoint: passed on as given
    on_proxy = OpenAIResponsesLlm(model="o3-mini", base_url="http://127.0.0.1:9", reasoning={"summary": "detailed"})
    assert on_proxy.request_body(request, False)["reasoning"] == {"summary": "detailed", "effort": "minimal"}


def test_a_missing_key_and_an_sdk_client_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from adk_actors.integrations.openai import AzureOpenAIResponsesLlm, OpenAIResponsesLlm
    from adk_actors.models import AuthenticationError, ModelError

    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        OpenAIResponsesLlm().connector()
    with pytest.raises(AuthenticationError, match="AZURE_OPENAI_API_KEY"):
        AzureOpenAIResponsesLlm(azure_endpoint="https://x.openai.azure.com").connector()
    with pytest.raises(ModelError, match="client") as raised:
        OpenAIResponsesLlm(api_key=KEY, client=object()).connector()
    assert raised.value.error_type == "unsupported"


def test_each_kind_of_part_becomes_google_adks_input_items() -> None:
    """Media (inline and by URI), thoughts (not sent), model texts, code, calls and
    results with ids the API refuses (replaced alike in the call and its result): the
    same items as google-adk's mapping gives for the same contents."""
    from google.adk.integrations.openai._openai_responses_llm import (
        _CallIdSanitizer,
        _content_to_response_input_items,
    )
    from google.genai import types as g

    from adk_actors.models._openai_responses import CallIds, input_items
    from adk_actors.types import Content

    contents = [
        g.Content(role="user", parts=[
            g.Part(text="look"), g.Part.from_bytes(data=b"\x89PNG", mime_type="image/png"),
            g.Part.from_bytes(data=b"%PDF", mime_type="application/pdf"),
            g.Part.from_uri(file_uri="https://x.test/y.png", mime_type="image/png"),
            g.Part.from_uri(file_uri="file-abc", mime_type="application/pdf"),
            g.Part.from_uri(file_uri="https://x.test/doc.pdf", mime_type="application/pdf")]),
        g.Content(role="model", parts=[
            g.Part(text="thinking", thought=True), g.Part(text="a"), g.Part(text="b"),
            g.Part(function_call=g.FunctionCall(id="bad id!", name="f", args={"x": 1})),
            g.Part(function_call=g.FunctionCall(id="adk-123e4567-e89b", name="g", args={})),
            g.Part(executable_code=g.ExecutableCode(code="print(1)", language=g.Language.PYTHON))]),
        g.Content(role="user", parts=[
            g.Part(function_response=g.FunctionResponse(id="bad id!", name="f", response={"result": {"a": 1}})),
            g.Part(function_response=g.FunctionResponse(id="adk-123e4567-e89b", name="g", response={
                "content": [{"type": "text", "text": "one"}, {"type": "image"}]})),
            g.Part(code_execution_result=g.CodeExecutionResult(outcome=g.Outcome.OUTCOME_OK, output="1"))]),
    ]
    sanitizer, ids = _CallIdSanitizer(), CallIds()
    theirs = [item for c in contents for item in _content_to_response_input_items(c, sanitizer)]
    ours = [item for c in contents for item in input_items(Content.model_validate(c.model_dump(exclude_none=True)),
                                                            ids)]
    assert ours == theirs
    calls = [i for i in ours if i["type"] in ("function_call", "function_call_output")]
    assert [i["call_id"] for i in calls] == ["call_adk_fallback_0", "adk-123e4567-e89b"] * 2
    assert not any("thinking" in json.dumps(i) for i in ours)


def test_reasoning_a_refusal_and_an_incomplete_answer_read_as_google_adks() -> None:
    from google.adk.integrations.openai._openai_responses_llm import _response_to_llm_response

    from adk_actors.models._openai_responses import response_of

    data = _response([
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hmm"}],
         "encrypted_content": "enc"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"},
                                                             {"type": "refusal", "refusal": "no"}]},
        _call("c1", "f", '{"a": 1}')], status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    theirs, ours = _response_to_llm_response(data), response_of(data)
    assert theirs.content is not None and ours.content is not None
    assert [p.model_dump(exclude_none=True) for p in ours.content.parts] == \
        [p.model_dump(exclude_none=True) for p in theirs.content.parts or []]
    assert ours.content.parts[2].text == "OpenAI refusal: no" and ours.content.parts[0].thought
    assert ours.finish_reason == "MAX_TOKENS" == str(getattr(theirs.finish_reason, "value", ""))
    assert ours.usage_metadata is not None and theirs.usage_metadata is not None
    assert ours.usage_metadata.model_dump(exclude_none=True) == theirs.usage_metadata.model_dump(exclude_none=True)


STRUCTURED = '''
from pydantic import BaseModel
from google.adk.agents import LlmAgent
from google.adk.integrations.openai import OpenAIResponsesLlm
from google.adk.runners import InMemoryRunner
from google.genai import types


class Report(BaseModel):
    city: str
    degrees: int


agent = LlmAgent(name="reporter", instruction="Report the weather.", output_schema=Report, output_key="report",
                 model=OpenAIResponsesLlm(model="gpt-4.1"))


async def main(text):
    runner = InMemoryRunner(agent=agent, app_name="structured_app")
    session = await runner.session_service.create_session(app_name="structured_app", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    seen = [event async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message)]
    await runner.close()
    return seen
'''


def test_an_output_schema_is_a_strict_json_schema_format_as_google_adks(server: StubServer) -> None:
    _, theirs_rows, ours, ours_rows = both(STRUCTURED, lambda: [answer('{"city": "Paris", "degrees": 21}')],
                                           server, "Weather in Paris?")
    assert ours_rows == theirs_rows
    text = ours_rows[0]["text"]["format"]
    assert (text["type"], text["name"], text["strict"]) == ("json_schema", "Report", True)
    assert text["schema"]["additionalProperties"] is False and text["schema"]["required"] == ["city", "degrees"]
    assert ours[-1].content.text == '{"city": "Paris", "degrees": 21}'


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_key_function_is_called_for_each_call_and_never_shown(server: StubServer, asynchronous: bool) -> None:
    keys = iter(["sk-first-key-0123456789", "sk-second-key-0123456789"])

    async def async_key() -> str:
        return next(keys)
    provider: Any = async_key if asynchronous else (lambda: next(keys))
    found, connector = _ask(server, answer("one"), api_key=provider)
    assert found[0].content.text == "one"
    assert server.requests[-1].headers["authorization"] == "Bearer sk-first-key-0123456789"
    assert "sk-first-key" not in repr(connector)
    server.add(openai_error(400, "key sk-second-key-0123456789 refused", "invalid_request_error"))
    with pytest.raises(BadRequestError) as raised:
        asyncio.run(asyncio.wait_for(_drain(connector), timeout=30))
    assert server.requests[-1].headers["authorization"] == "Bearer sk-second-key-0123456789"
    assert "sk-second-key" not in str(raised.value)


async def _drain(connector: Any) -> list[Any]:
    from adk_actors.models import LlmRequest
    from adk_actors.types import Content

    return [r async for r in connector.generate(LlmRequest(contents=[Content.user("again")]))]


def test_the_engine_puts_the_connector_behind_a_breaker_that_opens(server: StubServer) -> None:
    """The engine guards an HTTP connector with a breaker (``one_model``): after the
    failures it counts, the next call is refused without reaching the provider."""
    from adk_actors.models import (
        BreakerConfig,
        BreakerModel,
        CircuitBreaker,
        CircuitOpen,
        HttpModel,
        ServerError,
    )

    _, connector = _ask(server, answer("warm"))
    assert isinstance(connector, HttpModel)
    connector.retry = RetryPolicy(max_attempts=1)
    guarded = BreakerModel(connector, CircuitBreaker("gpt-4.1", BreakerConfig(consecutive_failures=2)))
    server.add(openai_error(500, "down"), openai_error(500, "down"))
    for _ in range(2):
        with pytest.raises(ServerError):
            asyncio.run(asyncio.wait_for(_drain(guarded), timeout=30))
    before = len(server.requests)
    with pytest.raises(CircuitOpen):
        asyncio.run(asyncio.wait_for(_drain(guarded), timeout=30))
    assert len(server.requests) == before
