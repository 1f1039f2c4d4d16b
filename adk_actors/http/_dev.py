"""The ``/dev`` routes adk-web calls on load, served whether or not google-adk is
installed (adk-web is often hosted elsewhere and pointed at the host):

* ``GET /dev/apps/{app}/build_graph``: the agent tree (google-adk's ``serialize_app_info``
  shape, snake case): name, description, class, model, instruction, tools, sub-agents.
* ``GET /dev/apps/{app}/build_graph_image?dark_mode=&node=``: ``{node: {"dotSrc"}}``,
  a Graphviz graph of the tree below ``node`` (an agent's name; the root when none).
* ``GET /dev/apps/{app}/graph?dark_mode=``: ``{"dotSrc"}`` of the whole tree.
* An app whose root is a ``Workflow``: google-adk 2.x's workflow views instead
  (``adk_actors.workflow.workflow_info`` and ``graph_views``): ``build_graph`` its
  graph's nodes and edges, ``build_graph_image`` one DOT graph per workflow (nested
  ones by their path of names, ``node`` such a path), ``graph`` the root's, and
  ``GET /dev/apps/{app}/users/{u}/sessions/{s}/events/{e}/graph`` the root's with each
  node filled by its status at that event (``{}``: no such session or event; an app
  whose root is no workflow: ``{}`` too, not drawn here).
* ``GET /config/telemetry``: ``{"telemetry": false}`` (this host sends none).

An app the host does not know (nor a draft of it) is 404 ``App not found``.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, HTTPException, Request

from .._exceptions import SessionNotFoundError
from .._types import model_name
from ..workflow import graph_views, node_statuses, workflow_dot, workflow_info
from ._deps import Api

__all__ = ["agent_graph", "dot_source", "router"]

router = APIRouter(tags=["dev"])


def agent_graph(agent: Any) -> dict[str, Any]:
    """An agent and the agents below it, as google-adk's ``build_graph`` serves them."""
    tools = [{"name": getattr(t, "name", getattr(t, "__name__", str(t))), "type": "function"}
             for t in getattr(agent, "tools", ()) or ()]
    instruction = getattr(agent, "instruction", "")
    return {"name": agent.name, "description": getattr(agent, "description", "") or "",
            "agent_class": type(agent).__name__, "model": model_name(getattr(agent, "model", "")),
            "instruction": instruction if isinstance(instruction, str) else "", "tools": tools,
            "sub_agents": [agent_graph(sub) for sub in getattr(agent, "sub_agents", ()) or ()]}


def dot_source(graph: dict[str, Any], dark_mode: bool = False) -> str:
    """A Graphviz ``digraph`` of ``graph`` (``agent_graph``'s shape): an ellipse per
    agent, a box per tool, an edge from each agent to its sub-agents and tools."""
    ink = "#e8eaed" if dark_mode else "#202124"
    lines = ["digraph G {", f'  bgcolor="{"#202124" if dark_mode else "#ffffff"}";', "  rankdir=LR;",
             f'  node [color="{ink}", fontcolor="{ink}"]; edge [color="{ink}"];']

    def quoted(text: str) -> str:
        return json.dumps(text)  # a DOT string: double quotes, backslash escapes

    def walk(node: dict[str, Any]) -> None:
        name = quoted(node["name"])
        lines.append(f"  {name} [shape=ellipse, label={quoted(node['name'])}];")
        for tool in node["tools"]:
            tool_id = quoted(f"{node['name']}/{tool['name']}")
            lines.append(f"  {tool_id} [shape=box, label={quoted(tool['name'])}];")
            lines.append(f"  {name} -> {tool_id};")
        for sub in node["sub_agents"]:
            lines.append(f"  {name} -> {quoted(sub['name'])};")
            walk(sub)

    walk(graph)
    lines.append("}")
    return "\n".join(lines)


def _find(graph: dict[str, Any], name: str) -> dict[str, Any] | None:
    if graph["name"] == name:
        return graph
    return next((found for sub in graph["sub_agents"] if (found := _find(sub, name)) is not None), None)


def _root_agent(api: Any, app: str) -> Any:
    agent = api.root_agent_of(app)
    if agent is None:
        raise HTTPException(404, f"App not found: {app}")
    return agent


def _root(api: Any, app: str) -> dict[str, Any]:
    return agent_graph(_root_agent(api, app))


def _workflow(api: Any, app: str) -> dict[str, Any] | None:
    """The app's root workflow described (None when its root is no workflow)."""
    agent = _root_agent(api, app)
    return workflow_info(agent) if getattr(agent, "_is_workflow", False) else None


@router.get("/dev/apps/{app}/build_graph")
def build_graph(app: str, api: Api) -> dict[str, Any]:
    workflow = _workflow(api, app)
    return {"name": app, "root_agent": workflow if workflow is not None else _root(api, app)}


@router.get("/dev/apps/{app}/build_graph_image")
def build_graph_image(app: str, api: Api, dark_mode: bool = False, node: str | None = None) -> dict[str, Any]:
    workflow = _workflow(api, app)
    if workflow is not None:
        views = graph_views(workflow, dark_mode=dark_mode, node=node)
        if views is None:
            raise HTTPException(404, f"Node not found: {node}")
        return {path: {"dotSrc": dot} for path, dot in views.items()}
    graph = _root(api, app)
    target = _find(graph, node) if node else graph
    if target is None:
        raise HTTPException(404, f"Node not found: {node}")
    return {node or "": {"dotSrc": dot_source(target, dark_mode)}}


@router.get("/dev/apps/{app}/graph")
def graph(app: str, api: Api, dark_mode: bool = False) -> dict[str, Any]:
    workflow = _workflow(api, app)
    if workflow is not None:
        return {"dotSrc": workflow_dot(workflow, dark_mode)}
    return {"dotSrc": dot_source(_root(api, app), dark_mode)}


@router.get("/dev/apps/{app}/users/{user}/sessions/{session_id}/events/{event_id}/graph")
def event_graph(app: str, user: str, session_id: str, event_id: str, request: Request, api: Api,
                dark_mode: bool = False) -> dict[str, Any]:
    api.allowed(request, user, app)
    workflow = _workflow(api, app)
    if workflow is None:
        return {}
    try:
        events = api.runner(app).get_session(user, session_id).events
    except SessionNotFoundError:
        return {}
    statuses = node_statuses(list(events), event_id, f"{workflow['name']}@1")
    return {} if statuses is None else {"dotSrc": workflow_dot(workflow, dark_mode, statuses)}


@router.get("/config/telemetry")
def telemetry() -> dict[str, Any]:
    return {"telemetry": False}
