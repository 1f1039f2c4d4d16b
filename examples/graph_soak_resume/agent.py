"""graph_soak_resume: examples/graph_soak's graph workflow as an app whose killed runs
are resumed, for ``adk-actors chaos soak`` (tests/test_graph_soak_resume.py).

The graph, for every user message::

    START -> intake -> (north, south) -> meet (a join) -> tally
    tally -- "again" --> intake        (the loop back edge: twice round)
    tally -- "done"  --> reply

``app`` resumes a run a crash ended (its run worker, its partition) on its own, up to
:data:`RESUMES` times (``App(resume_interrupted=RESUMES)``), at the node it was in: the
node runs that finished are not run again. Every node declares that running it again
is safe, as a durable run lets a node declare it: the function nodes that take ``ctx``
are marked ``@idempotent`` (as a tool is), ``south`` (in a process of the run's pool)
has ``rerun_on_resume=True``, and ``meet`` is a join (always safe). They are safe
because each node's effect is idempotent: a file per node run holding its output
(``_ledger.effect``), written whole; writing it again changes nothing.

Outside the host, each node run's body logs its start in its run's ledger
(``_ledger.started``: ``<ledger dir>/<invocation id>.ledger``), so a test counts how
many times each node run really began, and when, against the events the store has.
The slow nodes (``north`` sleeps, ``south`` computes) make kills land inside the
fan-out: a join resumed with one branch finished and the other not.

A run that completes has an output committed for each of :data:`NODE_RUNS`; the
state keeps the last turn's answer (``last_answer``) and how many turns completed
(``turns``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from adk_actors.engine import App
from adk_actors.tools import idempotent
from adk_actors.workflow import START, FunctionNode, JoinNode, Workflow

from ._branch import south
from ._ledger import effect, started

__all__ = ["NAME", "NODE_RUNS", "RESUMES", "ROUNDS", "app", "root_agent"]

NAME = "graph_soak_resume"
#: How many times a run goes round the loop.
ROUNDS = 2
#: How many times the host resumes one run a crash ended, on its own.
RESUMES = 5
#: The node runs of one run that completes, each with one output committed.
NODE_RUNS = tuple([f"{name}@{n}" for n in range(1, ROUNDS + 1) for name in ("intake", "north", "south", "meet",
                                                                              "tally")] + ["reply@1"])


def _text(node_input: Any) -> str:
    if isinstance(node_input, str):
        return node_input
    return "".join(part.text or "" for part in getattr(node_input, "parts", None) or [])


def _node_run(ctx: Any, name: str) -> str:
    return f"{name}@{ctx.run_id}"


@idempotent
def intake(node_input: Any, ctx: Any) -> str:
    """The message (first round) or the last round's tally (next rounds), as
    ``<invocation id>:<round>:<text>`` (what ``south`` needs to log its run)."""
    node_run = _node_run(ctx, "intake")
    started(ctx.invocation_id, node_run)
    text = _text(node_input)
    output = f"{ctx.invocation_id}:{ctx.run_id}:{text[:60]}"
    effect(ctx.invocation_id, node_run, output)
    return output


@idempotent
def north(node_input: str, ctx: Any) -> str:
    node_run = _node_run(ctx, "north")
    started(ctx.invocation_id, node_run)
    time.sleep(0.1)  # the slower branch's wait on something outside
    output = f"N({node_input.split(':', 2)[2]})"
    effect(ctx.invocation_id, node_run, output)
    return output


class CountedJoin(JoinNode):
    """A join whose runs log their start, as the function nodes do."""

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        started(ctx.invocation_id, _node_run(ctx, self.name))
        yield node_input


@idempotent
def tally(node_input: dict[str, Any], ctx: Any) -> str:
    """Join the branches; round again until :data:`ROUNDS` rounds were made."""
    node_run = _node_run(ctx, "tally")
    started(ctx.invocation_id, node_run)
    ctx.route = "again" if int(ctx.run_id) < ROUNDS else "done"
    output = " & ".join(f"{key}={node_input[key]}" for key in sorted(node_input))
    effect(ctx.invocation_id, node_run, output)
    return output


@idempotent
def reply(node_input: str, ctx: Any, turns: int = 0) -> str:
    """The answer; counts the turn in the state (from the state as committed: a rerun
    writes the same count)."""
    node_run = _node_run(ctx, "reply")
    started(ctx.invocation_id, node_run)
    answer = f"after {ROUNDS} rounds: {node_input}"
    ctx.state["last_answer"] = answer
    ctx.state["turns"] = turns + 1
    effect(ctx.invocation_id, node_run, answer)
    return answer


root_agent = Workflow(name=NAME, edges=[
    (START, intake, (north, FunctionNode(func=south, processes=True, rerun_on_resume=True)), CountedJoin(name="meet"),
     tally),
    (tally, {"again": intake, "done": reply}),
])

app = App(root_agent=root_agent, resume_interrupted=RESUMES, name=NAME)
