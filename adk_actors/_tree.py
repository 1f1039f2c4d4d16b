"""Agent trees: walking, finding, parents, and the checks every tree must pass.

Agents are structural: anything with ``name``, ``description`` and ``sub_agents``
is a node. Parents are found by walking from the root, so nothing here needs
back-references.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from ._exceptions import AgentDefinitionError

__all__ = [
    "AgentNode",
    "check_agent_name",
    "find_agent",
    "iter_agents",
    "parent_map",
    "validate_tree",
]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@runtime_checkable
class AgentNode(Protocol):
    name: str
    description: str
    sub_agents: Sequence[Any]


def check_agent_name(name: Any) -> str:
    """An agent name is a Python identifier (not a keyword) and not ``user``."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or keyword.iskeyword(name):
        raise AgentDefinitionError(f"agent name must be an identifier, got {name!r}")
    if name == "user":
        raise AgentDefinitionError("'user' is reserved for the end user and cannot name an agent")
    return name


def iter_agents(root: Any) -> Iterator[Any]:
    """Every agent of the tree, root first, depth first, in sub-agent order."""
    stack = [root]
    while stack:
        agent = stack.pop()
        yield agent
        stack.extend(reversed(list(getattr(agent, "sub_agents", ()) or ())))


def find_agent(root: Any, name: str) -> Any | None:
    for agent in iter_agents(root):
        if agent.name == name:
            return agent
    return None


def parent_map(root: Any) -> dict[str, Any]:
    """Agent name -> its parent agent (the root has none)."""
    parents: dict[str, Any] = {}
    for agent in iter_agents(root):
        for child in getattr(agent, "sub_agents", ()) or ():
            parents[child.name] = agent
    return parents


def inherited_model(agent: Any, root: Any) -> Any:
    """The agent's model, or (having none) its nearest ancestor's, as google-adk looks
    it up; "" when no agent up to ``root`` has one."""
    model = getattr(agent, "model", "")
    if model:
        return model
    parents = parent_map(root)
    parent = parents.get(agent.name)
    while parent is not None:
        model = getattr(parent, "model", "")
        if model:
            return model
        parent = parents.get(parent.name)
    return ""


def validate_tree(root: Any) -> None:
    """Sub-agents are agent objects; no cycles; names unique; every agent has one parent."""
    seen_objects: dict[int, Any] = {}
    seen_names: set[str] = set()

    def visit(agent: Any, path: tuple[str, ...]) -> None:
        if not isinstance(agent, AgentNode):
            raise AgentDefinitionError(
                f"sub-agent {agent!r} of {path[-1] if path else 'the root'} is not an agent "
                "(sub_agents take agent objects, not names)"
            )
        if id(agent) in seen_objects:
            if agent.name in path:
                raise AgentDefinitionError(f"agent tree has a cycle: {' -> '.join((*path, agent.name))}")
            raise AgentDefinitionError(f"agent {agent.name!r} appears twice in the tree: an agent has one parent")
        seen_objects[id(agent)] = agent
        if agent.name in seen_names:
            raise AgentDefinitionError(f"duplicate agent name {agent.name!r} in the tree")
        seen_names.add(agent.name)
        for child in agent.sub_agents or ():
            visit(child, (*path, agent.name))

    visit(root, ())
