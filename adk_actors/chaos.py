"""Chaos: kill actors of a running host while sessions talk to it, then prove nothing was lost.

:func:`soak` is what ``adk-actors chaos soak`` runs, and what a user runs to prove
their own agents survive faults. In order:

1. create ``sessions`` sessions of ``app`` and start one thread per session, each
   running turns back to back (every turn has a deadline: ``turn_timeout``);
2. every ``interval`` seconds, SIGKILL one actor, for ``duration`` seconds: of the
   kinds in ``targets`` (see :data:`TARGET_KINDS`) that have a live actor, the kind
   hit least so far (ties at random; the root only while no level of the tree is
   restarting), then one of its actors at random; a process,
   or a session (crashed: ``CrashSession``) or a run (``KillRun``), the actors that
   are not processes;
3. stop killing, give every turn in flight ``turn_timeout`` more seconds (a turn
   still running then is HUNG), and wait until every actor of the tree runs again
   (restored, and how long that took);
4. reset the sessions that failed (crashed beyond their restart intensity), then read
   every session back: an event a caller received (each is committed before it is
   sent) but the store does not have is LOST;
5. run one more turn on every session (valid: it ends well), and look for orphans
   (processes of the host's process group whose parent is gone).

With ``jobs``, background jobs run through it all: that many jobs of
:func:`soak_job` are enqueued while the faults go on (each with its unique key, so an
enqueue whose answer was lost is asked again safely); at the end every one must be
completed or discarded (one that is not, once the tree is restored, is
``jobs_unfinished``), and no two attempts of one job may have run at once (each
attempt holds a lock named after its job while it works: one that finds it taken is
an ``jobs_overlaps``).

The host must run on this machine (kills and orphans are found by pid).

``adk-actors chaos kill`` kills one actor (:func:`kill_row`) and waits with
:func:`wait_back` until it is back and the whole host serves again, what its
supervisor restarted with it included; :func:`serving_problems` is that test of a
tree, the one ``status`` prints under the tree and the soak waits for at its end.
"""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from supervision import CallError, CallTimeout, SupervisionError, SupervisorClient, call
from supervision.lowlevel import partition_index, pid_space, proc_stat, process_alive, read_progress
from supervision.protocol import ChildInfo, PidSpace, WhichChildren

from ._exceptions import AdkError, HostError, RunFailedError, SessionFailedError
from ._types import Event, RunConfig
from .jobs import FINISHED, Backoff, JobInfo, JobSpec
from .messages import HeldSessions, LiveWorkers, SessionStatus
from .runtime import ClusterView, Host, Runner
from .store._base import invocation_of

__all__ = ["BACK_TIMEOUT", "BUSY_WAIT_CAP", "BUSY_WAIT_FACTOR", "PROCESS_KINDS", "SESSIONS_SHOWN", "TARGET_KINDS",
           "NotBackError", "SoakReport", "UnfinishedResume", "back_problems", "check_soak_arguments",
           "cluster_trees", "describe_unfinished", "find_rows", "kill_row", "scaled_deadline", "serving_problems",
           "session_rows", "soak", "soak_job", "tree_rows", "wait_back"]

#: The processes that may be killed: the root's children, the service actors, the
#: session partitions (each holds many sessions), their pools of run workers, the run
#: workers, and the jobs actor with its executors.
PROCESS_KINDS = ("root", "services", "partitions", "pools", "workers", "jobs")
#: Everything that may be killed: the processes, and the actors that are not processes:
#: sessions (inside their partition) and runs (on a run worker).
TARGET_KINDS = (*PROCESS_KINDS, "sessions", "runs")
#: How many sessions a walk of the tree shows (running ones first), unless told otherwise.
SESSIONS_SHOWN = 50
#: How many times its deadline a walk waits for an actor that is busy (its process
#: uses CPU or is runnable) before it shows it ``busy``; a wait never exceeds
#: ``BUSY_WAIT_CAP`` seconds, whatever the load.
BUSY_WAIT_FACTOR = 5.0
BUSY_WAIT_CAP = 30.0


class _Busy(Exception):
    """An actor that did not answer a walk in time while its process made progress."""


def scaled_deadline(timeout: float) -> float:
    """``timeout`` scaled to this machine's load: times the 1-minute load average per
    CPU when that is above 1 (a process gets its share of the CPUs only), at most ten
    times ``timeout``."""
    try:
        per_cpu = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        per_cpu = 1.0
    return timeout * min(max(per_cpu, 1.0), 10.0)


#: The shortest time a process must go without CPU time and without being runnable
#: to be taken for stuck: the kernel counts CPU time in ticks of 10 ms, and a busy
#: process at load waits its turn for the CPU or on a socket or a disk for tens of
#: milliseconds at a time (a 70 ms window called a partition writing 1 MB states dead).
PROGRESS_WINDOW_FLOOR = 1.0


class _Progress:
    """Whether a process makes progress while a call to it waits (``alive`` for
    :func:`supervision.call`): it is gone or stopped (SIGSTOP), or it has used no CPU
    time for ``window`` seconds (at least ``PROGRESS_WINDOW_FLOOR``) without being
    runnable (blocked), and the call ends at once; otherwise it is taken for busy and
    the call goes on."""

    def __init__(self, pid: int, window: float) -> None:
        self.pid, self.window = pid, max(window, PROGRESS_WINDOW_FLOOR)
        self.mark = time.monotonic()
        first = read_progress(pid)
        self.cpu = first.cpu if first is not None else None
        self.gone = False

    def alive(self) -> bool:
        now = time.monotonic()
        seen = read_progress(self.pid)
        if seen is None or seen.state in "ZXx":
            self.gone = True
            return False
        if seen.state in "Tt":  # stopped: it will not answer until continued
            return False
        if seen.state in "RD" or (self.cpu is not None and seen.cpu != self.cpu):
            self.mark = now  # runnable, or it used CPU since the last look: busy, not stuck
        self.cpu = seen.cpu
        return now - self.mark < self.window


