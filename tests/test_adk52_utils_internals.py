"""google-adk 2.13's ``google.adk.utils`` internals that user code imports, at our paths
(issue 52), each run side by side with google-adk's on the same inputs:

* ``agent_info``: ``get_agents_dict`` / ``get_tools_info`` describe the same agent tree
  (names, descriptions, instructions, tool declarations, sub-agents) as google-adk's.
* ``context_utils.find_context_parameter``: the same parameter found.
* ``output_schema_utils.can_use_output_schema_with_tools``, ``variant_utils``,
  ``vertex_ai_utils.get_express_mode_api_key``: the same answers for the same
  environment.
* ``streaming_utils.StreamingResponseAggregator``: the same partial and final
  responses for the same google-genai chunks.
* ``cache_performance_analyzer.CachePerformanceAnalyzer``: the same report for the
  same session events.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from typing import Any, Optional

import pytest

pytest.importorskip("google.adk")

from google.genai import types as g

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")]

MODULES = ("utils.agent_info", "utils.context_utils", "utils.output_schema_utils", "utils.streaming_utils",
           "utils.cache_performance_analyzer", "utils.variant_utils", "utils.vertex_ai_utils")
ENTERPRISE = ("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY")


def public_names(module: Any) -> list[str]:
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return sorted(declared)
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                  and getattr(value, "__module__", None) == module.__name__)


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_of_these_google_adk_utils_is_at_our_path(module: str) -> None:
    theirs = importlib.import_module(f"google.adk.{module}")
    ours = importlib.import_module(f"adk_actors.{module}")
    assert [name for name in public_names(theirs) if not hasattr(ours, name)] == []


# -- agent_info -----------------------------------------------------------------------------


def lookup(city: str, days: int = 1) -> dict[str, Any]:
    """Look up the forecast."""
    return {}


def shout(text: str) -> str:
    """Shout the text."""
    return text.upper()


def tree(package: str) -> Any:
    agents = importlib.import_module(f"{package}.agents")
    tools = importlib.import_module(f"{package}.tools")
    leaf = agents.LlmAgent(name="leaf", model="gemini-2.5-flash", instruction=lambda ctx: "dynamic",
                           description="a leaf")
    middle = agents.LlmAgent(name="middle", model="gemini-2.5-flash", tools=[tools.FunctionTool(shout)],
                             sub_agents=[leaf], instruction="Shout.")
    return agents.LlmAgent(name="root", model="gemini-2.5-flash", description="the root", instruction="Route.",
                           tools=[lookup, shout], sub_agents=[middle])


def test_agents_dict_describes_the_tree_as_google_adks() -> None:
    from google.adk.utils import agent_info as theirs

    from adk_actors.utils import agent_info as ours

    their_dict = asyncio.run(theirs.get_agents_dict(tree("google.adk")))
    our_dict = asyncio.run(ours.get_agents_dict(tree("adk_actors")))
    assert list(our_dict) == list(their_dict) == ["leaf", "middle", "root"]
    assert ({name: info.model_dump(mode="json", exclude_none=True) for name, info in our_dict.items()}
            == {name: info.model_dump(mode="json", exclude_none=True) for name, info in their_dict.items()})
    assert our_dict["leaf"].instruction == "<InstructionProvider: <lambda>>"


def test_an_agent_given_as_a_tool_is_refused_as_google_adks() -> None:
    from google.adk.agents import LlmAgent as TheirAgent
    from google.adk.utils import agent_info as theirs

    from adk_actors.agents import LlmAgent
    from adk_actors.utils import agent_info as ours

    with pytest.raises(ValueError):
        asyncio.run(theirs.get_tools_info([TheirAgent(name="a", model="gemini-2.5-flash")]))
    with pytest.raises(ValueError, match="sub-agent"):
        asyncio.run(ours.get_tools_info([LlmAgent(name="a", model="gemini-2.5-flash")]))


# -- context_utils -------------------------------------------------------------------------


SIGNATURES = """
def plain(a: int, b: str) -> None: ...
def tool(city: str, tool_context: ToolContext) -> None: ...
def callback(callback_context: CallbackContext, extra: int = 0) -> None: ...
def optional(x: int, ctx: Optional[Context] = None) -> None: ...
def union(x: int, ctx: Context | None = None) -> None: ...
def forward(x: int, ctx: 'ToolContext') -> None: ...
"""


def signatures(package: str) -> list[Any]:
    """The same functions, annotated with ``package``'s context classes (compiled
    without this file's postponed annotations, so the annotations are the classes)."""
    namespace = {"ToolContext": importlib.import_module(f"{package}.tools").ToolContext,
                 "CallbackContext": importlib.import_module(f"{package}.agents.callback_context").CallbackContext,
                 "Context": importlib.import_module(f"{package}.agents.context").Context, "Optional": Optional}
    exec(compile(SIGNATURES, "<signatures>", "exec", dont_inherit=True), namespace)
    return [namespace[name] for name in ("plain", "tool", "callback", "optional", "union", "forward")] + [print, None]


