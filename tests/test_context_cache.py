"""Context caching (issue 56): ``ContextCacheConfig`` on Gemini's cachedContents API and
on Claude's ``cache_control`` breakpoints, side by side with google-adk 2.13's model
classes on the same loopback stand-in (``adk_actors.testing.StubServer``).

Each side makes the same three calls of one conversation, feeding each call the cache
metadata the previous one returned and a prompt-token count, as google-adk's flow does:
the first call caches nothing (no token count yet), the second makes the cache
(``POST .../cachedContents``) and, like the third, names it in ``cachedContent`` with
the cached prefix dropped. The request bodies are compared; the cache hit shows in the
response's usage (``cachedContentTokenCount``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from adk_actors._cache_types import CacheMetadata, ContextCacheConfig
from adk_actors._types import Content, FunctionDeclaration, LlmRequest, LlmResponse, Part
from adk_actors.models._anthropic import AnthropicModel
from adk_actors.models._gemini import GeminiModel
from adk_actors.testing import (
    RecordedRequest,
    StubResponse,
    StubServer,
    anthropic_message,
    gemini_cached_content,
    gemini_response,
)

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning")

SYSTEM = "You are a careful assistant. " * 400  # well above Gemini 2.5's 2048-token floor (estimated)
TOOL: dict[str, Any] = {"name": "get_weather", "description": "Weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
TURNS = [("user", "Hello"), ("model", "Hi, how can I help?"), ("user", "Weather in Paris?"),
         ("model", "Sunny."), ("user", "And in Rome?")]


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def _ours(turns: int, metadata: CacheMetadata | None, tokens: int | None,
          config: ContextCacheConfig) -> LlmRequest:
    return LlmRequest(model="gemini-2.5-flash", system_instruction=SYSTEM,
                      contents=[Content(role=r, parts=(Part(text=t),)) for r, t in TURNS[:turns]],
                      tools=[FunctionDeclaration(**TOOL)], cache_config=config, cache_metadata=metadata,
                      cacheable_contents_token_count=tokens)


def _theirs(turns: int, metadata: Any, tokens: int | None, config: Any) -> Any:
    from google.adk.models.llm_request import LlmRequest as AdkRequest
    from google.genai import types
    request = AdkRequest(model="gemini-2.5-flash",
                         contents=[types.Content(role=r, parts=[types.Part(text=t)]) for r, t in TURNS[:turns]],
                         config=types.GenerateContentConfig(
                             system_instruction=SYSTEM,
                             tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                                 name=TOOL["name"], description=TOOL["description"],
                                 parameters_json_schema=TOOL["parameters"])])]))
    request.cache_config = config
    request.cache_metadata = metadata
    request.cacheable_contents_token_count = tokens
    return request


def _script(stub: StubServer) -> None:
    stub.add(gemini_response("one", prompt_tokens=3000),
             gemini_cached_content("cachedContents/abc123"),
             gemini_response("two", prompt_tokens=3100),
             gemini_response("three", prompt_tokens=3200, cached_tokens=2900))


async def _run_ours(stub: StubServer) -> list[LlmResponse]:
    model = GeminiModel("gemini-2.5-flash", base_url=stub.url, api_key="test-key")
    config = ContextCacheConfig()
    out: list[LlmResponse] = []
    metadata, tokens = None, None
    for turns in (1, 3, 5):
        if metadata is not None and metadata.cache_name is not None:  # another invocation: one more use
            metadata = metadata.model_copy(update={"invocations_used": (metadata.invocations_used or 0) + 1})
        answer = [r async for r in model.generate(_ours(turns, metadata, tokens, config))][-1]
        out.append(answer)
        metadata = answer.cache_metadata
        tokens = answer.usage_metadata.prompt_token_count if answer.usage_metadata else None
    return out


async def _run_theirs(stub: StubServer) -> list[Any]:
    from google.adk.agents.context_cache_config import ContextCacheConfig as AdkConfig
    from google.adk.models.google_llm import Gemini
    model = Gemini(model="gemini-2.5-flash", base_url=stub.url)
    config = AdkConfig()
    out: list[Any] = []
    metadata, tokens = None, None
    for turns in (1, 3, 5):
        if metadata is not None and metadata.cache_name is not None:
            metadata = metadata.model_copy(update={"invocations_used": metadata.invocations_used + 1})
        answer = [r async for r in model.generate_content_async(_theirs(turns, metadata, tokens, config))][-1]
        out.append(answer)
        metadata = answer.cache_metadata
        tokens = answer.usage_metadata.prompt_token_count
    return out


def _shape(request: RecordedRequest) -> dict[str, Any]:
    """What the comparison covers: the verb and path, and the body without the
    creation stamp in ``displayName``, with the tool's schema key as each side sends it."""
    body = dict(request.body or {})
    if "displayName" in body:
        assert str(body.pop("displayName")).startswith("adk-cache-")
    for tool in body.get("tools") or []:
        for declaration in tool.get("functionDeclarations") or []:
            # google-genai sends the schema as parametersJsonSchema (parameters_json_schema,
            # unconverted, in a create request); ours as parameters: the same schema
            schema = declaration.pop("parametersJsonSchema", None) or declaration.pop("parameters_json_schema", None)
            declaration["parameters"] = schema or declaration.get("parameters")
    for key in ("systemInstruction",):
        if key in body:
            body[key] = {"parts": body[key]["parts"]}  # google-genai adds role "user" to it
    return {"method": request.method, "path": request.path.split("?")[0], "body": body}


