"""A session partition's pool of run workers: a supervised process of its own, the
partition's sibling (OTP's poolboy shape: the pool owns the worker processes, the
partition checks them out per turn; see ``_run_workers``).

The host's ``run_pools`` supervisor holds one pool per partition (``pool-<i>`` serves
``sessions-<i>``). A pool, in order:

1. **Starts** (``init``): imports the apps once, so that every worker it forks inherits
   them, and starts ``run_workers`` workers (``_run.RunActor``, its Thespian children).
   Each worker connects its line to the partition at ``WorkerSettings.partition_line``
   and says hello there; the partition greets the pool (``PartitionAt``).
2. **Replaces** a worker that ends, at once, unless its end was asked for
   (``StopWorker``: a worker the partition shrank away, or killed because a run on
   it did not stop within ``run_stop_grace``; a retired worker's replacement was
   started when it was retired, ``RetireWorker``). A worker that
   exits on its own, normally (its partition died or stopped: its line ended), is
   replaced without counting.
3. **Counts** every other end (kill -9, a crash, a failed health check) against its
   restart intensity (OTP's): more than ``worker_intensity`` within ``worker_period``
   seconds and the pool exits (``crash``), its workers with it, and its supervisor
   restarts it. The partition and its sessions stay: the turns the workers held end
   ``killed``, the next wait for the new pool's workers.
4. **Checks** its workers' health, with a health check: a worker that leaves a ping
   unanswered is ``Condemned`` to the partition (which fails its turns as
   unresponsive and answers ``StopWorker``) and killed (at the partition's answer, or
   ``CONDEMNED_KILL`` later). A worker that never answers its Init within
   ``WORKER_INIT_WAIT`` is replaced.
5. **Grows** by one worker when the partition asks (``GrowPool``: with
   ``runs_per_worker`` every worker is busy), up to ``max_run_workers``.

The pool's workers die with it (each sets its parent's death signal).
"""

from __future__ import annotations

import importlib
import os
import signal
from dataclasses import dataclass, replace
from typing import Any

from supervision import BadRequest, CallerRef, GenServer
from supervision.lowlevel import (
    HealthCheck,
    HealthMonitor,
    RestartIntensity,
    load_scaled,
    proc_stat,
)
from supervision.protocol import (
    ErrorReply,
    Exiting,
    ExitKind,
    ExitReason,
    Init,
    InitOk,
    Reply,
    Shutdown,
)

from ..log import get_logger
from ..messages import LiveWorkers
from ._partition_timers import CheckWorkers, KillCondemned, WorkerInitOverdue
from ._run import RunActor
from ._run_protocol import (
    Condemned,
    GrowPool,
    PartitionAt,
    RetireWorker,
    StopWorker,
    WorkerSettings,
    load_apps,
)

__all__ = ["CONDEMNED_KILL", "WORKER_INIT_WAIT", "PoolArgs", "RunPool"]

#: A worker that has not answered its Init after this long is presumed lost (killed
#: before it reported in: Thespian may never say that it exited) and is replaced.
WORKER_INIT_WAIT = 10.0
#: A condemned worker is killed this long after the partition was told, if the
#: partition has not answered by then.
CONDEMNED_KILL = 0.5
#: Imported by a pool before it forks its workers: a module imported first in a forked
#: worker is imported again by each of them.
_PRELOAD = ("adk_actors.log", "adk_actors.telemetry", "adk_actors.engine", "adk_actors.models")


@dataclass(frozen=True)
class PoolArgs:
    """One pool's settings (see the module)."""

    worker: WorkerSettings  # each worker's Init (with its partition's line)
    run_workers: int = 2
    max_run_workers: int = 32
    health: HealthCheck | None = None
    services: bool = True  # the runs reach the host's services (breakers, artifacts ...) through its registry
    worker_intensity: int = 20  # ends the pool did not ask for ...
    worker_period: float = 5.0  # ... within this many seconds: more, and the pool exits


@dataclass
class _Child:
    address: Any
    pid: int | None = None  # known once it answered Init
    retired: bool = False  # replaced already: its end is not counted
    stopped: bool = False  # its end was asked for: not counted, not replaced
    left: bool = False  # it exited on its own, normally (its partition's line ended)


