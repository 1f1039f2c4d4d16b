"""The request compiler: golden seed examples, templating, providers, split, schema, transfer."""

from __future__ import annotations

import json
import logging
import sys
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from adk_actors import AgentDefinitionError, Content, FunctionDeclaration, LlmAgent, Part, RunConfig
from adk_actors.compiler import (
    CompileContext,
    build_request,
    compile,
    compile_split,
    referenced_artifacts,
    resolve_provider,
    substitute_vars,
)

THIS = sys.modules[__name__]

GET_WEATHER = FunctionDeclaration(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)

TRANSFER_FOOTER = "To transfer to an agent, call the transfer_to_agent tool with the agent's name."


# -- golden: the seeds' worked examples ---------------------------------------------------


def test_golden_weather_bot() -> None:
    detail = LlmAgent(name="detail_agent", model="gemini-flash-latest",
                      description="Provides detailed weather analysis")
    bot = LlmAgent(
        name="weather_bot",
        model="gemini-flash-latest",
        instruction="You help users with weather. The user is in {location}.",
        tools=[GET_WEATHER],
        sub_agents=[detail],
        generate_config={"temperature": 0.7},
    )
    ctx = CompileContext(
        state={"location": "NYC"},
        new_message=Content.user("What's the forecast?"),
        run_config=RunConfig(generate_config={"temperature": 0.3}),
    )
    request = build_request(bot, ctx)
    assert request.system_instruction == (
        "You help users with weather. The user is in NYC.\n\n"
        "You are weather_bot.\n\n"
        "You can delegate tasks to the following agents using the transfer_to_agent tool:\n"
        "- detail_agent: Provides detailed weather analysis\n\n" + TRANSFER_FOOTER
    )
    # google-adk's order: the flow's transfer tool first, then the agent's own
    assert [t.name for t in request.tools] == ["transfer_to_agent", "get_weather"]
    assert request.contents == [Content(role="user", parts=(Part(text="What's the forecast?"),))]
    assert request.config == {"temperature": 0.3}
    assert request.model == "gemini-flash-latest"


def test_golden_greeter() -> None:
    greeter = LlmAgent(
        name="greeter",
        model="gemini-flash-latest",
        instruction="Greet the user. Their name is {user_name} and they speak {language}.",
    )
    ctx = CompileContext(state={"user_name": "Alice", "language": "French"})
    assert compile(greeter, ctx) == (
        "Greet the user. Their name is Alice and they speak French.\n\nYou are greeter."
    )


def _router() -> LlmAgent:
    weather = LlmAgent(name="weather", model="gemini-flash-latest", instruction="You handle weather queries.",
                       description="Handles weather-related questions", tools=[GET_WEATHER])
    news = LlmAgent(name="news", model="gemini-flash-latest", instruction="You handle news queries.",
                    description="Handles news-related questions",
                    tools=[FunctionDeclaration(name="get_news", description="Headlines.")])
    return LlmAgent(name="router", model="gemini-flash-latest", instruction="Route requests to the right specialist.",
                    sub_agents=[weather, news])


def test_golden_router_with_two_sub_agents() -> None:
    router = _router()
    request = build_request(router, CompileContext(new_message=Content.user("Any storms today?")))
    assert request.system_instruction == (
        "Route requests to the right specialist.\n\n"
        "You are router.\n\n"
        "You can delegate tasks to the following agents using the transfer_to_agent tool:\n"
        "- weather: Handles weather-related questions\n"
        "- news: Handles news-related questions\n\n" + TRANSFER_FOOTER
    )
    assert [t.name for t in request.tools] == ["transfer_to_agent"]
    # google-adk 2.13's shape: pydantic's JSON schema of its function's parameters,
    # titles kept, agent_name's enum the targets; our short description
    declared = request.tools[0]
    assert declared.parameters is None
    assert declared.parameters_json_schema == {
        "properties": {"agent_name": {"title": "Agent Name", "type": "string", "enum": ["weather", "news"]}},
        "required": ["agent_name"], "title": "transfer_to_agentParams", "type": "object"}
    assert declared.description == "Hand the conversation to another agent that is better suited to answer it."


def test_sub_agent_sees_parent_and_peer_as_targets() -> None:
    router = _router()
    weather = router.find_agent("weather")
    text = compile(weather, CompileContext(root_agent=router))
    assert text.endswith(
        "You can delegate tasks to the following agents using the transfer_to_agent tool:\n"
        "- router\n- news: Handles news-related questions\n\n" + TRANSFER_FOOTER
    )
    request = build_request(weather, CompileContext(root_agent=router))
    assert [t.name for t in request.tools] == ["transfer_to_agent", "get_weather"]
    assert request.tools[0].parameters_schema["properties"]["agent_name"]["enum"] == ["router", "news"]