def test_find_context_parameter_finds_what_google_adks_finds() -> None:
    from google.adk.utils.context_utils import find_context_parameter as theirs

    from adk_actors.utils.context_utils import find_context_parameter as ours

    their_answers = [theirs(f) for f in signatures("google.adk")]
    assert [ours(f) for f in signatures("adk_actors")] == their_answers
    assert their_answers == [None, "tool_context", "callback_context", "ctx", "ctx", "ctx", None, None]


# -- the environment's answers ----------------------------------------------------------------


ENVIRONMENTS = [{}, {"GOOGLE_GENAI_USE_ENTERPRISE": "true"}, {"GOOGLE_GENAI_USE_ENTERPRISE": "0"},
                {"GOOGLE_GENAI_USE_VERTEXAI": "1"}, {"GOOGLE_GENAI_USE_ENTERPRISE": "TRUE", "GOOGLE_API_KEY": "k-env"},
                {"GOOGLE_GENAI_USE_VERTEXAI": "yes", "GOOGLE_API_KEY": "k-env"}]


def answers(package: str) -> list[Any]:
    variant = importlib.import_module(f"{package}.utils.variant_utils")
    vertex = importlib.import_module(f"{package}.utils.vertex_ai_utils")
    schema = importlib.import_module(f"{package}.utils.output_schema_utils")
    models = importlib.import_module(f"{package}.models")
    found: list[Any] = [variant.get_google_llm_variant().value, [m.value for m in variant.GoogleLLMVariant]]
    for args in ((None, None, None), (None, None, "k-given"), ("p", None, None), ("p", "l", "k-given")):
        try:
            found.append(vertex.get_express_mode_api_key(*args))
        except ValueError:
            found.append("ValueError")
    for model in ("gemini-2.5-flash", "projects/p/locations/l/publishers/google/models/gemini-2.5-pro",
                  "claude-3-7-sonnet", models.Gemini(model="gemini-2.5-flash")):
        found.append(schema.can_use_output_schema_with_tools(model))
    return found


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_variant_express_key_and_output_schema_answers_match(monkeypatch: pytest.MonkeyPatch,
                                                             env: dict[str, str]) -> None:
    for name in ENTERPRISE:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert answers("adk_actors") == answers("google.adk")


# -- streaming_utils --------------------------------------------------------------------------


def chunk(*parts: g.Part, finish: g.FinishReason | None = None, usage: Any = None, message: str | None = None,
          feedback: Any = None) -> g.GenerateContentResponse:
    candidates = [] if feedback is not None else [g.Candidate(
        content=g.Content(role="model", parts=list(parts)), finish_reason=finish, finish_message=message)]
    return g.GenerateContentResponse(candidates=candidates, usage_metadata=usage, model_version="gemini-x",
                                     prompt_feedback=feedback)


STREAMS = {
    "text-thoughts-calls": [
        chunk(g.Part(text="Thinking ", thought=True, thought_signature=b"sig-1")),
        chunk(g.Part(text="hard.", thought=True, thought_signature=b"sig-2")),
        chunk(g.Part(text="Hello ")),
        chunk(g.Part(text="world."), usage=g.GenerateContentResponseUsageMetadata(prompt_token_count=3)),
        chunk(g.Part(function_call=g.FunctionCall(name="find", id="c-1", args={"q": "x"}))),
        chunk(g.Part(function_call=g.FunctionCall(name="find", id="c-1", args={"q": "x"}))),  # repeated: once
        chunk(g.Part(function_call=g.FunctionCall(name="find", args={"q": "y"}))),  # no id: kept
        chunk(g.Part(text="Done.")),
        chunk(finish=g.FinishReason.STOP,
              usage=g.GenerateContentResponseUsageMetadata(prompt_token_count=4, candidates_token_count=9)),
    ],
    "streamed-call": [
        chunk(g.Part(text="Let me look. ")),
        chunk(g.Part(function_call=g.FunctionCall(name="book", id="c-2", will_continue=True, partial_args=[
            g.PartialArg(json_path="$.city", string_value="Par")]))),
        chunk(g.Part(function_call=g.FunctionCall(will_continue=True, partial_args=[
            g.PartialArg(json_path="$.city", string_value="is"), g.PartialArg(json_path="$.nights", number_value=2),
            g.PartialArg(json_path="$.guest.names[1]", string_value="Bo"),
            g.PartialArg(json_path="$['odd key']", bool_value=True)]))),
        chunk(g.Part(function_call=g.FunctionCall(will_continue=False, partial_args=[
            g.PartialArg(json_path="$.guest.names[0]", string_value="Al")]))),
        chunk(g.Part(text="Booked."), finish=g.FinishReason.STOP),
    ],
    "cut-short": [
        chunk(g.Part(text="Once upon")),
        chunk(g.Part(text=" a time"), finish=g.FinishReason.MAX_TOKENS, message="too long"),
    ],
    "blocked": [chunk(feedback=g.GenerateContentResponsePromptFeedback(
        block_reason=g.BlockedReason.SAFETY, block_reason_message="unsafe"))],
}


