"""A workflow graph as adk-web draws it: the JSON of google-adk 2.x's ``build_graph``
route (its ``serialize_app_info`` shape, snake case) and the Graphviz DOT text of its
``build_graph_image`` route (one graph per workflow, nested ones by their path), made
here without google-adk or graphviz installed.

:func:`workflow_info` describes a workflow: ``name``, ``description``,
``rerun_on_resume``, ``wait_for_output``, the settings that are set (``retry_config``,
``timeout``, ``max_concurrency``), ``edges`` (as written: chains as lists, route maps as
dicts, each node described) and ``graph`` (its checked ``nodes`` and ``edges``, each
edge ``from_node``, ``to_node`` and its ``route`` when it has one). A node is described
by its kind (``type``: start, function, join, agent, workflow). :func:`graph_views`
gives ``{path: dot}`` for the workflow and each workflow nested in it, ``path`` the
names from the root joined by ``/`` (the root's is ""); :func:`workflow_dot` draws one
(google-adk's look: START and END ovals, a diamond for a node with routed edges,
flagged when none of them is its default route, an oval for a join, an agent's tools
as dashed boxes).
"""

from __future__ import annotations

import html
import re
from typing import Any

from ._graph import DEFAULT_ROUTE
from ._input import interrupt_ids
from ._nodes import START, BaseNode, FunctionNode, JoinNode
from ._task import FINISH_TASK

__all__ = ["graph_views", "is_workflow", "node_info", "node_statuses", "workflow_dot", "workflow_info"]


def is_workflow(agent: Any) -> bool:
    return bool(getattr(agent, "_is_workflow", False))


def _settings(node: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    retry = getattr(node, "retry_config", None)
    if retry is not None:
        found["retry_config"] = retry.model_dump(mode="python", exclude_none=True)
    if getattr(node, "timeout", None) is not None:
        found["timeout"] = node.timeout
    if getattr(node, "max_parallel_workers", None) is not None:  # a parallel worker's limit
        found["max_parallel_workers"] = node.max_parallel_workers
    return found


def _tool_name(tool: Any) -> str:
    return str(getattr(tool, "name", None) or getattr(tool, "__name__", None) or type(tool).__name__)


def _model_name(model: Any) -> str:
    return model if isinstance(model, str) else str(getattr(model, "model", "") or "")


def _agent(agent: Any, *, as_node: bool) -> dict[str, Any]:
    """An agent as google-adk describes it: as written (``as_node`` False: its own
    settings), or as a node of a graph (google-adk may rerun it on resume; it runs in
    its ``mode``, single-turn when it has none, seeing only its input unless its
    ``include_contents`` is set; a chat or task agent waits for its output)."""
    mode = None if getattr(agent, "mode", None) is None else str(agent.mode)
    node_mode = mode or "single_turn"
    waits = bool(getattr(agent, "wait_for_output", False)) or (as_node and node_mode in ("chat", "task"))
    info: dict[str, Any] = {"name": agent.name, "description": getattr(agent, "description", "") or "",
                            "rerun_on_resume": as_node, "wait_for_output": waits, **_settings(agent)}
    info["sub_agents"] = [_agent(sub, as_node=as_node) for sub in getattr(agent, "sub_agents", ()) or ()]
    if hasattr(agent, "model"):
        info["model"] = _model_name(agent.model)
    instruction = getattr(agent, "instruction", None)
    if isinstance(instruction, str):
        info["instruction"] = instruction
    if hasattr(agent, "global_instruction"):
        global_instruction = agent.global_instruction
        info["global_instruction"] = global_instruction if isinstance(global_instruction, str) else ""
    if hasattr(agent, "tools"):
        info["tools"] = [{"name": _tool_name(tool), "type": "tool"} for tool in agent.tools or ()]
        if mode == "task":  # a task agent has finish_task last (added when it runs: ``_task``)
            info["tools"].append({"name": FINISH_TASK, "type": "tool"})
    if hasattr(agent, "model"):
        if as_node or mode is not None:
            info["mode"] = node_mode if as_node else mode
        info["disallow_transfer_to_parent"] = bool(getattr(agent, "disallow_transfer_to_parent", False))
        info["disallow_transfer_to_peers"] = bool(getattr(agent, "disallow_transfer_to_peers", False))
        contents = str(getattr(agent, "include_contents", "default"))
        chosen = "include_contents" in getattr(agent, "model_fields_set", ())
        info["include_contents"] = "none" if as_node and node_mode == "single_turn" and not chosen else contents
        if getattr(agent, "output_key", None):
            info["output_key"] = agent.output_key
    if as_node:
        info["type"] = "agent"
    return info


def node_info(node: Any) -> dict[str, Any]:
    """One node of a graph as google-adk describes it (see the module)."""
    if node is START:
        return {"name": START.name, "type": "start", "rerun_on_resume": START.rerun_on_resume}
    if is_workflow(node):
        return {**workflow_info(node), "type": "workflow"}
    if isinstance(node, BaseNode):
        info = {"name": node.name, "description": node.description, "rerun_on_resume": node.rerun_on_resume,
                "wait_for_output": node.wait_for_output, **_settings(node)}
        if isinstance(node, FunctionNode):
            info.update({"require_confirmation": False, "parameter_binding": "state", "type": "function"})
        else:
            info["type"] = "join" if isinstance(node, JoinNode) else "node"
        return info
    return _agent(node, as_node=True)


def _written(item: Any) -> Any:
    """An element of an edge as written: START, a node described briefly as google-adk
    does (a function by name, a node or an agent in full), a route map, a tuple of them."""
    if item is START or item == "START":
        return {"name": START.name, "type": "start", "rerun_on_resume": START.rerun_on_resume}
    if isinstance(item, dict):
        return {str(route): _written(target) for route, target in item.items()}
    if isinstance(item, tuple):
        return [_written(element) for element in item]
    if isinstance(item, BaseNode) or is_workflow(item):
        return node_info(item)
    if hasattr(item, "sub_agents"):
        return _agent(item, as_node=False)
    if callable(item):
        return {"name": getattr(item, "__name__", str(item)), "type": "function"}
    return str(item)


def _edge(edge: Any) -> dict[str, Any]:
    found = {"from_node": node_info(edge.from_node), "to_node": node_info(edge.to_node)}
    if edge.route is not None:
        found["route"] = edge.route
    return found


def workflow_info(workflow: Any) -> dict[str, Any]:
    """A workflow as google-adk's ``build_graph`` describes it (see the module)."""
    info: dict[str, Any] = {"name": workflow.name, "description": workflow.description or "",
                            "rerun_on_resume": workflow.rerun_on_resume, "wait_for_output": False,
                            **_settings(workflow)}
    edges: list[Any] = []
    for item in workflow.edges:
        if isinstance(item, tuple):
            edges.append([_written(element) for element in item])
        else:
            edges.append(_edge(item) if hasattr(item, "from_node") else str(item))
    info["edges"] = edges
    if workflow.max_concurrency is not None:
        info["max_concurrency"] = workflow.max_concurrency
    graph = workflow.graph
    if graph is not None:
        info["graph"] = {"nodes": [node_info(node) for node in graph.nodes.values()],
                         "edges": [_edge(edge) for edge in graph.edges]}
    return info


# -- DOT text, as the graphviz package writes it ---------------------------------------

_ID = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*|-?(\.[0-9]+|[0-9]+(\.[0-9]*)?))$")
_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}
_QUOTES = re.compile(r'(?P<backslashes>(?:\\{2})*)\\?(?P<quote>")')


