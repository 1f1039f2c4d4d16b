"""The one loader of agent files (google-adk's Agent Config YAML): both
``adk_actors.engine.load_agent_config`` (what serves an app's ``root_agent.yaml``) and
google-adk's public path :func:`adk_actors.agents.config_agent_utils.from_config` run
it.

Loading a file does, in order: read and parse it (``yaml.safe_load``), run the
caller's per-file check on the parsed data (the engine's key denylist), validate it
against :class:`AgentFile` (an unknown key is an error), follow its agent references
(``config_path`` relative to the file, never absolute nor outside the first file's
folder; ``code`` a dotted name of an agent object), resolve its tools and callbacks
by name, and make the agent. Every failure is an
:class:`~adk_actors.AgentDefinitionError` (a ValueError) naming the file; a file that
is not there is also a FileNotFoundError (:class:`AgentFileNotFoundError`).

Names are resolved as google-adk resolves them: a bare tool name is a name in the
tools package (``adk_actors.tools``, looked up by name when a file names one, as
google-adk looks its bare names up in ``google.adk.tools``); a dotted name is
imported, except from the standard library and the YAML parsers (google-adk's module
denylist: such a reference could make the host run code).

``agent_class`` is a built-in kind (LlmAgent, Agent, SequentialAgent, ParallelAgent,
LoopAgent, also under google-adk's ``google.adk.agents`` names) or the dotted name of
an agent class: a subclass of ``BaseAgent`` (:class:`~._base.AgentBase`), imported as
any reference is. Such a custom class is loaded as google-adk loads it, in order: if it
overrides ``from_config``, that makes the agent (given the file validated into its
``config_type``); otherwise the file is validated against its ``config_type`` (a
:class:`BaseAgentConfig` subclass, which keeps keys it does not know; a subclass of a
built-in kind that names no config of its own refuses them), its keys that name the
class's fields are mapped onto them (``sub_agents`` loaded as references, ``tools`` of
an LlmAgent subclass as tools, ``x_callbacks`` onto ``x_callback``, ``x_code`` and the
schemas as code references, other values as they are), then, if the class overrides
``_parse_config``, it warns ``DeprecationWarning`` and gets the validated config and
those keyword arguments and returns the ones the agent is made with. A dotted name
that cannot be imported, is refused, or names no agent class is an
AgentDefinitionError naming the file.

``agent_class`` may also name a workflow node class (``Workflow``, ``FunctionNode``,
``JoinNode``, bare as google-adk's names are looked up in ``google.adk.workflow``, or
dotted, ours, google-adk's or a subclass of them): such a file, and a ``Workflow``'s
``edges`` (chains, fan-outs, routing maps, ``from_node``/``to_node`` mappings, agent
files, functions by dotted name and inline node definitions), are read as google-adk
2.13 reads them, by :mod:`._config_edges` (a key such a class has not is logged and
ignored, as there; the node fields ``input_schema``, ``output_schema``,
``require_confirmation``, ``parameter_binding`` and a function node's ``auth_config``
are mapped as there). ``sub_agents`` takes references only (``config_path`` or
``code``): an inline agent definition there is refused, as google-adk refuses it. An
LlmAgent is given the keys its file sets, and only those (as google-adk maps them: a
workflow reads an ``include_contents`` that was set as asking for the session's
history).

Importing this module installs it as what ``BaseAgent.from_config(config,
config_abs_path)`` runs (:func:`~._base.install_config_builder`).
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from supervision.lowlevel import import_object

from .._exceptions import AdkError, AgentDefinitionError
from ._base import AgentBase, AgentLike, install_config_builder
from ._config_edges import GOOGLE_ADK_WORKFLOW, NodeBuilder, is_node_class, workflow_class
from ._llm_agent import LlmAgent
from ._tool_configs import ToolArgsConfig, ToolConfig
from ._workflow import LoopAgent, ParallelAgent, SequentialAgent
from .common_configs import AgentRefConfig, CodeConfig

__all__ = [
    "AGENT_CLASSES",
    "AGENT_TOOL",
    "BUILT_IN_TOOL_NAMES",
    "CALLBACK_KEYS",
    "CODE_KEYS",
    "MCP_TOOLSET_NAMES",
    "TOOLS_PACKAGE",
    "AgentFile",
    "AgentFileNotFoundError",
    "agent_class_of",
    "agent_document",
    "build_from_config",
    "import_reference",
    "load_agent_file",
    "read_yaml",
    "resolve_agent_code",
]

_log = logging.getLogger(__name__)

#: where a bare tool name is looked up (google-adk: ``google.adk.tools``)
TOOLS_PACKAGE = "adk_actors.tools"
#: the bare tool names a file may use without ``args``
BUILT_IN_TOOL_NAMES = frozenset({"exit_loop", "load_artifacts", "load_memory", "google_search", "url_context",
                                 "google_maps_grounding", "enterprise_web_search"})
AGENT_TOOL = "AgentTool"
#: the names an agent file gives the MCP toolset (google-adk's paths, and ours): its
#: ``args`` are the toolset's config (``McpToolset.from_config``)
MCP_TOOLSET_NAMES = frozenset(f"{prefix}{name}" for name in ("MCPToolset", "McpToolset")
                              for root in ("google.adk", "adk_actors")
                              for prefix in ("", f"{root}.tools.", f"{root}.tools.mcp_tool.",
                                             f"{root}.tools.mcp_tool.mcp_toolset."))
AGENT_CLASSES: dict[str, type[Any]] = {"LlmAgent": LlmAgent, "Agent": LlmAgent, "SequentialAgent": SequentialAgent,
                                       "ParallelAgent": ParallelAgent, "LoopAgent": LoopAgent}
_AGENT_CALLBACKS = ("before_agent_callbacks", "after_agent_callbacks")
_LLM_CALLBACKS = ("before_model_callbacks", "after_model_callbacks", "before_tool_callbacks", "after_tool_callbacks")
#: the package google-adk's files name its built-in agent classes in
_GOOGLE_ADK_AGENTS = "google.adk.agents."
#: fields whose value, given as a dotted name or ``{name: ...}``, is code to import
_SCHEMA_FIELDS = ("input_schema", "output_schema")
CALLBACK_KEYS = (*_AGENT_CALLBACKS, *_LLM_CALLBACKS)
#: the fields an LlmAgent takes as they are in the file (tools and callbacks are resolved)
_LLM_FIELDS = ("model", "instruction", "global_instruction", "output_key", "include_contents",
               "disallow_transfer_to_parent", "disallow_transfer_to_peers", "static_instruction",
               "generate_content_config")
#: the LlmAgent keys that name code (``model_code`` sets ``model``)
CODE_KEYS = ("model_code", "input_schema", "output_schema")
#: top-level modules a reference may not import: all of the standard library, the
#: ones removed from it that can still be installed, CPython's test packages, and the
#: YAML parsers (their unsafe loaders build arbitrary objects)
_REFUSED_MODULES = (frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names)
                    | {"asynchat", "asyncore", "cgi", "commands", "crypt", "distutils", "imp", "mailcap", "nntplib",
                       "pipes", "smtpd", "telnetlib", "uu", "test", "_testcapi", "_testinternalcapi", "yaml",
                       "ruamel"})


class AgentFileNotFoundError(AgentDefinitionError, FileNotFoundError):
    """An agent file (the one loaded, or one a ``config_path`` names) is not there: a
    FileNotFoundError, as google-adk raises, and an AgentDefinitionError naming it."""


class AgentFile(BaseModel):
    """One agent file, the fields this kit runs (google-adk's agent config keys; an
    unknown key is refused). The engine exports it as ``AgentConfig``."""

    model_config = ConfigDict(extra="forbid")

    agent_class: str = "LlmAgent"
    name: str
    description: str = ""
    model: str = ""
    instruction: str = ""
    global_instruction: str = ""
    #: google-adk's LlmAgent keys passed on as they are (the agent validates them)
    static_instruction: Any = None
    generate_content_config: dict[str, Any] | None = None
    #: code by dotted name: the model object (instead of ``model``), the schemas
    model_code: CodeConfig | None = None
    input_schema: CodeConfig | None = None
    output_schema: CodeConfig | None = None
    sub_agents: list[AgentRefConfig] = Field(default_factory=list)
    tools: list[ToolConfig] = Field(default_factory=list)
    output_key: str | None = None
    include_contents: Literal["default", "none"] = "default"
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    max_iterations: int | None = Field(default=None, ge=0)
    before_agent_callbacks: list[CodeConfig] = Field(default_factory=list)
    after_agent_callbacks: list[CodeConfig] = Field(default_factory=list)
    before_model_callbacks: list[CodeConfig] = Field(default_factory=list)
    after_model_callbacks: list[CodeConfig] = Field(default_factory=list)
    before_tool_callbacks: list[CodeConfig] = Field(default_factory=list)
    after_tool_callbacks: list[CodeConfig] = Field(default_factory=list)


class _AgentToolArgs(BaseModel):
    """``AgentTool``'s ``args`` (google-adk's ``AgentToolConfig``)."""

    model_config = ConfigDict(extra="forbid")

    agent: AgentRefConfig
    skip_summarization: bool = False
    include_plugins: bool = True


def read_yaml(path: Path, error: type[AdkError], label: str) -> Any:
    """The YAML document in ``path`` (``yaml.safe_load``); ``error`` naming ``label``
    when the file cannot be read or is not YAML."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{label}: cannot read it: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{label}: not valid YAML: {exc}") from None


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors())