def test_disallowed_transfers_remove_targets() -> None:
    a = LlmAgent(name="a", disallow_transfer_to_parent=True, disallow_transfer_to_peers=True)
    b = LlmAgent(name="b", disallow_transfer_to_peers=True)
    root = LlmAgent(name="root", sub_agents=[a, b])
    assert "transfer" not in compile(a, CompileContext(root_agent=root))
    assert [t.name for t in build_request(a, CompileContext(root_agent=root)).tools] == []
    assert "- root\n" in compile(b, CompileContext(root_agent=root)) + "\n"
    assert "- a" not in compile(b, CompileContext(root_agent=root))


class _Workflow:
    """A custom (structural) agent: no base class needed."""

    def __init__(self, name: str, sub_agents: list[Any]) -> None:
        self.name = name
        self.description = ""
        self.sub_agents = sub_agents


def test_no_transfer_up_through_a_workflow_agent() -> None:
    step = LlmAgent(name="step")
    pipeline = _Workflow("pipeline", [step, LlmAgent(name="other")])
    assert "transfer" not in compile(step, CompileContext(root_agent=pipeline))


# -- order and split -----------------------------------------------------------------------


class Answer(BaseModel):
    city: str
    degrees: float


def test_parts_order_and_global_instruction_from_root() -> None:
    child = LlmAgent(name="child", instruction="Child {mood}.", description="Does child things.",
                     output_schema=Answer)
    root = LlmAgent(name="root", global_instruction="Be kind, {user:name}.", sub_agents=[child])
    ctx = CompileContext(root_agent=root, state={"mood": "happy", "user:name": "Ann"})
    text = compile(child, ctx)
    schema = json.dumps(Answer.model_json_schema())
    assert text == (
        "Be kind, Ann.\n\nChild happy.\n\nYou are child. Does child things.\n\n"
        f"Reply with valid JSON matching this schema: {schema}\n\n"
        "You can delegate tasks to the following agents using the transfer_to_agent tool:\n- root\n\n"
        + TRANSFER_FOOTER
    )
    static, dynamic = compile_split(child, ctx)
    assert static == (
        "Be kind, Ann.\n\nYou are child. Does child things.\n\n"
        "You can delegate tasks to the following agents using the transfer_to_agent tool:\n- root\n\n"
        + TRANSFER_FOOTER
    )
    assert dynamic == f"Child happy.\n\nReply with valid JSON matching this schema: {schema}"


def test_static_part_is_byte_identical_across_turns() -> None:
    agent = LlmAgent(name="bot", instruction="Turn {n}.", global_instruction="Rules.", sub_agents=[LlmAgent(name="x")])
    first = compile_split(agent, CompileContext(state={"n": 1}))
    second = compile_split(agent, CompileContext(state={"n": 2}, new_message=Content.user("again")))
    assert first[0] == second[0]
    assert first[1] != second[1]


def test_split_parts_may_be_empty_but_never_none() -> None:
    bare = LlmAgent(name="bare")
    static, dynamic = compile_split(bare, CompileContext())
    assert (static, dynamic) == ("You are bare.", "")


def test_output_schema_sets_config() -> None:
    agent = LlmAgent(name="extractor", model="claude-sonnet-4", output_schema=Answer, output_key="answer")
    request = build_request(agent, CompileContext())
    assert request.config["response_schema"] == Answer.model_json_schema()
    assert request.config["response_mime_type"] == "application/json"
    assert request.tools == []


@pytest.mark.parametrize("model", ["claude-sonnet-4", "gemini-2.5-flash", "gemini-3-pro"])
def test_output_schema_with_tools_uses_set_model_response(model: str) -> None:
    """As google-adk 2.13 on every provider here (it pairs a response schema with tools
    only for Gemini on Vertex AI, tests/test_google_adk_agent_fields.py)."""
    agent = LlmAgent(name="extractor", model=model, output_schema=Answer, tools=[GET_WEATHER])
    request = build_request(agent, CompileContext())
    assert [t.name for t in request.tools] == ["set_model_response", "get_weather"]  # google-adk's order
    # google-adk's shape (tests/test_adk52_set_model_response.py): the schema of a model
    # named set_model_responseParams made of the output schema's fields
    assert request.tools[0].parameters is None
    schema = request.tools[0].parameters_json_schema
    assert schema is not None and schema["title"] == "set_model_responseParams"
    assert schema["properties"] == Answer.model_json_schema()["properties"]
    assert "response_schema" not in request.config and "response_mime_type" not in request.config
    assert "set_model_response tool" in request.system_instruction


