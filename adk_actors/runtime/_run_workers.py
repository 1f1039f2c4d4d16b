"""A session partition's run workers as the partition sees them: the processes of its
pool (``_run_pool``, a sibling process) connected to it on their lines (``_link``),
checked out one turn at a time (OTP's poolboy shape, the checkout side).

A worker says ``WorkerHello`` first on its line (its address, pid and pool); the
partition answers ``PartitionHello`` and from then on gives it turns. For each turn
(``dispatch``), in order:

1. **Choose a worker**: the one that received the session's history last, unless it
   runs more than ``AFFINITY_SLACK`` turns beyond the least busy one; with
   ``runs_per_worker`` one with room, else the turn waits in the backlog, oldest
   first, and the pool is asked for another worker (``GrowPool``, up to
   ``max_run_workers``; one is asked for ahead too, when the last room is taken). A
   chosen worker whose process is gone (its line's end not read yet) is handled as
   gone first. With no worker connected (the pool starting or restarting) the turn
   waits in the backlog for the first.
2. **Send** ``StartRun`` with only the events the worker lacks (``known``); a worker
   that lacks them after all answers ``NeedHistory`` and gets them all.
3. **Take its output** (on the line, or through Thespian: the line is read first) and
   hand it to the partition (``WorkerHost.run_output``); a ``barrier`` is answered
   ``Committed`` once the partition has committed the events before it.

A worker's line that ends (its process died) fails the turns it held (``killed``;
``RunActorUnresponsive`` when the pool had ``Condemned`` it). Replacing it is the
pool's job.

A turn that must stop (killed, cancelled, timed out, over its limit, its session
crashed or let go: ``abandon``) is told to (``Cancel``), and its session's terminal
message waits (OTP's ``shutdown`` with a timeout, then ``brutal_kill``): it is sent
once the worker reports the turn ended (it stopped at a step boundary), or once the
worker's process is gone. A worker that still runs the turn ``stop_grace`` seconds
after it was told is killed (SIGKILL): its pool starts another in its place
(``RetireWorker``) and kills it (``StopWorker``); should it still live another
``stop_grace`` later, the partition kills it itself. The other turns it held end
``interrupted`` (``RunWorkerKilled``: their apps may resume them, see durable runs).
No caller hears that a turn ended while its work may still go on. With
``runs_per_worker``, workers idle beyond ``run_workers`` for ``WORKER_IDLE_STOP`` are
stopped.
"""

from __future__ import annotations

import os
import select
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from supervision.lowlevel import open_pidfd, process_alive
from supervision.protocol import Cast

from .._types import LiveRequest, RunConfig
from ._link import RunLink, WorkerLineServer
from ._partition_timers import ShrinkWorkers, StalledRun
from ._run_protocol import (
    Cancel,
    Committed,
    Condemned,
    GrowPool,
    LiveSend,
    NeedHistory,
    PartitionAt,
    PartitionHello,
    RetireWorker,
    RunOutput,
    StartRun,
    StopWorker,
    WorkerHello,
)
from ._session import CANCEL_GRACE, Session, SessionRun

__all__ = ["AFFINITY_SLACK", "GROW_WAIT", "RunWorkers", "WorkerHost", "WorkerLimits"]

#: A turn goes to the worker holding its session's history unless that worker runs
#: more than this many turns beyond the least busy worker.
AFFINITY_SLACK = 2
#: With ``runs_per_worker``: a worker beyond ``run_workers`` idle this long is stopped.
WORKER_IDLE_STOP = 5.0
#: A worker asked of the pool (``GrowPool``) that has not said hello after this long is
#: asked for again (the pool may have restarted meanwhile).
GROW_WAIT = 5.0


@dataclass(frozen=True)
class WorkerLimits:
    """How busy the workers may be (see the module)."""

    run_workers: int = 2
    runs_per_worker: int = 0  # 0: no limit; 1: a process per turn
    max_run_workers: int = 32
    stop_grace: float = CANCEL_GRACE  # a turn that must stop may take this long before its worker is killed