def agent_document(data: Any, path: str) -> AgentFile:
    """Validate the parsed YAML of one agent file, named ``path`` in errors
    (AgentDefinitionError when it is not one; its references are not followed)."""
    if not isinstance(data, dict):
        raise AgentDefinitionError(f"{path}: an agent file holds a mapping (name: ..., model: ...)")
    try:
        config = AgentFile.model_validate(data)
    except ValidationError as exc:
        raise AgentDefinitionError(f"{path}: {_problems(exc)}") from None
    if config.agent_class not in AGENT_CLASSES:
        raise AgentDefinitionError(f"{path}: agent_class {config.agent_class!r} is not one of {sorted(AGENT_CLASSES)} "
                                   "nor a class of adk_actors.workflow (Workflow, FunctionNode, JoinNode)")
    return config


def import_reference(reference: str, where: str) -> Any:
    """The object a dotted name (``package.module.name``) or import path
    (``package.module:name``) names, imported. AgentDefinitionError naming ``where``
    when it is neither, names a refused module (standard library, YAML parsers), or
    cannot be imported."""
    path = reference if ":" in reference else ":".join(reference.rsplit(".", 1))
    if ":" not in path or not path.split(":", 1)[0]:
        raise AgentDefinitionError(f"{where}: {reference!r} is not an import path (package.module.name)")
    top = path.split(":", 1)[0].split(".", 1)[0]
    if top in _REFUSED_MODULES:
        raise AgentDefinitionError(f"{where}: {reference!r}: an agent file may not import from {top!r} (the standard "
                                   "library and the YAML parsers are refused: they can run code on the host); name "
                                   "your own package's code")
    try:
        return import_object(path)
    except (ImportError, AttributeError) as exc:
        raise AgentDefinitionError(f"{where}: cannot import {reference!r}: {exc}") from None


