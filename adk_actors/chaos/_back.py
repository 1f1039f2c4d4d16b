"""Killing one actor and waiting until the host serves again (``chaos kill``):
what a row can kill (:func:`killable`, :func:`kill_row`), what of a tree does not
serve (:func:`serving_problems`, the lines ``status`` prints), whether the killed
actor is back (:func:`back_problems`), and the wait for both (:func:`wait_back`,
``NotBackError`` past ``BACK_TIMEOUT``).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from supervision import SupervisionError
from supervision.lowlevel import process_alive

from .._exceptions import AdkError, HostError
from ..runtime import Host, Runner
from ._deadline import scaled_deadline
from ._tree import tree_rows


def killable(row: dict[str, Any]) -> bool:
    """A row :func:`kill_row` can kill: a process, a session, or a run."""
    return bool(row["pid"]) or row["type"] in ("session", "run")


def kill_row(host: Host, row: dict[str, Any], sig: int = signal.SIGKILL) -> str:
    """Kill what a row of :func:`tree_rows` shows, and say what was done: a process gets
    ``sig``; a session is crashed (``CrashSession``: its runs end ``interrupted``, it is
    read from the store on its next request); a run is killed (``KillRun``: it ends
    ``killed`` once stopped; past the host's ``run_stop_grace`` its worker is killed, and
    the other runs of that worker end ``interrupted``). Raises the session's typed error
    (a run that has ended meanwhile: ``InvalidRequestError``)."""
    if row["pid"]:
        os.kill(row["pid"], sig)
        return f"{row['path']} (pid {row['pid']}): {signal.Signals(sig).name}"
    runner = Runner(host, row["app"])
    if row["type"] == "session":
        runner.crash_session(row["user"], row["session"], "killed by an operator")
        return f"{row['path']}: the session crashed"
    runner.kill_run(row["user"], row["session"], row["run"])
    return f"{row['path']}: the run was killed"


#: How long ``chaos kill`` waits for what a kill restarted to serve again, in seconds
#: scaled to the machine's load (:func:`scaled_deadline`): a kill of the registry
#: restarts the whole tree, the HTTP server's process (seconds of imports) last.
BACK_TIMEOUT = 30.0


class NotBackError(HostError, TimeoutError):
    """An actor killed, or something restarted with it, did not serve again within the
    wait: ``target`` (the killed actor's path), ``seconds`` waited, and ``missing``:
    what was still not back at the last look, one line each."""

    def __init__(self, target: str, seconds: float, missing: list[str]) -> None:
        self.target, self.seconds, self.missing = target, seconds, list(missing)
        shown = "; ".join(missing[:10]) + (f"; and {len(missing) - 10} more" if len(missing) > 10 else "")
        super().__init__(f"{target} was killed {seconds:.1f} s ago and is not back: {shown}")


def serving_problems(rows: list[dict[str, Any]], before: list[dict[str, Any]] | None = None, *,
                     busy: bool = False, run_workers: int | None = None) -> list[str]:
    """What of one host's tree (its rows, :func:`tree_rows`, walked on the host's
    machine: pids are looked up here) does not serve now, one line each; none when all
    of it serves. In order:

    1. every process (each row but sessions and runs) runs: ``running`` (with ``busy``,
       also ``busy``: working, late to answer) in a live process. One restarting,
       starting, stopping, unreachable, or whose process is gone, does not;
    2. every session partition whose pool runs (``run_pools/pool-<i>`` for
       ``sessions/sessions-<i>``) has run workers connected, exactly the live ones of
       that pool: its turns run on them, and after a restart of either they start,
       answer and connect again;
    3. with ``before`` (the rows of an earlier look, as before a kill), every pool that
       runs has at least as many run workers as it had then, or ``run_workers`` (the
       number a pool starts with) when that is fewer: a pool that had grown past it
       (``runs_per_worker``) and was restarted starts with that number again.

    A supervisor lists its static children whatever their state: one not back shows
    in 1. Those that need not come back are not asked for: children started on demand
    (the MCP toolsets) and the jobs actor's executors (started as jobs wait).
    ``status`` prints these lines under the tree; ``chaos kill`` waits until there are
    none (:func:`wait_back`)."""
    good = ("running", "busy") if busy else ("running",)
    problems: list[str] = []
    for row in rows:
        if row["type"] in ("session", "run"):
            continue
        if row["status"] not in good:
            problems.append(f"{row['path']}: {row['status']}" + (f" ({row['why']})" if row.get("why") else ""))
        elif not row["pid"] or not process_alive(row["pid"]):
            problems.append(f"{row['path']}: its process {row['pid'] or '(none)'} is gone")
    pools = _pool_workers(rows)
    for row in rows:
        pool = f"run_pools/pool-{row['id'].rsplit('-', 1)[-1]}"
        if "connected" in row and pool in pools:  # (a pool not running is 1's)
            live, connected = pools[pool], set(row["connected"])
            if not connected or connected != live:
                problems.append(f"{row['path']}: {len(connected & live)} of the {len(live)} run workers of {pool} "
                                f"connected" + (f", {len(connected - live)} gone or not its pool's"
                                                if connected - live else ""))
    for pool, earlier in (_pool_workers(before) if before is not None else {}).items():
        needed = len(earlier) if run_workers is None else min(len(earlier), run_workers)
        if pool in pools and len(pools[pool]) < needed:
            problems.append(f"{pool}: {len(pools[pool])} of its {needed} run workers")
    return problems


def _pool_workers(rows: list[dict[str, Any]]) -> dict[str, set[int]]:
    """Each pool of run workers that ``rows`` show running (its path) -> its workers' pids."""
    pools: dict[str, set[int]] = {r["path"]: set() for r in rows if r["path"].startswith("run_pools/")
                                  and r["depth"] == 1 and r["status"] == "running" and not r.get("pooled")}
    for row in rows:
        parent = row["path"].rsplit("/", 1)[0]
        if row.get("pooled") and parent in pools:
            pools[parent].add(row["pid"])
    return pools


