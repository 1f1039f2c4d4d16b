"""``builder.explain()``: what a builder will make, in plain text (adk-fluent's
``explain`` without rich): the kind and name, then for an agent its model, the
start of its instruction and the ``{key}`` placeholders it fills, what it reads and
writes, its tools and callbacks; for a workflow, each step, indented below it.

This module reads the builders through their public attributes and ``kind`` (it
does not import them): ``steps``, ``writes_key``, ``reads_keys``, ``tool_names``,
``callback_counts``, ``model_name``, ``instruction_text``."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["explain"]

_KINDS = {"agent": "Agent", "sequence": "Pipeline", "parallel": "FanOut", "loop": "Loop", "fallback": "Fallback",
          "timeout": "Timed", "route": "Route", "race": "Race", "gate": "Gate", "tap": "Tap",
          "map_over": "MapOver", "artifact": "Artifact"}
_PLACEHOLDER = re.compile(r"\{(\w+)(\?)?\}")


def explain(builder: Any) -> str:
    """The summary of ``builder`` and, indented, of each of its steps."""
    return "\n".join(_lines(builder, ""))


def _lines(node: Any, indent: str) -> list[str]:
    kind = getattr(node, "kind", None)
    if kind is None:  # a state transform, a function or a built agent
        return [f"{indent}Step: {getattr(node, 'name', None) or getattr(node, '__name__', type(node).__name__)}"]
    lines = [f"{indent}{_KINDS.get(kind, kind)}: {node.name}"]
    inner = indent + "  "
    if kind == "agent":
        lines += _agent_lines(node, inner)
    for step in getattr(node, "steps", ()):
        lines += _lines(step, inner)
    return lines


def _agent_lines(agent: Any, indent: str) -> list[str]:
    lines = []
    if agent.model_name:
        lines.append(f"{indent}Model: {agent.model_name}")
    text = agent.instruction_text
    if text is None:
        lines.append(f"{indent}Instruction: <dynamic provider>")
    elif text:
        preview = text[:80].replace("\n", " ") + ("..." if len(text) > 80 else "")
        lines.append(f"{indent}Instruction: {preview}")
        found = _PLACEHOLDER.findall(text)
        required = list(dict.fromkeys(name for name, optional in found if not optional))
        optional = list(dict.fromkeys(name for name, optional in found if optional))
        said = [f"{label}: {', '.join(names)}" for label, names in (("required", required), ("optional", optional))
                if names]
        if said:
            lines.append(f"{indent}Template vars: {'; '.join(said)}")
    lines.append(f"{indent}Data flow:")
    lines.append(f"{indent}  reads:    " + (", ".join(f"state[{k!r}]" for k in agent.reads_keys)
                                             if agent.reads_keys else "full conversation history (default)"))
    lines.append(f"{indent}  writes:   " + (f"state[{agent.writes_key!r}]" if agent.writes_key
                                             else "conversation only"))
    if agent.tool_names:
        lines.append(f"{indent}Tools: {', '.join(agent.tool_names)}")
    counts = agent.callback_counts
    if counts:
        lines.append(f"{indent}Callbacks: " + ", ".join(f"{slot} ({n})" for slot, n in counts.items()))
    return lines
