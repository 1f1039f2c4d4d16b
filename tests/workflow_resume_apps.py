"""A workflow graph for tests/test_workflow_resume.py (imported by the host's processes
by path: ``workflow_resume_apps:<name>``): a fan-out, a join and a routed loop back edge.

Every node, when its run starts, checks the arm file of its session's directory
(``work_dir`` in the state): when it names this node run (``left@2``) and no node has
waited yet (no pid file), the node writes its worker's pid next to it and waits to be
killed (60 s at most); the run that resumes it goes through. Every node records its side effect
at its end, once its work is done, by appending its node run to ``done.txt``: the
count, outside the host, of the node runs that completed.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from adk_actors.engine import App
from adk_actors.workflow import START, FunctionNode, JoinNode, Workflow


def _gate(work_dir: str, run: str) -> None:
    """Wait to be killed when the arm file names ``run``, the first time only."""
    armed, pid = Path(work_dir, "arm"), Path(work_dir, "pid")
    if armed.exists() and armed.read_text().strip() == run and not pid.exists():
        pid.write_text(str(os.getpid()))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)


def _done(work_dir: str, run: str) -> None:
    with open(Path(work_dir, "done.txt"), "a") as done:
        done.write(run + "\n")


def _run(ctx: Any, name: str) -> str:
    return f"{name}@{ctx.run_id}"


def prepare(node_input: Any, ctx: Any, work_dir: str, rounds: int = 0) -> str:
    run = _run(ctx, "prepare")
    _gate(work_dir, run)
    ctx.state["rounds"] = rounds + 1
    _done(work_dir, run)
    text = node_input if isinstance(node_input, str) else "".join(p.text or "" for p in node_input.parts)
    return f"{text}#{rounds + 1}"


def left(node_input: str, ctx: Any, work_dir: str, trail: list[str] | None = None) -> str:
    run = _run(ctx, "left")
    _gate(work_dir, run)
    ctx.state["trail"] = [*(trail or []), run]
    _done(work_dir, run)
    return f"L({node_input})"


def right(node_input: str, ctx: Any, work_dir: str) -> str:
    run = _run(ctx, "right")
    _gate(work_dir, run)
    ctx.state[f"right_{ctx.run_id}"] = node_input
    _done(work_dir, run)
    return f"R({node_input})"


class CountedJoin(JoinNode):
    """A join whose runs are gated and counted like the function nodes."""

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        work_dir = ctx.state["work_dir"]
        run = _run(ctx, self.name)
        _gate(work_dir, run)
        _done(work_dir, run)
        yield node_input


def judge(node_input: dict[str, Any], ctx: Any, work_dir: str, rounds: int) -> str:
    run = _run(ctx, "judge")
    _gate(work_dir, run)
    ctx.route = "again" if rounds < 2 else "done"
    _done(work_dir, run)
    return " & ".join(f"{k}={node_input[k]}" for k in sorted(node_input))


def finish(node_input: str, ctx: Any, work_dir: str, trail: list[str]) -> str:
    run = _run(ctx, "finish")
    _gate(work_dir, run)
    ctx.state["final"] = f"{node_input} via {','.join(trail)}"
    _done(work_dir, run)
    return f"final: {node_input}"


gather = CountedJoin(name="gather")
# ``right`` may simply run again on resume (google-adk's rerun_on_resume); the others may not.
right_node = FunctionNode(func=right, rerun_on_resume=True)

loop_app = Workflow(name="loop_app", edges=[
    (START, prepare, (left, right_node), gather, judge),
    (judge, {"again": prepare, "done": finish}),
])


def _safe(func: Any) -> FunctionNode:
    return FunctionNode(func=func, rerun_on_resume=True)


_safe_prepare, _safe_judge = _safe(prepare), _safe(judge)
# The same graph, every node safe to run again, in an app the host resumes on its own.
resuming_app = App(root_agent=Workflow(name="loop_app", edges=[
    (START, _safe_prepare, (_safe(left), _safe(right)), CountedJoin(name="gather"), _safe_judge),
    (_safe_judge, {"again": _safe_prepare, "done": _safe(finish)}),
]), resume_interrupted=2)

APPS = {"loop": "workflow_resume_apps:loop_app", "resuming": "workflow_resume_apps:resuming_app"}
