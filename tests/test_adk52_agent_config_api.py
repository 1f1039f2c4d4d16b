"""google-adk 2.13's agent-config Python API at its paths, side by side with google-adk:
``config_agent_utils.from_config`` loads the same YAML files into the same agent tree
(classes, names, instructions, tools, callbacks, sub-agents, ``max_iterations``, an
``AgentTool``'s settings); ``AgentConfig.model_validate`` picks the same config class
and refuses the same data; the deprecated config classes warn as google-adk's do; the
``resolve_*`` helpers resolve and refuse the same references; and a bad file is a
typed error naming the file (here an ``AgentDefinitionError``, a ValueError)."""

from __future__ import annotations

import importlib
import textwrap
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from google.adk.agents import agent_config as adk_agent_config
from google.adk.agents import common_configs as adk_common
from google.adk.agents import config_agent_utils as adk_utils
from google.adk.tools import tool_configs as adk_tool_configs
from pydantic import BaseModel, ValidationError

from adk_actors import AgentDefinitionError
from adk_actors.agents import agent_config, common_configs, config_agent_utils
from adk_actors.agents.base_agent_config import BaseAgentConfig
from adk_actors.agents.llm_agent_config import LlmAgentConfig
from adk_actors.agents.loop_agent_config import LoopAgentConfig
from adk_actors.agents.parallel_agent_config import ParallelAgentConfig
from adk_actors.agents.sequential_agent_config import SequentialAgentConfig
from adk_actors.engine import check_builder_upload, load_agent_config
from adk_actors.tools import tool_configs

CODE = """\
from pydantic import BaseModel

MODEL = "gemini-2.5-flash"


class Question(BaseModel):
    city: str


class Answer(BaseModel):
    text: str


def lookup(city: str) -> str:
    \"\"\"The weather in a city.\"\"\"
    return f"sunny in {city}"


def check_in(callback_context):
    return None


def before_model(callback_context, llm_request):
    return None


class NotAnAgent:
    pass
"""


@pytest.fixture
def code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A module of the user's code (a tool, callbacks), importable under a fresh name."""
    name = f"adk52_code_{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / f"{name}.py").write_text(CODE)
    monkeypatch.syspath_prepend(str(folder))
    yield importlib.import_module(name)


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))
    return folder / "root_agent.yaml"


def app(folder: Path, module: str) -> Path:
    """An LlmAgent root with a built-in tool, a function by its dotted name, an
    AgentTool by config and callbacks by name; its sub-agent a SequentialAgent of a
    LoopAgent and a ParallelAgent."""
    return write(folder, {
        "root_agent.yaml": f"""\
            agent_class: LlmAgent
            name: concierge
            model: gemini-2.5-flash
            description: Answers travel questions.
            instruction: You help with {{topic}}.
            tools:
              - name: load_memory
              - name: {module}.lookup
              - name: AgentTool
                args:
                  agent: {{config_path: ./critic.yaml}}
                  skip_summarization: true
            sub_agents:
              - config_path: ./pipeline.yaml
            before_agent_callbacks:
              - name: {module}.check_in
            before_model_callbacks:
              - name: {module}.before_model
            output_key: last_answer
            """,
        "critic.yaml": "name: critic\ninstruction: Find the flaw.\n",
        "pipeline.yaml": """\
            agent_class: SequentialAgent
            name: pipeline
            sub_agents:
              - config_path: ./loop.yaml
              - config_path: ./fanout.yaml
            """,
        "loop.yaml": """\
            agent_class: LoopAgent
            name: refine
            max_iterations: 3
            sub_agents:
              - config_path: ./worker.yaml
            """,
        "fanout.yaml": """\
            agent_class: ParallelAgent
            name: fanout
            description: Asks two at once.
            sub_agents:
              - config_path: ./worker_a.yaml
              - config_path: ./worker_b.yaml
            """,
        "worker.yaml": "name: worker\ninstruction: Improve it.\ntools:\n  - name: exit_loop\n",
        "worker_a.yaml": "name: worker_a\ninstruction: Say A.\n",
        "worker_b.yaml": "name: worker_b\ninstruction: Say B.\n",
    })