def _ask(system: Any, address: Any, pid: int | None, request: Any, timeout: float, patient: bool = True) -> Any:
    """``request``'s answer from the actor at ``address`` whose process is ``pid``
    (None: not of this machine). In order: the answer within ``timeout`` (``patient``:
    scaled to the load, :func:`scaled_deadline`); without a pid, ``CallTimeout`` past
    it. With one, a ``patient`` wait goes on while the process makes progress
    (:class:`_Progress`), up to ``BUSY_WAIT_FACTOR`` times that deadline; then, or at
    the deadline when not ``patient``, ``_Busy`` if the process made progress within
    the last deadline, else ``CallTimeout``. ``CallError`` (its ``ServerNotRunning``) as
    soon as the process is gone or has made no progress for a deadline (stopped,
    stuck); the actor's own typed ``CallError`` as it answered."""
    deadline = scaled_deadline(timeout) if patient else timeout
    if pid is None:
        return call(system, address, request, deadline)
    progress = _Progress(pid, deadline)
    ceiling = min(max(deadline * BUSY_WAIT_FACTOR, deadline), BUSY_WAIT_CAP) if patient else deadline
    try:
        return call(system, address, request, ceiling, alive=progress.alive, poll=min(0.2, deadline / 2))
    except CallTimeout:
        if progress.alive():
            raise _Busy(f"busy: no answer to {type(request).__name__} within {ceiling:.1f} s while its process "
                        "worked") from None
        raise


def _local_pids(system: Any, root: Any, timeout: float) -> bool:
    """Do the pids the tree under ``root`` reports mean the same processes here?"""
    mine = pid_space()
    if mine is None:
        return False
    try:
        return bool(call(system, root, PidSpace(), timeout=scaled_deadline(timeout)) == mine)
    except (CallTimeout, CallError):
        return False


def tree_rows(host: Host, timeout: float = 1.0, *, endpoint: Any = None,
              sessions: int = SESSIONS_SHOWN, root: Any = None, offset: int = 0,
              search: str = "", patient: bool = True) -> list[dict[str, Any]]:
    """The live tree, one row per actor (path, id, type, status, pid, restarts, depth,
    ``last_exit``: why its last process ended, once restarted, e.g. ``crash: unresponsive: ...``;
    ``sessions``, how many it holds in memory (those matching ``search``, with one),
    for a session partition, and ``connected``, the pids of the run workers whose lines
    are connected to it; a row per run worker of a pool (``.../worker-PID``) and per
    executor of the jobs actor (``jobs/executor-PID``), marked ``pooled`` (processes an
    actor runs, not supervised children); a row per session a partition holds,
    ``.../APP/USER/SESSION`` (type
    ``session``, status idle, running or failed, its crashes as restarts), each
    followed by its runs, ``.../RUN_ID`` (type ``run``: running or waiting, ``agent``,
    ``events``, ``started``)).

    Sessions are paged across the host: the partitions' sessions one partition after
    the other (in each, running ones first, then by key), ``sessions`` of them from
    ``offset``; ``search``: only the sessions whose ``app/user/session`` key, or one
    of whose runs' ids, contains it.

    Each actor gets ``timeout`` seconds scaled to the machine's load to answer; one of
    this machine that has not answered by then but works (its process uses CPU or is
    runnable) is waited for, up to ``BUSY_WAIT_FACTOR`` times as long, then shown
    ``busy``; one that is gone, stopped or stuck, and a supervisor that does not
    answer in time (it is being restarted), is shown ``unreachable``. Not ``patient``
    (a soak picking its next victim): ``timeout`` as it is, and no wait past it (one
    late but working is ``busy`` at once). A partition
    shown so has no sessions under it, and the page of the partitions after it starts
    as if it held none.

    Asked through ``endpoint`` (a private endpoint of the host's actor system, for a
    thread of its own), else through a private endpoint made for this walk: a call to
    an actor that was stopped and then killed leaves Thespian retrying its delivery on
    the endpoint that sent it, and the failure, when it comes, would end a later call
    there early (taken for a refusal). ``root``: the root supervisor of another host
    of the cluster to walk instead (its pids are of its machine)."""
    assert host.root is not None
    if endpoint is None:
        with host.system.private() as own:
            return tree_rows(host, timeout, endpoint=own, sessions=sessions, root=root, offset=offset, search=search,
                             patient=patient)
    system = endpoint
    rows: list[dict[str, Any]] = []
    top = root or host.root.address
    local = _local_pids(system, top, max(timeout, 2.0))  # as long as the root's own answer below
    page = {"skip": max(offset, 0), "left": max(sessions, 0)}

    def ask(info: Any, request: Any) -> Any:
        return _ask(system, info.address, info.pid if local else None, request, timeout, patient)

    def walk(children: list[ChildInfo], path: str, depth: int) -> None:
        for info in children:
            row: dict[str, Any] = {"path": f"{path}{info.id}", "id": info.id, "type": info.type, "status": info.status,
                   "pid": info.pid, "restarts": info.restarts, "depth": depth, "last_exit": info.last_exit}
            rows.append(row)
            try:
                if path == "run_pools/" and info.address is not None:  # a pool: its run workers
                    rows.extend(_process_rows(f"{path}{info.id}", "worker", ask(info, LiveWorkers()), depth + 1))
                if path == "sessions/" and info.address is not None:
                    # a session partition: the sessions it holds, with their runs
                    row["sessions"], held = ask(info, HeldSessions(page["skip"], page["left"], search))
                    page["skip"] = max(0, page["skip"] - row["sessions"])
                    page["left"] -= len(held)
                    rows.extend(session_rows(f"{path}{info.id}", held, depth + 1))
                    row["connected"] = sorted(ask(info, LiveWorkers()))  # its run workers, lines connected
                if path == "" and info.id == "jobs" and info.address is not None:  # the jobs actor: its executors
                    rows.extend(_process_rows("jobs", "executor", ask(info, "executors"), depth + 1))
            except _Busy as busy:
                row["status"], row["why"] = "busy", str(busy)
                continue
            except (CallTimeout, CallError) as exc:
                row["status"], row["why"] = "unreachable", f"{type(exc).__name__}: {exc}"
                continue
            if info.type == "supervisor" and info.address is not None:
                try:
                    below = ask(info, WhichChildren())
                except _Busy as busy:
                    row["status"], row["why"] = "busy", str(busy)
                    continue
                except (CallTimeout, CallError) as exc:
                    row["status"], row["why"] = "unreachable", f"{type(exc).__name__}: {exc}"
                    continue
                walk(below, f"{path}{info.id}/", depth + 1)

    walk(SupervisorClient(system, top, timeout=scaled_deadline(max(timeout, 2.0)) if patient else max(timeout, 2.0))
         .which_children(), "", 0)
    return rows


