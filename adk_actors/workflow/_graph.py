"""A workflow's edges as a checked graph (google-adk 2.x's ``Edge``, ``DEFAULT_ROUTE``
and edge syntax).

The edge list takes, in any mix: ``Edge(from_node=, to_node=, route=)``; chains as
tuples ``(START, a, b)`` (an edge between each neighbour); a tuple inside a chain
``(a, (b, c))`` fans out (and in); a dict ``{route: node or (nodes)}`` inside a chain
makes routed edges from the element before it. The same function or node object is one
node wherever it appears.

:func:`build_graph` checks the whole graph when the workflow is built, in order, and
raises :class:`GraphValidationError` naming the problem: a string node other than
``"START"`` (an edge to a node that is not in the graph); a routed edge with no route,
or a route that is not a bool, int or str; two nodes of one name; no edge from START;
an edge into START; a routed edge from START; DEFAULT_ROUTE in a list of routes; two
edges between the same nodes on the same route; a node START cannot reach; a cycle of
unconditional edges (no exit and no limit); an edge from a node with an
``output_schema`` to one with an ``input_schema`` that is not equal to it (an agent's
too; a JSON schema compared as a dict); an LlmAgent of ``mode="chat"`` after a node
other than START (it talks over the session's history: it takes no node's output).
An LlmAgent of ``mode="task"`` as a node (google-adk's task agent, ended by
``finish_task``, see ``_task``) is refused with :class:`WorkflowConfigurationError`
after a node other than START (here the user's next message runs the graph again
from START, so only a task agent right after START is taken up where it waited, as
google-adk takes it up), or when its ``output_schema`` is not a type pydantic checks
values with.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ._errors import GraphValidationError, WorkflowConfigurationError
from ._nodes import START, as_node
from ._task import FinishTaskTool

__all__ = ["DEFAULT_ROUTE", "Edge", "Graph", "build_graph"]

logger = logging.getLogger(__name__)

#: The route an edge takes when its node chose none of its other routes.
DEFAULT_ROUTE = "__DEFAULT__"

RouteValue = bool | int | str


class Edge(BaseModel):
    """An edge of a workflow graph: from ``from_node`` to ``to_node``, followed always
    (``route`` None) or when the node chose ``route`` (or one of a list of routes)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    from_node: Any
    to_node: Any
    route: bool | int | str | list[bool | int | str] | None = None


@dataclass
class Graph:
    """Nodes by name (START included) and edges, as built by :func:`build_graph`."""

    nodes: dict[str, Any] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def successors(self, name: str) -> list[Edge]:
        return [edge for edge in self.edges if edge.from_node.name == name]

    def predecessors(self, name: str) -> list[str]:
        return list(dict.fromkeys(edge.from_node.name for edge in self.edges if edge.to_node.name == name))

    def is_terminal(self, name: str) -> bool:
        return not self.successors(name)

    def next_nodes(self, name: str, route: Any) -> list[str]:
        """The nodes after ``name`` when it chose ``route`` (google-adk's rule): every
        unconditional edge; the routed edges whose route matches; the DEFAULT_ROUTE edges
        when none matched. A node with routed edges of which none matched ends its branch
        there (logged)."""
        chosen = set(route) if isinstance(route, list) else {route}
        found: list[str] = []
        defaults: list[str] = []
        routed = matched = False
        for edge in self.successors(name):
            if edge.route is None:
                found.append(edge.to_node.name)
                continue
            routed = True
            if edge.route == DEFAULT_ROUTE:
                defaults.append(edge.to_node.name)
                continue
            routes = set(edge.route) if isinstance(edge.route, list) else {edge.route}
            if routes & chosen:
                found.append(edge.to_node.name)
                matched = True
        if not matched:
            found.extend(defaults)
        if routed and not found:
            logger.warning("node %r chose route %r, which none of its edges takes: its branch ends", name, route)
        return found


def _node(item: Any, known: dict[int, Any]) -> Any:
    if isinstance(item, str):
        if item == "START":
            return START
        raise GraphValidationError(
            f"an edge names node {item!r}, which is not in the graph: give the node itself (or 'START')")
    if item is START:
        return START
    if id(item) not in known:
        known[id(item)] = as_node(item)
    return known[id(item)]


def _members(element: Any) -> list[Any]:
    if isinstance(element, dict):
        return [n for target in element.values() for n in (target if isinstance(target, tuple) else (target,))]
    if isinstance(element, tuple):
        return list(element)
    return [element]


def _chain(chain: tuple[Any, ...], known: dict[int, Any]) -> Iterable[Edge]:
    for before, after in itertools.pairwise(chain):
        if isinstance(after, dict):
            if isinstance(before, dict):
                raise WorkflowConfigurationError("two routing maps in a row in a chain: split them into two edges")
            if not after:
                raise GraphValidationError("a routing map with no route: give at least one route -> node")
            for route, target in after.items():
                if not isinstance(route, (bool, int, str)):
                    raise GraphValidationError(f"route {route!r} is not a bool, int or str")
                if target is None or target == ():
                    raise GraphValidationError(f"route {route!r} has no edge: give the node it leads to")
                for source in _members(before):
                    for node in (target if isinstance(target, tuple) else (target,)):
                        yield Edge(from_node=_node(source, known), to_node=_node(node, known), route=route)
        else:
            for source in _members(before):
                for node in _members(after):
                    yield Edge(from_node=_node(source, known), to_node=_node(node, known))