def _quote(text: str) -> str:
    """``text`` as a DOT identifier: an HTML label (``<...>``) or a plain identifier or
    number as it is, anything else (or a keyword) in double quotes."""
    if re.match(r"<.*>$", text, re.DOTALL):
        return text
    if text.lower() not in _KEYWORDS and _ID.match(text):
        return text
    return '"' + _QUOTES.sub(r'\g<backslashes>\\\g<quote>', text) + '"'


def _attrs(label: str | None = None, **attrs: str) -> str:
    parts = [f"label={_quote(label)}"] if label is not None else []
    parts += [f"{_quote(k)}={_quote(v)}" for k, v in sorted(attrs.items())]
    return f" [{' '.join(parts)}]" if parts else ""


_LIGHT = {"bg": "#F8FAFC", "fill": "#FFFFFF", "line": "#94A3B8", "ink": "#0F172A", "edge": "#64748B",
          "edge_ink": "#475569", "start": "#10B981", "start_line": "#059669", "end": "#EF4444",
          "end_line": "#DC2626"}
_DARK = {"bg": "#0F172A", "fill": "#1E293B", "line": "#475569", "ink": "#F8FAFC", "edge": "#94A3B8",
         "edge_ink": "#CBD5E1", "start": "#059669", "start_line": "#047857", "end": "#DC2626",
         "end_line": "#B91C1C"}
#: A node's fill by its status (google-adk's colours; a node with none: inactive).
_STATUS_FILL = {
    False: {"completed": "#69CB87", "running": "#e8b589", "failed": "salmon", "inactive": "#FFFFFF",
            "waiting": "#d2a6e0", "cancelled": "lightgray"},
    True: {"completed": "#16A34A", "running": "#D97706", "failed": "#EF4444", "inactive": "#1E293B",
           "waiting": "#9333EA", "cancelled": "#475569"},
}
_ICONS = {"agent": ("✦", "#42A5F5"), "workflow": ("⊷", "#9333EA"), "function": ("ƒ", "#10B981"),
          "join": ("⌵", "#F59E0B"), "tool": ("🔧", "#6B7280")}