def session_rows(partition: str, held: Iterable[SessionStatus], depth: int) -> list[dict[str, Any]]:
    """The rows of sessions a partition holds (its path ``partition``), each followed
    by its runs' (see :func:`tree_rows`)."""
    rows: list[dict[str, Any]] = []
    for status in held:
        where = f"{partition}/{status.key}"
        named = {"app": status.app_name, "user": status.user_id, "session": status.session_id}
        rows.append({"path": where, "id": status.key, "type": "session", "status": status.state,
                     "pid": None, "restarts": status.restarts, "depth": depth,
                     "last_exit": status.last_crash, **named})
        rows.extend({"path": f"{where}/{run.run_id}", "id": run.run_id, "type": "run",
                     "status": run.state, "pid": None, "restarts": 0, "depth": depth + 1,
                     "last_exit": None, "agent": run.agent, "events": run.events,
                     "started": run.started, "run": run.run_id, **named} for run in status.runs)
    return rows


def find_rows(host: Host, target: str, timeout: float = 1.0) -> list[dict[str, Any]]:
    """The rows (as :func:`tree_rows` makes them) that ``target`` names, found without
    a listing's limit: a process by its path or id (a walk of the tree without
    sessions); a session by its path (``sessions/PARTITION/APP/USER/SESSION``) or its
    key (``APP/USER/SESSION``), a run by its path (the session's, then ``/RUN_ID``),
    asked of the partition that owns the session (``partition_index`` of its key, as
    the Runner routes it); a run by its id alone, asked of every partition (a
    search). An empty list when nothing running or held is so named (a session not
    held in memory now, a run that has ended, a typo). ``HostError`` while the
    partitions cannot be listed (they restart), for a session or run."""
    parts = [p for p in target.strip("/").split("/") if p]
    with host.system.private() as endpoint:
        if len(parts) >= 5 and parts[0] == "sessions":
            return _held_rows(host, endpoint, "/".join(parts[2:5]), parts[5] if len(parts) > 5 else "", timeout)
        if target.startswith("run-") and len(parts) == 1:
            rows = tree_rows(host, timeout, endpoint=endpoint, sessions=1000, search=target)
            return [r for r in rows if r["type"] == "run" and r["run"] == target]
        found = [r for r in tree_rows(host, timeout, endpoint=endpoint, sessions=0)
                 if r["path"] == target or r["id"] == target]
        if found or len(parts) not in (3, 4):
            return found
        return _held_rows(host, endpoint, "/".join(parts[:3]), parts[3] if len(parts) > 3 else "", timeout)


def _held_rows(host: Host, endpoint: Any, key: str, run_id: str, timeout: float) -> list[dict[str, Any]]:
    """The row of session ``key`` (or of its run ``run_id``) if the partition that owns
    it holds it, asked of that partition alone."""
    partitions = host.partitions()
    index = partition_index(key, len(partitions))
    _total, held = call(endpoint, partitions[index], HeldSessions(0, 1000, key),
                        timeout=scaled_deadline(max(timeout, 2.0)))
    rows = session_rows(f"sessions/sessions-{index}", [s for s in held if s.key == key], 1)
    return [r for r in rows if (r["type"] == "run" and r["run"] == run_id) or (r["type"] == "session" and not run_id)]