def resolve_agent_code(code: str, where: str) -> Any:
    """The agent object the dotted name ``code`` names (:func:`import_reference`);
    AgentDefinitionError naming ``where`` when it is a class, another callable or
    anything else that is not an agent."""
    agent = import_reference(code, where)
    if isinstance(agent, type):
        raise AgentDefinitionError(f"{where}: {code!r} is a class; name an agent object (or the class in agent_class)")
    if not isinstance(agent, AgentLike):
        kind = "a callable" if callable(agent) else type(agent).__name__
        raise AgentDefinitionError(f"{where}: {code!r} is {kind}, not an agent")
    return agent


def agent_class_of(name: Any, where: str) -> str | type[AgentBase]:
    """What ``agent_class: name`` names: a built-in kind's name (a bare name, checked
    later with the rest of the file; a dotted one of ours or google-adk's), or a custom
    agent class, imported (:func:`import_reference`). AgentDefinitionError naming
    ``where`` when the dotted name cannot be imported, is refused, or names something
    that is not a subclass of BaseAgent."""
    if not isinstance(name, str) or "." not in name:
        return name if isinstance(name, str) else "LlmAgent" if name is None else str(name)
    if name.startswith(_GOOGLE_ADK_AGENTS) and name.rsplit(".", 1)[-1] in AGENT_CLASSES:
        return name.rsplit(".", 1)[-1]
    if name.startswith(GOOGLE_ADK_WORKFLOW) and (node_class := workflow_class(name)) is not None:
        return node_class
    try:
        found = import_reference(name, f"{where}: agent_class")
    except AgentDefinitionError:
        raise
    except Exception as exc:  # the named module failed while it was being imported
        raise AgentDefinitionError(f"{where}: agent_class {name!r}: importing it failed: {exc!r}") from exc
    for kind, cls in AGENT_CLASSES.items():
        if found is cls:
            return kind
    if not (isinstance(found, type) and (issubclass(found, AgentBase) or is_node_class(found))):
        what = f"the class {found.__qualname__}" if isinstance(found, type) else type(found).__name__
        raise AgentDefinitionError(f"{where}: agent_class {name!r} is {what}, not an agent class (a subclass of "
                                   "BaseAgent) nor a workflow node class")
    return found