def as_dict(response: Any) -> dict[str, Any]:
    """A response's fields both sides have, as JSON (enums by name)."""
    found = response.model_dump(mode="json", exclude_none=True)
    found.pop("citation_metadata", None)
    if found.get("content") is not None and not found["content"].get("parts"):
        found["content"].pop("parts", None)
    for part in (found.get("content") or {}).get("parts", []):
        call = part.get("function_call")
        if call is not None:  # a streamed piece: ours has no field for the pieces of arguments
            for key in ("partial_args", "will_continue"):
                call.pop(key, None)
            if call.get("name") == "" or "name" not in call:
                call.pop("name", None)
            if call.get("args") == {}:
                call.pop("args")
            if str(call.get("id", "")).startswith("adk-"):  # an id this side made: random on each
                call["id"] = "adk-*"
    return found


@pytest.mark.parametrize("stream", list(STREAMS))
def test_the_aggregator_gives_google_adks_responses(stream: str) -> None:
    from google.adk.utils.streaming_utils import StreamingResponseAggregator as Theirs

    from adk_actors.utils.streaming_utils import StreamingResponseAggregator as Ours

    async def run(kind: Any) -> tuple[list[Any], Any]:
        aggregator = kind()
        got = []
        for item in STREAMS[stream]:
            async for response in aggregator.process_response(item.model_copy(deep=True)):
                got.append(response)
        return got, aggregator.close()

    their_parts, their_final = asyncio.run(run(Theirs))
    our_parts, our_final = asyncio.run(run(Ours))
    assert [as_dict(r) for r in our_parts] == [as_dict(r) for r in their_parts]
    assert as_dict(our_final) == as_dict(their_final)
    assert Ours().close() is None and Theirs().close() is None


def test_streamed_call_arguments_come_together() -> None:
    from adk_actors.utils.streaming_utils import StreamingResponseAggregator

    async def run() -> Any:
        aggregator = StreamingResponseAggregator()
        for item in STREAMS["streamed-call"]:
            async for _ in aggregator.process_response(item):
                pass
        return aggregator.close()

    final = asyncio.run(run())
    call = final.content.parts[1].function_call
    assert (call.name, call.id) == ("book", "c-2")
    assert call.args == {"city": "Paris", "nights": 2, "guest": {"names": ["Al", "Bo"]}, "odd key": True}


# -- cache_performance_analyzer ----------------------------------------------------------------


def cache_events(package: str) -> list[Any]:
    events = importlib.import_module(f"{package}.events")
    cache = importlib.import_module(f"{package}.models.cache_metadata")
    usage = g.GenerateContentResponseUsageMetadata
    made = []
    for author, cached, used, name in (("helper", 0, 1, "caches/a"), ("helper", 80, 2, "caches/a"),
                                       ("other", 50, 1, "caches/z"), ("helper", 90, 1, "caches/b"),
                                       ("helper", None, None, None)):
        metadata = None if name is None else cache.CacheMetadata(
            cache_name=name, expire_time=2e9, fingerprint="f", invocations_used=used, contents_count=2)
        made.append(events.Event(author=author, cache_metadata=metadata,
                                 usage_metadata=usage(prompt_token_count=100, cached_content_token_count=cached)
                                 .model_dump(exclude_none=True)))
    return made


@pytest.mark.parametrize("agent", ["helper", "other", "nobody"])
def test_the_cache_report_is_google_adks(agent: str) -> None:
    async def report(package: str) -> dict[str, Any]:
        sessions = importlib.import_module(f"{package}.sessions")
        analyzer = importlib.import_module(f"{package}.utils.cache_performance_analyzer")
        service = sessions.InMemorySessionService()
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        for event in cache_events(package):
            await service.append_event(session, event)
        found: dict[str, Any] = await analyzer.CachePerformanceAnalyzer(service).analyze_agent_cache_performance(
            "s", "u", "app", agent)
        with pytest.raises(ValueError):
            await analyzer.CachePerformanceAnalyzer(service).analyze_agent_cache_performance("nope", "u", "app", agent)
        return found

    ours = asyncio.run(report("adk_actors"))
    assert ours == asyncio.run(report("google.adk"))
    assert ours["status"] == ("no_cache_data" if agent == "nobody" else "active")
