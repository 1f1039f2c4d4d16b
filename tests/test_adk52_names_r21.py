"""google-adk names added at google-adk's paths (issue 52, round 21), each checked side by
side with google-adk 2.13 where a user would see a difference:

- ``tools.AuthToolArguments``: the auth tool's arguments class, re-exported;
- ``models.LlmCapabilities``, ``models.ServiceTier``,
  ``models.AnthropicGenerateContentConfig`` (its ``effort`` sent to Claude as
  ``output_config.effort``, compared on one loopback Anthropic stand-in);
- ``code_executors.CodeExecutorContext``: the same calls leave the same session state;
- ``agents.BaseAgentConfig`` ... ``SequentialAgentConfig``: the same agent YAML files
  validate, or fail, on both.
"""

from __future__ import annotations

import asyncio
import importlib
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from adk_actors.testing import StubServer, anthropic_message

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore::FutureWarning")


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def both(name: str) -> tuple[Any, Any]:
    """``name`` (``"models.ServiceTier"``) from google-adk and from adk_actors."""
    module, attr = name.rsplit(".", 1)
    return (getattr(importlib.import_module(f"google.adk.{module}"), attr),
            getattr(importlib.import_module(f"adk_actors.{module}"), attr))


# 1. tools.AuthToolArguments

def test_auth_tool_arguments_is_the_auth_tools_class_with_google_adks_fields() -> None:
    from adk_actors.auth.auth_tool import AuthToolArguments
    theirs, ours = both("tools.AuthToolArguments")
    assert ours is AuthToolArguments
    assert sorted(ours.model_fields) == sorted(theirs.model_fields) == ["auth_config", "function_call_id"]


# 2. models.LlmCapabilities, ServiceTier, AnthropicGenerateContentConfig

def test_llm_capabilities_defaults_refusals_and_frozenness_match() -> None:
    for cls in both("models.LlmCapabilities"):
        assert cls().output_schema_and_tools is False
        assert cls(output_schema_and_tools=True).model_dump() == {"output_schema_and_tools": True}
        with pytest.raises(ValidationError):
            cls(output_schema_too=True)  # a misspelt capability is refused, not dropped
        snapshot = cls()
        with pytest.raises(ValidationError):
            snapshot.output_schema_and_tools = True


def test_service_tier_members_compare_and_print_as_google_adks() -> None:
    theirs, ours = both("models.ServiceTier")
    assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]
    assert ours.DEFERRED == "deferred" == theirs.DEFERRED
    assert ours("flex") is ours.FLEX and str(ours.FLEX) == str(theirs.FLEX).replace(theirs.__name__, ours.__name__)
    assert isinstance(ours.PRIORITY, str)


@pytest.mark.parametrize("effort", ["low", "medium", "high", "xhigh", "max"])
def test_anthropic_config_takes_google_adks_effort_levels(effort: str) -> None:
    theirs, ours = both("models.AnthropicGenerateContentConfig")
    assert ours(effort=effort, temperature=0.2).effort == theirs(effort=effort, temperature=0.2).effort == effort


def test_anthropic_config_refuses_what_google_adks_refuses() -> None:
    theirs, ours = both("models.AnthropicGenerateContentConfig")
    for cls in (theirs, ours):
        with pytest.raises(ValueError):
            cls(effort="extreme")
        with pytest.raises(ValueError):  # depth is set by effort, not thinking_level
            cls(thinking_config={"thinking_level": "HIGH"})


def _claude_turn(prefix: str, types_module: str, effort: str) -> list[Any]:
    """One turn of an agent on Anthropic's API (``ANTHROPIC_BASE_URL``), with the agent's config
    an AnthropicGenerateContentConfig, written once for both packages."""
    agents = importlib.import_module(f"{prefix}.agents")
    models = importlib.import_module(f"{prefix}.models")
    anthropic_llm = importlib.import_module(f"{prefix}.models.anthropic_llm")
    runners = importlib.import_module(f"{prefix}.runners")
    types = importlib.import_module(types_module)
    agent = agents.LlmAgent(name="thinker", model=anthropic_llm.AnthropicLlm(model="claude-sonnet-4-5"),
                            instruction="Answer briefly.",
                            generate_content_config=models.AnthropicGenerateContentConfig(effort=effort))

    async def turn() -> list[Any]:
        runner = runners.InMemoryRunner(agent=agent, app_name="effort")
        session = await runner.session_service.create_session(app_name="effort", user_id="ann")
        message = types.Content(role="user", parts=[types.Part(text="Why is the sky blue?")])
        events = [e async for e in runner.run_async(user_id="ann", session_id=session.id, new_message=message)]
        await runner.close()
        return events
    return asyncio.run(turn())


