"""The graph part of the agent-file loader (:mod:`._config_loader`): a file whose
``agent_class`` is a workflow node class (``Workflow``, ``FunctionNode``, ``JoinNode``
of :mod:`adk_actors.workflow`, a subclass of them, or google-adk's names for them), and
the ``edges`` of a ``Workflow``, read as google-adk 2.13 reads them
(``agents/config_agent_utils.py``, ``_AgentConfigMapper``). The workflow package is
found by name when a file names it (it sits above the agents here), as google-adk
looks up ``google.adk.workflow``.

A node class's keys are mapped onto it, in order: ``agent_class`` is skipped; ``x_code``
is the code reference (a dotted name, or ``{name: ...}``; a leading ``.`` is the
package of the file's folder) for the field ``x``; ``x_callbacks`` names the field
``x_callback``; ``edges`` are read as below; ``input_schema``, ``output_schema`` and
``state_schema`` (a node's, a Workflow's own) given as a dotted name or ``{name: ...}``
are code references (a schema given as another mapping is a JSON schema, kept as it
is); a field that takes
a callable (a function node's ``require_confirmation``) given as a dotted name or
``{name: ...}`` is one too; any other value of a field is passed as it is
(``require_confirmation: true``, ``parameter_binding: node_input``; a function
node's ``auth_config`` mapping is read as an ``AuthConfig`` by the node). A key that
names no field (nor a parameter of the class's constructor), and the fields only our
agents have (``sub_agents``, the agent callbacks: google-adk's nodes have none), are
logged as a warning and ignored, as google-adk ignores them. The node is then made; a
field its constructor does not take (a function node's ``input_schema`` and
``output_schema``, which replace those it infers) is set after, validated. What the
class refuses (a bad graph too, a value of the wrong type, a code reference that does
not import) is an AgentDefinitionError naming the file and the node.

``edges``, a list, each item in order:

* a list is a chain, each element of which is: ``START`` (or ``"START"``); a string
  ending ``.yaml`` / ``.yml``, an agent file loaded relative to this one (it stays in
  the app's folder); a dotted name (a function becomes a ``FunctionNode`` named after
  it; a node or an agent object is itself; anything else is refused); a bare name,
  the node an earlier edge made of that name (one named nowhere before is refused); a
  list, fan-out to each of its nodes; a mapping that is a node (it has
  ``agent_class``, ``config_path`` or ``func_code``, or only ``code`` naming a string,
  or ``name`` and only keys an LlmAgent has) or else a routing map ``{route: node or
  [nodes]}``;
* a mapping of only ``from_node``, ``to_node`` and ``route`` (the first two given) is
  one ``Edge``;
* a mapping of another shape is read as one chain element; anything else is passed
  as it is (the graph refuses what it cannot take).

A node mapping is built as an agent file's data would be: ``config_path`` / ``code``
(alone) as an agent reference; otherwise ``agent_class`` (LlmAgent when not given).
A node made once is the same object wherever the file names it again: by the same
mapping, its name, its file or its dotted name.
"""

from __future__ import annotations

import collections.abc
import importlib
import inspect
import logging
import types
import typing
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from .._exceptions import AgentDefinitionError
from ._base import AgentBase
from ._llm_agent import LlmAgent
from .common_configs import AgentRefConfig

__all__ = ["GOOGLE_ADK_WORKFLOW", "WORKFLOW_PACKAGE", "NodeBuilder", "is_node_class", "workflow_class"]

_log = logging.getLogger(__name__)

#: where a bare ``agent_class`` that is no agent kind is looked up (google-adk:
#: ``google.adk.workflow``), by name: the workflow package is above the agents
WORKFLOW_PACKAGE = "adk_actors.workflow"
#: the package google-adk's files name its workflow classes in
GOOGLE_ADK_WORKFLOW = "google.adk.workflow."
#: our agents' own fields, which google-adk's workflow nodes have not
_AGENT_ONLY = frozenset({"sub_agents", "before_agent_callback", "after_agent_callback"})
_SCHEMAS = frozenset({"input_schema", "output_schema", "state_schema"})
_EDGE_KEYS = frozenset({"from_node", "to_node", "route"})
_START = "START"


