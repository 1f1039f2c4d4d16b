"""A session partition's run workers: the pool its turns run on (OTP's poolboy shape:
the pool is the partition's sibling object, not part of its session logic).

The pool keeps ``run_workers`` worker processes (``_run.RunActor``), forked by the
partition's process so each shares a direct line with it (``_link``), started
``WORKER_START_DELAY`` after the partition (a turn that comes first forks one). It
holds the turns given to it (``runs``: run id -> session and run, until they end) and,
in order, for each turn:

1. **Choose a worker**: the one that received the session's history last, unless it
   runs more than ``AFFINITY_SLACK`` turns beyond the least busy one; with
   ``runs_per_worker`` one with room, a new one when all are full (up to
   ``max_run_workers``), else the turn waits in the backlog, oldest first. A chosen
   worker whose process is gone (its exit not reported yet) is handled as gone first.
2. **Send** ``StartRun`` with only the events the worker lacks (``known``); a worker
   that lacks them after all answers ``NeedHistory`` and gets them all.
3. **Take its output** (on the line, or through Thespian: the line is read first) and
   hand it to the partition (``PoolHost.run_output``); a ``barrier`` is answered
   ``Committed`` once the partition has committed the events before it.

**Restarts.** A worker's death fails the turns it held (``killed``) and another takes
its place, at once, unless the pool asked for that death (a retired or stopped worker).
Deaths the pool did not ask for count against its restart intensity (OTP's):
more than ``worker_intensity`` within ``worker_period`` seconds and the pool gives up:
it starts no worker again and asks the partition to exit (``WorkersExhausted``), so
the partition's supervisor restarts both, as a crash loop is handled everywhere else in
the tree. A worker that keeps running a turn ``CANCEL_GRACE`` after that turn was ended
(timeout, cancel, over its limit) is retired: it gets no new turn, another is started,
and it is killed once no live turn is left on it. A worker that never answers its Init
within ``WORKER_INIT_WAIT`` is replaced. With a health check, a worker that leaves a
ping unanswered is killed (its turns end ``killed``, saying so). With
``runs_per_worker``, workers idle beyond ``run_workers`` for ``WORKER_IDLE_STOP`` are
stopped.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from supervision import (
    Cast,
    ErrorReply,
    HealthCheck,
    HealthMonitor,
    Init,
    InitOk,
    Reply,
    RestartIntensity,
    Shutdown,
    proc_stat,
    process_alive,
)

from .._types import LiveRequest, RunConfig
from ._link import RunLink, fork_linked
from ._partition_timers import (
    CheckWorkers,
    ShrinkWorkers,
    StalledRun,
    StartWorkers,
    WorkerInitOverdue,
    WorkersExhausted,
)
from ._run import RunActor
from ._run_protocol import (
    Cancel,
    Committed,
    LiveSend,
    NeedHistory,
    RunOutput,
    StartRun,
    WorkerSettings,
)
from ._session import CANCEL_GRACE, Session, SessionRun

__all__ = ["AFFINITY_SLACK", "WORKER_START_DELAY", "PoolHost", "PoolSettings", "RunWorkerPool"]

#: A turn goes to the worker holding its session's history unless that worker runs
#: more than this many turns beyond the least busy worker.
AFFINITY_SLACK = 2
#: A worker that has not answered its Init after this long is presumed lost (killed
#: before it reported in: Thespian may never say that it exited) and is replaced.
WORKER_INIT_WAIT = 10.0
#: With ``runs_per_worker``: a worker beyond ``run_workers`` idle this long is stopped.
WORKER_IDLE_STOP = 5.0
#: The pool forks its workers this long after the partition's start: the requests that
#: reached it first (its sessions' reads, after a restart) are answered before two forks
#: hold it up; a turn that comes first forks a worker itself.
WORKER_START_DELAY = 0.05


@dataclass(frozen=True)
class PoolSettings:
    """How many workers, how busy, how often they may die (see the module)."""

    worker: WorkerSettings  # what each worker is told in its Init (its line's descriptors added)
    run_workers: int = 2
    runs_per_worker: int = 0  # 0: no limit; 1: a process per turn
    max_run_workers: int = 32
    health: HealthCheck | None = None
    worker_intensity: int = 20  # deaths the pool did not ask for ...
    worker_period: float = 5.0  # ... within this many seconds: more, and the pool gives up


class PoolHost(Protocol):
    """What the pool needs from the partition whose process forks its workers."""

    myAddress: Any
    slog: Any

    @property
    def stopping(self) -> bool: ...

    def clock(self) -> float: ...

    def send(self, address: Any, message: Any) -> None: ...

    def send_after(self, seconds: float, payload: Any = None) -> None: ...

    def monitor_child(self, address: Any, pid: int) -> bool: ...

    def createActor(self, actorClass: Any) -> Any: ...

    def lines_changed(self) -> None:
        """The pool's lines changed (``RunWorkerPool.fds``): watch them again."""

    def other_fds(self) -> tuple[int, ...]:
        """The partition's descriptors a new worker must close (its Runners' lines)."""

    def run_output(self, session: Session, run: SessionRun, output: RunOutput) -> None:
        """Commit and relay the output of a live run (the partition's job)."""