def cluster_trees(host: Host, timeout: float = 1.0, *, others_only: bool = False,
                  view: ClusterView | None = None, sessions: int = SESSIONS_SHOWN, offset: int = 0,
                  search: str = "", patient: bool = True) -> list[dict[str, Any]]:
    """Every host of the cluster ``host`` is in, as ``host`` sees it (the leader's view):
    per host its ``name``, whether it is the ``leader``, whether it is ``this`` host,
    and its tree's ``rows`` (:func:`tree_rows`), or ``unreachable`` with why. Outside
    a cluster: this host alone. Rows of other hosts are to look at, not to kill: their
    pids are of their machines. ``others_only``: the other hosts only. ``view``: the
    cluster's hosts as known already (not asked of this host's cluster actor).
    ``sessions``, ``offset``, ``search``, ``patient``: as :func:`tree_rows` takes them."""
    view = view or host.cluster_view()
    if view is None:
        return [] if others_only else [{"name": host.holder_name, "leader": False, "this": True,
                                        "rows": tree_rows(host, timeout, sessions=sessions, offset=offset,
                                                          search=search, patient=patient)}]
    hosts: list[dict[str, Any]] = []
    with host.system.private() as endpoint:
        for member in view.members:
            this = member.root == host.root.address if host.root is not None else False
            if this and others_only:
                continue
            entry: dict[str, Any] = {"name": member.name, "leader": member.name == view.leader, "this": this}
            try:
                entry["rows"] = tree_rows(host, timeout, endpoint=endpoint, root=None if this else member.root,
                                          sessions=sessions, offset=offset, search=search, patient=patient)
            except SupervisionError as exc:
                entry["rows"], entry["unreachable"] = [], f"{type(exc).__name__}: {exc}"
            hosts.append(entry)
    return hosts


def _process_rows(parent: str, kind: str, pids: list[int], depth: int) -> list[dict[str, Any]]:
    """Rows for the processes an actor runs that are not supervised children (a
    pool's run workers, the jobs actor's executors): ``<parent>/<kind>-PID``."""
    return [{"path": f"{parent}/{kind}-{pid}", "id": f"{kind}-{pid}", "type": "worker", "status": "running",
             "pid": pid, "restarts": 0, "depth": depth, "last_exit": None, "pooled": True} for pid in pids]


def kind_of(row: dict[str, Any]) -> str:
    """Which of :data:`TARGET_KINDS` an actor of :func:`tree_rows` is."""
    path = row["path"]
    if row["type"] in ("session", "run"):
        return f"{row['type']}s"
    if path == "jobs" or path.startswith("jobs/"):
        return "jobs"
    if row["depth"] == 0:
        return "root"
    if path.startswith("services/"):
        return "services"
    if path.startswith("sessions/") and row["depth"] == 1:
        return "partitions"
    if path.startswith("run_pools/") and row["depth"] == 1:
        return "pools"
    return "workers"


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


@dataclass
class SoakReport:
    sessions: int
    duration: float
    turns: int = 0
    turns_ok: int = 0
    acknowledged_events: int = 0
    lost: int = 0
    hung: int = 0
    typed_failures: dict[str, int] = field(default_factory=dict)  # by reason (or error code)
    untyped_failures: dict[str, int] = field(default_factory=dict)  # by exception type
    kills: dict[str, int] = field(default_factory=dict)  # by kind
    stops: dict[str, int] = field(default_factory=dict)  # by kind: actors stopped (SIGSTOP) instead of killed
    restarts: dict[str, int] = field(default_factory=dict)  # by kind: an actor seen again with a new pid
    host_alive: bool = True
    tree_restored: bool = False
    restore_seconds: float | None = None
    next_turn_valid: int = 0
    orphans: int = 0
    failed_sessions: int = 0  # sessions that crashed beyond their intensity (reset before the next turn)
    stopped_left: int = 0  # stopped actors still there at the end: no health check found them
    jobs: int = 0  # background jobs enqueued during the faults
    jobs_completed: int = 0
    jobs_discarded: int = 0
    jobs_unfinished: int = 0  # neither completed nor discarded once the tree was restored
    jobs_unfinished_states: dict[str, int] = field(default_factory=dict)  # what the unfinished ones were
    jobs_overlaps: int = 0  # attempts that found another attempt of their job running
    jobs_attempts: int = 0  # attempts that ran to their end (several per job when faults cut some short)
    resumed: int | None = None  # --resume: runs a kill ended that the soak resumed (None: no resuming)
    resumed_completed: int = 0  # ... of which ended well after their resumes
    resume_attempts: int = 0  # resumes made (one run may need several: killed again)
    results_twice: int = 0  # tool calls whose result was committed twice in a session (must be 0)
    nodes_twice: int = 0  # graph node runs whose output was committed twice in one run (must be 0)
    faults_by_host: dict[str, int] = field(default_factory=dict)  # --cluster: the faults dealt on each host
    problems: list[str] = field(default_factory=list)  # what failed the soak, in words (a few of each kind)

    @property
    def passed(self) -> bool:
        return (self.host_alive and self.tree_restored and self.lost == 0 and self.hung == 0
                and not self.untyped_failures and self.next_turn_valid == self.sessions and self.orphans == 0
                and self.stopped_left == 0 and self.jobs_unfinished == 0 and self.jobs_overlaps == 0
                and self.results_twice == 0 and self.nodes_twice == 0
                and (self.resumed is None or self.resumed_completed == self.resumed))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}

    def render(self) -> str:
        def counts(found: dict[str, int]) -> str:
            return ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "none"

        restored = (f"yes, in {self.restore_seconds:.2f} s" if self.tree_restored and self.restore_seconds is not None
                    else "NO")
        lines = [
            f"sessions {self.sessions}, {self.duration:g} s of kills",
            f"turns              {self.turns} ({self.turns_ok} ended well)",
            f"acknowledged       {self.acknowledged_events} events",
            f"LOST               {self.lost}",
            f"HUNG               {self.hung}",
            f"typed failures     {counts(self.typed_failures)}",
            f"untyped failures   {counts(self.untyped_failures)}",
            f"kills              {counts(self.kills)}",
            *([f"faults per host    {counts(self.faults_by_host)}"] if self.faults_by_host else []),
            f"stops (SIGSTOP)    {counts(self.stops)}; left stopped: {self.stopped_left}",
            f"restarts           {counts(self.restarts)}",
            f"host alive         {'yes' if self.host_alive else 'NO'}",
            f"tree restored      {restored}",
            f"failed sessions    {self.failed_sessions} (reset before the next turn)",
            f"next turn valid    {self.next_turn_valid}/{self.sessions}",
            f"orphans            {self.orphans}",
            *([f"jobs               {self.jobs}: {self.jobs_completed} completed, {self.jobs_discarded} discarded, "
               f"{self.jobs_unfinished} unfinished ({counts(self.jobs_unfinished_states)}); "
               f"{self.jobs_attempts} attempts ran to their end",
               f"jobs at once       {self.jobs_overlaps} (two attempts of one job running together)"]
              if self.jobs else []),
            *([f"resumed            {self.resumed} runs a kill ended: {self.resumed_completed} completed after "
               f"{self.resume_attempts} resumes"] if self.resumed is not None else []),
            f"results twice      {self.results_twice} (a tool call's result committed twice)",
            *([f"nodes twice        {self.nodes_twice} (a graph node run's output committed twice in one run)"]
              if self.nodes_twice else []),
            f"result             {'PASSED' if self.passed else 'FAILED'}",
            *(f"  problem: {problem}" for problem in self.problems),
        ]
        return "\n".join(lines)