def _tree_graph(info: dict[str, Any]) -> dict[str, Any]:
    """An agent that is not a workflow, drawn as a graph: it and its sub-agents."""
    root = info.get("name", "root_agent")
    nodes = [{"name": root, "type": "agent", "tools": info.get("tools", [])}]
    edges: list[dict[str, Any]] = []

    def walk(agent: dict[str, Any], parent: str) -> None:
        for sub in agent.get("sub_agents", []):
            if sub.get("name"):
                nodes.append({"name": sub["name"], "type": "agent", "tools": sub.get("tools", [])})
                edges.append({"from_node": {"name": parent}, "to_node": {"name": sub["name"]}})
                walk(sub, sub["name"])

    walk(info, root)
    return {"nodes": nodes, "edges": edges}


def workflow_dot(info: dict[str, Any], dark_mode: bool = False, statuses: dict[str, str] | None = None) -> str:
    """The DOT text of one workflow's ``graph`` (``info``: :func:`workflow_info`'s, or
    an agent's with sub-agents), drawn as the module says; ``statuses``: node name ->
    completed, running, waiting, failed (see :func:`node_statuses`), each node filled
    with its status's colour."""
    c = _DARK if dark_mode else _LIGHT
    fills = _STATUS_FILL[dark_mode]
    is_graph = bool(info.get("graph"))
    graph = info.get("graph") or _tree_graph(info)
    lines = ["// Workflow Visualization", "digraph {",
             "\tgraph" + _attrs(bgcolor=c["bg"], pad="0.5", nodesep="0.5", ranksep="0.8", fontname="Helvetica",
                                splines="spline"),
             "\tnode" + _attrs(shape="rect", style="rounded,filled", fillcolor=c["fill"], color=c["line"],
                               penwidth="1.5", fontname="Helvetica", fontcolor=c["ink"], fontsize="12",
                               margin="0.25,0.15"),
             "\tedge" + _attrs(color=c["edge"], penwidth="1.2", fontname="Helvetica", fontcolor=c["edge_ink"],
                               fontsize="10", arrowhead="vee", arrowsize="0.7")]
    nodes = list(graph.get("nodes", []))
    edges = list(graph.get("edges", []))
    tools: dict[str, dict[str, Any]] = {}
    tool_edges = []
    for node in nodes:
        if not node.get("name") or node["name"] == START.name:
            continue
        for tool in node.get("tools", []):
            name = tool.get("name") if isinstance(tool, dict) else str(tool)
            if name:
                tools.setdefault(name, {"name": name, "type": tool.get("type", "tool") if isinstance(tool, dict)
                                        else "tool"})
                tool_edges.append({"from_node": {"name": node["name"]}, "to_node": {"name": name}, "tool": True})
    nodes += [t for t in tools.values() if not any(n.get("name") == t["name"] for n in nodes)]
    edges += tool_edges

    def outgoing(name: str) -> list[dict[str, Any]]:
        return [e for e in edges if e.get("from_node", {}).get("name") == name]

    for node in nodes:
        name = node.get("name")
        if not name or name == START.name:
            continue
        kind = node.get("type", "node")
        icon = _ICONS.get(kind)
        label = f'<<FONT COLOR="{icon[1]}" POINT-SIZE="14">{icon[0]}</FONT> {html.escape(name)}>' if icon else name
        tooltip = kind.title()
        fill = fills.get((statuses or {}).get(name, "inactive"), c["fill"])
        routed = outgoing(name)
        if any(e.get("route") for e in routed):
            if not any(not e.get("route") or e.get("route") == DEFAULT_ROUTE for e in routed if not e.get("tool")):
                if icon:
                    label = (f'<<FONT COLOR="{icon[1]}" POINT-SIZE="14">{icon[0]}</FONT> {html.escape(name)}'
                             f'<br/><br/><FONT POINT-SIZE="10">⚠️ [NO DEFAULT]</FONT>>')
                else:
                    label = f"<{html.escape(label)}<br/><br/><font point-size='10'>⚠️ [NO DEFAULT]</font>>"
            lines.append(f"\t{_quote(name)}" + _attrs(label, tooltip=tooltip, shape="diamond", style="filled",
                                                      fillcolor=fill, height="1.2", width="0.8",
                                                      margin="0.0,0.0"))
        elif kind == "join":
            lines.append(f"\t{_quote(name)}" + _attrs(label, tooltip=tooltip, shape="oval", style="filled",
                                                      fillcolor=fill, margin="0.05,0.05"))
        elif kind == "tool":
            lines.append(f"\t{_quote(name)}" + _attrs(label, tooltip=tooltip, style="rounded,filled,dashed",
                                                      fillcolor=fill))
        else:
            lines.append(f"\t{_quote(name)}" + _attrs(label, tooltip=tooltip, style="rounded,filled",
                                                      fillcolor=fill))
    for edge in edges:
        source = edge.get("from_node", {}).get("name")
        target = edge.get("to_node", {}).get("name")
        if source == START.name:
            lines.append(f"\t{START.name}" + _attrs("START", shape="oval", style="filled", fillcolor=c["start"],
                                                    color=c["start_line"], fontcolor=c["ink"],
                                                    fontname="Helvetica-Bold", width="0.9", fixedsize="true"))
        if source and target:
            if edge.get("tool"):
                lines.append(f"\t{_quote(source)} -> {_quote(target)}" + _attrs(style="dashed", color=c["edge"]))
            else:
                route = f"  {edge.get('route')}" if edge.get("route") else ""
                lines.append(f"\t{_quote(source)} -> {_quote(target)}" + _attrs(route))
    ends = [n["name"] for n in nodes if n.get("name") and n["name"] not in (START.name, "__END__")
            and n.get("type") != "tool" and not [e for e in outgoing(n["name"]) if not e.get("tool")]]
    if is_graph and ends:
        lines.append("\t__END__" + _attrs("END", shape="oval", style="filled", fillcolor=c["end"],
                                          color=c["end_line"], fontcolor=c["ink"], fontname="Helvetica-Bold",
                                          width="0.9", fixedsize="true"))
        lines += [f"\t{_quote(name)} -> __END__" for name in ends]
    return "\n".join(lines) + "\n}\n"


