"""google-adk's ``cli.agent_graph`` for code that calls it: an agent tree drawn as a
Graphviz graph, the drawing adk-web's ``build_graph_image`` route and the console get
(``http._dev.agent_graph`` and ``dot_source``: an ellipse per agent, a box per tool, an
edge from each agent to its sub-agents and tools).

* :func:`build_graph` adds the tree's statements to a ``graphviz`` graph the caller
  made; each ``highlight_pairs`` pair of agent names that is a parent and its
  sub-agent (either way round) has its edge drawn green (pointing back when the pair
  names the sub-agent first).
* :func:`get_agent_graph` makes that graph (left to right, dark or light) and returns
  it, or with ``image`` its PNG (the ``dot`` program must be installed).

The ``graphviz`` package (google-adk's dependency, not this kit's) is needed by
:func:`get_agent_graph` only: without it, an ImportError naming it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..http._dev import agent_graph, dot_source

try:
    import graphviz  # type: ignore[import-untyped]
except ImportError:  # optional: only get_agent_graph needs it
    graphviz = None

__all__ = ["build_graph", "get_agent_graph"]

_HIGHLIGHT = "#0F5223"
#: ``dot_source``'s lines before the tree's statements (``digraph G {``, the
#: background, the direction); its last line closes the graph.
_PREAMBLE = 3


def _links(tree: dict[str, Any]) -> set[tuple[str, str]]:
    """(parent, sub-agent) names of every edge between agents of ``tree``."""
    found = set()
    for sub in tree["sub_agents"]:
        found.add((tree["name"], sub["name"]))
        found |= _links(sub)
    return found


async def build_graph(graph: Any, agent: Any, highlight_pairs: Sequence[tuple[str | None, str | None]] | None,
                      parent_agent: Any = None) -> None:
    """Add ``agent``'s tree to ``graph`` (a ``graphviz.Digraph``: its ``body``), in order:
    the node and edge statements of ``dot_source``, then one green edge statement per
    highlighted pair joining a parent and its sub-agent (a strict graph merges it into
    the edge drawn before). ``parent_agent`` is accepted for google-adk's signature:
    the tree drawn is ``agent``'s either way."""
    tree = agent_graph(agent)
    lines = dot_source(tree).splitlines()[_PREAMBLE:-1]
    graph.body.extend(f"\t{line.strip()}\n" for line in lines)
    links = _links(tree)
    for first, second in highlight_pairs or ():
        if (first, second) in links:
            graph.body.append(f"\t{json.dumps(first)} -> {json.dumps(second)} [color=\"{_HIGHLIGHT}\"]\n")
        elif (second, first) in links:
            graph.body.append(f"\t{json.dumps(second)} -> {json.dumps(first)} [color=\"{_HIGHLIGHT}\", dir=back]\n")


async def get_agent_graph(root_agent: Any, highlights_pairs: Sequence[tuple[str | None, str | None]] | None,
                          image: bool = False, dark_mode: bool = True) -> Any:
    """A strict ``graphviz.Digraph`` of ``root_agent``'s tree (:func:`build_graph`), left
    to right on a dark or light background; with ``image``, its PNG bytes (graphviz's
    error when the ``dot`` program is missing). ImportError without the graphviz package."""
    if graphviz is None:
        raise ImportError("get_agent_graph needs the graphviz package: pip install graphviz")
    graph = graphviz.Digraph(graph_attr={"rankdir": "LR", "bgcolor": "#202124" if dark_mode else "#ffffff"},
                             strict=True)
    await build_graph(graph, root_agent, highlights_pairs)
    if image:
        return graph.pipe(format="png")
    return graph