def test_gemini_makes_then_uses_a_cached_content_as_google_adk_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    with StubServer() as ours_stub:
        _script(ours_stub)
        ours = asyncio.run(_run_ours(ours_stub))
    with StubServer() as theirs_stub:
        _script(theirs_stub)
        theirs = asyncio.run(_run_theirs(theirs_stub))

    ours_requests = [_shape(r) for r in ours_stub.requests]
    theirs_requests = [_shape(r) for r in theirs_stub.requests]
    assert [r["path"] for r in ours_requests] == [r["path"] for r in theirs_requests] == [
        "/v1beta/models/gemini-2.5-flash:generateContent", "/v1beta/cachedContents",
        "/v1beta/models/gemini-2.5-flash:generateContent", "/v1beta/models/gemini-2.5-flash:generateContent"]
    # the create request: model, the first two contents, system instruction, tools, ttl
    create = ours_requests[1]["body"]
    assert create["model"] == "models/gemini-2.5-flash" and create["ttl"] == "1800s"
    assert [c["parts"][0]["text"] for c in create["contents"]] == ["Hello", "Hi, how can I help?"]
    assert create == theirs_requests[1]["body"]
    # the first call sends everything; the second and third name the cache and drop
    # what it holds (system instruction, tools, the first two contents)
    assert "cachedContent" not in ours_requests[0]["body"] and "systemInstruction" in ours_requests[0]["body"]
    second = ours_requests[2]["body"]
    assert second["cachedContent"] == "cachedContents/abc123"
    assert [c["parts"][0]["text"] for c in second["contents"]] == ["Weather in Paris?"]
    third = ours_requests[3]["body"]
    assert third["cachedContent"] == "cachedContents/abc123"
    assert "systemInstruction" not in third and "tools" not in third
    assert [c["parts"][0]["text"] for c in third["contents"]] == ["Weather in Paris?", "Sunny.", "And in Rome?"]
    for mine, google in zip(ours_requests, theirs_requests, strict=True):
        assert mine["body"].get("cachedContent") == google["body"].get("cachedContent")
        assert mine["body"].get("contents") == google["body"].get("contents")
        assert ("systemInstruction" in mine["body"]) == ("systemInstruction" in google["body"])
    # the metadata each call carries, and the hit in the usage
    for mine, google in zip(ours, theirs, strict=True):
        assert (mine.cache_metadata.cache_name, mine.cache_metadata.contents_count,
                mine.cache_metadata.invocations_used) == (google.cache_metadata.cache_name,
                                                          google.cache_metadata.contents_count,
                                                          google.cache_metadata.invocations_used)
    assert ours[2].usage_metadata is not None and ours[2].usage_metadata.cached_content_token_count == 2900
    assert ours[2].usage_metadata.cached_content_token_count == theirs[2].usage_metadata.cached_content_token_count


def _once(stub: StubServer, metadata: CacheMetadata | None, tokens: int | None = 3000,
          config: ContextCacheConfig | None = None) -> LlmResponse:
    model = GeminiModel("gemini-2.5-flash", base_url=stub.url, api_key="test-key")
    request = _ours(5, metadata, tokens, config or ContextCacheConfig())

    async def call() -> LlmResponse:
        return [r async for r in model.generate(request)][-1]
    return asyncio.run(call())