def _workflows(info: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {path: info} if info.get("graph") else {}
    children = [*info.get("sub_agents", []), *info.get("nodes", []), *(info.get("graph") or {}).get("nodes", [])]
    for child in children:
        name = child.get("name")
        if name:
            found.update(_workflows(child, f"{path}/{name}" if path else name))
    return found


def _find(info: dict[str, Any], node: str) -> dict[str, Any] | None:
    parts = [p for p in node.strip("/").split("/") if p]
    current: dict[str, Any] | None = info
    if parts and parts[0] == info.get("name"):
        parts = parts[1:]
    for part in parts:
        if current is None:
            return None
        containers = [(current.get("graph") or {}).get("nodes", []), current.get("nodes", []),
                      current.get("sub_agents", [])]
        current = next((item for items in containers for item in items if item.get("name") == part), None)
    return current


def graph_views(info: dict[str, Any], *, dark_mode: bool = False, node: str | None = None) -> dict[str, str] | None:
    """``build_graph_image``'s answer for an app whose root is described by ``info``:
    ``{path: dot}`` of each workflow from ``node`` (a path of names; the root when
    None) down; the agent at ``node`` drawn alone when it is no workflow. None when no
    node has that path."""
    target = _find(info, node) if node else info
    if target is None:
        return None
    found = _workflows(target, node or "")
    if (node or "") not in found:
        found[node or ""] = target
    return {path: workflow_dot(each, dark_mode) for path, each in found.items()}


def node_statuses(events: list[Any], event_id: str, root_path: str) -> dict[str, str] | None:
    """Where the graph run stood at event ``event_id`` of a session's ``events``: the
    status of each node of the root graph (``root_path``, ``name@1``) by name, from the
    events of its run up to that one (from the last message that was not an answer):
    ``completed`` (it gave its output or route, or its question was answered),
    ``waiting`` (it asked), ``failed`` (its last attempt failed), ``running``
    (started). None when the session has no such event."""
    end = next((i for i, e in enumerate(events) if e.id == event_id), None)
    if end is None:
        return None
    start = 0
    for i in range(end, -1, -1):
        event = events[i]
        if event.author == "user" and event.content is not None and not event.content.function_responses:
            start = i
            break
    by_run: dict[str, str] = {}  # node run path -> its status
    latest: dict[str, str] = {}  # node name -> its latest run's path
    asked: dict[str, str] = {}  # interrupt id -> the node run that asked it
    inside = root_path + "/"
    for event in events[start:end + 1]:
        if event.author == "user":
            for response in event.get_function_responses():
                if response.id in asked:
                    by_run[asked.pop(response.id or "")] = "completed"
            continue
        path = event.node_info.path if event.node_info is not None else None
        if not path or not path.startswith(inside):
            continue
        child = inside + path[len(inside):].split("/")[0]
        latest[child[len(inside):].split("@")[0]] = child
        own = path == child
        if own and event.error_code:
            by_run[child] = "failed"
        elif own and interrupt_ids(event):
            by_run[child] = "waiting"
            asked.update(dict.fromkeys(interrupt_ids(event), child))
        elif child in (event.node_info.output_for or []) or (own and event.actions.route is not None):
            by_run[child] = "completed"
        else:
            by_run.setdefault(child, "running")
    return {name: by_run[child] for name, child in latest.items()}
