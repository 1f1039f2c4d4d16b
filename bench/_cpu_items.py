"""The CPU-bound item of bench/workflows.py, in a module of its own that imports
nothing: an item process imports only the module of the function it calls, so a
CPU-bound node function kept in a light module starts its processes fastest."""

from __future__ import annotations

__all__ = ["burn"]


def burn(node_input: int) -> int:
    """``node_input`` rounds of a pure-Python loop (CPU only, the interpreter lock held)."""
    total = 0
    for i in range(node_input):
        total = (total * 31 + i) % 1_000_003
    return total