class _Loader(Protocol):
    """What of the loader this module uses."""

    def from_data(self, path: Path, data: dict[str, Any], where: str, builder: NodeBuilder | None = None) -> Any: ...

    def ref(self, base: Path, ref: AgentRefConfig) -> Any: ...

    @staticmethod
    def code(path: Path, key: str, value: Any) -> Any: ...


def _workflow() -> Any:
    return importlib.import_module(WORKFLOW_PACKAGE)


def is_node_class(cls: Any) -> bool:
    """Whether ``cls`` is a workflow node class: a subclass of the workflow package's
    ``BaseNode`` or ``Workflow`` (the package is imported only when ``cls`` is a
    class from outside the agents' built-in kinds)."""
    if not isinstance(cls, type):
        return False
    workflow = _workflow()
    return issubclass(cls, (workflow.BaseNode, workflow.Workflow))


def workflow_class(name: str) -> type[Any] | None:
    """The node class a bare ``agent_class`` (or google-adk's dotted name of one of its
    workflow classes) names in the workflow package, or None."""
    if name.startswith(GOOGLE_ADK_WORKFLOW):
        name = name.removeprefix(GOOGLE_ADK_WORKFLOW)
    if not name.isidentifier():
        return None
    found = getattr(_workflow(), name, None)
    return found if is_node_class(found) else None


def _takes_callable(annotation: Any) -> bool:
    """Whether a field's annotation is a callable (or a union holding one, and no str),
    so that a name given for it is a code reference, as google-adk reads it."""
    origin = typing.get_origin(annotation)
    if origin is collections.abc.Callable:
        return True
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return str not in args and any(_takes_callable(arg) for arg in args)
    return False


def _names_a_field(key: str, fields: dict[str, Any]) -> bool:
    return (key in fields or (key.endswith("_code") and key.removesuffix("_code") in fields)
            or (key.endswith("_callbacks") and key.removesuffix("s") in fields))


