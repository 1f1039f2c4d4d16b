"""YAML agent files: google-adk's key denylist (``adk web``'s), side by side with
google-adk's own check (the same files refused and accepted), applied to what the
agent builder writes (its save route and its assistant; tests/test_agent_builder.py
shows the save refused)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.adk.agents import config_agent_utils as adk_utils

from adk_actors.engine import load_agent_config
from adk_actors.engine._agent_config import BlockedKeyError, check_blocked_keys

ROOT = """\
agent_class: LlmAgent
name: helper
model: gemini-2.5-flash
instruction: You answer in one sentence.
"""

REFUSED = {
    "agent_tool_args": ROOT + "tools:\n  - name: AgentTool\n    args: {agent: {config_path: ./critic.yaml}}\n",
    "function_tool_args": ROOT + "tools:\n  - name: my_tools.lookup\n    args: {x: 1}\n",
    "nested_args": ROOT + "generate_content_config:\n  labels: {args: x}\n",
    "top_level_args": ROOT + "args: [1]\n",
    "mcp_args_in_workflow": "agent_class: SequentialAgent\nname: s\ntools:\n  - name: McpToolset\n    args: {}\n",
}
ACCEPTED = {
    "plain": ROOT,
    "builtin_tool": ROOT + "tools:\n  - name: load_memory\n",
    "sub_agent": ROOT + "sub_agents:\n  - config_path: ./critic.yaml\n",
}


def _adk_refuses(data: Any) -> bool:
    try:
        adk_utils._check_config_for_blocked_keys(data, "f.yaml")
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_by_both_when_denying_blocked_keys(name: str) -> None:
    data = yaml.safe_load(REFUSED[name])
    assert _adk_refuses(data)
    with pytest.raises(BlockedKeyError, match=r"f\.yaml.*'args'"):
        check_blocked_keys(data, "f.yaml")


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_by_both(name: str) -> None:
    data = yaml.safe_load(ACCEPTED[name])
    assert not _adk_refuses(data)
    check_blocked_keys(data, "f.yaml")


def test_mcp_toolset_args_exempt_in_both() -> None:
    data = yaml.safe_load(ROOT + "tools:\n  - name: McpToolset\n    args: {}\n")
    try:
        adk_utils._check_config_for_blocked_keys(data, "f.yaml")
    except ValueError as exc:  # google-adk also validates the toolset's args; the key itself is exempt
        assert "Blocked key" not in str(exc)
    check_blocked_keys(data, "f.yaml")


def _app(tmp_path: Path) -> Path:
    (tmp_path / "critic.yaml").write_text("name: critic\nmodel: gemini-2.5-flash\n")
    root = tmp_path / "root_agent.yaml"
    root.write_text(REFUSED["agent_tool_args"])
    return root


def test_loader_refuses_args_only_when_denying_blocked_keys(tmp_path: Path) -> None:
    root = _app(tmp_path)
    agent = load_agent_config(root)  # `run` / api_server: no check, as google-adk
    assert agent.name == "helper" and [t.name for t in agent.tools] == ["critic"]
    with pytest.raises(BlockedKeyError, match=re.escape(str(root))):
        load_agent_config(root, deny_blocked_keys=True)


def test_sub_agent_file_checked_too(tmp_path: Path) -> None:
    (tmp_path / "critic.yaml").write_text(ROOT.replace("helper", "critic") + "tools:\n  - name: x.y\n    args: {}\n")
    root = tmp_path / "root_agent.yaml"
    root.write_text(ACCEPTED["sub_agent"])
    with pytest.raises(BlockedKeyError, match=r"critic\.yaml"):
        load_agent_config(root, deny_blocked_keys=True)
