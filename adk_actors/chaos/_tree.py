"""The live tree of a host, one row per actor: the kinds of actors that may be hit
(``PROCESS_KINDS``, ``TARGET_KINDS``), the walk (:func:`tree_rows`, of every host of a
cluster: :func:`cluster_trees`), the rows of the sessions a partition holds
(:func:`session_rows`), the rows a name finds (:func:`find_rows`), and which kind a
row is (:func:`kind_of`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from supervision import CallError, CallTimeout, SupervisionError, SupervisorClient, call
from supervision.lowlevel import partition_index, pid_space
from supervision.protocol import ChildInfo, PidSpace, WhichChildren

from ..messages import HeldSessions, LiveWorkers, SessionStatus
from ..runtime import ClusterView, Host
from ._deadline import _ask, _Busy, scaled_deadline

#: The processes that may be killed: the root's children, the service actors, the
#: session partitions (each holds many sessions), their pools of run workers, the run
#: workers, and the jobs actor with its executors.
PROCESS_KINDS = ("root", "services", "partitions", "pools", "workers", "jobs")


#: Everything that may be killed: the processes, and the actors that are not processes:
#: sessions (inside their partition) and runs (on a run worker).
TARGET_KINDS = (*PROCESS_KINDS, "sessions", "runs")


#: How many sessions a walk of the tree shows (running ones first), unless told otherwise.
SESSIONS_SHOWN = 50


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
