"""The 10-node graph of bench/workflows.py, written as a google-adk user writes it.

google-adk's half (bench/_google_adk_workflow.py) imports this file as it is; ours
(bench/workflow_graph.py) runs its text with the imports rewritten, ``google.adk`` to
``adk_actors`` and nothing else (README's promise to a google-adk user), so both sides
run one graph: START -> ``parse`` -> (``shout``, ``count``, ``first``) -> ``join`` ->
``summarize`` -> ``writer`` (an LlmAgent on Gemini: one request to the stand-in) ->
``record`` -> ``check`` -> ``finish``.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.workflow import START, JoinNode, Workflow


def parse(node_input: Any, ctx: Any) -> list[str]:
    text = "".join(p.text or "" for p in node_input.parts) if hasattr(node_input, "parts") else str(node_input)
    ctx.state["topic"] = text
    return text.split()


def shout(node_input: list[str]) -> str:
    return " ".join(word.upper() for word in node_input)


def count(node_input: list[str]) -> int:
    return len(node_input)


def first(node_input: list[str]) -> str:
    return node_input[0] if node_input else ""


def summarize(node_input: dict[str, Any], ctx: Any) -> str:
    summary = f"{node_input['count']} words, first {node_input['first']}: {node_input['shout']}"
    ctx.state["summary"] = summary
    return summary


def record(node_input: Any, ctx: Any) -> str:
    ctx.state["runs"] = ctx.state.get("runs", 0) + 1
    return str(node_input)


def check(node_input: str) -> dict[str, Any]:
    return {"line": node_input, "ok": bool(node_input)}


def finish(node_input: dict[str, Any], summary: str) -> str:
    return f"{summary} => {node_input['line']}"


writer = LlmAgent(name="writer", model="gemini-2.5-flash", instruction="Write one line about: {summary}")
root = Workflow(name="ten", edges=[
    (START, parse, (shout, count, first), JoinNode(name="join"), summarize, writer, record, check, finish),
])
