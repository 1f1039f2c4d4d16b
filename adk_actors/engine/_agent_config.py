"""Agents written as YAML files, in google-adk's Agent Config format.

A YAML app is a folder whose ``root_agent.yaml`` holds the root agent::

    agent_class: LlmAgent          # or SequentialAgent, ParallelAgent, LoopAgent
    name: helper
    model: gemini-2.5-flash
    instruction: You answer in one sentence.
    sub_agents:
      - config_path: ./researcher.yaml
    tools:
      - name: load_memory          # a built-in tool (or google_search, url_context...)
      - name: my_tools.lookup      # a function, by its import path
      - name: AgentTool
        args: {agent: {config_path: ./critic.yaml}}

``load_agent_config(path)`` runs the one loader of agent files
(:mod:`adk_actors.agents._config_loader`, also behind google-adk's
``config_agent_utils.from_config``): it reads a file in this order: parse it
(``yaml.safe_load``), refuse blocked keys when asked (:func:`check_blocked_keys`),
validate it against :class:`AgentConfig` (an unknown key is an error, not ignored),
load its sub-agents and agent tools from their ``config_path`` (relative to the file,
never absolute, never outside the app's folder), import the code it names (never
from the standard library), and build the agent. Every failure is an
:class:`~adk_actors.AgentDefinitionError` naming the file.

:func:`check_builder_upload` is the stricter rule for files a browser uploads through
the agent builder: no code references at all (a dotted name would import and run code
on the host), only built-in tools and agent tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .. import tools
from .._exceptions import AgentDefinitionError
from ..agents._config_loader import AGENT_CLASSES as _CLASSES
from ..agents._config_loader import (
    AGENT_TOOL,
    BUILT_IN_TOOL_NAMES,
    CODE_KEYS,
    MCP_TOOLSET_NAMES,
    agent_document,
    load_agent_file,
    read_yaml,
)
from ..agents._config_loader import CALLBACK_KEYS as _CALLBACKS
from ..agents._config_loader import AgentFile as AgentConfig

__all__ = ["BLOCKED_KEYS", "BUILT_IN_TOOLS", "ROOT_AGENT_FILE", "AgentConfig", "BlockedKeyError", "agent_document",
           "check_blocked_keys", "check_builder_upload", "load_agent_config", "read_config", "read_yaml"]

ROOT_AGENT_FILE = "root_agent.yaml"
#: the built-in tools a file names bare (the loader's names, as objects)
BUILT_IN_TOOLS: dict[str, Any] = {name: getattr(tools, name) for name in sorted(BUILT_IN_TOOL_NAMES)}


def read_config(path: Path, *, deny_blocked_keys: bool = False) -> AgentConfig:
    """Parse one agent file; when ``deny_blocked_keys``, refuse a blocked key in it
    (:func:`check_blocked_keys`); then validate it (AgentDefinitionError when it is not one)."""
    data = read_yaml(path, AgentDefinitionError, str(path))
    if deny_blocked_keys:
        check_blocked_keys(data, str(path))
    return agent_document(data, str(path))


BLOCKED_KEYS = frozenset({"args"})
_LLM_AGENT_CLASSES = frozenset(f"{prefix}{name}" for name in ("Agent", "LlmAgent")
                               for prefix in ("", "google.adk.agents.", "google.adk.agents.llm_agent."))


class BlockedKeyError(AgentDefinitionError):
    """An agent file the builder writes holds a key google-adk refuses there (it can make
    the host run code)."""


def _deny(node: Any, where: str) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in BLOCKED_KEYS:
                raise BlockedKeyError(f"{where}: key {key!r} is not allowed in an agent file the "
                                      "builder writes (it can make the host run code)")
            _deny(value, where)
    elif isinstance(node, list):
        for item in node:
            _deny(item, where)


def check_blocked_keys(data: Any, where: str) -> None:
    """Refuse (BlockedKeyError naming ``where`` and the key) a blocked key (``args``)
    anywhere in the parsed agent file ``data``, at any depth, as google-adk does when
    ``adk web`` serves its UI. The one exemption: ``args`` of an MCP toolset entry in
    an LLM agent's ``tools`` (only that entry's own ``args``; keys under other tool
    keys are still checked)."""
    if not isinstance(data, dict):
        _deny(data, where)
        return
    agent_class = data.get("agent_class", "LlmAgent")
    llm = isinstance(agent_class, str) and agent_class in _LLM_AGENT_CLASSES
    for key, value in data.items():
        if key != "tools" or not llm or not isinstance(value, list):
            _deny({key: value}, where)
            continue
        for tool in value:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(tool, dict):
                _deny(tool, where)
                continue
            for tool_key, tool_value in tool.items():
                if tool_key not in BLOCKED_KEYS:
                    _deny(tool_value, where)
                elif not (isinstance(name, str) and name in MCP_TOOLSET_NAMES):
                    _deny({tool_key: tool_value}, where)


def load_agent_config(path: str | Path, *, deny_blocked_keys: bool = False) -> Any:
    """The agent ``path`` (an agent file, usually an app's ``root_agent.yaml``)
    defines, with every agent it refers to; the app's folder is the file's.
    ``deny_blocked_keys`` (set for what the agent builder writes) refuses, in each
    file before it is validated, the keys :func:`check_blocked_keys` blocks."""
    return load_agent_file(Path(path), check=check_blocked_keys if deny_blocked_keys else None)


def _code_references(node: Any, where: str) -> list[str]:
    """The code references in an uploaded document: dotted tool names, ``code`` keys,
    callbacks, ``model_code`` and the schemas, and any ``args`` other than an AgentTool's."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "code" or key in _CALLBACKS or key in CODE_KEYS or (key == "agent_class" and value not in _CLASSES):
                found.append(f"{where}: {key}")
            elif key == "tools" and isinstance(value, list):
                for tool in value:
                    name = tool.get("name") if isinstance(tool, dict) else tool
                    if not isinstance(name, str) or name not in (*BUILT_IN_TOOLS, AGENT_TOOL):
                        found.append(f"{where}: tool {name!r}")
            found.extend(_code_references(value, where))
    elif isinstance(node, list):
        for item in node:
            found.extend(_code_references(item, where))
    return found


def check_builder_upload(name: str, content: bytes) -> None:
    """Refuse (AgentDefinitionError) an uploaded agent file that is not YAML or that
    would make the host import code: a builder upload names built-in tools, agent
    tools and other agent files only."""
    try:
        documents = list(yaml.safe_load_all(content))
    except yaml.YAMLError as exc:
        raise AgentDefinitionError(f"{name}: not valid YAML: {exc}") from None
    if refused := _code_references(documents, name):
        raise AgentDefinitionError("the agent builder does not accept code references (they would run code on "
                                   f"the host; write them in the file by hand): {'; '.join(refused)}")