@dataclass
class _Worker:
    address: Any
    link: RunLink
    pid: int | None = None  # known once it answered Init
    runs: set[str] = field(default_factory=set)  # run ids it was given and has not ended
    known: dict[str, tuple[int, str | None]] = field(default_factory=dict)  # session key -> history sent
    retired: bool = False  # no new turn; its death was asked for (no replacement, no restart counted)
    idle_since: float = 0.0  # the pool's clock when its last turn ended
    unresponsive: bool = False  # killed for leaving a health check unanswered


class RunWorkerPool:
    """The run workers of one partition (see the module). Every method runs on the
    partition's main thread."""

    def __init__(self, host: PoolHost, settings: PoolSettings) -> None:
        self.host = host
        self.settings = settings
        self.workers: list[_Worker] = []
        self.runs: dict[str, tuple[Session, SessionRun]] = {}  # live runs given to the pool (not ended)
        self.backlog: deque[tuple[Session, SessionRun]] = deque()  # turns waiting for a worker
        self.health = HealthMonitor(settings.health) if settings.health is not None else None
        self.intensity = RestartIntensity(settings.worker_intensity, settings.worker_period)
        self.exhausted: str | None = None  # why the pool gave up (it starts no worker again)
        self.shrink_armed = False

    def begin(self) -> None:
        """Arm the first start of the workers, and their health checks."""
        self.host.send_after(WORKER_START_DELAY, StartWorkers())
        if self.health is not None:
            self.host.send_after(self.health.check.interval, CheckWorkers())

    # -- what the partition asks ---------------------------------------------------------------

    def fds(self) -> list[int]:
        """The workers' lines, to watch."""
        return [w.link.fd for w in self.workers if not w.link.closed]

    def live_pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.pid is not None and not w.retired]

    def runs_by_worker(self) -> dict[int, list[str]]:
        return {w.pid: sorted(w.runs) for w in self.workers if w.pid is not None and not w.retired}

    def dispatch(self, session: Session, run: SessionRun) -> None:
        """Give ``run`` to a worker with the history it lacks (see the module, 1-2), or
        keep it in the backlog until one has room."""
        key = session.key
        self.runs[run.run_id] = (session, run)
        worker = self._choose_worker(key)
        if worker is None:
            self.backlog.append((session, run))
            return
        events = session.events
        known = worker.known.get(key)
        if known is not None and known[0] <= len(events) and (
                known[0] == 0 or events[known[0] - 1].id == known[1]):
            start = _start_run(session, run, known, events[known[0]:])
        else:
            start = _start_run(session, run, None, events)
        worker.known[key] = (len(events), events[-1].id if events else None)
        run.worker = worker
        worker.runs.add(run.run_id)
        self._to_worker(worker, start)
        for request in run.live_inputs:  # sent while the run waited: after its StartRun
            self.live(run, request)
        run.live_inputs.clear()

    def live(self, run: SessionRun, request: LiveRequest) -> None:
        if run.worker is not None:
            self.host.send(run.worker.address, Cast(LiveSend(run.run_id, request)))

    def cancel(self, run: SessionRun, reason: str) -> None:
        if run.worker is not None:
            self.host.send(run.worker.address, Cast(Cancel(run.run_id, reason)))

    def abandon(self, run: SessionRun, *, waited: bool) -> None:
        """The run ended without its worker's outcome (it was told to cancel): if the
        worker still runs it CANCEL_GRACE after it was told (now, if ``waited``), retire
        the worker."""
        if waited:
            self._stalled(run.run_id, run.worker.address)
        else:
            self.host.send_after(CANCEL_GRACE, StalledRun(run.run_id, run.worker.address))

    def run_ended(self, run: SessionRun) -> None:
        """``run`` ended on its session: the pool no longer holds it."""
        self.runs.pop(run.run_id, None)
        worker = run.worker
        if worker is not None and worker.retired:
            self._kill_if_done(worker)

    def drop(self, run: SessionRun) -> None:
        """Forget ``run`` (its session was let go: it ends there, interrupted)."""
        self.runs.pop(run.run_id, None)

    def forget(self, key: str) -> None:
        """Session ``key`` was let go: no worker's copy of its history is reused."""
        for worker in self.workers:
            worker.known.pop(key, None)

    def read(self, ready: list[int]) -> None:
        """Read the lines among ``ready`` (readable descriptors)."""
        for worker in list(self.workers):
            if not worker.link.closed and worker.link.fd in ready:
                self._read_link(worker)

    def on_info(self, message: Any, sender: Any) -> bool:
        """A Thespian message that may be the pool's; True if it was."""
        if isinstance(message, (Reply, ErrorReply)) and self.health is not None and self.health.answered(message.ref):
            return True  # a worker answered its health check
        if isinstance(message, (RunOutput, NeedHistory)):
            worker = self._worker_at(sender)
            if worker is not None:
                self._read_link(worker)  # what it sent on its line came first
                self._from_worker(message, worker)
            return True
        if isinstance(message, InitOk):
            worker = self._worker_at(sender)
            if worker is None:
                return False
            worker.pid = message.pid
            self.host.monitor_child(sender, message.pid)  # two workers killed at once: both reported
            return True
        if type(message).__name__ == "ChildActorExited":
            worker = self._worker_at(message.childAddress)  # (its line is read first: _worker_gone)
            if worker is None:
                return False
            self._worker_gone(worker)
            return True
        return False

    def on_timer(self, payload: Any) -> bool:
        """A timer that may be the pool's (``_partition_timers``); True if it was."""
        if isinstance(payload, ShrinkWorkers):
            self._shrink()
        elif isinstance(payload, StalledRun):
            self._stalled(payload.run_id, payload.worker)
        elif isinstance(payload, CheckWorkers):
            self._check_workers()
        elif isinstance(payload, StartWorkers):
            for _ in range(max(1, self.settings.run_workers) - len([w for w in self.workers if not w.retired])):
                self._start_worker()
        elif isinstance(payload, WorkerInitOverdue):
            self._worker_init_overdue(payload.address)
        else:
            return False
        return True

    def all_started(self) -> bool:
        """Whether every worker forked has answered its Init (Thespian would wait for
        ever for one that is still starting; see ``GenServer.exit_waits_for_children``)."""
        return all(worker.pid is not None for worker in self.workers)

    def close(self) -> None:
        """The partition is exiting: its lines close (the workers stop with it)."""
        self.runs.clear()
        for worker in self.workers:
            worker.link.close()

    # -- workers -------------------------------------------------------------------------------

    def _start_worker(self) -> None:
        """Fork a worker with a direct line to the partition (``_link``): it keeps its
        end of a new socket pair and closes every other end it inherits. Not once the
        pool gave up."""
        if self.exhausted is not None:
            return
        address, ours, their_fd = fork_linked(self.host, RunActor)
        inherited = (ours.fd, *(w.link.fd for w in self.workers if not w.link.closed), *self.host.other_fds())
        settings = _with_line(self.settings.worker, their_fd, inherited)
        self.host.send(address, Init(args=settings, supervisor=self.host.myAddress))
        self.workers.append(_Worker(address, ours))
        self.host.lines_changed()
        self.host.send_after(WORKER_INIT_WAIT, WorkerInitOverdue(address))

    def _to_worker(self, worker: _Worker, message: Any) -> None:
        """On the worker's line, or through Thespian when the line does not take it."""
        if not worker.link.send(message):
            self.host.send(worker.address, Cast(message))

    def _read_link(self, worker: _Worker) -> None:
        """What waits on ``worker``'s line, in order (also before a message from it that
        came through Thespian, or its exit: those came later)."""
        for message in worker.link.receive():
            self._from_worker(message, worker)
        if worker.link.closed:
            self.host.lines_changed()

    def _worker_at(self, address: Any) -> _Worker | None:
        return next((w for w in self.workers if w.address == address), None)

    def _dispatch_backlog(self) -> None:
        """Give waiting turns (oldest first) to workers with room, while there are some."""
        while self.backlog:
            session, run = self.backlog[0]
            if run.outcome is not None or run.run_id not in self.runs:
                self.backlog.popleft()  # ended while it waited (cancelled, timed out)
                continue
            if self._choose_worker(session.key) is None:
                return
            self.backlog.popleft()
            self.runs.pop(run.run_id, None)
            self.dispatch(session, run)

    def _choose_worker(self, key: str) -> _Worker | None:
        """The worker for a turn of session ``key``; None when none may take it now. A
        chosen worker whose process is known to be gone (its exit not reported yet) is
        handled as gone, and another is chosen (one liveness check per turn)."""
        while True:
            worker = self._pick_worker(key)
            if worker is None or worker.pid is None or process_alive(worker.pid):
                return worker
            self._worker_gone(worker)

    def _pick_worker(self, key: str) -> _Worker | None:
        open_workers = [w for w in self.workers if not w.retired]
        limit = self.settings.runs_per_worker
        if limit:
            open_workers = [w for w in open_workers if len(w.runs) < limit]
            if not open_workers:
                if len([w for w in self.workers if not w.retired]) >= self.settings.max_run_workers:
                    return None
                return self._started()  # a fork on this turn's path: the pool grows to the load
        if not open_workers:  # only while stopping, or once the pool gave up
            return self._started()
        least = min(len(w.runs) for w in open_workers)
        holder = next((w for w in open_workers if key in w.known), None)
        if holder is not None and len(holder.runs) <= least + AFFINITY_SLACK:
            return holder
        return min(open_workers, key=lambda w: len(w.runs))

    def _started(self) -> _Worker | None:
        """A worker started now (None once the pool gave up)."""
        count = len(self.workers)
        self._start_worker()
        return self.workers[-1] if len(self.workers) > count else None

    def _stalled(self, run_id: str, address: Any) -> None:
        worker = self._worker_at(address)
        if worker is not None and run_id in worker.runs:
            self._retire(worker)

    def _retire(self, worker: _Worker) -> None:
        """No new turn for ``worker``; another takes its place; it is killed once no live
        turn is left on it."""
        if worker.retired:
            return
        worker.retired = True
        self.host.slog.warning("run worker retired: a turn it held did not stop", worker_pid=worker.pid)
        if not self.host.stopping:
            self._start_worker()
            self._dispatch_backlog()
        self._kill_if_done(worker)

    def _kill_if_done(self, worker: _Worker) -> None:
        if any(run_id in self.runs for run_id in worker.runs):
            return
        if worker.pid is not None:
            _kill(worker.pid)
        else:
            self.host.send(worker.address, Shutdown())

    def _worker_gone(self, worker: _Worker) -> None:
        """A worker's process is gone: its live runs fail; unless its death was asked
        for, it counts against the pool's restart intensity, and another takes its
        place (or, over the intensity, the pool gives up: see the module)."""
        if worker not in self.workers:
            return
        self._read_link(worker)  # what it sent before it died
        self.workers.remove(worker)
        if self.health is not None and worker.pid is not None:
            self.health.forget(worker.pid)
        worker.link.close()
        self.host.lines_changed()
        for run_id in sorted(worker.runs):
            live = self.runs.get(run_id)
            if live is not None:
                session, run = live
                session.worker_died(run, unresponsive=worker.unresponsive)
        if not worker.retired and not self.host.stopping:
            if self.intensity.add_restart(self.host.clock()):
                self._start_worker()
            else:
                self._give_up()
        if not self.host.stopping:
            self._dispatch_backlog()

    def _give_up(self) -> None:
        if self.exhausted is not None:
            return
        self.exhausted = (f"more than {self.settings.worker_intensity} run workers died within "
                          f"{self.settings.worker_period:g} s")
        self.host.slog.error("run workers keep dying: the partition exits", reason=self.exhausted)
        self.host.send_after(0, WorkersExhausted(self.exhausted))

    # -- messages from workers -----------------------------------------------------------------

    def _from_worker(self, message: Any, worker: _Worker) -> None:
        if isinstance(message, RunOutput):
            self._on_output(message, worker)
        elif isinstance(message, NeedHistory):
            self._resend(message.run_id, worker)

    def _on_output(self, output: RunOutput, worker: _Worker) -> None:
        if worker not in self.workers:
            return
        if output.outcome is not None:
            worker.runs.discard(output.run_id)
        live = self.runs.get(output.run_id)
        if live is not None and live[1].worker is worker:
            self.host.run_output(live[0], live[1], output)
        if output.barrier:  # the worker waits to run a tool that must not run twice: on record?
            now = self.runs.get(output.run_id)
            going_on = now is not None and now[1].worker is worker and now[1].outcome is None
            self._to_worker(worker, Committed(output.run_id, output.barrier, going_on))
        if worker.retired:
            self._kill_if_done(worker)
        elif output.outcome is not None and self.settings.runs_per_worker:
            worker.idle_since = self.host.clock()
            self._dispatch_backlog()
            if not self.shrink_armed and len(self._idle_workers()) > max(1, self.settings.run_workers):
                self.shrink_armed = True
                self.host.send_after(WORKER_IDLE_STOP, ShrinkWorkers())

    def _idle_workers(self) -> list[_Worker]:
        return [w for w in self.workers if not w.retired and not w.runs]

    def _shrink(self) -> None:
        """With ``runs_per_worker``: stop the workers idle for WORKER_IDLE_STOP beyond the
        ``run_workers`` most recently used idle ones (the pool shrinks as the load goes);
        come back while more are idle than that."""
        self.shrink_armed = False
        keep = max(1, self.settings.run_workers)
        idle = sorted(self._idle_workers(), key=lambda w: w.idle_since, reverse=True)
        now = self.host.clock()
        for worker in idle[keep:]:
            if now - worker.idle_since >= WORKER_IDLE_STOP:
                worker.retired = True  # no new turn, no replacement at its exit
                self.host.send(worker.address, Shutdown())
        if len(self._idle_workers()) > keep:
            self.shrink_armed = True
            self.host.send_after(WORKER_IDLE_STOP, ShrinkWorkers())

    def _resend(self, run_id: str, worker: _Worker) -> None:
        """A worker lacked the history a StartRun counted on: send it whole."""
        live = self.runs.get(run_id)
        if live is None or live[1].worker is not worker:
            return
        session, run = live
        events = session.events
        worker.known[session.key] = (len(events), events[-1].id if events else None)
        self._to_worker(worker, _start_run(session, run, None, events))

    def _worker_init_overdue(self, address: Any) -> None:
        worker = self._worker_at(address)
        if worker is not None and worker.pid is None:
            self.host.slog.warning("run worker never reported in; replacing it")
            worker.retired = True  # its replacement is started below, not again at its exit
            self._worker_gone(worker)
            self._start_worker()

    def _check_workers(self) -> None:
        """The workers' health check (supervision's ``HealthMonitor``): kill each worker
        that left a ping unanswered for the check's timeout (its runs end ``killed``,
        saying so, and another worker takes its place), ping the others, and come back."""
        assert self.health is not None
        now = self.host.clock()
        for pid in self.health.overdue(now):
            worker = next((w for w in self.workers if w.pid == pid), None)
            if worker is not None and worker.pid is not None:
                self.host.slog.error("run worker killed: " + self.health.check.describe(), worker_pid=pid,
                                     runs=len(worker.runs))
                worker.unresponsive = True
                _kill(worker.pid)
        for worker in self.workers:
            if worker.pid is not None:
                ping = self.health.ping(worker.pid, now)
                if ping is not None:
                    self.host.send(worker.address, ping)
        self.host.send_after(self.health.check.interval, CheckWorkers())


def _start_run(session: Session, run: SessionRun, known: tuple[int, str | None] | None,
               events: list[Any]) -> StartRun:
    return StartRun(run_id=run.run_id, invocation_id=run.invocation_id, app_name=session.app_name,
                    user_id=session.user_id, session_id=session.session_id, known=known, events=list(events),
                    state=session.fresh_state(), new_message=run.request.new_message,
                    run_config=run.request.run_config or RunConfig(), state_delta=run.request.state_delta,
                    live=run.request.live, resume=bool(run.request.resume), decisions=run.request.decisions)


def _with_line(settings: WorkerSettings, link_fd: int, inherited_fds: tuple[int, ...]) -> WorkerSettings:
    """A worker's settings, naming its end of its line and the ends it must close."""
    return replace(settings, link_fd=link_fd, inherited_fds=inherited_fds)


def _kill(pid: int) -> None:
    """SIGKILL ``pid`` if it is still our child (a pid may have been reused since)."""
    stat = proc_stat(pid)
    if stat is None or stat[1] != os.getpid():
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
