"""Transfer targets: sub-agents, then the parent, then peers (google-adk's order).

The parent and peers are targets only when the parent is itself an LlmAgent (a
workflow agent such as SequentialAgent decides the order of its children, so an
LLM must not jump around it), and unless ``disallow_transfer_to_parent`` /
``disallow_transfer_to_peers`` say otherwise.
"""

from __future__ import annotations

from typing import Any

from .._tree import parent_map
from ..agents import LlmAgent

__all__ = ["parent_of", "root_of", "transfer_targets"]


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


def transfer_targets(agent: Any, root: Any) -> list[Any]:
    targets = list(getattr(agent, "sub_agents", ()) or ())
    parent = parent_of(agent, root)
    if isinstance(parent, LlmAgent):
        if not getattr(agent, "disallow_transfer_to_parent", False):
            targets.append(parent)
        if not getattr(agent, "disallow_transfer_to_peers", False):
            targets.extend(peer for peer in parent.sub_agents if peer is not agent)
    return targets