class NodeBuilder:
    """Builds the nodes and edges of one file (``path``), with ``loader`` for the
    agents and references among them; one per file, its nodes remembered (see the
    module)."""

    def __init__(self, loader: _Loader, path: Path) -> None:
        self.loader = loader
        self.path = path
        self.made: dict[Any, Any] = {}

    def build(self, cls: type[Any], data: dict[str, Any]) -> Any:
        """The node of class ``cls`` that ``data`` (a file's keys, or a node mapping's)
        defines (see the module); what a node or the class refuses on the way is an
        AgentDefinitionError naming the file."""
        try:
            return self._build(cls, data)
        except AgentDefinitionError:
            raise
        except (ValidationError, ValueError, TypeError) as exc:
            raise AgentDefinitionError(f"{self.path}: {self._what(cls, data)}: {exc}") from exc

    @staticmethod
    def _what(cls: type[Any], data: dict[str, Any]) -> str:
        """The node in errors: its class, and its name when the data gives one."""
        name = data.get("name")
        return f"{cls.__name__} {name!r}" if isinstance(name, str) else cls.__name__

    def _build(self, cls: type[Any], data: dict[str, Any]) -> Any:
        fields = cls.model_fields if issubclass(cls, BaseModel) else {}
        parameters = inspect.signature(cls.__init__).parameters
        named = {n for n, p in parameters.items() if n != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD}
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        valid = (set(fields) | named) - _AGENT_ONLY
        what = self._what(cls, data)
        kwargs: dict[str, Any] = {}
        ignored = []
        for key, value in data.items():
            if key == "agent_class":
                continue
            target = key
            if key.endswith("_code") and key.removesuffix("_code") in valid:
                kwargs[key.removesuffix("_code")] = self.loader.code(self.path, f"{what}: {key}", value)
                continue
            if key.endswith("_callbacks") and key.removesuffix("s") in valid:
                target = key.removesuffix("s")
            annotation = getattr(fields.get(target), "annotation", None)
            if target not in valid:
                ignored.append(key)
            elif target == "edges" and isinstance(value, list):
                kwargs[target] = self.edges(value)
            elif (target in _SCHEMAS or _takes_callable(annotation)) and (
                    isinstance(value, str) or (isinstance(value, dict) and "name" in value)):
                kwargs[target] = self.loader.code(self.path, f"{what}: {key}", value)
            else:
                kwargs[target] = value
        if ignored:
            _log.warning("%s: %s does not accept %s; ignoring.", self.path, cls.__name__, sorted(ignored))
        later = {} if takes_any else {k: v for k, v in kwargs.items() if k not in named}
        try:
            node = cls(**{k: v for k, v in kwargs.items() if k not in later})
            for key, value in later.items():
                node.__pydantic_validator__.validate_assignment(node, key, value)
        except (ValidationError, ValueError, TypeError) as exc:  # a bad graph too (GraphValidationError)
            raise AgentDefinitionError(f"{self.path}: {what}: {exc}") from exc
        return node

    # -- edges ---------------------------------------------------------------------------

    def edges(self, items: list[Any]) -> list[Any]:
        """The workflow's edges from the file's list (see the module)."""
        edge = _workflow().Edge
        made: list[Any] = []
        for item in items:
            if isinstance(item, (list, tuple)):
                made.append(tuple(self.element(element) for element in item))
            elif isinstance(item, dict) and set(item) <= _EDGE_KEYS and {"from_node", "to_node"} <= set(item):
                made.append(edge(from_node=self.node(item["from_node"]), to_node=self.node(item["to_node"]),
                                 route=item.get("route")))
            elif isinstance(item, dict):
                made.append(self.element(item))
            else:
                made.append(item)
        return made

    def element(self, element: Any) -> Any:
        """One element of a chain: a node, a fan-out (a tuple of nodes) or a routing map."""
        if isinstance(element, (list, tuple)):
            return tuple(self.node(item) for item in element)
        if isinstance(element, dict) and not self._is_node(element):
            return {route: tuple(self.node(item) for item in target) if isinstance(target, (list, tuple))
                    else self.node(target) for route, target in element.items()}
        return self.node(element)

    @staticmethod
    def _is_node(mapping: dict[str, Any]) -> bool:
        """Whether a mapping in a chain defines a node rather than routes (see the module)."""
        if any(key in mapping for key in ("agent_class", "config_path", "func_code")):
            return True
        if len(mapping) == 1 and isinstance(mapping.get("code"), str):
            return True
        return "name" in mapping and all(_names_a_field(key, LlmAgent.model_fields) for key in mapping)

    def _remember(self, node: Any, *keys: Any) -> Any:
        for key in keys:
            self.made[key] = node
        name = getattr(node, "name", None)
        if name:
            self.made[name] = node
        return node

    def node(self, item: Any) -> Any:
        """The node an element names (see the module)."""
        workflow = _workflow()
        if item is workflow.START or item == _START:
            return workflow.START
        if isinstance(item, (workflow.BaseNode, AgentBase)):
            return self._remember(item)
        if isinstance(item, str):
            return self._named(item)
        if isinstance(item, dict):
            if id(item) in self.made:
                return self.made[id(item)]
            if "name" in item and item["name"] in self.made:
                return self.made[item["name"]]
            if "config_path" in item or ("code" in item and "agent_class" not in item and "func_code" not in item):
                try:
                    ref = AgentRefConfig.model_validate(item)
                except ValidationError as exc:
                    raise AgentDefinitionError(f"{self.path}: edges: {exc}") from None
                return self._remember(self.loader.ref(self.path, ref), id(item), item.get("config_path"))
            built = self.loader.from_data(self.path, item, f"{self.path}: edges", self)
            return self._remember(built, id(item))
        return item

    def _named(self, name: str) -> Any:
        if name in self.made:
            return self.made[name]
        if name.endswith((".yaml", ".yml")):
            return self._remember(self.loader.ref(self.path, AgentRefConfig(config_path=name)), name)
        if "." not in name:
            raise AgentDefinitionError(f"{self.path}: edges: unknown node {name!r}: an edge may only name a node "
                                       "that an earlier edge defined")
        found = self.loader.code(self.path, "edges", name)
        workflow = _workflow()
        if isinstance(found, (workflow.BaseNode, AgentBase)):
            return self._remember(found, name)
        if callable(found) and not inspect.isclass(found):
            return self._remember(workflow.FunctionNode(name=name.rsplit(".", 1)[-1], func=found), name)
        raise AgentDefinitionError(f"{self.path}: edges: {name!r} is {type(found).__name__}, neither a function "
                                   "nor a node")
