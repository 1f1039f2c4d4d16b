"""How a soak deals its faults and checks the tree after them: the restarts seen
from outside, the rows of every host of a cluster, the pick of the next victim, the
wait until the tree is restored, the release of stopped actors, and the orphans left.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervision import CallError, CallTimeout
from supervision.lowlevel import proc_stat, process_alive

from ..runtime import ClusterView, Host
from ._back import killable, serving_problems
from ._tree import SESSIONS_SHOWN, cluster_trees, kind_of


class _Restarts:
    """Restarts as seen from outside: an actor (a path of the tree) found running in a
    new process since the last look. Supervisors' own counters start again from 0
    when the supervisor itself is restarted, so they cannot be summed."""

    def __init__(self) -> None:
        self.pids: dict[str, int] = {}
        self.restarts: Counter[str] = Counter()

    def look(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            if row["pid"] and row["status"] == "running":
                where = f"{row.get('host', '')}/{row['path']}"
                known = self.pids.get(where)
                if known is not None and known != row["pid"]:
                    self.restarts[kind_of(row)] += 1
                self.pids[where] = row["pid"]


def _cluster_rows(host: Host, timeout: float, view: ClusterView | None, *, sessions: int = SESSIONS_SHOWN,
                  search: str = "", patient: bool = True) -> list[dict[str, Any]]:
    """The rows of every host of the cluster (:func:`cluster_trees`, its page of
    ``sessions`` matching ``search``), each naming its ``host``; CallTimeout when a
    host's tree cannot be walked."""
    rows: list[dict[str, Any]] = []
    for entry in cluster_trees(host, timeout, view=view, sessions=sessions, search=search, patient=patient):
        if "unreachable" in entry:
            raise CallTimeout(f"host {entry['name']}: {entry['unreachable']}")
        rows.extend({**row, "host": entry["name"]} for row in entry["rows"])
    return rows


def _pick_victim(walk: Callable[[float], list[dict[str, Any]]], kinds: tuple[str, ...], rng: random.Random,
                 seen: _Restarts, hits: Counter[str], spared: frozenset[int] = frozenset(),
                 own: tuple[str, frozenset[str]] | None = None,
                 present: set[str] | None = None) -> tuple[str, dict[str, Any]] | None:
    """(kind, row) of a live actor (a process, a session held, a run in flight): among
    ``kinds`` that have one, the kind with the fewest ``hits`` so far (ties at random),
    then one of its actors at random; None if none. Every level is hit in turn, however
    few actors it has (two partitions among dozens of workers); the root only while no
    level of the tree is restarting. A process too busy to answer the walk in time
    (``busy``, ``unreachable``) is a live target all the same (under load, partitions
    busy on their store went unhit for whole soaks), but not one this soak stopped
    itself (``spared``: its parent's health check is to find it). ``own``: (user,
    session ids): the only sessions and runs that may be hit (None: any). ``present``
    gathers the kinds among ``kinds`` that had a live target. The walk of the tree is
    also a look for restarts."""
    try:
        rows = walk(0.5)
    except (CallTimeout, CallError):
        return None
    seen.look(rows)
    found = [(kind_of(r), r) for r in rows if killable(r) and kind_of(r) in kinds and (
        r["status"] in ("running", "idle")
        or (r["status"] in ("busy", "unreachable") and r["pid"] and r["pid"] not in spared))
        and (own is None or r["pid"] or (r.get("user") == own[0] and r.get("session") in own[1]))]
    found = [(kind, r) for kind, r in found if not r["pid"] or process_alive(r["pid"])]
    if present is not None:
        present.update(kind for kind, _row in found)
    if {kind_of(r) for r in rows if kind_of(r) in kinds} - {kind for kind, _row in found}:
        # A level is restarting: not the root again (its kill would restart that level
        # too, and under load the root could be the only level ever up, the others never hit).
        found = [(kind, r) for kind, r in found if kind != "root"]
    if not found:
        return None
    fewest = min(hits[kind] for kind, _row in found)
    kind = rng.choice(sorted({kind for kind, _row in found if hits[kind] == fewest}))
    return kind, rng.choice([row for k, row in found if k == kind])