@dataclass
class _Session:
    id: str
    acknowledged: set[str] = field(default_factory=set)
    busy_since: float | None = None  # when the turn in flight began
    to_resume: str = ""  # --resume: the run a kill just ended (a turn, or a resume of one)
    chain: str = ""  # --resume: the turn a kill ended first, which to_resume continues
    last_run: str = ""  # the id of its last turn or resume
    last_failure: str = ""  # how its last turn that did not end well ended


@dataclass(frozen=True)
class UnfinishedResume:
    """A turn a kill ended (``first``) that its resumes did not complete: in session
    ``session``, the last resume (run ``attempt``, resuming run ``resumed``) ended so
    (``failure``, in words: refused, failed, or killed again at the last attempt)."""

    session: str
    first: str
    resumed: str
    attempt: str
    failure: str


def describe_unfinished(runner: Runner, user: str, unfinished: UnfinishedResume,
                        events: list[Event] | None = None) -> str:
    """Why a turn a kill ended was not completed by its resumes, in words, in order: the
    turn, the run its last resume continued and how that resume ended; the session's
    latest run as the store holds it now (its id, status, the run it resumes, its
    attempt; which of the two runs it is); the turn's invocation as committed (how many
    events, its last one: author and what it is, and the calls left without a
    result). ``events``: the session's events, when read already. A store that cannot
    be asked is said so, in place of what it holds."""
    said = [f"the turn {unfinished.first} of session {unfinished.session}, killed, was not completed by its "
            f"resumes: the last resume ({unfinished.attempt}, of {unfinished.resumed}) ended {unfinished.failure}"]
    try:
        last = runner.last_run(user, unfinished.session)
    except AdkError as exc:
        said.append(f"its latest run could not be read: {type(exc).__name__}: {exc}")
    else:
        role = {unfinished.attempt: " (the last resume)", unfinished.resumed: " (the run it resumed)"}
        said.append("the store has no run of it" if last is None else
                    f"the store's latest run of it: {last.run_id}{role.get(last.run_id, '')}, {last.status}, "
                    f"resuming {last.resumes or 'nothing'}, attempt {last.attempt}")
    try:
        if events is None:
            events = runner.get_session(user, unfinished.session).events
    except AdkError as exc:
        said.append(f"its events could not be read: {type(exc).__name__}: {exc}")
    else:
        invocation = invocation_of(unfinished.first)
        own = [e for e in events if e.invocation_id == invocation]
        answered = {r.id for e in own if e.content is not None for r in e.content.function_responses}
        pending = [f"{c.name} ({e.author})" for e in own if e.content is not None
                   for c in e.content.function_calls if c.id not in answered]
        said.append(f"its invocation {invocation} has {len(own)} committed events"
                    + (f", the last {_event_words(own[-1])}" if own else "")
                    + (f"; calls without a result: {', '.join(pending)}" if pending else ""))
    return "; ".join(said)


def _event_words(event: Event) -> str:
    """An event in a few words: its author and what it holds (an error, calls, results, text)."""
    content = event.content
    if event.error_code:
        what = f"the error {event.error_code}: {event.error_message}"
    elif content is not None and content.function_calls:
        what = "calls of " + ", ".join(c.name for c in content.function_calls)
    elif content is not None and content.function_responses:
        what = "results of " + ", ".join(r.name or "?" for r in content.function_responses)
    elif content is not None and content.text:
        what = f"the text {content.text[:60]!r}"
    else:
        what = "no content"
    return f"by {event.author}: {what}{' (final)' if event.is_final_response() else ''}"


def check_soak_arguments(*, sessions: int, duration: float, interval: float, targets: Iterable[str],
                         stops: float) -> tuple[str, ...]:
    """The target kinds of a soak, or ``ValueError`` for an unknown one, a count below 1,
    a duration or interval not above 0, or ``stops`` outside 0..1 (``soak`` checks its
    arguments with it; the CLI too, before it looks for a host)."""
    kinds = tuple(targets)
    unknown = [k for k in kinds if k not in TARGET_KINDS]
    if unknown or sessions < 1 or duration <= 0 or interval <= 0 or not 0 <= stops <= 1:
        raise ValueError(f"bad soak arguments: targets must be among {TARGET_KINDS} (got {unknown or kinds}); "
                         "sessions >= 1, duration and interval > 0, stops from 0 to 1")
    return kinds


