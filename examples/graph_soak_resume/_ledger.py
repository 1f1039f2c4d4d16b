"""The ledger of examples/graph_soak_resume, outside the host, in a module that imports
nothing of the kit (the branch in a pool process imports it too).

For each run (invocation) ``<ledger dir>/<invocation id>.ledger`` gets one line each
time a node run's body begins: ``<node run> <pid> <time.time()>`` (``north@2 4711
1764321000.123456``), one ``os.write`` of an ``O_APPEND`` file: a line is whole or
absent. A node run's effect is its file ``<ledger dir>/effects/<invocation id>/<node
run>`` holding its output, written whole (a temporary file renamed over it): writing
it again with the same output changes nothing, which is what makes the nodes safe to
run again. The ledger dir is ``$ADK_GRAPH_SOAK_DIR`` when the host's processes have
it, else ``<temp dir>/adk-graph-soak-resume``.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

__all__ = ["effect", "effect_path", "ledger_dir", "ledger_path", "started"]


def ledger_dir() -> Path:
    """Where the ledgers are (see the module)."""
    return Path(os.environ.get("ADK_GRAPH_SOAK_DIR") or Path(tempfile.gettempdir(), "adk-graph-soak-resume"))


def ledger_path(invocation_id: str) -> Path:
    """The ledger of one run."""
    return ledger_dir() / f"{invocation_id}.ledger"


def effect_path(invocation_id: str, node_run: str) -> Path:
    """The effect file of one node run of one run."""
    return ledger_dir() / "effects" / invocation_id / node_run


def started(invocation_id: str, node_run: str) -> None:
    """Log that ``node_run``'s body began (see the module)."""
    path = ledger_path(invocation_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = f"{node_run} {os.getpid()} {time.time():.6f}\n".encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def effect(invocation_id: str, node_run: str, output: str) -> None:
    """Make ``node_run``'s effect: its file holds ``output`` (idempotent, see the module)."""
    path = effect_path(invocation_id, node_run)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}")
    temporary.write_text(output)
    os.replace(temporary, path)