def _overrides(cls: type[AgentBase], hook: str) -> bool:
    """Whether ``cls`` defines the class hook ``hook`` itself (or inherits another
    class's) rather than BaseAgent's."""
    return getattr(getattr(cls, hook), "__func__", None) is not getattr(getattr(AgentBase, hook), "__func__", None)


def _caller_level() -> int:
    """The ``stacklevel`` of a warning its caller issues that names the first frame
    outside this package's agents modules (the user's call that loads the file)."""
    here = str(Path(__file__).parent)
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(here):
        frame, level = frame.f_back, level + 1
    return level


def _builtin_kind(cls: type[Any]) -> type[Any] | None:
    """The built-in kind ``cls`` is a subclass of, if any."""
    return next((kind for kind in (LlmAgent, SequentialAgent, ParallelAgent, LoopAgent) if issubclass(cls, kind)),
                None)


class _Loader:
    """Loads one app's files, each reference once, refusing paths outside ``root`` and
    circles; ``check`` runs on each file's parsed data before it is validated."""

    def __init__(self, root: Path, check: Callable[[Any, str], None] | None = None) -> None:
        self.root = root.resolve()
        self.check = check
        self.loading: list[Path] = []

    def file(self, base: Path, relative: str) -> Path:
        if Path(relative).is_absolute():
            raise AgentDefinitionError(f"{base}: config_path {relative!r} is absolute; name the file relative to "
                                       "this one")
        path = (base.parent / relative).resolve()
        if not path.is_relative_to(self.root):
            raise AgentDefinitionError(f"{base}: {relative!r} is outside the app's folder {self.root}")
        return path

    def agent(self, path: Path) -> Any:
        if path in self.loading:
            raise AgentDefinitionError(f"{path}: agents refer to each other in a circle ({path.name})")
        if not path.is_file():
            raise AgentFileNotFoundError(f"{path}: cannot read it: there is no such file")
        self.loading.append(path)
        try:
            data = read_yaml(path, AgentDefinitionError, str(path))
            if self.check is not None:
                self.check(data, str(path))
            if not isinstance(data, dict):
                return agent_document(data, str(path))  # refuses it
            return self.from_data(path, data, str(path))
        finally:
            self.loading.pop()

    def from_data(self, path: Path, data: dict[str, Any], where: str, builder: NodeBuilder | None = None) -> Any:
        """The agent or node ``data`` (the file ``path``'s keys, or a node mapping in its
        edges, named ``where`` in errors) defines, by its ``agent_class``: a built-in
        kind's, a workflow node class's (:class:`._config_edges.NodeBuilder`, ``builder``
        when given, so a file's nodes are made once) or a custom class's (see the
        module)."""
        kind = agent_class_of(data.get("agent_class", "LlmAgent"), where)
        if isinstance(kind, str):
            node_class = workflow_class(kind) if kind not in AGENT_CLASSES else None
            if node_class is None:
                if "agent_class" in data:
                    data = {**data, "agent_class": kind}
                return self._build(path, agent_document(data, where))
            kind = node_class
        if is_node_class(kind):
            return (builder or NodeBuilder(self, path)).build(kind, data)
        if _overrides(kind, "from_config"):  # the class makes its agent itself
            return kind.from_config(self.config_model(path, kind, data), str(path))
        return self.custom(path, kind, data, None)

    def config_model(self, path: Path, cls: type[AgentBase], data: dict[str, Any]) -> Any:
        """``data`` validated into ``cls``'s ``config_type`` (the data itself when the
        class names none); AgentDefinitionError naming the file when it does not fit."""
        schema = getattr(cls, "config_type", None)
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            return data
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            raise AgentDefinitionError(f"{path}: {cls.__name__} ({schema.__name__}): {_problems(exc)}") from None

    def custom(self, path: Path, cls: type[AgentBase], data: dict[str, Any], given: Any) -> Any:
        """An agent of the custom class ``cls`` from its file's ``data`` (see the
        module); ``given`` is the config ``from_config`` was called with (None when
        loading a file: the hook then warns, and gets the validated config)."""
        model = self.config_model(path, cls, data)
        kwargs = self.fields(path, cls, data, refuse_unknown=model is data or (
            _builtin_kind(cls) is not None and cls.config_type is AgentBase.config_type))
        if _overrides(cls, "_parse_config"):
            if given is None:
                warnings.warn(f"{cls.__name__}._parse_config is deprecated (google-adk 2.13) and will be removed: "
                              "declare the agent's fields on its class, the loader maps a file's keys onto them",
                              DeprecationWarning, stacklevel=_caller_level())
            kwargs = cls._parse_config(model if given is None else given, str(path), kwargs)
        try:
            return cls(**kwargs)
        except ValidationError as exc:
            raise AgentDefinitionError(f"{path}: {cls.__name__}: {_problems(exc)}") from None
        except (AgentDefinitionError, TypeError) as exc:
            raise AgentDefinitionError(f"{path}: {cls.__name__}: {exc}") from exc

    def fields(self, path: Path, cls: type[AgentBase], data: dict[str, Any], *, refuse_unknown: bool) -> dict[str, Any]:
        """The keyword arguments ``data``'s keys map to on ``cls``'s fields (see the
        module); a key that names no field is dropped (the class's config took it) or,
        with ``refuse_unknown``, an AgentDefinitionError naming the file."""
        fields = cls.model_fields
        kwargs: dict[str, Any] = {}
        unknown = []
        for key, value in data.items():
            if key == "agent_class":
                continue
            if key.endswith("_code") and (field := key.removesuffix("_code")) in fields:
                kwargs[field] = self.code(path, key, value)
            elif key.endswith("_callbacks") and (field := key.removesuffix("s")) in fields:
                kwargs[field] = [self.code(path, key, item) for item in self.items(path, key, value)]
            elif key not in fields:
                unknown.append(key)
            elif key == "sub_agents":
                kwargs[key] = [self.ref(path, self.reference(path, item)) for item in self.items(path, key, value)]
            elif key == "tools" and issubclass(cls, LlmAgent):
                kwargs[key] = [self.tool(path, self.tool_config(path, item)) for item in self.items(path, key, value)]
            elif key.endswith("_callback") and value is not None:
                kwargs[key] = ([self.code(path, key, item) for item in value] if isinstance(value, list)
                               else self.code(path, key, value))
            elif (key in _SCHEMA_FIELDS and isinstance(value, str)) or (
                    key in (*_SCHEMA_FIELDS, "model") and isinstance(value, dict) and "name" in value):
                kwargs[key] = self.code(path, key, value)
            else:
                kwargs[key] = value
        if unknown and refuse_unknown:
            raise AgentDefinitionError(f"{path}: {', '.join(unknown)}: {cls.__name__} has no such field")
        if unknown:
            _log.debug("%s: %s takes no field %s; its config keeps them", path, cls.__name__, sorted(unknown))
        return kwargs

    @staticmethod
    def items(path: Path, key: str, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise AgentDefinitionError(f"{path}: {key}: a list, got {type(value).__name__}")
        return value

    @staticmethod
    def reference(path: Path, item: Any) -> AgentRefConfig:
        try:
            return AgentRefConfig.model_validate(item) if isinstance(item, dict) else AgentRefConfig(config_path=item)
        except ValidationError as exc:
            raise AgentDefinitionError(f"{path}: sub_agents: {_problems(exc)}") from None

    @staticmethod
    def tool_config(path: Path, item: Any) -> ToolConfig:
        try:
            return ToolConfig.model_validate(item) if isinstance(item, dict) else ToolConfig(name=item)
        except ValidationError as exc:
            raise AgentDefinitionError(f"{path}: tools: {_problems(exc)}") from None

    @staticmethod
    def code(path: Path, key: str, value: Any) -> Any:
        """The object a code reference names (a dotted name, or ``{name: ...}``; a name
        starting with ``.`` is in the package of the file's folder, as google-adk reads it)."""
        name = value.get("name") if isinstance(value, dict) else value
        if not isinstance(name, str) or not name:
            raise AgentDefinitionError(f"{path}: {key}: a code reference is a dotted name or {{name: ...}}, "
                                       f"got {value!r}")
        if name.startswith("."):
            name = path.parent.name + name
        return import_reference(name, f"{path}: {key}")

    def ref(self, base: Path, ref: AgentRefConfig) -> Any:
        if ref.code is not None:
            return resolve_agent_code(ref.code, str(base))
        assert ref.config_path is not None  # AgentRefConfig holds one of the two
        return self.agent(self.file(base, ref.config_path))

    def tool(self, path: Path, tool: ToolConfig) -> Any:
        args = tool.args.model_dump() if tool.args is not None else {}
        if tool.name in BUILT_IN_TOOL_NAMES and not args:
            return import_object(f"{TOOLS_PACKAGE}:{tool.name}")
        if tool.name == AGENT_TOOL:
            try:
                config = _AgentToolArgs.model_validate(args)
            except ValidationError as exc:
                raise AgentDefinitionError(f"{path}: AgentTool takes args {{agent: {{config_path: ...}} or "
                                           f"{{code: ...}}, skip_summarization, include_plugins}}: "
                                           f"{_problems(exc)}") from None
            agent_tool = import_object(f"{TOOLS_PACKAGE}:{AGENT_TOOL}")
            return agent_tool(self.ref(path, config.agent), skip_summarization=config.skip_summarization,
                              include_plugins=config.include_plugins)
        if tool.name in MCP_TOOLSET_NAMES:
            toolset = import_object(f"{TOOLS_PACKAGE}.mcp_tool:McpToolset")
            try:
                return toolset.from_config(tool.args or ToolArgsConfig(), str(path))
            except ValueError as exc:
                raise AgentDefinitionError(f"{path}: tool {tool.name!r}: {exc}") from None
        if args:
            made = self._tool_from_config(path, tool)
            if made is not None:
                return made
            raise AgentDefinitionError(f"{path}: tool {tool.name!r}: tools with args are not supported "
                                       f"(only AgentTool, McpToolset and a tool class with from_config take args)")
        if "." not in tool.name:
            raise AgentDefinitionError(f"{path}: tool {tool.name!r} is not built in (built-ins: "
                                       f"{', '.join(sorted(BUILT_IN_TOOL_NAMES))}, AgentTool) nor an import path")
        return import_reference(tool.name, str(path))

    @staticmethod
    def _tool_from_config(path: Path, tool: ToolConfig) -> Any:
        """The tool a dotted name of a tool class with ``from_config`` makes from the
        entry's ``args`` (google-adk's rule for its tool classes: ``LangchainTool``,
        ``CrewaiTool``, a user's ``BaseTool`` subclass), or None when the name is not
        dotted or names no such class. What ``from_config`` refuses (a ValueError: an
        unknown key, a name that cannot be imported) is an AgentDefinitionError naming
        the file and the tool; a missing optional extra stays a ModuleNotFoundError."""
        if "." not in tool.name:
            return None
        target = import_reference(tool.name, str(path))
        make = getattr(target, "from_config", None) if isinstance(target, type) else None
        if not callable(make):
            return None
        try:
            return make(tool.args or ToolArgsConfig(), str(path))
        except ValueError as exc:
            raise AgentDefinitionError(f"{path}: tool {tool.name!r}: {exc}") from None

    def _callbacks(self, path: Path, config: AgentFile, keys: tuple[str, ...]) -> dict[str, Any]:
        """The agent's callback fields (``before_model_callback``...) for the given keys."""
        return {key.removesuffix("s"): [import_reference(ref.name, str(path)) for ref in refs]
                for key in keys if (refs := getattr(config, key))}

    def _build(self, path: Path, config: AgentFile) -> Any:
        cls = AGENT_CLASSES[config.agent_class]
        fields: dict[str, Any] = {"name": config.name, "description": config.description,
                                  "sub_agents": [self.ref(path, ref) for ref in config.sub_agents],
                                  **self._callbacks(path, config, _AGENT_CALLBACKS)}
        if cls is LlmAgent:
            if config.model and config.model_code is not None:
                raise AgentDefinitionError(f"{path}: model, model_code: give one of them")
            # only the keys the file gives (google-adk maps those alone): a workflow reads
            # an include_contents that was set as asking for the session's history
            fields.update({key: value for key in _LLM_FIELDS
                           if key in config.model_fields_set and (value := getattr(config, key)) is not None},
                          tools=[self.tool(path, tool) for tool in config.tools],
                          **self._callbacks(path, config, _LLM_CALLBACKS),
                          **{key.removesuffix("_code"): import_reference(ref.name, str(path)) for key in CODE_KEYS
                             if (ref := getattr(config, key)) is not None})
        elif given := [key for key in (*_LLM_FIELDS, *CODE_KEYS, "tools", *_LLM_CALLBACKS)
                       if getattr(config, key) != AgentFile.model_fields[key].get_default(call_default_factory=True)]:
            raise AgentDefinitionError(f"{path}: {', '.join(given)}: only an LlmAgent has these")
        if cls is LoopAgent:
            fields["max_iterations"] = config.max_iterations or 0
        elif config.max_iterations is not None:
            raise AgentDefinitionError(f"{path}: max_iterations: only a LoopAgent has it")
        return cls(**fields)


def build_from_config(cls: type[Any], config: Any, config_abs_path: str) -> Any:
    """What ``cls.from_config(config, config_abs_path)`` does (installed on BaseAgent):
    ``config`` (a pydantic model: its set fields and extra keys; or a dict) is the
    file's data; a built-in kind's file is loaded as one (its ``agent_class`` being
    ``cls``'s), a Workflow's (or another node class's) as :mod:`._config_edges` reads
    one, another class's as the module says for a custom class, its
    ``_parse_config`` (if overridden) given ``config`` as it came, without warning
    again. References are resolved relative to ``config_abs_path`` and stay in its
    folder. AgentDefinitionError naming the path for a config of another type and for
    anything the loader refuses."""
    path = Path(config_abs_path).absolute()
    if isinstance(config, BaseModel):
        data = config.model_dump(exclude_unset=True)
        data.update(config.model_extra or {})
    elif isinstance(config, dict):
        data = dict(config)
    else:
        raise AgentDefinitionError(f"{path}: from_config takes the agent's config (a pydantic model) or a dict, "
                                   f"got {type(config).__name__}")
    loader = _Loader(path.parent)
    kind = next((kind for kind, built_in in AGENT_CLASSES.items() if cls is built_in), None)
    if kind is not None:
        return loader._build(path, agent_document({**data, "agent_class": kind}, str(path)))
    if is_node_class(cls):  # a Workflow (an agent here): its edges read as a file's
        return NodeBuilder(loader, path).build(cls, data)
    return loader.custom(path, cls, data, config)


install_config_builder(build_from_config)


def load_agent_file(path: Path, *, root: Path | None = None, check: Callable[[Any, str], None] | None = None) -> Any:
    """The agent the file ``path`` defines, with every agent it refers to, loaded as
    the module says; references stay inside ``root`` (the file's folder when not
    given); ``check`` runs on each file's parsed data first."""
    path = path.resolve()
    return _Loader(root if root is not None else path.parent, check).agent(path)