def test_config_merge_run_config_wins_key_by_key() -> None:
    agent = LlmAgent(name="a", generate_config={"temperature": 0.7, "max_tokens": 1024})
    request = build_request(agent, CompileContext(run_config=RunConfig(generate_config={"temperature": 0.3})))
    assert request.config == {"temperature": 0.3, "max_tokens": 1024}
    assert agent.generate_config == {"temperature": 0.7, "max_tokens": 1024}  # not mutated


def test_same_input_same_request_and_context_is_read_only() -> None:
    router = _router()
    ctx = CompileContext(state={"k": 1}, new_message=Content.user("x"))
    assert build_request(router, ctx) == build_request(router, ctx)
    assert isinstance(ctx.state, MappingProxyType)
    with pytest.raises(TypeError):
        ctx.state["k"] = 2  # type: ignore[index]


# -- templating ------------------------------------------------------------------------------


def test_seed_substitute_vars_examples() -> None:
    assert substitute_vars("Hello {name}!", {"name": "World"}) == "Hello World!"
    assert substitute_vars("Hello {name}!", {}) == "Hello {name}!"
    assert substitute_vars("No vars here", {}) == "No vars here"


@pytest.mark.parametrize(
    "template, state, expected",
    [
        ("{x}", {"x": 5}, "5"),
        ("{ x }", {"x": 5}, "5"),
        ("{{x}}", {"x": 5}, "5"),
        ("{x}", {"x": None}, ""),
        ("{x}", {"x": {"a": 1}}, "{'a': 1}"),
        ("{x?}", {}, ""),
        ("{x?}", {"x": "v"}, "v"),
        ("{ x? }", {}, ""),
        ("{app:x} {user:y} {temp:z}", {"app:x": 1, "user:y": 2, "temp:z": 3}, "1 2 3"),
        ("{bad:k}", {"bad:k": 1}, "{bad:k}"),
        ("{missing}", {}, "{missing}"),
        ("{a b}", {"a b": 1}, "{a b}"),
        ('{"json": 1}', {}, '{"json": 1}'),
        ("{}", {}, "{}"),
        ("{1x}", {"1x": 1}, "{1x}"),
        ("{a.b}", {"a.b": 1}, "{a.b}"),
        ("{x-y}", {"x-y": 1}, "{x-y}"),
        ("\\{x}", {"x": 1}, "\\{x}"),
        ("${x}", {"x": 1}, "${x}"),
        ("a {x} b {y?} c {z}", {"x": 1}, "a 1 b  c {z}"),
    ],
)
def test_templating_rules(template: str, state: dict[str, Any], expected: str) -> None:
    assert substitute_vars(template, state) == expected


def test_artifact_placeholders() -> None:
    artifacts = {"notes.txt": "remember milk", "part": Part(text="from a part"), "image": Part()}
    assert substitute_vars("N: {artifact.notes.txt}", {}, artifacts) == "N: remember milk"
    assert substitute_vars("{artifact.part}", {}, artifacts) == "from a part"
    assert substitute_vars("{artifact.gone}", {}, artifacts) == "{artifact.gone}"
    assert substitute_vars("[{artifact.gone?}]", {}, artifacts) == "[]"
    assert substitute_vars("{artifact.image}", {}, artifacts) == "{artifact.image}"
    assert substitute_vars("{artifact.}", {}, artifacts) == "{artifact.}"
    assert referenced_artifacts("a {artifact.x.md} b {artifact.y?} {z} {artifact.}") == {"x.md", "y"}
    agent = LlmAgent(name="a", instruction="Use {artifact.notes.txt}.")
    assert compile(agent, CompileContext(artifacts={"notes.txt": "THIS"})).startswith("Use THIS.")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=60),
    st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=5),
)
def test_substitution_never_raises(template: str, state: dict[str, Any]) -> None:
    assert isinstance(substitute_vars(template, state, {"a": "b"}), str)


@settings(max_examples=300, deadline=None)
@given(st.text().filter(lambda s: "{" not in s and "}" not in s), st.dictionaries(st.text(), st.text()))
def test_text_without_braces_is_unchanged(template: str, state: dict[str, str]) -> None:
    assert substitute_vars(template, state) == template


# -- providers ---------------------------------------------------------------------------------


def provide(ctx: CompileContext) -> str:
    return f"Provided for {ctx.state.get('who', 'nobody')} ({{who}})"


