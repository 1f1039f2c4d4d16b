"""Transfer targets: sub-agents, then the parent, then peers (google-adk's order).

The parent and peers are targets only when the parent is itself an LlmAgent (a
workflow agent such as SequentialAgent decides the order of its children, so an
LLM must not jump around it), and unless ``disallow_transfer_to_parent`` /
``disallow_transfer_to_peers`` say otherwise.

Gemini before 3 refuses a request that has one of its search tools next to function
declarations, and ``transfer_to_agent`` is one. So, as in google-adk, an agent with
such a tool (a tool whose ``builtin_search`` is true: ``google_search`` without
``bypass_multi_tools_limit``, ``enterprise_web_search``) on such a model has no
transfer targets when they would all be its parent or peers (the agent keeps its
search), and is an :class:`AgentDefinitionError` when a sub-agent would be one.

A sub-agent or peer whose ``mode`` is ``single_turn`` or ``task`` (google-adk 2.x) is no target:
its parent LlmAgent calls it as a tool instead (``adk_actors.engine._flow``).
"""

from __future__ import annotations

from typing import Any

from .._exceptions import AgentDefinitionError
from .._model_names import takes_builtin_tools_with_functions
from .._tree import inherited_model, parent_map
from .._types import model_name
from ..agents import LlmAgent

__all__ = ["delegated", "parent_of", "root_of", "transfer_targets"]


def root_of(agent: Any, root: Any) -> Any:
    """The root of ``agent``'s tree: ``root`` when given, else found through parents."""
    if root is not None:
        return root
    found = agent
    while getattr(found, "_parent", None) is not None:
        found = found._parent
    return found


def parent_of(agent: Any, root: Any) -> Any:
    if root is not None and root is not agent:
        parent = parent_map(root).get(agent.name)
        if parent is not None:
            return parent
    return getattr(agent, "_parent", None)


def delegated(agent: Any) -> bool:
    """Is ``agent`` called as a tool by its parent rather than transferred to
    (google-adk's ``mode="single_turn"`` or ``"task"``)?"""
    return getattr(agent, "mode", None) in ("single_turn", "task")


def transfer_targets(agent: Any, root: Any) -> list[Any]:
    targets = [sub for sub in getattr(agent, "sub_agents", ()) or () if not delegated(sub)]
    parent = parent_of(agent, root)
    if isinstance(parent, LlmAgent):
        if not getattr(agent, "disallow_transfer_to_parent", False):
            targets.append(parent)
        if not getattr(agent, "disallow_transfer_to_peers", False):
            targets.extend(peer for peer in parent.sub_agents if peer is not agent and not delegated(peer))
    if targets:
        search = _search_without_functions(agent, root)
        if search is not None:
            if getattr(agent, "sub_agents", None):  # the first targets are the sub-agents
                raise AgentDefinitionError(
                    f"agent {agent.name!r} has {type(search).__name__} and sub-agents to transfer to, but its model "
                    "(Gemini before 3) cannot search and call functions in one request: use a Gemini 3 model, "
                    "set bypass_multi_tools_limit=True on the search tool, or give the search to a sub-agent")
            return []
    return targets


def _search_without_functions(agent: Any, root: Any) -> Any:
    """The first of the agent's tools that is a Gemini search tool its model (the
    tool's own ``model`` when it has one) cannot combine with function calling, or None."""
    model = model_name(inherited_model(agent, root_of(agent, root)))
    for tool in getattr(agent, "tools", ()) or ():
        if not getattr(tool, "builtin_search", False) or getattr(tool, "bypass_multi_tools_limit", False):
            continue
        if not takes_builtin_tools_with_functions(getattr(tool, "model", None) or model):
            return tool
    return None
