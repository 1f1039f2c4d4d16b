"""graph_soak: a google-adk 2.x graph workflow built for ``adk-actors chaos soak``.

The graph, for every user message::

    START -> intake -> (north, south) -> meet (a join) -> tally
    tally -- "again" --> intake        (the loop back edge: twice round)
    tally -- "done"  --> reply

``south`` runs in a process of the run's pool (``processes=True``: a pure function,
no context, in a light module of its own, ``_branch``); the other function nodes take ``ctx`` and each records its side effect
outside the host once its work is done: a line ``<invocation id> <node run>``
(``north@2``) appended to the session's ledger file,
``<ledger dir>/<user id>/<session id>.ledger``. The ledger dir is
``$ADK_GRAPH_SOAK_DIR`` when the host's processes have it, else
``<temp dir>/adk-graph-soak``. Those nodes are not safe to run again (the default for
function nodes): a resumed run stops for a decision on one a kill left unfinished.

A run that completes records each of :data:`NODE_RUNS` exactly once; the state keeps
the last turn's answer (``last_answer``) and how many turns completed (``turns``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from adk_actors.workflow import START, FunctionNode, JoinNode, Workflow

from ._branch import south

__all__ = ["NODE_RUNS", "ROUNDS", "ledger_dir", "ledger_path", "root_agent"]

#: How many times a run goes round the loop.
ROUNDS = 2
#: The side-effecting node runs of one run that completes, each recorded once.
NODE_RUNS = tuple([f"{name}@{n}" for n in range(1, ROUNDS + 1) for name in ("intake", "north", "tally")]
                  + ["reply@1"])


def ledger_dir() -> Path:
    """Where the ledgers are (see the module)."""
    return Path(os.environ.get("ADK_GRAPH_SOAK_DIR") or Path(tempfile.gettempdir(), "adk-graph-soak"))


def ledger_path(user_id: str, session_id: str) -> Path:
    """The ledger of one session."""
    return ledger_dir() / user_id / f"{session_id}.ledger"


def _record(ctx: Any, name: str) -> None:
    """Append this node run to its session's ledger (one write: a line is whole or absent)."""
    path = ledger_path(ctx.session.user_id, ctx.session.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = f"{ctx.invocation_id} {name}@{ctx.run_id}\n".encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _text(node_input: Any) -> str:
    if isinstance(node_input, str):
        return node_input
    return "".join(part.text or "" for part in getattr(node_input, "parts", None) or [])


def intake(node_input: Any, ctx: Any) -> str:
    """The message (first round) or the last round's tally (next rounds), tagged with the round."""
    _record(ctx, "intake")
    return f"{_text(node_input)}#{ctx.run_id}"


def north(node_input: str, ctx: Any) -> str:
    _record(ctx, "north")
    return f"N({node_input})"


def tally(node_input: dict[str, Any], ctx: Any) -> str:
    """Join the branches; round again until :data:`ROUNDS` rounds were made."""
    _record(ctx, "tally")
    ctx.route = "again" if int(ctx.run_id) < ROUNDS else "done"
    return " & ".join(f"{key}={node_input[key]}" for key in sorted(node_input))


def reply(node_input: str, ctx: Any, turns: int = 0) -> str:
    _record(ctx, "reply")
    answer = f"after {ROUNDS} rounds: {node_input}"
    ctx.state["last_answer"] = answer
    ctx.state["turns"] = turns + 1
    return answer


root_agent = Workflow(name="graph_soak", edges=[
    (START, intake, (north, FunctionNode(func=south, processes=True)), JoinNode(name="meet"), tally),
    (tally, {"again": intake, "done": reply}),
])