def provide_with(ctx: CompileContext, style: str, times: int) -> str:
    return f"{style} x{times}"


def provide_number(ctx: CompileContext) -> int:
    return 42


def provide_none(ctx: CompileContext) -> None:
    return None


def provide_boom(ctx: CompileContext) -> str:
    raise RuntimeError("provider exploded")


def two_args(a: Any, b: Any) -> str:
    return ""


@pytest.mark.parametrize(
    "provider, expected",
    [
        ("plain {who}", "plain Bo"),
        (lambda ctx: "lambda {who}", "lambda Bo"),
        ((THIS, "provide"), "Provided for Bo (Bo)"),
        ((__name__, "provide"), "Provided for Bo (Bo)"),
        ((THIS, "provide_with", ["formal", 3]), "formal x3"),
        ((THIS, "provide_number"), "42"),
        ((THIS, "provide_none"), ""),
    ],
)
def test_provider_forms(provider: Any, expected: str) -> None:
    agent = LlmAgent(name="p", instruction=provider)
    text = compile(agent, CompileContext(state={"who": "Bo"}))
    assert text == f"{expected}\n\nYou are p." if expected else text == "You are p."


def test_provider_is_called_once_per_compile() -> None:
    calls: list[int] = []
    agent = LlmAgent(name="p", instruction=lambda ctx: calls.append(1) or "x")
    compile(agent, CompileContext())
    assert calls == [1]


def test_raising_provider_logs_a_warning_and_yields_empty(caplog: pytest.LogCaptureFixture) -> None:
    agent = LlmAgent(name="fragile", instruction=(THIS, "provide_boom"))
    with caplog.at_level(logging.WARNING, logger="adk_actors.compiler"):
        assert compile(agent, CompileContext()) == "You are fragile."
    assert "fragile" in caplog.text and "provider exploded" in caplog.text
    assert resolve_provider(None, None) is None


@pytest.mark.parametrize(
    "provider, fragment",
    [
        (two_args, "exactly one argument"),
        ((THIS, "provide_with"), "must accept"),
        ((THIS, "provide_with", ["only-one"]), "must accept"),
        ((THIS, "no_such_function"), "not a function"),
        (("no_such_module_xyz", "f"), "cannot import"),
        (42, "must be a string"),
        ((THIS,), "provider tuple"),
    ],
)
def test_bad_providers_fail_at_definition(provider: Any, fragment: str) -> None:
    with pytest.raises(AgentDefinitionError, match=fragment):
        LlmAgent(name="p", instruction=provider)
    with pytest.raises(AgentDefinitionError):
        LlmAgent(name="p", global_instruction=provider)


# -- definition errors -------------------------------------------------------------------------


def test_bad_definitions_fail_at_construction() -> None:
    for bad in ("user", "1x", "a-b", "", "class"):
        with pytest.raises((AgentDefinitionError, ValueError)):
            LlmAgent(name=bad)
    with pytest.raises(AgentDefinitionError, match="duplicate agent name"):
        LlmAgent(name="root", sub_agents=[LlmAgent(name="x"), LlmAgent(name="x")])
    with pytest.raises(AgentDefinitionError, match="duplicate agent name"):
        LlmAgent(name="x", sub_agents=[LlmAgent(name="x")])
    with pytest.raises(AgentDefinitionError, match="not an agent"):
        LlmAgent(name="root", sub_agents=["weather"])
    shared = LlmAgent(name="shared")
    LlmAgent(name="p1", sub_agents=[shared])
    with pytest.raises(AgentDefinitionError, match="one parent"):
        LlmAgent(name="p2", sub_agents=[shared])
    with pytest.raises(AgentDefinitionError, match="serialisable"):
        LlmAgent(name="s", output_schema={"type": "object", "bad": {1, 2}})
    with pytest.raises(AgentDefinitionError, match="output_schema"):
        LlmAgent(name="s", output_schema=42)
    with pytest.raises(AgentDefinitionError, match="compressor"):
        LlmAgent(name="c", context_compressor="sliding")
    with pytest.raises(AgentDefinitionError, match="two tools"):
        LlmAgent(name="t", tools=[GET_WEATHER, GET_WEATHER])
    with pytest.raises(AgentDefinitionError, match="not a tool"):
        LlmAgent(name="t", tools=["get_weather"])


def test_cycle_is_detected() -> None:
    a = LlmAgent(name="a")
    b = LlmAgent(name="b", sub_agents=[a])
    a.sub_agents.append(b)  # made after construction: caught when a tree is built on it
    with pytest.raises(AgentDefinitionError, match="cycle"):
        LlmAgent(name="root", sub_agents=[b])
