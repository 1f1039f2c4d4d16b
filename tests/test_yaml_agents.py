"""Agents written as YAML (google-adk's Agent Config format): the same file loads here
and in google-adk into the same tree; a broken file is refused with the file and the
problem named; the app catalog finds YAML apps in a folder and reads an edited one
again; and the builder's upload check refuses anything that would run code."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from adk_actors import AgentDefinitionError, UnknownAppError
from adk_actors.agents import LlmAgent, LoopAgent, SequentialAgent
from adk_actors.engine import AppCatalog, check_builder_upload, load_agent_config
from adk_actors.tools import AgentTool, exit_loop, load_memory


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def shop_app(folder: Path) -> Path:
    """A root LlmAgent with a sub-agent file, a built-in tool, a function tool by its
    import path and an agent tool whose agent is a LoopAgent."""
    write(folder, "researcher.yaml", """\
        name: researcher
        instruction: Find facts.
        tools:
          - name: exit_loop
        """)
    write(folder, "critic.yaml", """\
        agent_class: LoopAgent
        name: critic
        description: Reviews an answer.
        max_iterations: 2
        sub_agents:
          - config_path: ./researcher_again.yaml
        """)
    write(folder, "researcher_again.yaml", "name: checker\ninstruction: Check.\n")
    return write(folder, "root_agent.yaml", """\
        agent_class: LlmAgent
        name: shop
        model: gemini-2.5-flash
        description: Answers shop questions.
        instruction: You answer about {topic}.
        sub_agents:
          - config_path: ./researcher.yaml
        tools:
          - name: load_memory
          - name: examples.weather_bot.agent.get_weather
          - name: AgentTool
            args: {agent: {config_path: ./critic.yaml}, skip_summarization: false}
        output_key: last_answer
        """)


def tree(agent: Any) -> dict[str, Any]:
    """An agent tree as both kits can be read: class, name, instruction, tool names."""
    tools = []
    for tool in getattr(agent, "tools", []):
        name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
        tools.append(name if not hasattr(tool, "agent") else tree(tool.agent))
    instruction = getattr(agent, "instruction", "")
    return {"class": type(agent).__name__, "name": agent.name, "instruction": instruction,
            "tools": tools, "sub_agents": [tree(sub) for sub in agent.sub_agents]}


def test_a_yaml_app_builds_the_agents_it_describes(tmp_path: Path) -> None:
    root = load_agent_config(shop_app(tmp_path / "shop"))
    assert isinstance(root, LlmAgent)
    assert (root.name, root.model, root.output_key) == ("shop", "gemini-2.5-flash", "last_answer")
    assert root.instruction == "You answer about {topic}."
    assert root.tools[0] is load_memory
    assert root.tools[1].__name__ == "get_weather"
    agent_tool = root.tools[2]
    assert isinstance(agent_tool, AgentTool) and isinstance(agent_tool.agent, LoopAgent)
    assert agent_tool.agent.max_iterations == 2 and agent_tool.agent.sub_agents[0].name == "checker"
    assert root.sub_agents[0].name == "researcher" and root.sub_agents[0].tools == [exit_loop]
    assert root.sub_agents[0].parent_agent is root


def test_google_adk_loads_the_same_file_into_the_same_tree(tmp_path: Path) -> None:
    from google.adk.agents import config_agent_utils

    path = shop_app(tmp_path / "shop")
    ours, theirs = load_agent_config(path), config_agent_utils.from_config(str(path))
    assert tree(ours) == tree(theirs)


@pytest.mark.parametrize(("files", "expected"), [
    ({"root_agent.yaml": "name: a\nmodle: gemini-2.5-flash\n"}, r"root_agent.yaml: modle: Extra inputs"),
    ({"root_agent.yaml": "name: a\nagent_class: GraphAgent\n"}, r"agent_class 'GraphAgent' is not one of"),
    ({"root_agent.yaml": "name: [a\n"}, r"not valid YAML"),
    ({"root_agent.yaml": "- name: a\n"}, r"holds a mapping"),
    ({"root_agent.yaml": "name: a\ntools:\n  - name: web_lookup\n"}, r"'web_lookup' is not built in"),
    ({"root_agent.yaml": "name: a\ntools:\n  - name: no_such_module.tool\n"}, r"cannot import 'no_such_module.tool'"),
    ({"root_agent.yaml": "name: a\nsub_agents:\n  - config_path: ../outside.yaml\n"}, r"outside the app's folder"),
    ({"root_agent.yaml": "name: a\nsub_agents:\n  - config_path: ./missing.yaml\n"}, r"missing.yaml: cannot read"),
    ({"root_agent.yaml": "name: a\nsub_agents:\n  - config_path: ./b.yaml\n",
      "b.yaml": "name: b\nsub_agents:\n  - config_path: ./root_agent.yaml\n"}, r"in a circle"),
    ({"root_agent.yaml": "agent_class: SequentialAgent\nname: a\nmodel: gemini-2.5-flash\n"},
     r"model: only an LlmAgent has these"),
    ({"root_agent.yaml": "name: a\nmax_iterations: 3\n"}, r"max_iterations: only a LoopAgent"),
    ({"root_agent.yaml": "name: a\ntools:\n  - name: AgentTool\n    args: {agent: x}\n"}, r"AgentTool takes args"),
    ({"root_agent.yaml": "name: not a name\n"}, r"not a name"),
])
def test_a_broken_agent_file_is_refused_naming_the_file_and_the_problem(
        tmp_path: Path, files: dict[str, str], expected: str) -> None:
    (tmp_path / "outside.yaml").write_text("name: outside\n")
    for name, text in files.items():
        write(tmp_path / "app", name, text)
    with pytest.raises(AgentDefinitionError, match=expected):
        load_agent_config(tmp_path / "app" / "root_agent.yaml")


def test_the_catalog_serves_the_folders_yaml_apps_and_reads_an_edited_one_again(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    write(agents / "helper", "root_agent.yaml", "name: helper\ninstruction: Be brief.\n")
    write(agents / "half_made", "tmp/half_made/root_agent.yaml", "name: draft\n")  # a draft only: no app
    write(agents / "bad-name", "root_agent.yaml", "name: x\n")  # not an app name
    catalog = AppCatalog({"weather_bot": "examples.weather_bot.agent:root_agent"}, str(agents))
    assert catalog.names() == ["helper", "weather_bot"]
    assert (catalog.language("helper"), catalog.language("weather_bot")) == ("yaml", "python")
    assert "helper" in catalog and "half_made" not in catalog and "../agents/helper" not in catalog

    first = catalog.load("helper")
    assert catalog.load("helper") is first  # unchanged files: not read again
    root_file = agents / "helper" / "root_agent.yaml"
    root_file.write_text("name: helper\ninstruction: Be thorough.\n")
    stat = root_file.stat()
    os.utime(root_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a distinct stamp, however fast
    assert catalog.load("helper").root_agent.instruction == "Be thorough."
    with pytest.raises(UnknownAppError, match="known apps: \\['helper', 'weather_bot'\\]"):
        catalog.load("nobody")
    # a configured app wins over a folder of the same name
    write(agents / "weather_bot", "root_agent.yaml", "name: impostor\n")
    assert catalog.load("weather_bot").root_agent.name == "weather_bot"


@pytest.mark.parametrize(("text", "refused"), [
    ("name: a\ntools:\n  - name: os.system\n", "tool 'os.system'"),
    ("name: a\nbefore_model_callbacks:\n  - name: os.abort\n", "before_model_callbacks"),
    ("name: a\nsub_agents:\n  - code: evil.agent\n", "code"),
    ("name: a\nagent_class: evil.Agent\n", "agent_class"),
    ("name: [a\n", "not valid YAML"),
])
def test_the_builder_refuses_uploads_that_would_run_code(text: str, refused: str) -> None:
    with pytest.raises(AgentDefinitionError, match=refused):
        check_builder_upload("app/root_agent.yaml", text.encode())


def test_the_builder_accepts_what_adk_webs_builder_writes() -> None:
    check_builder_upload("app/root_agent.yaml", textwrap.dedent("""\
        name: app
        model: gemini-2.5-flash
        agent_class: LlmAgent
        instruction: You are the root agent that coordinates other agents.
        sub_agents:
          - config_path: ./helper.yaml
        tools:
          - name: load_memory
          - name: AgentTool
            args:
              agent:
                config_path: ./critic.yaml
              skip_summarization: false
        """).encode())


def test_a_sequential_yaml_root_runs_its_sub_agents_in_order(tmp_path: Path) -> None:
    write(tmp_path / "flow", "a.yaml", "name: first\ninstruction: one\n")
    write(tmp_path / "flow", "b.yaml", "name: second\ninstruction: two\n")
    root = load_agent_config(write(tmp_path / "flow", "root_agent.yaml", """\
        agent_class: SequentialAgent
        name: flow
        sub_agents:
          - config_path: a.yaml
          - config_path: b.yaml
        """))
    assert isinstance(root, SequentialAgent) and [a.name for a in root.sub_agents] == ["first", "second"]