class WorkerHost(Protocol):
    """What the workers' checkout needs from its partition."""

    myAddress: Any
    slog: Any

    @property
    def stopping(self) -> bool: ...

    def clock(self) -> float: ...

    def send(self, address: Any, message: Any) -> None: ...

    def send_after(self, seconds: float, payload: Any = None) -> None: ...

    def lines_changed(self) -> None:
        """The workers' lines changed (``RunWorkers.fds``): watch them again."""

    def run_output(self, session: Session, run: SessionRun, output: RunOutput) -> None:
        """Commit and relay the output of a live run (the partition's job)."""


@dataclass
class _Worker:
    address: Any
    link: RunLink
    pid: int
    pool: Any  # the pool that started it
    runs: set[str] = field(default_factory=set)  # run ids it was given and has not ended
    known: dict[str, tuple[int, str | None]] = field(default_factory=dict)  # session key -> history sent
    retired: bool = False  # no new turn (its pool was told)
    stop_asked: bool = False  # its pool was asked to end it
    idle_since: float = 0.0  # the partition's clock when its last turn ended
    unresponsive: bool = False  # condemned by its pool's health check
    killed: bool = False  # killed here: a turn it held did not stop within its grace


class RunWorkers:
    """The run workers connected to one partition (see the module). Every method runs
    on the partition's main thread."""

    def __init__(self, host: WorkerHost, line_path: str, limits: WorkerLimits) -> None:
        """Listen for the workers' lines at ``line_path`` (an OSError if it cannot)."""
        self.host = host
        self.limits = limits
        self.server = WorkerLineServer(line_path)
        self.hellos: list[RunLink] = []  # lines connected that have not said hello yet
        self.workers: list[_Worker] = []
        self.runs: dict[str, tuple[Session, SessionRun]] = {}  # live runs given to the workers (not ended)
        self.backlog: deque[tuple[Session, SessionRun]] = deque()  # turns waiting for a worker
        #: run id -> (its worker, what to do once it stopped there): turns told to stop (see abandon)
        self.stopping: dict[str, tuple[_Worker, Callable[[], None]]] = {}
        self.pool: Any = None  # the pool whose worker said hello last (greeted with PartitionAt)
        self.growing = 0  # workers asked of the pool that have not said hello yet
        self.grow_asked = 0.0  # when last asked
        self.shrink_armed = False

    # -- what the partition asks ---------------------------------------------------------------

    def fds(self) -> list[int]:
        """The listening socket and the lines, to watch."""
        return [self.server.fd, *(line.fd for line in self.hellos),
                *(w.link.fd for w in self.workers if not w.link.closed)]

    def live_pids(self) -> list[int]:
        return [w.pid for w in self.workers if not w.retired]

    def runs_by_worker(self) -> dict[int, list[str]]:
        return {w.pid: sorted(w.runs) for w in self.workers if not w.retired}

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
        limit = self.limits.runs_per_worker
        if limit and not any(len(w.runs) < limit for w in self.workers if not w.retired):
            self._grow()  # the last room is taken: the next turn's worker is asked for now

    def live(self, run: SessionRun, request: LiveRequest) -> None:
        if run.worker is not None:
            self.host.send(run.worker.address, Cast(LiveSend(run.run_id, request)))

    def cancel(self, run: SessionRun, reason: str) -> None:
        if run.worker is not None:
            self.host.send(run.worker.address, Cast(Cancel(run.run_id, reason)))

    def abandon(self, run: SessionRun, *, waited: bool, then: Callable[[], None]) -> None:
        """``run`` ended on its session without its worker's outcome (the worker was told
        to stop it, ``stop_grace`` ago if ``waited``). ``then`` (the run's terminal
        message) is called once the worker reports the run ended or its process is gone
        (now, if the worker does not hold the run); a worker that still holds it
        ``stop_grace`` after it was told (now, if ``waited``) is killed (see the module)."""
        worker = run.worker
        if not isinstance(worker, _Worker) or worker not in self.workers or run.run_id not in worker.runs:
            self._settle(then)
            return
        self.stopping[run.run_id] = (worker, then)
        if waited:
            self._stalled(run.run_id, worker.address)
        else:
            self.host.send_after(self.limits.stop_grace, StalledRun(run.run_id, worker.address))

    def run_ended(self, run: SessionRun) -> None:
        """``run`` ended on its session: no worker holds it for the partition any more."""
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
        """Take the new lines, the hellos and what waits on the lines among ``ready``
        (readable descriptors)."""
        if self.server.fd in ready:
            self.hellos.extend(self.server.accept())
            self.host.lines_changed()
        for line in list(self.hellos):
            if line.fd in ready:
                self._hello(line)
        for worker in list(self.workers):
            if not worker.link.closed and worker.link.fd in ready:
                self._read_link(worker)

    def on_info(self, message: Any, sender: Any) -> bool:
        """A Thespian message that may be the workers' or their pool's; True if it was."""
        if isinstance(message, (RunOutput, NeedHistory)):
            worker = self._worker_at(sender)
            if worker is not None:
                self._read_link(worker)  # what it sent on its line came first
                if worker in self.workers:
                    self._from_worker(message, worker)
            return True
        if isinstance(message, Condemned):
            worker = self._worker_at(message.address)
            if worker is not None:
                worker.unresponsive = True
                self._stop(worker)
            else:
                self.host.send(sender, StopWorker(message.address))
            return True
        return False

    def on_timer(self, payload: Any) -> bool:
        """A timer that may be the workers' (``_partition_timers``); True if it was."""
        if isinstance(payload, ShrinkWorkers):
            self._shrink()
        elif isinstance(payload, StalledRun):
            self._stalled(payload.run_id, payload.worker)
        else:
            return False
        return True

    def close(self) -> None:
        """The partition is exiting: its lines close (each worker then exits, and its
        pool starts another for the partition's next self)."""
        self.runs.clear()
        stopping, self.stopping = self.stopping, {}
        for _worker, then in stopping.values():  # their workers exit as their lines close
            self._settle(then)
        for line in self.hellos:
            line.close()
        for worker in self.workers:
            worker.link.close()
        self.server.close()

    # -- workers -------------------------------------------------------------------------------

    def _hello(self, line: RunLink) -> None:
        """A new line's first message: a worker's hello, answered with ours (and its pool
        greeted, if it is new); anything else (garbage included), or nothing before the
        line ends, closes it."""
        try:
            messages = line.receive()
        except Exception:  # not a pickle: not one of our workers
            messages = [None]
        if not messages and not line.closed:
            return
        self.hellos.remove(line)
        hello = messages[0] if messages else None
        if not isinstance(hello, WorkerHello) or not line.send(PartitionHello(self.host.myAddress)):
            line.close()
            self.host.lines_changed()
            return
        worker = _Worker(hello.address, line, hello.pid, hello.pool, idle_since=self.host.clock())
        self.workers.append(worker)
        if hello.pool != self.pool:  # a new pool (restarted): what the last one was asked for is lost
            self.pool, self.growing = hello.pool, 0
            self.host.send(hello.pool, PartitionAt(self.host.myAddress))
        self.growing = max(0, self.growing - 1)
        self.host.lines_changed()
        for message in messages[1:]:
            self._from_worker(message, worker)
        if not self.host.stopping:
            self._dispatch_backlog()

    def _to_worker(self, worker: _Worker, message: Any) -> None:
        """On the worker's line, or through Thespian when the line does not take it."""
        if not worker.link.send(message):
            self.host.send(worker.address, Cast(message))

    def _read_link(self, worker: _Worker) -> None:
        """What waits on ``worker``'s line, in order (also before a message from it that
        came through Thespian, or its exit: those came later)."""
        for message in worker.link.receive():
            self._from_worker(message, worker)
        if worker.link.closed and worker in self.workers:  # its process is gone
            self._remove(worker)

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
        chosen worker whose process is known to be gone (its line's end not read yet) is
        handled as gone, and another is chosen (one liveness check per turn)."""
        while True:
            worker = self._pick_worker(key)
            if worker is None or process_alive(worker.pid):
                return worker
            self._worker_gone(worker)

    def _pick_worker(self, key: str) -> _Worker | None:
        open_workers = [w for w in self.workers if not w.retired]
        limit = self.limits.runs_per_worker
        if limit:
            open_workers = [w for w in open_workers if len(w.runs) < limit]
        if not open_workers:
            self._grow()
            return None
        least = min(len(w.runs) for w in open_workers)
        holder = next((w for w in open_workers if key in w.known), None)
        if holder is not None and len(holder.runs) <= least + AFFINITY_SLACK:
            return holder
        return min(open_workers, key=lambda w: len(w.runs))

    def _grow(self) -> None:
        """With ``runs_per_worker``: ask the pool for one more worker, unless one asked
        for is on its way (asked within ``GROW_WAIT``) or there are ``max_run_workers``."""
        if not self.limits.runs_per_worker or self.pool is None or self.host.stopping:
            return
        now = self.host.clock()
        if self.growing and now - self.grow_asked < GROW_WAIT:
            return
        if len([w for w in self.workers if not w.retired]) >= self.limits.max_run_workers:
            return
        self.growing, self.grow_asked = 1, now
        self.host.send(self.pool, GrowPool())

    def _stalled(self, run_id: str, address: Any) -> None:
        """Run ``run_id`` was told to stop ``stop_grace`` ago: if ``address``'s worker
        still runs it, it is killed by its pool; if it was asked of the pool a grace ago
        already and still lives, it is killed here."""
        worker = self._worker_at(address)
        if worker is None or run_id not in worker.runs:
            return
        if worker.killed:
            if process_alive(worker.pid):
                self.host.slog.error("run worker not killed by its pool: killed here", worker_pid=worker.pid)
                try:
                    os.kill(worker.pid, signal.SIGKILL)
                except OSError:
                    pass
            return
        self._kill(worker, run_id)

    def _kill(self, worker: _Worker, run_id: str) -> None:
        """Kill ``worker``: a turn it holds did not stop within its grace. Its pool starts
        another in its place and kills it; its line's end then ends its turns (see
        ``_remove``). Checked again ``stop_grace`` later (``_stalled``)."""
        worker.killed = True
        self.host.slog.warning("run worker killed: a turn it held did not stop within its grace",
                               worker_pid=worker.pid, run=run_id, grace=self.limits.stop_grace,
                               other_runs=len(worker.runs) - 1)
        if not worker.retired:
            worker.retired = True
            if not self.host.stopping:
                self.host.send(worker.pool, RetireWorker(worker.address))
        worker.stop_asked = True
        self.host.send(worker.pool, StopWorker(worker.address, True))
        self.host.send_after(self.limits.stop_grace, StalledRun(run_id, worker.address))

    def _settle(self, then: Callable[[], None]) -> None:
        """Call ``then`` (a stopped turn's end); a failure is logged, the partition goes on."""
        try:
            then()
        except Exception as exc:
            self.host.slog.error("a stopped run's end failed", error=f"{type(exc).__name__}: {exc}", exc_info=True)

    def _kill_if_done(self, worker: _Worker) -> None:
        if not any(run_id in self.runs for run_id in worker.runs):
            self._stop(worker)

    def _stop(self, worker: _Worker, *, kill: bool = True) -> None:
        """Ask ``worker``'s pool to end it (once)."""
        if not worker.stop_asked:
            worker.stop_asked = True
            self.host.send(worker.pool, StopWorker(worker.address, kill))

    def _worker_gone(self, worker: _Worker) -> None:
        """A worker's process is gone (its line ended): its live runs fail, and the
        turns waiting go to the others (its pool replaces it)."""
        self._read_link(worker)  # what it sent before it died (its line's end removes it)
        if worker in self.workers:
            self._remove(worker)

    def _remove(self, worker: _Worker) -> None:
        self.workers.remove(worker)
        worker.link.close()
        self.host.lines_changed()
        _wait_exited(worker.pid)  # its line ends as it exits: its turns' ends are told once it has
        for run_id in sorted(worker.runs):
            stopping = self.stopping.pop(run_id, None)
            if stopping is not None:  # told to stop: its process is gone now
                self._settle(stopping[1])
                continue
            live = self.runs.get(run_id)
            if live is not None:
                session, run = live
                session.worker_died(run, unresponsive=worker.unresponsive, worker_killed=worker.killed)
        if not self.host.stopping:
            self._dispatch_backlog()

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
            stopping = self.stopping.get(output.run_id)
            if stopping is not None and stopping[0] is worker:  # it stopped, as it was told
                del self.stopping[output.run_id]
                self._settle(stopping[1])
        live = self.runs.get(output.run_id)
        if live is not None and live[1].worker is worker:
            self.host.run_output(live[0], live[1], output)
        if output.barrier:  # the worker waits to run a tool that must not run twice: on record?
            now = self.runs.get(output.run_id)
            going_on = now is not None and now[1].worker is worker and now[1].outcome is None
            self._to_worker(worker, Committed(output.run_id, output.barrier, going_on))
        if worker.retired:
            self._kill_if_done(worker)
        elif output.outcome is not None and self.limits.runs_per_worker:
            worker.idle_since = self.host.clock()
            self._dispatch_backlog()
            if not self.shrink_armed and len(self._idle_workers()) > max(1, self.limits.run_workers):
                self.shrink_armed = True
                self.host.send_after(WORKER_IDLE_STOP, ShrinkWorkers())

    def _idle_workers(self) -> list[_Worker]:
        return [w for w in self.workers if not w.retired and not w.runs]

    def _shrink(self) -> None:
        """With ``runs_per_worker``: stop the workers idle for WORKER_IDLE_STOP beyond the
        ``run_workers`` most recently used idle ones (the pool shrinks as the load goes);
        come back while more are idle than that."""
        self.shrink_armed = False
        keep = max(1, self.limits.run_workers)
        idle = sorted(self._idle_workers(), key=lambda w: w.idle_since, reverse=True)
        now = self.host.clock()
        for worker in idle[keep:]:
            if now - worker.idle_since >= WORKER_IDLE_STOP:
                worker.retired = True  # no new turn; its pool starts none in its place
                self._stop(worker, kill=False)
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


def _start_run(session: Session, run: SessionRun, known: tuple[int, str | None] | None,
               events: list[Any]) -> StartRun:
    return StartRun(run_id=run.run_id, invocation_id=run.invocation_id, app_name=session.app_name,
                    user_id=session.user_id, session_id=session.session_id, known=known, events=list(events),
                    state=session.fresh_state(), new_message=run.request.new_message,
                    run_config=run.request.run_config or RunConfig(), state_delta=run.request.state_delta,
                    live=run.request.live, resume=bool(run.request.resume), decisions=run.request.decisions)


#: How long a killed worker whose line has ended may take to finish exiting.
EXIT_WAIT = 1.0


def _wait_exited(pid: int) -> None:
    """Wait (``EXIT_WAIT`` at most) until process ``pid`` has exited. A dying worker's
    line ends while the kernel tears the process down (its descriptors are closed
    before it is a zombie): whether it was killed for a turn that would not stop, by
    its pool's health check or from outside, its turns' callers are told only once it
    is dead."""
    pidfd = open_pidfd(pid)
    if pidfd is None:  # gone already (or no pidfds here)
        return
    try:
        select.select([pidfd], [], [], EXIT_WAIT)
    finally:
        os.close(pidfd)