def back_problems(target: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """Whether the actor of row ``target`` (as it was before its process was killed) is
    back in ``rows``: a supervised child runs in a new process (its supervisor shows
    another pid; whether that runs is :func:`serving_problems`' part); a process an
    actor runs (a pool's run worker, an executor) is gone from its parent's list
    (its replacement, when there is one, is counted by :func:`serving_problems`).
    One line saying why not, or none."""
    if target.get("pooled"):
        listed = any(r["pid"] == target["pid"] for r in rows)
        return [f"{target['path']}: still listed by its parent"] if listed else []
    now = next((r for r in rows if r["path"] == target["path"]), None)
    if now is None:
        return [f"{target['path']}: not in the tree"]
    if now["pid"] in (None, target["pid"]):
        return [f"{target['path']}: not restarted yet ({now['status']})"]
    return []


def wait_back(host: Host, target: dict[str, Any], before: list[dict[str, Any]], timeout: float = BACK_TIMEOUT,
              began: float | None = None) -> tuple[float, list[dict[str, Any]]]:
    """Wait until the actor of row ``target``, whose process was killed at ``began``
    (``time.monotonic()``; default: now), is back, and the whole tree of ``host``
    serves again: what restarted with it (its children, the siblings its supervisor's
    strategy restarts, a partition's run workers) and the rest. In order, every 20 ms:
    walk the tree (each actor given a second scaled to the load, never more than the
    time left; a walk that fails is a look that found the tree not back); find what
    is not back (:func:`back_problems`, then :func:`serving_problems` with ``before``,
    the rows of the walk before the kill); none: return the seconds since ``began``
    and the rows of that walk. Past ``timeout`` seconds from ``began``, scaled to the
    load (:func:`scaled_deadline`), ``NotBackError`` names what the last look found
    not back (a walk under way at the deadline is finished first: its answers are
    bounded by the time left)."""
    began = time.monotonic() if began is None else began
    deadline = began + scaled_deadline(timeout)
    while True:
        left = deadline - time.monotonic()
        try:
            rows = tree_rows(host, min(scaled_deadline(1.0), max(left, 0.2)), sessions=0, patient=False)
        except (SupervisionError, AdkError) as exc:  # the root did not answer: it restarts, or is busy
            rows, problems = [], [f"the tree could not be walked: {type(exc).__name__}: {exc}"]
        else:
            problems = back_problems(target, rows) + serving_problems(rows, before,
                                                                      run_workers=host.config.run_workers)
        if not problems:
            return time.monotonic() - began, rows
        if time.monotonic() >= deadline:
            raise NotBackError(target["path"], time.monotonic() - began, problems)
        time.sleep(0.02)