def _names(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [] if value is None else [value]
    return [item.__name__ for item in items]


def tree(agent: Any) -> dict[str, Any]:
    """What both kits' agents can be compared on."""
    tools: list[Any] = []
    for tool in getattr(agent, "tools", []):
        if hasattr(tool, "agent"):
            tools.append({"agent_tool": tree(tool.agent), "skip_summarization": tool.skip_summarization,
                          "include_plugins": tool.include_plugins})
        else:
            tools.append(getattr(tool, "name", None) or tool.__name__)
    return {"class": type(agent).__name__, "name": agent.name, "description": agent.description,
            "instruction": getattr(agent, "instruction", None), "model": getattr(agent, "model", None),
            "output_key": getattr(agent, "output_key", None), "max_iterations": agent.max_iterations if type(agent).__name__ == "LoopAgent" else None,
            "before_agent_callback": _names(agent.before_agent_callback),
            "before_model_callback": _names(getattr(agent, "before_model_callback", None)),
            "tools": tools, "sub_agents": [tree(sub) for sub in agent.sub_agents],
            "parents": [sub.parent_agent.name for sub in agent.sub_agents]}


def adk_quietly(call: Callable[[], Any]) -> Any:
    """google-adk's call, its own deprecation warnings (LoopAgent...) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return call()


def test_from_config_loads_the_same_files_into_the_same_tree(tmp_path: Path, code: ModuleType) -> None:
    root = app(tmp_path / "concierge", code.__name__)
    theirs = adk_quietly(lambda: adk_utils.from_config(str(root)))
    ours = config_agent_utils.from_config(str(root))
    assert tree(ours) == tree(theirs)
    assert tree(ours)["tools"][2] == {"agent_tool": tree(theirs.tools[2].agent), "skip_summarization": True,
                                      "include_plugins": True}
    assert ours.tools[1] is code.lookup and ours.before_agent_callback == [code.check_in]
    assert tree(load_agent_config(root)) == tree(ours)  # the engine's loader is the same one


def test_an_llm_agents_other_keys_load_as_in_google_adk(tmp_path: Path, code: ModuleType) -> None:
    """``model_code``, the schemas by name, ``static_instruction`` and
    ``generate_content_config`` set the same fields in both; the builder's upload
    check refuses the keys that name code."""
    module = code.__name__
    text = f"""\
        name: typed
        instruction: Answer in JSON.
        model_code: {{name: {module}.MODEL}}
        input_schema: {{name: {module}.Question}}
        output_schema: {{name: {module}.Answer}}
        static_instruction: Be brief.
        generate_content_config: {{temperature: 0.25, max_output_tokens: 64}}
        """
    root = write(tmp_path / "typed", {"root_agent.yaml": text})
    theirs = adk_quietly(lambda: adk_utils.from_config(str(root)))
    for ours in (config_agent_utils.from_config(str(root)), load_agent_config(root)):
        assert (ours.model, ours.input_schema, ours.output_schema, ours.static_instruction) == (
            theirs.model, theirs.input_schema, theirs.output_schema, theirs.static_instruction) == (
            "gemini-2.5-flash", code.Question, code.Answer, "Be brief.")
        assert (ours.generate_content_config.temperature, ours.generate_content_config.max_output_tokens) == (
            theirs.generate_content_config.temperature, theirs.generate_content_config.max_output_tokens) == (0.25, 64)
    for key in ("model_code", "input_schema", "output_schema"):
        with pytest.raises(AgentDefinitionError, match=f"code references.*{key}"):
            check_builder_upload("typed/root_agent.yaml", f"name: t\n{key}: {{name: {module}.MODEL}}\n".encode())
    both = write(tmp_path / "both", {"root_agent.yaml": f"name: b\ninstruction: x\nmodel: m\nmodel_code: {{name: {module}.MODEL}}\n"})
    with pytest.raises(ValueError):
        adk_quietly(lambda: adk_utils.from_config(str(both)))
    with pytest.raises(AgentDefinitionError, match="model, model_code: give one of them"):
        config_agent_utils.from_config(str(both))


def test_resolve_agent_reference_loads_a_file_relative_to_the_referring_one(tmp_path: Path, code: ModuleType) -> None:
    root = app(tmp_path / "concierge", code.__name__)
    ours = config_agent_utils.resolve_agent_reference(common_configs.AgentRefConfig(config_path="./loop.yaml"),
                                                      str(root))
    theirs = adk_quietly(lambda: adk_utils.resolve_agent_reference(
        adk_common.AgentRefConfig(config_path="./loop.yaml"), str(root)))
    assert tree(ours) == tree(theirs)
    assert (type(ours).__name__, ours.max_iterations, ours.sub_agents[0].name) == ("LoopAgent", 3, "worker")


@pytest.mark.parametrize("ref", [
    {"config_path": "/etc/agent.yaml"},   # absolute
    {"config_path": "../outside.yaml"},   # leaves the referring file's folder
    {"code": "{module}.NotAnAgent"},      # a class
    {"code": "{module}.lookup"},          # a function
    {"code": "{module}"},                 # a module's name, no object in it
    {"code": "{module}.missing"},         # nothing of that name
])
def test_resolve_agent_reference_refuses_what_google_adk_refuses(
        tmp_path: Path, code: ModuleType, ref: dict[str, str]) -> None:
    (tmp_path / "outside.yaml").write_text("name: outside\ninstruction: x\n")
    root = write(tmp_path / "app", {"root_agent.yaml": "name: a\ninstruction: x\n"})
    ref = {key: value.format(module=code.__name__) for key, value in ref.items()}
    with pytest.raises((ValueError, AttributeError, ImportError)):
        adk_quietly(lambda: adk_utils.resolve_agent_reference(adk_common.AgentRefConfig(**ref), str(root)))
    with pytest.raises(AgentDefinitionError, match=str(root)):
        config_agent_utils.resolve_agent_reference(common_configs.AgentRefConfig(**ref), str(root))


def test_code_references_resolve_to_the_same_objects(code: ModuleType) -> None:
    name = f"{code.__name__}.lookup"
    assert config_agent_utils.resolve_fully_qualified_name(name) is adk_utils.resolve_fully_qualified_name(name)
    assert config_agent_utils.resolve_code_reference(common_configs.CodeConfig(name=name)) is code.lookup
    configs = [f"{code.__name__}.check_in", f"{code.__name__}.before_model"]
    assert (config_agent_utils.resolve_callbacks([common_configs.CodeConfig(name=n) for n in configs])
            == adk_utils.resolve_callbacks([adk_common.CodeConfig(name=n) for n in configs])
            == [code.check_in, code.before_model])


@pytest.mark.parametrize("name", ["nodot", "no_such_module_adk52.thing", "os.system", "subprocess.run",
                                  "yaml.unsafe_load", "{module}.missing"])
def test_code_references_refused_by_both(code: ModuleType, name: str) -> None:
    name = name.format(module=code.__name__)
    with pytest.raises(ValueError):
        adk_utils.resolve_code_reference(adk_common.CodeConfig(name=name))
    with pytest.raises(ValueError):
        adk_utils.resolve_fully_qualified_name(name)
    with pytest.raises(AgentDefinitionError, match=f"'{name}'"):
        config_agent_utils.resolve_code_reference(common_configs.CodeConfig(name=name))
    with pytest.raises(AgentDefinitionError, match=f"'{name}'"):
        config_agent_utils.resolve_fully_qualified_name(name)


def test_a_file_naming_standard_library_code_is_refused_by_both_loaders(tmp_path: Path) -> None:
    """google-adk's module denylist: an agent file may not make the host import
    ``os.system``; the engine's loader (an app's root_agent.yaml) refuses it too."""
    root = write(tmp_path / "app", {"root_agent.yaml": "name: a\ninstruction: x\ntools:\n  - name: os.system\n"})
    with pytest.raises(ValueError, match="os"):
        adk_quietly(lambda: adk_utils.from_config(str(root)))
    for load in (config_agent_utils.from_config, load_agent_config):
        with pytest.raises(AgentDefinitionError, match=rf"{root}: 'os.system'.*may not import from 'os'"):
            load(str(root))


@pytest.mark.parametrize(("text", "ours"), [
    ("", r"holds a mapping"),                                        # empty
    ("- name: a\n", r"holds a mapping"),                             # not a mapping
    ("name: a\ninstruction: x\nmodle: m\n", r"modle: Extra inputs"),  # unknown key
    ("name: a\ninstruction: x\nsub_agents:\n  - {config_path: ./b.yaml, code: x.y}\n", r"not both"),
])
def test_a_bad_file_is_a_typed_error_naming_the_file(tmp_path: Path, text: str, ours: str) -> None:
    root = write(tmp_path / "app", {"root_agent.yaml": text})
    with pytest.raises(ValueError):
        adk_quietly(lambda: adk_utils.from_config(str(root)))
    with pytest.raises(AgentDefinitionError, match=ours) as raised:
        config_agent_utils.from_config(str(root))
    assert "app" in str(raised.value) and ".yaml" in str(raised.value)


def test_a_missing_file_is_file_not_found_in_both(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        adk_utils.from_config(str(missing))
    with pytest.raises(FileNotFoundError, match=str(missing)) as raised:
        config_agent_utils.from_config(str(missing))
    assert isinstance(raised.value, AgentDefinitionError)


def test_a_missing_sub_agent_file_is_file_not_found_in_both(tmp_path: Path) -> None:
    root = write(tmp_path / "app", {"root_agent.yaml": "name: a\ninstruction: x\nsub_agents:\n  - config_path: b.yaml\n"})
    with pytest.raises(FileNotFoundError, match=r"b\.yaml"):
        adk_quietly(lambda: adk_utils.from_config(str(root)))
    for load in (config_agent_utils.from_config, load_agent_config):
        with pytest.raises(FileNotFoundError, match=r"app/b\.yaml: cannot read it") as raised:
            load(str(root))
        assert isinstance(raised.value, AgentDefinitionError)


DOCUMENTS = [
    {"name": "a", "instruction": "x", "model": "gemini-2.5-flash",
     "tools": [{"name": "AgentTool", "args": {"agent": {"config_path": "b.yaml"}, "skip_summarization": True}}],
     "sub_agents": [{"config_path": "c.yaml"}, {"code": "pkg.agent"}],
     "before_model_callbacks": [{"name": "pkg.cb"}], "generate_content_config": {"temperature": 0.2}},
    {"agent_class": "LlmAgent", "name": "a", "instruction": "x", "model_code": {"name": "pkg.model"}},
    {"agent_class": "LoopAgent", "name": "l", "max_iterations": 2},
    {"agent_class": "ParallelAgent", "name": "p", "description": "both"},
    {"agent_class": "SequentialAgent", "name": "s", "sub_agents": [{"config_path": "a.yaml"}]},
    {"agent_class": "Agent", "name": "g", "anything": 1},            # not one of the four: the base, extras kept
    {"agent_class": "my_pkg.MyAgent", "name": "m", "custom": {"k": [1]}},
]


@pytest.mark.parametrize("data", DOCUMENTS)
def test_agent_config_picks_the_same_config_class(data: dict[str, Any]) -> None:
    theirs = adk_quietly(lambda: adk_agent_config.AgentConfig.model_validate(data)).root
    ours = adk_quietly(lambda: agent_config.AgentConfig.model_validate(data)).root
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.model_dump() == theirs.model_dump()
    assert agent_config.agent_config_discriminator(data) == adk_agent_config.agent_config_discriminator(data)


@pytest.mark.parametrize("data", [
    {"name": "a"},                                                   # an LlmAgent's instruction is required
    {"agent_class": "LoopAgent", "name": "l", "instruction": "x"},   # not a LoopAgent's key
    {"agent_class": "SequentialAgent"},                              # no name
    {"name": "a", "instruction": "x", "model": "m", "model_code": {"name": "p.m"}},
    {"name": "a", "instruction": "x", "tools": [{"name": "t", "extra": 1}]},
    {"name": "a", "instruction": "x", "sub_agents": [{}]},
])
def test_agent_config_refuses_the_same_documents(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as theirs:
        adk_quietly(lambda: adk_agent_config.AgentConfig.model_validate(data))
    with pytest.raises(ValidationError) as ours:
        adk_quietly(lambda: agent_config.AgentConfig.model_validate(data))
    assert [e["loc"] for e in ours.value.errors()] == [e["loc"] for e in theirs.value.errors()]


def test_agent_config_of_something_not_a_mapping_is_a_value_error() -> None:
    for module in (adk_agent_config, agent_config):
        with pytest.raises(ValueError):
            adk_quietly(lambda m=module: m.AgentConfig.model_validate([1]))  # type: ignore[misc]
        with pytest.raises(ValueError):
            module.agent_config_discriminator("name: a")


CONFIG_CLASSES = [
    ("AgentConfig", lambda m: m["agent_config"].AgentConfig.model_validate({"name": "a", "instruction": "x"})),
    ("BaseAgentConfig", lambda m: m["base"].BaseAgentConfig(name="a")),
    ("LlmAgentConfig", lambda m: m["llm"].LlmAgentConfig(name="a", instruction="x")),
    ("LoopAgentConfig", lambda m: m["loop"].LoopAgentConfig.model_validate({"name": "a"})),
    ("ParallelAgentConfig", lambda m: m["parallel"].ParallelAgentConfig(name="a")),
    ("SequentialAgentConfig", lambda m: m["sequential"].SequentialAgentConfig(name="a")),
]


def _modules(ours: bool) -> dict[str, Any]:
    if ours:
        import adk_actors.agents.base_agent_config as base
        import adk_actors.agents.llm_agent_config as llm
        import adk_actors.agents.loop_agent_config as loop
        import adk_actors.agents.parallel_agent_config as parallel
        import adk_actors.agents.sequential_agent_config as sequential
        return {"agent_config": agent_config, "base": base, "llm": llm, "loop": loop, "parallel": parallel,
                "sequential": sequential}
    import google.adk.agents.base_agent_config as adk_base
    import google.adk.agents.llm_agent_config as adk_llm
    import google.adk.agents.loop_agent_config as adk_loop
    import google.adk.agents.parallel_agent_config as adk_parallel
    import google.adk.agents.sequential_agent_config as adk_sequential
    return {"agent_config": adk_agent_config, "base": adk_base, "llm": adk_llm, "loop": adk_loop,
            "parallel": adk_parallel, "sequential": adk_sequential}


@pytest.mark.parametrize(("name", "make"), CONFIG_CLASSES, ids=[name for name, _ in CONFIG_CLASSES])
def test_the_config_classes_warn_that_they_are_deprecated_as_in_google_adk(
        name: str, make: Callable[[dict[str, Any]], Any]) -> None:
    for ours in (False, True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make(_modules(ours))
        messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
        assert any(message.startswith(f"{name} is deprecated") for message in messages), (ours, messages)


def test_the_reference_and_tool_models_do_not_warn_and_validate_as_google_adks() -> None:
    pairs: list[tuple[type[BaseModel], type[BaseModel], dict[str, Any]]] = [
        (common_configs.CodeConfig, adk_common.CodeConfig, {"name": "p.f"}),
        (common_configs.AgentRefConfig, adk_common.AgentRefConfig, {"config_path": "a.yaml"}),
        (tool_configs.ToolConfig, adk_tool_configs.ToolConfig, {"name": "p.t", "args": {"x": 1, "y": [2]}}),
        (tool_configs.ToolArgsConfig, adk_tool_configs.ToolArgsConfig, {"free": "keys"}),
        (tool_configs.BaseToolConfig, adk_tool_configs.BaseToolConfig, {})]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ours, theirs, data in pairs:
            assert ours.model_validate(data).model_dump() == theirs.model_validate(data).model_dump()
    refused: list[tuple[type[BaseModel], type[BaseModel], dict[str, Any]]] = [
        (common_configs.AgentRefConfig, adk_common.AgentRefConfig, {}),
        (common_configs.AgentRefConfig, adk_common.AgentRefConfig, {"config_path": "a", "code": "b.c"}),
        (common_configs.CodeConfig, adk_common.CodeConfig, {"name": "p.f", "args": 1}),
        (tool_configs.ToolConfig, adk_tool_configs.ToolConfig, {"name": "t", "kwargs": {}}),
        (tool_configs.BaseToolConfig, adk_tool_configs.BaseToolConfig, {"x": 1})]
    for ours, theirs, data in refused:
        with pytest.raises(ValidationError):
            theirs.model_validate(data)
        with pytest.raises(ValidationError):
            ours.model_validate(data)


def test_a_config_subclass_is_a_base_agent_config_as_in_google_adk() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for cls in (LlmAgentConfig, LoopAgentConfig, ParallelAgentConfig, SequentialAgentConfig):
            assert issubclass(cls, BaseAgentConfig)
        assert BaseAgentConfig.model_validate({"name": "a", "own_key": 1}).model_extra == {"own_key": 1}