def test_an_agents_anthropic_effort_reaches_claude_as_google_adk_sends_it(
        stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    stub.add(anthropic_message("theirs"), anthropic_message("ours"))
    _claude_turn("google.adk", "google.genai.types", "xhigh")
    events = _claude_turn("adk_actors", "adk_actors.types", "xhigh")
    theirs, ours = stub.requests[0].body, stub.requests[1].body
    assert ours["output_config"] == theirs["output_config"] == {"effort": "xhigh"}
    assert "temperature" not in ours
    assert events[-1].content.parts[0].text == "ours"


# 3. code_executors.CodeExecutorContext

def _exercise(cls: Any, file_cls: Any, state: dict[str, Any]) -> dict[str, Any]:
    """The calls a custom executor makes; what each getter said along the way."""
    context = cls(state)
    seen: dict[str, Any] = {"id_before": context.get_execution_id(), "files_before": context.get_input_files()}
    context.set_execution_id("exec-1")
    context.add_input_files([file_cls(name="a.csv", content="x,y\n1,2", mime_type="text/csv")])
    context.add_input_files([file_cls(name="b.txt", content="hi")])
    context.add_processed_file_names(["a.csv"])
    context.add_processed_file_names(["a.csv", "b.txt"])
    context.increment_error_count("inv-1")
    context.increment_error_count("inv-1")
    context.increment_error_count("inv-2")
    seen["errors"] = (context.get_error_count("inv-1"), context.get_error_count("inv-2"),
                      context.get_error_count("inv-3"))
    context.reset_error_count("inv-2")
    context.reset_error_count("never")
    context.update_code_execution_result("inv-1", "print(1)", "1\n", "")
    context.update_code_execution_result("inv-1", "1/0", "", "ZeroDivisionError")
    seen["files"] = [(f.name, f.content, f.mime_type) for f in context.get_input_files()]
    seen["processed"] = context.get_processed_file_names()
    seen["id"] = context.get_execution_id()
    delta = context.get_state_delta()
    context.set_execution_id("exec-2")  # after the delta was taken
    seen["delta"] = delta
    seen["state_before_clear"] = {k: v for k, v in state.items() if k != "_code_execution_results"}
    seen["runs"] = [{k: v for k, v in run.items() if k != "timestamp"}
                    for run in state["_code_execution_results"]["inv-1"]]
    seen["timestamps_are_ints"] = all(isinstance(r["timestamp"], int) for r in state["_code_execution_results"]["inv-1"])
    context.clear_input_files()
    seen["after_clear"] = (context.get_input_files(), context.get_processed_file_names())
    seen["state"] = {k: v for k, v in state.items() if k != "_code_execution_results"}
    return seen


def test_code_executor_context_leaves_the_state_google_adks_leaves() -> None:
    from google.adk.code_executors.code_execution_utils import File as TheirFile

    from adk_actors.code_executors import File
    theirs, ours = both("code_executors.CodeExecutorContext")
    seen_theirs = _exercise(theirs, TheirFile, {"user_key": 1})
    seen_ours = _exercise(ours, File, {"user_key": 1})
    assert seen_ours == seen_theirs
    assert seen_ours["delta"] == {"_code_execution_context": {"execution_session_id": "exec-1",
                                                               "processed_input_files": ["a.csv", "a.csv", "b.txt"]}}
    assert seen_ours["state"]["_code_executor_error_counts"] == {"inv-1": 2}
    assert seen_ours["timestamps_are_ints"]


def test_code_executor_context_reads_the_execution_id_the_state_already_holds() -> None:
    theirs, ours = both("code_executors.CodeExecutorContext")
    for cls in (theirs, ours):
        state = {"_code_execution_context": {"execution_session_id": "s-9"}}
        assert cls(state).get_execution_id() == "s-9"
        assert cls(state).get_processed_file_names() == []
        empty: dict[str, Any] = {}
        cls(empty).clear_input_files()
        assert empty == {"_code_execution_context": {}}  # made on first use, nothing else written


# 4. agents.*AgentConfig

CONFIGS = ["BaseAgentConfig", "LlmAgentConfig", "LoopAgentConfig", "ParallelAgentConfig", "SequentialAgentConfig"]

DOCUMENTS: list[tuple[str, str]] = [
    ("LlmAgentConfig", "name: helper\nmodel: gemini-2.5-flash\ninstruction: Be brief.\n"),
    ("LlmAgentConfig", "name: helper\nmodel: gemini-2.5-flash\n"),  # no instruction
    ("LlmAgentConfig", "name: helper\ninstruction: x\nmodel: m\nmodel_code: {name: a.b}\n"),
    ("LlmAgentConfig", "name: helper\ninstruction: x\nfavourite_colour: blue\n"),
    ("LlmAgentConfig", "name: helper\ninstruction: x\ninclude_contents: some\n"),
    ("LlmAgentConfig", "name: helper\ninstruction: x\ninclude_contents: none\noutput_key: out\n"
                       "tools:\n  - name: google_search\n  - name: my.tools.lookup\n    args: {k: 1}\n"
                       "before_model_callbacks:\n  - name: my.callbacks.log\n"
                       "generate_content_config:\n  temperature: 0.1\n  max_output_tokens: 200\n"),
    ("LlmAgentConfig", "name: helper\ninstruction: x\nsub_agents:\n  - config_path: a.yaml\n    code: b.c\n"),
    ("LlmAgentConfig", "name: helper\ninstruction: x\nsub_agents:\n  - {}\n"),
    ("LlmAgentConfig", "agent_class: MyAgent\nname: helper\ninstruction: x\n"),
    ("LoopAgentConfig", "agent_class: LoopAgent\nname: loop\nmax_iterations: 3\n"
                        "sub_agents:\n  - config_path: step.yaml\n"),
    ("LoopAgentConfig", "name: loop\nmax_iterations: many\n"),
    ("LoopAgentConfig", "name: loop\ninstruction: x\n"),
    ("ParallelAgentConfig", "agent_class: ParallelAgent\nname: fan\nsub_agents:\n  - code: pkg.agent\n"),
    ("ParallelAgentConfig", "name: fan\nmax_iterations: 2\n"),
    ("SequentialAgentConfig", "name: seq\ndescription: steps\nafter_agent_callbacks:\n  - name: m.f\n"),
    ("SequentialAgentConfig", "name: seq\nsub_agents: [a, b]\n"),
    ("BaseAgentConfig", "agent_class: my.pkg.Custom\nname: custom\nmy_setting: 7\n"),
    ("BaseAgentConfig", "agent_class: my.pkg.Custom\ndescription: no name\n"),
]


def _validate(cls: Any, document: str) -> tuple[bool, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            config = cls.model_validate(yaml.safe_load(document))
        except ValidationError as exc:
            return False, sorted(tuple(str(step) for step in error["loc"]) for error in exc.errors())
    dumped = config.model_dump(exclude_none=True)
    return True, (dumped, config.model_extra)


@pytest.mark.parametrize(("name", "document"), DOCUMENTS)
def test_the_same_agent_yaml_validates_or_fails_alike(name: str, document: str) -> None:
    theirs, ours = both(f"agents.{name}")
    assert _validate(ours, document) == _validate(theirs, document)


def test_agent_configs_at_google_adks_paths_are_the_loaders_classes() -> None:
    import adk_actors.agents as agents
    for name in CONFIGS:
        module = importlib.import_module(f"adk_actors.agents.{name.removesuffix('Config').lower().replace('agent', '_agent')}_config")
        assert getattr(agents, name) is getattr(module, name)
        assert name in agents.__all__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agents.LoopAgentConfig(name="loop")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)  # deprecated, as in google-adk
    with pytest.raises(AttributeError):
        agents.NoSuchConfig  # noqa: B018
