"""The graph's branch that runs in a process of the run's pool, in a module that
imports nothing: a pool's process imports only the module of the function it calls,
so it starts fastest with a light one."""

from __future__ import annotations

__all__ = ["south"]


def south(node_input: str) -> str:
    """A little CPU work, no context, no side effect."""
    digest = 0
    for char in node_input * 200:
        digest = (digest * 31 + ord(char)) % 1_000_003
    return f"S({len(node_input)}:{digest})"