def _fingerprint_of_first_call(stub: StubServer) -> CacheMetadata:
    stub.add(gemini_response("one"))
    first = _once(stub, None, None)
    assert first.cache_metadata is not None and first.cache_metadata.cache_name is None
    return first.cache_metadata


@pytest.mark.parametrize("change", ["used up", "expired"])
def test_a_used_up_or_expired_cache_is_deleted_and_made_anew(stub: StubServer, change: str) -> None:
    """Past ``cache_intervals`` invocations, or past its expiry, the cache is deleted
    (``DELETE /v1beta/cachedContents/...``) and a new one made and named."""
    first = _fingerprint_of_first_call(stub)
    stub.add(gemini_cached_content("cachedContents/first"), gemini_response("two"))
    made = _once(stub, first)
    assert made.cache_metadata is not None and made.cache_metadata.cache_name == "cachedContents/first"
    update: dict[str, Any] = ({"invocations_used": 3} if change == "used up" else {"expire_time": 1.0})
    stale = made.cache_metadata.model_copy(update=update)
    stub.requests.clear()
    stub.add(gemini_cached_content("cachedContents/second"), gemini_response("three"))
    again = _once(stub, stale, config=ContextCacheConfig(cache_intervals=2))
    assert [(r.method, r.path.split("?")[0]) for r in stub.requests] == [
        ("DELETE", "/v1beta/cachedContents/first"), ("POST", "/v1beta/cachedContents"),
        ("POST", "/v1beta/models/gemini-2.5-flash:generateContent")]
    assert stub.requests[2].body["cachedContent"] == "cachedContents/second"
    assert again.cache_metadata is not None and again.cache_metadata.invocations_used == 1


def test_a_cache_within_its_intervals_is_reused_without_a_create(stub: StubServer) -> None:
    first = _fingerprint_of_first_call(stub)
    stub.add(gemini_cached_content("cachedContents/first"), gemini_response("two"))
    made = _once(stub, first)
    assert made.cache_metadata is not None
    stub.requests.clear()
    stub.add(gemini_response("three", cached_tokens=2500))
    reused = _once(stub, made.cache_metadata.model_copy(update={"invocations_used": 2}))
    assert [r.path.split("?")[0] for r in stub.requests] == ["/v1beta/models/gemini-2.5-flash:generateContent"]
    assert stub.requests[0].body["cachedContent"] == "cachedContents/first"
    assert reused.usage_metadata is not None and reused.usage_metadata.cached_content_token_count == 2500


def test_no_cache_below_min_tokens_or_gemini_floor_and_a_failed_create_goes_on_uncached(stub: StubServer) -> None:
    first = _fingerprint_of_first_call(stub)
    stub.requests.clear()
    stub.add(gemini_response("small"))
    small = _once(stub, first, tokens=500, config=ContextCacheConfig(min_tokens=1000))
    assert [r.path.split("?")[0] for r in stub.requests] == ["/v1beta/models/gemini-2.5-flash:generateContent"]
    assert small.cache_metadata is not None and small.cache_metadata.cache_name is None
    stub.requests.clear()
    stub.add(gemini_response("under the floor"))
    _once(stub, first, tokens=1000)  # 1000 < 2048, Gemini 2.5's minimum
    assert [r.path.split("?")[0] for r in stub.requests] == ["/v1beta/models/gemini-2.5-flash:generateContent"]
    stub.requests.clear()
    stub.add(StubResponse(status=500, json={"error": {"code": 500, "message": "boom", "status": "INTERNAL"}}),
             gemini_response("uncached"))
    answer = _once(stub, first)
    assert answer.content is not None and answer.content.parts[0].text == "uncached"
    assert "systemInstruction" in stub.requests[-1].body and "cachedContent" not in stub.requests[-1].body


def _claude_request(config: ContextCacheConfig | None) -> LlmRequest:
    return LlmRequest(model="claude-sonnet-4-5", system_instruction="Be brief.",
                      contents=[Content(role=r, parts=(Part(text=t),)) for r, t in TURNS[:3]],
                      tools=[FunctionDeclaration(**TOOL)], cache_config=config)


def _marks(body: dict[str, Any]) -> dict[str, Any]:
    """Where a Messages body carries cache_control: on the last tool, the system
    blocks, and each message's blocks."""
    system = body.get("system")
    return {"tool": [t.get("cache_control") for t in body.get("tools") or []],
            "system": [b.get("cache_control") for b in system] if isinstance(system, list) else system is not None,
            "messages": [[b.get("cache_control") for b in m["content"]] if isinstance(m["content"], list) else None
                         for m in body["messages"]]}