def _edges(items: Iterable[Any]) -> list[Edge]:
    known: dict[int, Any] = {}
    edges: list[Edge] = []
    for item in items:
        if isinstance(item, Edge):
            if isinstance(item.route, list) and not item.route:
                raise GraphValidationError(
                    f"the edge {_name(item.from_node)} -> {_name(item.to_node)} has an empty list of routes: "
                    f"a route with no value is never taken")
            edges.append(Edge(from_node=_node(item.from_node, known), to_node=_node(item.to_node, known),
                              route=item.route))
        elif isinstance(item, tuple):
            edges.extend(_chain(item, known))
        else:
            raise WorkflowConfigurationError(f"an edge is an Edge or a tuple (a chain), got {item!r}")
    return edges


def _name(item: Any) -> str:
    return str(getattr(item, "name", item))


def _check_cycles(graph: Graph) -> None:
    plain: dict[str, list[str]] = {name: [] for name in graph.nodes}
    for edge in graph.edges:
        if edge.route is None:
            plain[edge.from_node.name].append(edge.to_node.name)
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        path.append(name)
        for after in plain[name]:
            if after in path:
                cycle = " -> ".join([*path[path.index(after):], after])
                raise GraphValidationError(
                    f"the cycle {cycle} has no conditional (routed) edge: it has no exit and no limit")
            if after not in done:
                visit(after, path)
        path.pop()
        done.add(name)

    for name in plain:
        if name not in done:
            visit(name, [])


def build_graph(items: Iterable[Any], *, workflow: str) -> Graph:
    """The checked graph of a workflow's edge items (see the module for the checks,
    each a :class:`GraphValidationError` naming ``workflow``)."""
    try:
        edges = _edges(items)
        graph = Graph(edges=edges)
        for edge in edges:
            for node in (edge.from_node, edge.to_node):
                other = graph.nodes.setdefault(node.name, node)
                if other is not node:
                    raise GraphValidationError(
                        f"two different nodes are named {node.name!r}: reuse the same object, or name them apart")
        if START.name not in graph.nodes:
            raise GraphValidationError("no edge from START: a graph begins with (START, first_node)")
        for edge in edges:
            if edge.to_node is START:
                raise GraphValidationError(f"the edge {edge.from_node.name} -> START leads into START")
            if edge.from_node is START and edge.route is not None:
                raise GraphValidationError(f"the edge START -> {edge.to_node.name} has a route: START chooses none")
            if isinstance(edge.route, list) and DEFAULT_ROUTE in edge.route:
                raise GraphValidationError(f"the edge {edge.from_node.name} -> {edge.to_node.name} puts "
                                           f"DEFAULT_ROUTE in a list of routes: give it an edge of its own")
        seen: dict[tuple[str, str], set[Any]] = {}
        for edge in edges:
            routes = set(edge.route) if isinstance(edge.route, list) else {edge.route}
            key = (edge.from_node.name, edge.to_node.name)
            before = seen.setdefault(key, set())
            if before and (None in before or None in routes or before & routes):
                raise GraphValidationError(f"two edges {key[0]} -> {key[1]} on the same route")
            before.update(routes)
        reached: set[str] = set()
        stack = [START.name]
        while stack:
            name = stack.pop()
            if name not in reached:
                reached.add(name)
                stack.extend(edge.to_node.name for edge in graph.successors(name))
        unreachable = sorted(set(graph.nodes) - reached)
        if unreachable:
            raise GraphValidationError(f"START reaches no edge to {unreachable}: an edge leads to a node "
                                       f"that is not in the graph from START")
        _check_cycles(graph)
        for edge in edges:
            given, taken = getattr(edge.from_node, "output_schema", None), getattr(edge.to_node, "input_schema", None)
            if given and taken and given != taken:
                raise GraphValidationError(
                    f"Schema mismatch on edge {edge.from_node.name} -> {edge.to_node.name}: output schema {given} "
                    f"does not match input schema {taken}")
        for edge in edges:
            if str(getattr(edge.to_node, "mode", None) or "") == "task":
                if edge.from_node is not START:
                    raise WorkflowConfigurationError(
                        f"agent {edge.to_node.name!r} has mode='task' and follows node {edge.from_node.name!r}: a "
                        f"task agent node is supported here right after START only (a task agent after another "
                        f"node, taken up where it waited on the user's next message, is not built yet); put it "
                        f"right after START, or give it mode='single_turn'")
                FinishTaskTool(getattr(edge.to_node, "output_schema", None), edge.to_node.name)  # its schema checked
            if str(getattr(edge.to_node, "mode", None) or "") == "chat" and edge.from_node is not START:
                raise GraphValidationError(
                    f"agent {edge.to_node.name!r} has mode='chat' and follows node {edge.from_node.name!r}: a chat "
                    f"agent talks over the session's history and cannot take another node's output as its input; "
                    f"give it mode='single_turn', or put it right after START")
    except GraphValidationError as exc:
        raise GraphValidationError(f"workflow {workflow!r}: {exc}") from None
    return graph