def soak(host: Host, app: str, *, sessions: int = 8, duration: float = 60.0, interval: float = 0.2,
         targets: Iterable[str] = TARGET_KINDS, turn_timeout: float = 30.0, restore_timeout: float = 30.0,
         user: str = "chaos-soak", seed: int | None = None, stops: float = 0.0, min_faults: int = 0,
         jobs: int = 0, resume: bool = False, progress: Callable[[str], None] | None = None,
         cluster: bool = False, all_sessions: bool = False) -> SoakReport:
    """Drive ``sessions`` sessions of ``app`` on ``host`` while killing actors (see the
    module); return the :class:`SoakReport`. A fraction ``stops`` of the faults dealt to
    processes are a SIGSTOP instead of a SIGKILL (spread evenly, not drawn: a short soak
    stops as many as its share says): an actor alive but silent, which the host's health
    checks must find, kill and restart (one still there at the end fails the soak).
    The faults go on past ``duration`` (up to three times as long, scaled to the load:
    :func:`scaled_deadline`) until ``min_faults``
    have been dealt, every kind of target that was seen alive was hit and, with
    ``resume`` (for up to three times ``duration``, not scaled), a kill ended a turn (a
    soak with nothing to resume proves nothing): on a loaded
    machine a walk of the tree, needed to pick each victim, can take longer than
    ``interval``, and a soak must not pass on fewer faults than asked. The report's ``duration`` is the time the faults really took. ``jobs``:
    background jobs enqueued meanwhile (see the module; the host needs its jobs actor).
    ``resume``: a turn that a kill ends (``killed``, ``interrupted``) is resumed from its
    last committed step (``Runner.resume``), again while kills end it, and once more
    after the tree is restored: every one must complete (durable runs; the app's tools
    that are not idempotent then stop a resume with ``needs_decision``, a failure). One
    whose resume fails otherwise (refused, failed, or killed again at its last attempt)
    is a problem of the report, described when it failed (:func:`describe_unfinished`).
    ``cluster``: the faults are dealt across every host of ``host``'s cluster (its
    sessions live at their homes there), and every host's tree must be restored; the
    hosts must share this machine (their processes are killed by pid).
    ``all_sessions``: the sessions and runs crashed and killed may be anyone's on the
    host; without it, only the soak's own (the sessions it made: another user's
    sessions on the host are never touched). The tree must be restored within
    ``restore_timeout`` seconds scaled to the load (:func:`scaled_deadline`: a restarted
    process's imports take as much longer as the CPUs are shared); otherwise the soak
    fails, saying what was not restored, and reads no session back.
    Raises ``ValueError`` for bad arguments (``check_soak_arguments``)."""
    kinds = check_soak_arguments(sessions=sessions, duration=duration, interval=interval, targets=targets,
                                 stops=stops)
    say = progress or (lambda _text: None)
    rng = random.Random(seed)
    report = SoakReport(sessions=sessions, duration=duration)
    runner = Runner(host, app, timeout=turn_timeout + 15.0)
    config = RunConfig(timeout=turn_timeout)
    tag = f"{int(time.time())}-{rng.randrange(1 << 30):x}"
    members = [_Session(runner.create_session(user, f"soak-{tag}-{i}").id) for i in range(sessions)]
    views: list[ClusterView] = []

    # The soak's own sessions, found by their ids (wherever they are in a partition's
    # listing); with all_sessions, anyone's, as many as a partition holds.
    mine, shown = ("", 1_000_000) if all_sessions else (f"soak-{tag}-", sessions + 1)

    def walk(timeout: float = 1.0) -> list[dict[str, Any]]:
        if not cluster:
            return tree_rows(host, timeout, sessions=shown, search=mine, patient=False)
        try:  # (the cluster actor, or its supervisor, may be one of the killed)
            views[:] = [view] if (view := host.cluster_view()) is not None else views
        except (AdkError, SupervisionError) as exc:
            if not views:
                raise CallTimeout(f"the cluster's hosts are not known yet: {exc}") from None
        return _cluster_rows(host, timeout, views[0] if views else None, sessions=shown, search=mine, patient=False)

    seen = _Restarts()
    seen.look(walk())
    lock = threading.Lock()
    typed: Counter[str] = Counter()
    untyped: Counter[str] = Counter()
    stop = threading.Event()
    unfinished: list[str] = []  # --resume: why each turn a kill ended was not completed by its resumes
    asking = Runner(host, app, call_timeout=5.0)  # (a description's reads: they must not hold a talk thread long)

    def one_turn(member: _Session, text: str, resumes: str = "") -> bool:
        """Run a turn (``resumes``: resume that run instead); record what came back;
        True if it ended well. With ``resume``, a turn a kill ends is kept in
        ``member.to_resume`` (and, when it is no resume, in ``member.chain``)."""
        member.busy_since = time.monotonic()
        run_id = member.last_run = f"run-{uuid.uuid4().hex}"
        try:
            events = []
            stream = (runner.resume(user, member.id, resumes, run_config=config, new_run_id=run_id) if resumes
                      else runner.run(user, member.id, text, run_config=config, run_id=run_id))
            for event in stream:
                if not event.partial:
                    with lock:
                        member.acknowledged.add(event.id)
                events.append(event)
            last = events[-1] if events else None
            if last is not None and last.error_code:
                with lock:
                    typed[last.error_code] += 1
                member.last_failure = f"error event {last.error_code}: {last.error_message}"
                return False
            return True
        except RunFailedError as exc:
            with lock:
                typed[exc.reason] += 1
            if resume and exc.reason in ("killed", "interrupted"):
                member.to_resume = run_id
                member.chain = member.chain if resumes else run_id
            member.last_failure = f"{type(exc).__name__}: {exc}"
        except AdkError as exc:
            with lock:
                typed[type(exc).__name__] += 1
            member.last_failure = f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            with lock:
                untyped[type(exc).__name__] += 1
                if untyped[type(exc).__name__] <= 3:
                    report.problems.append(f"untyped failure of session {member.id}: {type(exc).__name__}: {exc!r}")
            member.last_failure = f"{type(exc).__name__}: {exc}"
        finally:
            member.busy_since = None
        return False

    def resumed_to_the_end(member: _Session, attempts: int, last_chance: bool = False) -> None:
        """Resume the member's run a kill ended, up to ``attempts`` times while kills end
        it (the run still to resume stays in ``to_resume``). A resume that fails
        otherwise (refused, timed out, needing a decision) ends its turn's resumes, not
        completed: kept in ``unfinished``, as is, with ``last_chance``, one still killed
        at its last attempt."""
        for attempt in range(attempts):
            if not member.to_resume:
                return
            resumes, member.to_resume = member.to_resume, ""
            with lock:
                report.resume_attempts += 1
            if one_turn(member, "", resumes=resumes):
                with lock:
                    report.resumed_completed += 1
                member.chain = ""
                return
            if not member.to_resume or (last_chance and attempt == attempts - 1):
                said = describe_unfinished(asking, user, UnfinishedResume(member.id, member.chain, resumes,
                                                                          member.last_run, member.last_failure))
                with lock:  # described now: the turns that follow change the session's latest run
                    unfinished.append(said)
                member.to_resume = member.chain = ""
                return

    def talk(member: _Session) -> None:
        """Turns one after another; with ``resume``, a turn a kill ended is resumed (one
        attempt each time round) before the next turn begins."""
        number = 0
        while not stop.is_set():
            if member.to_resume:
                resumed_to_the_end(member, 1)
                continue
            number += 1
            ended_well = one_turn(member, f"turn {number}: what's the weather in Paris?")
            with lock:
                report.turns += 1
                report.turns_ok += ended_well
                if member.to_resume:
                    report.resumed = (report.resumed or 0) + 1

    workers = [threading.Thread(target=talk, args=(m,), daemon=True, name=f"soak-{m.id}") for m in members]
    jobs_dir = Path(tempfile.mkdtemp(prefix="adk-soak-jobs-")) if jobs > 0 else None
    job_ids: list[str] = []
    if jobs_dir is not None:
        workers.append(threading.Thread(target=_enqueue_soak_jobs, args=(host, jobs, duration, tag, jobs_dir, job_ids),
                                        daemon=True, name="soak-jobs"))
    for worker in workers:
        worker.start()
    kills: Counter[str] = Counter()
    stopped: Counter[str] = Counter()
    stopped_pids: list[int] = []
    present: set[str] = set()  # the kinds that had a live target at some walk
    began = time.monotonic()
    overtime = scaled_deadline(3 * duration)  # at load a fault takes longer to deal

    def dealing() -> bool:
        spent = time.monotonic() - began
        dealt = sum(kills.values()) + sum(stopped.values())
        unhit = present - set(kills) - set(stopped)
        # --resume: until a kill ended a turn, for 3 x duration unscaled (at load 30 partitions killed as they
        # came back let no turn reach one for minutes: nothing was ever resumed)
        unresumed = resume and not report.resumed and spent < 3 * duration
        return spent < duration or ((dealt < min_faults or bool(unhit) or unresumed) and spent < overtime)

    to_processes = 0  # faults dealt to an actor of its own process: the ones a stop may be
    while dealing():
        chosen_at = time.monotonic()
        victim = _pick_victim(walk, kinds, rng, seen, kills + stopped, frozenset(stopped_pids),
                              None if all_sessions else (user, frozenset(m.id for m in members)), present)
        if victim is not None:
            kind, row = victim
            to_processes += bool(row["pid"])
            stop_it = bool(row["pid"]) and sum(stopped.values()) + 1 <= stops * to_processes + 0.5
            try:
                kill_row(host, row, signal.SIGSTOP if stop_it else signal.SIGKILL)
                (stopped if stop_it else kills)[kind] += 1
                if cluster:
                    report.faults_by_host[row["host"]] = report.faults_by_host.get(row["host"], 0) + 1
                if stop_it:
                    stopped_pids.append(row["pid"])
            except (ProcessLookupError, AdkError):
                pass  # gone meanwhile: the process died, the run ended
        time.sleep(max(0.0, interval - (time.monotonic() - chosen_at)))
    report.duration = round(time.monotonic() - began, 1)
    say(f"{sum(kills.values())} kills in {report.duration:g} s; waiting for the turns in flight")
    stop.set()
    deadline = time.monotonic() + turn_timeout + 20.0
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
    report.hung = sum(1 for w in workers if w.is_alive() and w.name != "soak-jobs")
    report.problems.extend(f"the turn of session {m.id} hung: began {time.monotonic() - m.busy_since:.0f} s ago"
                           for m in members if m.busy_since is not None)
    report.acknowledged_events = sum(len(m.acknowledged) for m in members)
    report.kills, report.stops = dict(kills), dict(stopped)
    report.typed_failures, report.untyped_failures = dict(typed), dict(untyped)
    report.host_alive = _host_alive(walk)
    if not report.host_alive:
        _release(stopped_pids)
        return report
    report.tree_restored, report.restore_seconds, unrestored = _wait_restored(
        walk, scaled_deadline(restore_timeout), stopped_pids, hosts=len(views[0].members) if views else 0)
    report.problems.extend(f"not restored: {row}" for row in unrestored[:10])
    report.stopped_left = _release(stopped_pids)
    seen.look(walk())
    report.restarts = dict(seen.restarts)
    if not report.tree_restored:  # a part of the tree is still down: its sessions cannot be read back; FAILED, why said
        return report
    for member in members:
        try:
            runner.get_state(user, member.id)
        except SessionFailedError:
            report.failed_sessions += 1
            runner.reset_session(user, member.id)
    if resume:
        report.resumed = report.resumed or 0
        for member in members:  # those the faults left to resume, on the restored tree
            resumed_to_the_end(member, 5, last_chance=True)
    report.typed_failures, report.untyped_failures = dict(typed), dict(untyped)  # the final resumes' too
    say("reading every session back")
    for member in members:
        events = runner.get_session(user, member.id).events
        stored = {e.id for e in events}
        report.lost += len(member.acknowledged - stored)
        answered = Counter(p.function_response.id for e in events if e.content is not None
                           for p in e.content.parts if p.function_response is not None and p.function_response.id)
        report.results_twice += sum(1 for n in answered.values() if n > 1)
        outputs = Counter((e.invocation_id, e.node_info.path) for e in events
                          if e.node_info is not None and e.output is not None)
        report.nodes_twice += sum(1 for n in outputs.values() if n > 1)
        report.problems.extend(f"node run {path} of run {run} in session {member.id}: output committed {n} times"
                               for (run, path), n in outputs.items() if n > 1)
    if resume:  # why each turn a kill ended that was not completed was not; and any turn unaccounted for
        report.problems.extend(unfinished)
        unaccounted = (report.resumed or 0) - report.resumed_completed - len(unfinished)
        if unaccounted:
            report.problems.append(f"{unaccounted} turns a kill ended were neither completed by their resumes nor "
                                   "found unfinished (a resume still in flight?)")
    for member in members:
        valid = one_turn(member, "one more turn: weather in Oslo?")
        report.next_turn_valid += valid
        if not valid:
            report.problems.append(f"the next turn of session {member.id} failed: {member.last_failure}")
    if jobs_dir is not None:
        say("waiting for the background jobs")
        _settle_soak_jobs(host, report, jobs, job_ids, jobs_dir, restore_timeout + turn_timeout)
    orphans = _orphans(walk())
    report.orphans = len(orphans)
    report.problems.extend(f"orphan: pid {pid} {_command_line(pid)}" for pid in orphans[:10])
    return report