@pytest.mark.parametrize("ttl", [1800, 3600])
def test_claude_gets_cache_control_breakpoints_where_google_adks_anthropic_llm_puts_them(
        stub: StubServer, monkeypatch: pytest.MonkeyPatch, ttl: int) -> None:
    from google.adk.agents.context_cache_config import ContextCacheConfig as AdkConfig
    from google.adk.models.anthropic_llm import AnthropicLlm
    from google.adk.models.llm_request import LlmRequest as AdkRequest
    from google.genai import types
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    stub.add(anthropic_message("ours", cache_read=900, cache_creation=100),
             anthropic_message("theirs", cache_read=900, cache_creation=100))
    model = AnthropicModel("claude-sonnet-4-5", base_url=stub.url, api_key="test-key")

    async def ours() -> LlmResponse:
        return [r async for r in model.generate(_claude_request(ContextCacheConfig(ttl_seconds=ttl)))][-1]

    async def theirs() -> Any:
        request = AdkRequest(model="claude-sonnet-4-5",
                             contents=[types.Content(role=r, parts=[types.Part(text=t)]) for r, t in TURNS[:3]],
                             config=types.GenerateContentConfig(
                                 system_instruction="Be brief.",
                                 tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                                     name=TOOL["name"], description=TOOL["description"],
                                     parameters_json_schema=TOOL["parameters"])])]))
        request.cache_config = AdkConfig(ttl_seconds=ttl)
        return [r async for r in AnthropicLlm(model="claude-sonnet-4-5").generate_content_async(request)][-1]

    mine, google = asyncio.run(ours()), asyncio.run(theirs())
    ours_body, theirs_body = stub.requests[0].body, stub.requests[1].body
    mark = {"type": "ephemeral", **({"ttl": "1h"} if ttl >= 3600 else {})}
    assert _marks(ours_body) == _marks(theirs_body)
    assert _marks(ours_body)["tool"] == [mark] and _marks(ours_body)["system"] == [mark]
    assert ours_body["messages"][-1]["content"][-1]["cache_control"] == mark
    # the usage as google-adk reads it: the prompt includes cache reads and writes
    assert mine.usage_metadata is not None
    assert (mine.usage_metadata.prompt_token_count, mine.usage_metadata.cached_content_token_count) == (
        google.usage_metadata.prompt_token_count, google.usage_metadata.cached_content_token_count) == (1012, 900)


def test_claude_without_a_cache_config_gets_no_breakpoints(stub: StubServer) -> None:
    stub.add(anthropic_message("plain"))
    model = AnthropicModel("claude-sonnet-4-5", base_url=stub.url, api_key="test-key")

    async def call() -> None:
        [r async for r in model.generate(_claude_request(None))]
    asyncio.run(call())
    assert "cache_control" not in str(stub.requests[0].body)


APP_PROGRAM = '''
from google.adk.agents import LlmAgent
from google.adk.agents.context_cache_config import ContextCacheConfig
from google.adk.apps import App
from google.adk.models import Gemini
from google.adk.runners import InMemoryRunner
from google.genai import types

agent = LlmAgent(name="helper", instruction="You are a careful assistant. " * 400,
                 model=Gemini(model="gemini-2.5-flash"))
app = App(name="cached_app", root_agent=agent, context_cache_config=ContextCacheConfig(cache_intervals=2))


async def main(turns):
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name="cached_app", user_id="ann")
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
    await runner.close()
    return seen
'''


def _app_script() -> list[Any]:
    return [gemini_response("one", prompt_tokens=3000),
            gemini_cached_content("cachedContents/app-cache"), gemini_response("two", prompt_tokens=3100),
            gemini_response("three", prompt_tokens=3200, cached_tokens=2900),
            gemini_cached_content("cachedContents/app-cache-2"), gemini_response("four", prompt_tokens=3300),
            gemini_response("five", prompt_tokens=3400, cached_tokens=3000)]


_TURN_INSTRUCTION = re.compile(r"<<<BEGIN_SYSTEM_INSTRUCTION>>>\n(.*?)\n<<<END", re.DOTALL)


def _text(text: str | None) -> str | None:
    """A turn's text; the dynamic instruction sent as a turn (with a static
    instruction) as its own words (each side wraps it in its own wording)."""
    found = _TURN_INSTRUCTION.search(text or "")
    return f"instruction: {found.group(1)}" if found else text