def _host_alive(walk: Callable[[float], list[dict[str, Any]]]) -> bool:
    try:
        walk(5.0)
    except (CallTimeout, CallError):
        return False
    return True


def _wait_restored(walk: Callable[[float], list[dict[str, Any]]], timeout: float, stopped: list[int],
                   hosts: int = 0) -> tuple[bool, float | None, list[str]]:
    """Wait until the tree (of each of ``hosts`` hosts, in a cluster) serves again, as
    ``chaos kill`` and ``status`` see it (:func:`serving_problems`, an actor ``busy``
    taken for running: under a soak's load, late is not down), and none of the
    ``stopped`` ones is left (their health checks killed them); (done, seconds, and
    when not done, what the last look found wrong: an actor not serving, a host
    missing, a walk that failed, a process still stopped)."""
    began = time.monotonic()
    wrong: list[str] = []
    while time.monotonic() - began < timeout:
        try:
            rows = walk(1.0)
        except (CallTimeout, CallError) as exc:
            rows, wrong = [], [f"the tree could not be walked: {exc}"]
        processes = [r for r in rows if r["type"] not in ("session", "run")]
        if rows and not processes:
            wrong = ["the tree shows no process"]
        elif processes:
            hosts_rows: dict[str, list[dict[str, Any]]] = {}
            for row in rows:
                hosts_rows.setdefault(row.get("host") or "host", []).append(row)
            wrong = [f"{name}/{problem}" for name, its in hosts_rows.items()
                     for problem in serving_problems(its, busy=True)]
            if len(present := {r.get("host") for r in processes}) < hosts:
                wrong.append(f"{len(present)} of {hosts} hosts' trees found")
            wrong.extend(f"pid {pid} still stopped" for pid in stopped if _still_stopped(pid))
            if not wrong:
                return True, time.monotonic() - began, []
        time.sleep(0.05)
    return False, None, wrong


def _still_stopped(pid: int) -> bool:
    stat = proc_stat(pid)
    return stat is not None and stat[0] == "T"


def _release(stopped: list[int]) -> int:
    """SIGCONT the stopped actors still there (none should be: the health checks kill
    them), so that nothing stays stopped after the soak; how many there were."""
    left = [pid for pid in stopped if _still_stopped(pid)]
    for pid in left:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    return len(left)


def _command_line(pid: int) -> str:
    """A process's command line, or "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _orphans(rows: list[dict[str, Any]]) -> list[int]:
    """Processes of each host's process group (the one its admin made; ``rows`` of one
    host or of a cluster's) whose parent is gone (re-parented to pid 1), the admins
    excepted."""
    found: list[int] = []
    for name in dict.fromkeys(row.get("host") for row in rows):
        first = next((r["pid"] for r in rows if r.get("host") == name and r["depth"] == 0 and r["pid"]), None)
        found.extend(_orphans_of(first))
    return found


def _orphans_of(first: int | None) -> list[int]:
    """The orphans of the process group of the admin of a host whose root child ``first`` is."""
    stat = proc_stat(first) if first else None
    if stat is None:
        return []
    admin = proc_stat(stat[1])  # a root child's parent is the root; the root's parent is the admin
    admin_pid = admin[1] if admin is not None else None
    if admin_pid is None:
        return []
    group = os.getpgid(admin_pid)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == admin_pid:
            continue
        pid = int(entry)
        info = proc_stat(pid)
        try:
            same_group = os.getpgid(pid) == group
        except ProcessLookupError:
            continue
        if info is not None and info[1] == 1 and info[0] != "Z" and same_group:
            found.append(pid)
    return found
