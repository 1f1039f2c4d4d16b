"""``builder.to_mermaid()``: the builder's tree as a Mermaid graph, in adk-fluent's
layout: ``graph TD``; one node per step, numbered ``n1, n2, ...`` depth first, its
shape telling its kind (an agent ``["a"]``, a sequence ``[["a_then_b (sequence)"]]``,
parallel ``{"... (parallel)"}``, loop ``(("... (loop x3)"))``, fallback
``[/"... (fallback)"\\]``, route ``{"... (route)"}``, gate and race ``{{...}}``,
a state step ``>"... transform"]``, a tap ``>"... tap"]``, map_over
``(("... (map key)"))``, a time limit ``["... (timeout 5s)"]``); then the edges (a
sequence's steps one after the other, a parent to each child of any other kind, a
route's ``otherwise`` dotted; an artifact step ``{{"publish (name) artifact"}}``);
then, with ``show_contracts``, a note per
``produces``/``consumes`` schema; then, with ``show_data_flow``, a dotted edge labelled
with the key from each step that writes a state key to each step that reads it (an
instruction's ``{key}``, ``.reads``, a route's key, a state step's reads), and from an
artifact step that saves a file to one that reads it (``artifact:<name>``).

It reads the builders through ``kind``, ``name``, ``steps`` and their public
attributes, as ``_contracts`` and ``_explain`` do."""

from __future__ import annotations

import itertools
from typing import Any

from ._prompt import template_keys

__all__ = ["to_mermaid"]

def to_mermaid(root: Any, *, show_contracts: bool = True, show_data_flow: bool = True) -> str:
    nodes: list[str] = []
    edges: list[str] = []
    notes: list[str] = []
    writers: dict[str, list[str]] = {}
    readers: dict[str, list[str]] = {}

    def walk(node: Any) -> str:
        nid = f"n{len(nodes) + 1}"
        nodes.append(f"    {nid}{_shape(node)}")
        for key in _writes(node):
            writers.setdefault(key, []).append(nid)
        for key in _reads(node):
            readers.setdefault(key, []).append(nid)
        if show_contracts:
            for label, schema in (("produces", getattr(node, "produces_schema", None)),
                                  ("consumes", getattr(node, "consumes_schema", None))):
                if schema is not None:
                    notes.append(f'    {nid} -. "{label} {schema.__name__}" .-o {nid}')
        kind = getattr(node, "kind", None)
        if kind == "route":
            for _predicate, step in node.rules:
                edges.append(f"    {nid} --> {walk(step)}")
            if node.otherwise_step is not None:
                edges.append(f"    {nid} -.-> {walk(node.otherwise_step)}")
        elif kind == "sequence":
            children = [walk(step) for step in node.steps]
            edges.extend(f"    {a} --> {b}" for a, b in itertools.pairwise(children))
        else:
            for step in getattr(node, "steps", ()) if kind is not None else ():
                edges.append(f"    {nid} --> {walk(step)}")
        return nid

    walk(root)
    flows = []
    if show_data_flow:
        for key in sorted(set(writers) & set(readers)):
            for writer in writers[key]:
                flows += [f'    {writer} -. "{key}" .-> {reader}' for reader in readers[key] if reader != writer]
    return "\n".join(["graph TD", *nodes, *edges, *notes, *dict.fromkeys(flows)])


def _label(text: str) -> str:
    return text.replace('"', "'").replace("\n", " ")


def _shape(node: Any) -> str:
    name = _label(str(getattr(node, "name", None) or getattr(node, "__name__", "step")))
    kind = getattr(node, "kind", None)
    if kind is None:  # a state transform or a function: a step on the state
        return f'>"{name} transform"]'
    shapes = {
        "agent": f'["{name}"]',
        "sequence": f'[["{name} (sequence)"]]',
        "parallel": f'{{"{name} (parallel)"}}',
        "loop": f'(("{name} (loop x{getattr(node, "_max", 0)})"))' if getattr(node, "_max", 0)
        else f'(("{name} (loop)"))',
        "fallback": f'[/"{name} (fallback)"\\]',
        "route": f'{{"{name} (route)"}}',
        "gate": f'{{{{"{name} (gate)"}}}}',
        "race": f'{{{{"{name} (race)"}}}}',
        "tap": f'>"{name} tap"]',
        "map_over": f'(("{name} (map {getattr(node, "list_key", "?")})"))',
        "timeout": f'["{name} (timeout {_seconds(getattr(node, "seconds", "?"))}s)"]',
        "artifact": f'{{{{"{getattr(node, "op", "?")} ({getattr(node, "filename", None) or ""}) artifact"}}}}',
    }
    return shapes.get(kind, f'["{name}"]')


def _seconds(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _writes(node: Any) -> list[str]:
    kind = getattr(node, "kind", None)
    if kind == "agent":
        return [node.writes_key] if node.writes_key else []
    if kind == "gate":
        return [node.gate_key]
    if kind == "map_over":
        return [node.output_key]
    if kind == "artifact":  # an artifact it saves is drawn as a key of its own
        return sorted(node.writes_keys) + ([f"artifact:{node.filename}"] if node.op in ("publish", "save") else [])
    if kind is None:
        capture = getattr(node, "capture", None)
        return sorted({*(getattr(node, "writes", None) or ()), *([capture] if capture else [])})
    return []


def _reads(node: Any) -> list[str]:
    kind = getattr(node, "kind", None)
    if kind == "agent":
        required, optional = template_keys(node.instruction_text or "")
        return sorted(required | optional | set(node.reads_keys))
    if kind == "route":
        return [node.key] if node.key else []
    if kind == "map_over":
        return [node.list_key]
    if kind == "artifact":
        return sorted(node.reads_keys) + ([f"artifact:{node.filename}"] if node.op == "snapshot" else [])
    if kind is None:
        return sorted(getattr(node, "reads", None) or ())
    return []
