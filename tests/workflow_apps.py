"""Workflow graphs served by a real host in tests/test_workflows.py (imported by the
host's processes by path: ``workflow_apps:<name>``)."""

from __future__ import annotations

import time
from typing import Any

from pid_files import write_pid

from adk_actors.events import Event
from adk_actors.workflow import DEFAULT_ROUTE, START, JoinNode, Workflow


def classify(node_input: str) -> Event:
    return Event(output=node_input.upper(), route="long" if len(node_input) > 5 else "short")


def long_path(node_input: str, ctx: Any) -> str:
    ctx.state["path"] = "long"
    return f"long:{node_input}"


def short_path(node_input: str, ctx: Any) -> str:
    ctx.state["path"] = "short"
    return f"short:{node_input}"


def left(node_input: str) -> str:
    return f"L({node_input})"


def right(node_input: str) -> str:
    return f"R({node_input})"


def shout(node_input: str) -> str:
    return node_input + "!"


def summary(node_input: dict[str, Any], ctx: Any) -> str:
    text = " + ".join(f"{k}={node_input[k]}" for k in sorted(node_input))
    ctx.state["summary"] = text
    return text


inner = Workflow(name="inner", edges=[(START, shout)])
graph_app = Workflow(name="graph_app", edges=[
    (START, classify, {"long": long_path, DEFAULT_ROUTE: short_path}),
    (long_path, (left, right, inner)),
    (short_path, (left, right, inner)),
    ((left, right, inner), JoinNode(name="gather"), summary),
])

def count_step(node_input: str, counts_file: str) -> str:
    """A side effect counted outside the host."""
    with open(counts_file, "a") as counts:
        counts.write("step\n")
    return node_input


def hold(node_input: str, counts_file: str) -> str:
    """Writes its worker's pid, then waits to be killed."""
    write_pid(f"{counts_file}.pid")
    time.sleep(60)
    return node_input


held_app = Workflow(name="held_app", edges=[(START, count_step, hold)])

APPS = {"graph": "workflow_apps:graph_app", "held": "workflow_apps:held_app"}