def _app_rows(server: StubServer) -> list[dict[str, Any]]:
    return [{"call": (r.method, r.path.split("?")[0]),
             "cachedContent": (r.body or {}).get("cachedContent"),
             "instruction": "systemInstruction" in (r.body or {}),
             "texts": [_text(c["parts"][0].get("text")) for c in (r.body or {}).get("contents") or []]}
            for r in server.requests]


STATIC_PROGRAM = APP_PROGRAM.replace(
    'instruction="You are a careful assistant. " * 400,',
    'static_instruction=types.Content(role="user", parts=[types.Part(text="You are a careful assistant. " * 400)]),\n'
    '                 instruction="Today the user is {user_name?}.",')


@pytest.mark.parametrize("program", [APP_PROGRAM, STATIC_PROGRAM], ids=["instruction", "static_instruction"])
def test_an_apps_context_cache_config_caches_across_turns_as_on_google_adk(monkeypatch: pytest.MonkeyPatch,
                                                                            program: str) -> None:
    """``App(context_cache_config=ContextCacheConfig(cache_intervals=2))`` through the
    Runner, five turns: no cache on the first; made on the second and named on the
    second and third (the hit in the events' usage); used up on the fourth (a third
    invocation), so deleted, made anew with the longer prefix and named on the fourth
    and fifth -- the same calls, the same bodies
    and the same cache metadata on the events as google-adk's."""
    import google_adk_harness as harness
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")
    turns = ["Hello", "Weather in Paris?", "And Rome?", "And Oslo?", "And Lima?"]
    rows, metadata = {}, {}
    for side, source in (("theirs", program), ("ours", harness.rewritten(program))):
        with StubServer() as server:
            monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
            _, events = harness.run_program(source, _app_script(), server, turns)
            rows[side] = _app_rows(server)
            assert not server.responses, f"{side}: the script was not used up"
        metadata[side] = [(e.cache_metadata.cache_name, e.cache_metadata.invocations_used,
                           e.cache_metadata.contents_count, e.usage_metadata.cached_content_token_count)
                          for e in events if e.author == "helper"]
    assert rows["ours"] == rows["theirs"]
    assert [r["cachedContent"] for r in rows["ours"] if r["call"][1].endswith("generateContent")] == [
        None, "cachedContents/app-cache", "cachedContents/app-cache", "cachedContents/app-cache-2",
        "cachedContents/app-cache-2"]
    assert ("DELETE", "/v1beta/cachedContents/app-cache") in [r["call"] for r in rows["ours"]]
    assert metadata["ours"] == metadata["theirs"]
    assert metadata["ours"][2][3] == 2900  # the hit, in the event's usage


@pytest.fixture
def gemini_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    """A Gemini stand-in named by the environment, set before the actor system forks."""
    with StubServer() as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-a-secret")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        yield server


def test_a_hosts_run_workers_cache_across_turns_from_the_stored_events(gemini_env: StubServer, actor_system: Any,
                                                                        tmp_path: Any) -> None:
    """An App with ``context_cache_config`` served by a host: each turn runs in a run
    worker that reads the last cache from the session's stored events, so the cache
    made on the second turn is named on the third, and the events the caller gets carry
    the cache's metadata and the hit."""
    from adk_actors.runtime import Host, HostConfig

    server = gemini_env
    server.add(gemini_response("one", prompt_tokens=3000),
               gemini_cached_content("cachedContents/host-cache", ttl_seconds=600),
               gemini_response("two", prompt_tokens=3100),
               gemini_response("three", prompt_tokens=3200, cached_tokens=2900))
    config = HostConfig(apps={"cached": "context_cache_agents:cached_app"}, data_dir=str(tmp_path))
    with Host(config, system=actor_system) as host:
        runner = host.runner("cached")
        runner.create_session("ann", "s1")
        answers = [list(runner.run("ann", "s1", text))[-1] for text in ("Hello", "Paris?", "Rome?")]
    calls = [(r.method, r.path.split("?")[0], (r.body or {}).get("cachedContent")) for r in server.requests]
    assert calls == [("POST", "/v1beta/models/gemini-2.5-flash:generateContent", None),
                     ("POST", "/v1beta/cachedContents", None),
                     ("POST", "/v1beta/models/gemini-2.5-flash:generateContent", "cachedContents/host-cache"),
                     ("POST", "/v1beta/models/gemini-2.5-flash:generateContent", "cachedContents/host-cache")]
    assert server.requests[1].body["ttl"] == "600s"
    assert [a.content.text for a in answers] == ["one", "two", "three"]
    assert [a.cache_metadata.cache_name for a in answers] == [None, "cachedContents/host-cache",
                                                              "cachedContents/host-cache"]
    assert answers[2].cache_metadata.invocations_used == 2
    assert answers[2].usage_metadata.cached_content_token_count == 2900


