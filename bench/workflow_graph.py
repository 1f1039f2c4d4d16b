"""The graphs of bench/workflows.py on our side (imported by the host's processes by
path: ``bench.workflow_graph:<name>``).

- ``ten``: bench/_ten_node_graph.py's 10-node graph, the file google-adk's half runs,
  its imports rewritten (``google.adk`` to ``adk_actors``): START -> ``parse`` -> (``shout``, ``count``, ``first``) -> ``join`` ->
  ``summarize`` -> ``writer`` (an LlmAgent on Gemini) -> ``record`` -> ``check`` ->
  ``finish``.
- ``resuming``: an app that resumes its crashed runs on its own
  (``App(resume_interrupted=1)``), START -> ``step_a`` -> ``hold`` -> ``step_b`` ->
  ``step_c``, every node safe to run again. Each node, when it starts, appends its
  name and ``time.monotonic()`` (one clock for every process of the machine) to
  ``starts.txt`` in the session's ``work_dir`` (state); ``hold``, when ``arm`` is in
  that folder and ``pid`` is not, writes its process id to ``pid`` and waits to be
  killed (60 s at most). The bench kills the session's partition meanwhile and reads
  when the resumed run's first node started.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from adk_actors.engine import App
from adk_actors.workflow import START, FunctionNode, Workflow


def _rewritten(file: str) -> dict[str, Any]:
    """The names ``file`` (beside this one, written with google-adk's imports) defines,
    run with ``google.adk`` rewritten to ``adk_actors`` in its text."""
    path = Path(__file__).with_name(file)
    source = path.read_text().replace("google.adk", "adk_actors")
    names: dict[str, Any] = {"__name__": f"bench.{path.stem}_ours", "__file__": str(path)}
    exec(compile(source, str(path), "exec"), names)
    return names


ten = _rewritten("_ten_node_graph.py")["root"]


def _started(work_dir: str, name: str) -> None:
    with open(Path(work_dir, "starts.txt"), "a") as starts:
        starts.write(f"{name} {time.monotonic():.6f}\n")


def step_a(node_input: Any, work_dir: str) -> str:
    _started(work_dir, "step_a")
    return "a"


def hold(node_input: str, work_dir: str) -> str:
    _started(work_dir, "hold")
    armed, pid = Path(work_dir, "arm"), Path(work_dir, "pid")
    if armed.exists() and not pid.exists():
        pid.write_text(str(os.getpid()))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.01)
    return node_input + "h"


def step_b(node_input: str, work_dir: str) -> str:
    _started(work_dir, "step_b")
    return node_input + "b"


def step_c(node_input: str, work_dir: str) -> str:
    _started(work_dir, "step_c")
    return node_input + "c"


def _safe(func: Any) -> FunctionNode:
    return FunctionNode(func=func, rerun_on_resume=True)


resuming = App(root_agent=Workflow(name="resuming", edges=[
    (START, _safe(step_a), _safe(hold), _safe(step_b), _safe(step_c)),
]), resume_interrupted=1)

APPS = {"ten": "bench.workflow_graph:ten", "resuming": "bench.workflow_graph:resuming"}
