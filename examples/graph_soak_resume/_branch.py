"""The graph's branch that runs in a process of the run's pool (no context: the run it
belongs to and its round come in its input, ``<invocation id>:<round>:<text>``), in a
module that imports nothing of the kit: a pool's process imports only the module of
the function it calls, so it starts fastest with a light one. Its node declares it
safe to run again (``rerun_on_resume=True``, see ``agent``)."""

from __future__ import annotations

import time

from ._ledger import effect, started

__all__ = ["south"]


def south(node_input: str) -> str:
    """Log its start, do a little CPU work, make its effect; safe to run again."""
    invocation_id, round_, text = node_input.split(":", 2)
    node_run = f"south@{round_}"
    started(invocation_id, node_run)
    digest = 0
    for char in text * 200:
        digest = (digest * 31 + ord(char)) % 1_000_003
    time.sleep(0.05)  # a slower branch: kills land inside the fan-out too
    output = f"S({len(text)}:{digest})"
    effect(invocation_id, node_run, output)
    return output