def soak_job(lock_dir: str, log: str, seconds: float = 0.05, job: JobInfo | None = None) -> str:
    """A background job of the soak: holds its job's lock (``flock`` on
    ``lock_dir/<job id>``, released by the kernel when its process dies) while it works
    ``seconds``; an attempt that finds the lock taken notes ``overlap`` in ``log`` and
    fails. One that ran to its end notes ``done``."""
    assert job is not None
    descriptor = os.open(Path(lock_dir) / job.id, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _note(log, f"overlap {job.id} {job.attempt}")
            raise RuntimeError(f"another attempt of {job.id} is running") from None
        time.sleep(seconds)
        _note(log, f"done {job.id} {job.attempt}")
        return "done"
    finally:
        os.close(descriptor)


def _note(log: str, line: str) -> None:
    with open(log, "a") as out:
        out.write(line + "\n")


def _enqueue_soak_jobs(host: Host, count: int, duration: float, tag: str, folder: Path, ids: list[str]) -> None:
    """Enqueue ``count`` soak jobs in batches spread over ``duration``; an enqueue that
    fails (the jobs actor killed) is asked again, its unique keys making it safe."""
    batch = 5
    backoff = Backoff(base=0.05, max_delay=0.5, jitter=0.2)
    deadline = time.monotonic() + 3 * duration + 30.0
    for start in range(0, count, batch):
        specs = [JobSpec(kind="function", function="adk_actors.chaos:soak_job", user_id="chaos-soak",
                         args={"lock_dir": str(folder), "log": str(folder / "log"), "seconds": 0.05},
                         unique_key=f"soak-{tag}-{number}", unique_period=3600.0, max_attempts=100,
                         backoff=backoff, timeout=10.0)
                 for number in range(start, min(count, start + batch))]
        while time.monotonic() < deadline:
            try:
                ids.extend(job.id for job in host.jobs.enqueue_many(specs))
                break
            except AdkError:
                time.sleep(0.1)
        time.sleep(duration * batch / count)


def _settle_soak_jobs(host: Host, report: SoakReport, count: int, ids: list[str], folder: Path,
                      timeout: float) -> None:
    """Wait (``timeout``) for every soak job to finish; count them and their overlaps."""
    report.jobs = count
    wanted = list(dict.fromkeys(ids))
    deadline = time.monotonic() + timeout
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        try:
            states = {job_id: host.jobs.get(job_id).state for job_id in wanted}
        except AdkError:
            time.sleep(0.2)
            continue
        if len(wanted) == count and all(state in FINISHED for state in states.values()):
            break
        time.sleep(0.2)
    report.jobs_completed = sum(1 for state in states.values() if state == "completed")
    report.jobs_discarded = sum(1 for state in states.values() if state == "discarded")
    report.jobs_unfinished = count - report.jobs_completed - report.jobs_discarded
    left = Counter(state for state in states.values() if state not in FINISHED)
    left["never enqueued"] = count - len(wanted)
    report.jobs_unfinished_states = {state: n for state, n in left.items() if n}
    lines = (folder / "log").read_text().splitlines() if (folder / "log").exists() else []
    report.jobs_overlaps = sum(1 for line in lines if line.startswith("overlap"))
    report.jobs_attempts = sum(1 for line in lines if line.startswith("done"))
    shutil.rmtree(folder, ignore_errors=True)


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