class RunPool(GenServer):
    """A partition's run workers, as processes (see the module)."""

    def init(self, args: PoolArgs) -> None:
        """Import the apps (a bad one fails the start), then start the workers."""
        if not isinstance(args, PoolArgs) or args.worker.partition_line is None:
            raise BadRequest("RunPool needs PoolArgs naming its partition's line")
        self.args = args
        self.worker = replace(args.worker, registry=self.registry if args.services else None)
        self.slog = get_logger("adk_actors.session", actor=f"pool:{os.getpid()}")
        for module in _PRELOAD:
            importlib.import_module(module)
        load_apps(args.worker.apps, args.worker.agents_dir)  # once here: every worker inherits them
        self.children: list[_Child] = []
        self.intensity = RestartIntensity(args.worker_intensity, args.worker_period)
        self.health = HealthMonitor(args.health, scale=load_scaled) if args.health is not None else None
        self.partition: Any = None  # known once it greets us
        for _ in range(max(1, args.run_workers)):
            self._start_worker()
        if self.health is not None:
            self.send_after(self.health.check.interval, CheckWorkers())

    # -- requests -----------------------------------------------------------------------------

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, LiveWorkers):
            return [c.pid for c in self.children if c.pid is not None and not (c.retired or c.stopped)]
        return super().handle_call(request, caller)

    def handle_info(self, message: Any, sender: Any) -> None:
        """The workers' Init answers, health answers and ends; the partition's requests."""
        if isinstance(message, (Reply, ErrorReply)) and self.health is not None and self.health.answered(message.ref):
            return
        if isinstance(message, InitOk):
            child = self._child_at(sender)
            if child is not None:
                child.pid = message.pid
                self.monitor_child(sender, message.pid)  # two workers killed at once: both reported
        elif isinstance(message, Exiting):
            child = self._child_at(sender)
            if child is not None and not message.reason.abnormal:
                child.left = True
        elif type(message).__name__ == "ChildActorExited":
            child = self._child_at(message.childAddress)
            if child is not None:
                self._gone(child)
        elif isinstance(message, PartitionAt):
            self.partition = message.address
        elif isinstance(message, GrowPool):
            if len(self._open()) < self.args.max_run_workers:
                self._start_worker()
        elif isinstance(message, RetireWorker):
            child = self._child_at(message.address)
            if child is not None and not child.retired:
                child.retired = True
                self._start_worker()
        elif isinstance(message, StopWorker):
            child = self._child_at(message.address)
            if child is not None:
                child.stopped = True
                self._end(child, kill=message.kill)
        else:
            super().handle_info(message, sender)

    def handle_timeout(self, payload: Any) -> None:
        if isinstance(payload, CheckWorkers):
            self._check_workers()
        elif isinstance(payload, WorkerInitOverdue):
            child = self._child_at(payload.address)
            if child is not None and child.pid is None:
                self.slog.warning("run worker never reported in; replacing it")
                child.retired = True
                self.children.remove(child)
                self.send(child.address, Shutdown())
                self._start_worker()
        elif isinstance(payload, KillCondemned):
            child = self._child_at(payload.address)
            if child is not None:
                self._end(child, kill=True)

    def exit_waits_for_children(self) -> bool:
        """Not while a worker has not answered its Init (Thespian would wait for ever for
        one still starting, see ``GenServer``); the workers then die with us."""
        return all(c.pid is not None for c in self.children)

    # -- workers ------------------------------------------------------------------------------

    def _open(self) -> list[_Child]:
        return [c for c in self.children if not (c.retired or c.stopped)]

    def _child_at(self, address: Any) -> _Child | None:
        return next((c for c in self.children if c.address == address), None)

    def _start_worker(self) -> None:
        """Fork a worker (it connects to the partition itself); not while stopping."""
        if self.stopping:
            return
        address = self.createActor(RunActor)
        self.send(address, Init(args=self.worker, supervisor=self.myAddress))
        self.children.append(_Child(address))
        self.send_after(WORKER_INIT_WAIT, WorkerInitOverdue(address))

    def _gone(self, child: _Child) -> None:
        """A worker's process ended: replace it unless its end was asked for; count it
        unless it was asked for or it left on its own (see the module, 2-3)."""
        self.children.remove(child)
        if self.health is not None and child.pid is not None:
            self.health.forget(child.pid)
        if child.stopped or child.retired or self.stopping:
            return
        if not child.left and not self.intensity.add_restart(self.clock()):
            reason = (f"more than {self.args.worker_intensity} run workers died within "
                      f"{self.args.worker_period:g} s")
            self.slog.error("run workers keep dying: the pool exits", reason=reason)
            self.stop(ExitReason(ExitKind.CRASH, reason))
            return
        self._start_worker()

    def _end(self, child: _Child, *, kill: bool) -> None:
        if kill and child.pid is not None:
            _kill(child.pid)
        else:
            self.send(child.address, Shutdown())

    def _check_workers(self) -> None:
        """Each worker that left a ping unanswered for the check's timeout is condemned
        (see the module, 4); the others are pinged; come back."""
        assert self.health is not None
        now = self.clock()
        for overdue in self.health.overdue(now):
            child = next((c for c in self.children if c.pid == overdue), None)
            if child is None or child.pid is None:
                continue
            pid = child.pid
            self.slog.error("run worker killed: " + self.health.check.describe(), worker_pid=pid)
            if self.partition is not None:
                self.send(self.partition, Condemned(child.address))
                self.send_after(CONDEMNED_KILL, KillCondemned(child.address))
            else:
                _kill(pid)
        for child in self.children:
            if child.pid is not None:
                ping = self.health.ping(child.pid, now, child.pid)  # its CPU time tells busy from stuck
                if ping is not None:
                    self.send(child.address, ping)
        self.send_after(self.health.check.interval, CheckWorkers())


def _kill(pid: int) -> None:
    """SIGKILL ``pid`` if it is still our child (a pid may have been reused since)."""
    stat = proc_stat(pid)
    if stat is None or stat[1] != os.getpid():
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