def test_a_streamed_call_names_the_cache_too(stub: StubServer) -> None:
    from adk_actors.testing import gemini_stream
    first = _fingerprint_of_first_call(stub)
    stub.add(gemini_cached_content("cachedContents/streamed"), gemini_stream(["Sun", "ny."]))
    model = GeminiModel("gemini-2.5-flash", base_url=stub.url, api_key="test-key")

    async def call() -> list[LlmResponse]:
        return [r async for r in model.generate(_ours(5, first, 3000, ContextCacheConfig()), stream=True)]
    responses = asyncio.run(call())
    streamed = stub.requests[-1]
    assert streamed.path.endswith(":streamGenerateContent?alt=sse")
    assert streamed.body["cachedContent"] == "cachedContents/streamed" and "systemInstruction" not in streamed.body
    final = responses[-1]
    assert final.content is not None and final.content.parts[0].text == "Sunny."
    assert final.cache_metadata is not None and final.cache_metadata.cache_name == "cachedContents/streamed"


@pytest.mark.parametrize("opt_in", [None, ("ADK_EXPERIMENTAL_TELEMETRY", "true"),
                                    ("ADK_EXPERIMENTAL_TELEMETRY_FEATURES", "grounding,context_cache")])
def test_the_cache_shows_in_the_model_calls_span_behind_google_adks_opt_in(
        monkeypatch: pytest.MonkeyPatch, opt_in: tuple[str, str] | None) -> None:
    """google-adk's experimental span attributes (``adk.experimental.context_cache.*``)
    on each model call's span, only when its telemetry opt-in says so."""
    from adk_actors.agents import LlmAgent
    from adk_actors.apps import App
    from adk_actors.models import Gemini
    from adk_actors.runners import InMemoryRunner
    from adk_actors.tracing import TraceRecorder
    from adk_actors.types import Content as UserContent
    from adk_actors.types import Part as UserPart

    for name in ("ADK_EXPERIMENTAL_TELEMETRY", "ADK_EXPERIMENTAL_TELEMETRY_FEATURES"):
        monkeypatch.delenv(name, raising=False)
    if opt_in is not None:
        monkeypatch.setenv(*opt_in)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-a-secret")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    recorder = TraceRecorder()
    recorder.attach("test-context-cache")
    try:
        with StubServer() as server:
            server.add(gemini_response("one", prompt_tokens=3000), gemini_cached_content("cachedContents/traced"),
                       gemini_response("two", prompt_tokens=3100, cached_tokens=2900))
            app = App(name="traced", root_agent=LlmAgent(name="helper", instruction=SYSTEM,
                                                         model=Gemini(model="gemini-2.5-flash", base_url=server.url)),
                      context_cache_config=ContextCacheConfig())

            async def turns() -> list[list[Any]]:
                runner = InMemoryRunner(app=app)
                session = await runner.session_service.create_session(app_name="traced", user_id="ann")
                out = []
                for text in ("Hello", "Paris?"):
                    message = UserContent(role="user", parts=[UserPart(text=text)])
                    out.append([e async for e in runner.run_async(user_id="ann", session_id=session.id,
                                                                   new_message=message)])
                return out
            runs = asyncio.run(turns())
        spans = [recorder.take(events[-1].invocation_id) for events in runs]
    finally:
        recorder.detach("test-context-cache")
    model_spans = [next(s for s in run if s.name.startswith("generate_content")) for run in spans]
    hits = [span.attributes.get("adk.experimental.context_cache.hit") for span in model_spans]
    if opt_in is None:
        assert hits == [None, None]
        assert not any(k.startswith("adk.experimental") for s in model_spans for k in s.attributes)
    else:
        assert hits == [False, True]
        assert model_spans[1].attributes["adk.experimental.context_cache.invocations_used"] == 1
        assert model_spans[1].attributes["adk.experimental.context_cache.contents_count"] == 2
    # the hit in the usage of the second turn's answer, either way
    assert runs[1][-1].usage_metadata.cached_content_token_count == 2900
