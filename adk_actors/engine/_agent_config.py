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

``load_agent_config(path)`` reads a file in this order: parse it (``yaml.safe_load``),
validate it against :class:`AgentConfig` (an unknown key is an error, not ignored),
load its sub-agents and agent tools from their ``config_path`` (relative to the file,
and never outside the app's folder), import the code it names, and build the agent.
Every failure is an :class:`~adk_actors.AgentDefinitionError` naming the file.

:func:`check_builder_upload` is the stricter rule for files a browser uploads through
the agent builder: no code references at all (a dotted name would import and run code
on the host), only built-in tools and agent tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from supervision.lowlevel import import_object

from .._exceptions import AdkError, AgentDefinitionError
from ..agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from ..tools import (
    AgentTool,
    enterprise_web_search,
    exit_loop,
    google_maps_grounding,
    google_search,
    load_artifacts,
    load_memory,
    url_context,
)

__all__ = ["BLOCKED_KEYS", "BUILT_IN_TOOLS", "ROOT_AGENT_FILE", "AgentConfig", "BlockedKeyError", "check_blocked_keys", "check_builder_upload", "load_agent_config", "read_yaml"]

ROOT_AGENT_FILE = "root_agent.yaml"
BUILT_IN_TOOLS: dict[str, Any] = {"exit_loop": exit_loop, "load_artifacts": load_artifacts, "load_memory": load_memory,
                                  # Gemini's own tools (the model runs them)
                                  "google_search": google_search, "url_context": url_context,
                                  "google_maps_grounding": google_maps_grounding,
                                  "enterprise_web_search": enterprise_web_search}
AGENT_TOOL = "AgentTool"
_CLASSES: dict[str, type[Any]] = {"LlmAgent": LlmAgent, "Agent": LlmAgent, "SequentialAgent": SequentialAgent,
                                  "ParallelAgent": ParallelAgent, "LoopAgent": LoopAgent}
_AGENT_CALLBACKS = ("before_agent_callbacks", "after_agent_callbacks")
_LLM_CALLBACKS = ("before_model_callbacks", "after_model_callbacks", "before_tool_callbacks", "after_tool_callbacks")
_CALLBACKS = (*_AGENT_CALLBACKS, *_LLM_CALLBACKS)
#: the fields an LlmAgent takes as they are in the file (tools and callbacks are loaded)
_LLM_FIELDS = ("model", "instruction", "global_instruction", "output_key", "include_contents",
               "disallow_transfer_to_parent", "disallow_transfer_to_peers")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentRef(_Strict):
    """Another agent: a YAML file (``config_path``) or code (``code``: an import path)."""

    config_path: str | None = None
    code: str | None = None


class CodeRef(_Strict):
    name: str


class ToolConfig(_Strict):
    """A tool: a built-in's name, a function's import path, or ``AgentTool`` with
    ``args: {agent: {config_path}, skip_summarization}``."""

    name: str
    args: dict[str, Any] | None = None


class AgentConfig(_Strict):
    """One agent file (google-adk's ``AgentConfig``, the fields this kit runs)."""

    agent_class: str = "LlmAgent"
    name: str
    description: str = ""
    model: str = ""
    instruction: str = ""
    global_instruction: str = ""
    sub_agents: list[AgentRef] = Field(default_factory=list)
    tools: list[ToolConfig] = Field(default_factory=list)
    output_key: str | None = None
    include_contents: Literal["default", "none"] = "default"
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    max_iterations: int | None = Field(default=None, ge=0)
    before_agent_callbacks: list[CodeRef] = Field(default_factory=list)
    after_agent_callbacks: list[CodeRef] = Field(default_factory=list)
    before_model_callbacks: list[CodeRef] = Field(default_factory=list)
    after_model_callbacks: list[CodeRef] = Field(default_factory=list)
    before_tool_callbacks: list[CodeRef] = Field(default_factory=list)
    after_tool_callbacks: list[CodeRef] = Field(default_factory=list)


def read_yaml(path: Path, error: type[AdkError], label: str) -> Any:
    """The YAML document in ``path`` (``yaml.safe_load``); ``error`` naming ``label``
    when the file cannot be read or is not YAML."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{label}: cannot read it: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{label}: not valid YAML: {exc}") from None


def read_config(path: Path, *, deny_blocked_keys: bool = False) -> AgentConfig:
    """Parse one agent file; when ``deny_blocked_keys``, refuse a blocked key in it
    (:func:`check_blocked_keys`); then validate it (AgentDefinitionError when it is not one)."""
    data = read_yaml(path, AgentDefinitionError, str(path))
    if deny_blocked_keys:
        check_blocked_keys(data, str(path))
    return agent_document(data, str(path))


BLOCKED_KEYS = frozenset({"args"})
_MCP_TOOLSETS = frozenset(f"{prefix}{name}" for name in ("MCPToolset", "McpToolset")
                          for prefix in ("", "google.adk.tools.", "google.adk.tools.mcp_tool.",
                                         "google.adk.tools.mcp_tool.mcp_toolset."))
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
                elif not (isinstance(name, str) and name in _MCP_TOOLSETS):
                    _deny({tool_key: tool_value}, where)


def agent_document(data: Any, path: str) -> AgentConfig:
    """Validate the parsed YAML of one agent file, named ``path`` in errors
    (AgentDefinitionError when it is not one; its references are not followed)."""
    if not isinstance(data, dict):
        raise AgentDefinitionError(f"{path}: an agent file holds a mapping (name: ..., model: ...)")
    try:
        config = AgentConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors())
        raise AgentDefinitionError(f"{path}: {problems}") from None
    if config.agent_class not in _CLASSES:
        raise AgentDefinitionError(f"{path}: agent_class {config.agent_class!r} is not one of {sorted(_CLASSES)}")
    return config


def _code(reference: str, where: str) -> Any:
    """The object a dotted name (``package.module.name``) or import path names."""
    path = reference if ":" in reference else ":".join(reference.rsplit(".", 1))
    if ":" not in path:
        raise AgentDefinitionError(f"{where}: {reference!r} is neither a built-in nor an import path (module.name)")
    try:
        return import_object(path)
    except (ImportError, AttributeError) as exc:
        raise AgentDefinitionError(f"{where}: cannot import {reference!r}: {exc}") from None


class _Loader:
    """Loads one app's files, each once, refusing paths outside ``root`` and cycles."""

    def __init__(self, root: Path, deny_blocked_keys: bool = False) -> None:
        self.root = root.resolve()
        self.deny_blocked_keys = deny_blocked_keys
        self.loading: list[Path] = []

    def file(self, base: Path, relative: str) -> Path:
        path = (base.parent / relative).resolve()
        if not path.is_relative_to(self.root):
            raise AgentDefinitionError(f"{base}: {relative!r} is outside the app's folder {self.root}")
        return path

    def agent(self, path: Path) -> Any:
        if path in self.loading:
            raise AgentDefinitionError(f"{path}: agents refer to each other in a circle ({path.name})")
        self.loading.append(path)
        try:
            return self._build(path, read_config(path, deny_blocked_keys=self.deny_blocked_keys))
        finally:
            self.loading.pop()

    def ref(self, base: Path, ref: AgentRef) -> Any:
        if (ref.config_path is None) == (ref.code is None):
            raise AgentDefinitionError(f"{base}: an agent reference names config_path or code (one of them)")
        if ref.code is not None:
            return _code(ref.code, str(base))
        assert ref.config_path is not None
        return self.agent(self.file(base, ref.config_path))

    def tool(self, path: Path, tool: ToolConfig) -> Any:
        if tool.name in BUILT_IN_TOOLS and not tool.args:
            return BUILT_IN_TOOLS[tool.name]
        if tool.name == AGENT_TOOL:
            args = tool.args or {}
            agent = args.get("agent")
            if not isinstance(agent, dict) or set(args) - {"agent", "skip_summarization"}:
                raise AgentDefinitionError(f"{path}: AgentTool takes args {{agent: {{config_path: ...}}}}")
            try:
                ref = AgentRef.model_validate(agent)
            except ValidationError:
                raise AgentDefinitionError(f"{path}: AgentTool's agent is {{config_path: ...}} or {{code: ...}}") from None
            return AgentTool(self.ref(path, ref))
        if tool.args:
            raise AgentDefinitionError(f"{path}: tool {tool.name!r}: tools with args are not supported "
                                       f"(only AgentTool takes args)")
        if "." not in tool.name:
            raise AgentDefinitionError(f"{path}: tool {tool.name!r} is not built in (built-ins: "
                                       f"{', '.join(sorted(BUILT_IN_TOOLS))}, AgentTool) nor an import path")
        return _code(tool.name, str(path))

    def _callbacks(self, path: Path, config: AgentConfig, keys: tuple[str, ...]) -> dict[str, Any]:
        """The agent's callback fields (``before_model_callback``...) for the given keys."""
        return {key.removesuffix("s"): [_code(ref.name, str(path)) for ref in refs]
                for key in keys if (refs := getattr(config, key))}

    def _build(self, path: Path, config: AgentConfig) -> Any:
        cls = _CLASSES[config.agent_class]
        fields: dict[str, Any] = {"name": config.name, "description": config.description,
                                  "sub_agents": [self.ref(path, ref) for ref in config.sub_agents],
                                  **self._callbacks(path, config, _AGENT_CALLBACKS)}
        if cls is LlmAgent:
            fields.update({key: getattr(config, key) for key in _LLM_FIELDS},
                          tools=[self.tool(path, tool) for tool in config.tools],
                          **self._callbacks(path, config, _LLM_CALLBACKS))
        elif given := [key for key in (*_LLM_FIELDS, "tools", *_LLM_CALLBACKS)
                       if getattr(config, key) != AgentConfig.model_fields[key].get_default(call_default_factory=True)]:
            raise AgentDefinitionError(f"{path}: {', '.join(given)}: only an LlmAgent has these")
        if cls is LoopAgent:
            fields["max_iterations"] = config.max_iterations or 0
        elif config.max_iterations is not None:
            raise AgentDefinitionError(f"{path}: max_iterations: only a LoopAgent has it")
        return cls(**fields)


def load_agent_config(path: str | Path, *, deny_blocked_keys: bool = False) -> Any:
    """The agent ``path`` (an agent file, usually an app's ``root_agent.yaml``)
    defines, with every agent it refers to; the app's folder is the file's.
    ``deny_blocked_keys`` (set for what the agent builder writes) refuses, in each
    file before it is validated, the keys :func:`check_blocked_keys` blocks."""
    path = Path(path).resolve()
    return _Loader(path.parent, deny_blocked_keys).agent(path)


def _code_references(node: Any, where: str) -> list[str]:
    """The code references in an uploaded document: dotted tool names, ``code`` keys,
    callbacks and any ``args`` other than an AgentTool's."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "code" or key in _CALLBACKS or (key == "agent_class" and value not in _CLASSES):
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
