"""A graph app for tests/test_crash_window.py: ``gate`` (safe to run again) logs its
start, waits until the test opens its gate (a file), then logs its end; ``after``
follows it. The ledger and the gate live in ``$ADK_CRASH_WINDOW_DIR`` (the host's
processes inherit it): one line per event, ``<what> <pid> <time.time()>``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from adk_actors.engine import App
from adk_actors.tools import idempotent
from adk_actors.workflow import START, Workflow

__all__ = ["GATE_WAIT", "app", "gate_path", "ledger_lines"]

#: The longest a ``gate`` body waits for its gate to open (a bound: a test that never opens it ends).
GATE_WAIT = 60.0


def _dir() -> Path:
    return Path(os.environ["ADK_CRASH_WINDOW_DIR"])


def gate_path() -> Path:
    """The file whose existence opens the gate."""
    return _dir() / "open"


def ledger_lines() -> list[tuple[str, int, float]]:
    """The ledger: (what, pid, when), in order."""
    path = _dir() / "ledger"
    if not path.exists():
        return []
    return [(what, int(pid), float(when)) for what, pid, when in
            (line.split() for line in path.read_text().splitlines())]


def _log(what: str) -> None:
    fd = os.open(_dir() / "ledger", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{what} {os.getpid()} {time.time():.6f}\n".encode())
    finally:
        os.close(fd)


@idempotent
def gate(node_input: Any) -> str:
    """Log the start, wait for the gate (``GATE_WAIT`` at most), log the end."""
    _log("gate-start")
    deadline = time.monotonic() + GATE_WAIT
    while not gate_path().exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    _log("gate-end")
    return "through"


@idempotent
def after(node_input: str) -> str:
    _log("after-start")
    return f"after {node_input}"


app = App(root_agent=Workflow(name="crash_window", edges=[(START, gate, after)]), resume_interrupted=3,
          name="crash_window")
