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
crashed or let go) is told to (``Cancel``); its session's terminal message waits for
the worker to stop it or die, and a worker that does not stop it in time is killed
(``_worker_stops.WorkerStops.abandon``, inherited). What the checkout keeps of each
worker, and needs of its partition, is in ``_worker_state``. With
``runs_per_worker``, workers idle beyond ``run_workers`` for ``WORKER_IDLE_STOP`` are
stopped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from supervision.protocol import Cast

from .._types import LiveRequest, RunConfig
from ._link import RunLink, WorkerLineServer
from ._partition_timers import ShrinkWorkers, SlowToStop, StalledRun
from ._proc_watch import ProcessWatch
from ._run_protocol import (
    Cancel,
    Committed,
    Condemned,
    GrowPool,
    LiveSend,
    NeedHistory,
    PartitionAt,
    PartitionHello,
    RunOutput,
    StartRun,
    StopWorker,
    WorkerHello,
)
from ._session import Session, SessionRun
from ._worker_state import Worker, WorkerHost, WorkerLimits
from ._worker_stops import WorkerStops, wait_exited

__all__ = ["AFFINITY_SLACK", "GROW_WAIT", "RunWorkers", "WorkerHost", "WorkerLimits"]

#: A turn goes to the worker holding its session's history unless that worker runs
#: more than this many turns beyond the least busy worker.
AFFINITY_SLACK = 2
#: With ``runs_per_worker``: a worker beyond ``run_workers`` idle this long is stopped.
WORKER_IDLE_STOP = 5.0
#: A worker asked of the pool (``GrowPool``) that has not said hello after this long is
#: asked for again (the pool may have restarted meanwhile).
GROW_WAIT = 5.0


class RunWorkers(WorkerStops):
    """The run workers connected to one partition (see the module). Every method runs
    on the partition's main thread."""

    def __init__(self, host: WorkerHost, line_path: str, limits: WorkerLimits) -> None:
        """Listen for the workers' lines at ``line_path`` (an OSError if it cannot)."""
        self.host = host
        self.limits = limits
        self.server = WorkerLineServer(line_path)
        self.hellos: list[RunLink] = []  # lines connected that have not said hello yet
        self.workers: list[Worker] = []
        #: worker pid -> the worker and its /proc files, held open from its first turn until it is
        #: gone (``_proc_watch``)
        self.watches: dict[int, tuple[Worker, ProcessWatch]] = {}
        self.runs: dict[str, tuple[Session, SessionRun]] = {}  # live runs given to the workers (not ended)
        self.backlog: deque[tuple[Session, SessionRun]] = deque()  # turns waiting for a worker
        #: run id -> (its worker, what to do once it stopped there): turns told to stop (see abandon)
        self.stopping: dict[str, tuple[Worker, Callable[[], None]]] = {}
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
        elif isinstance(payload, SlowToStop):
            self._slow_to_stop(payload.run_id, payload.worker)
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
            self._forget_process(worker)
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
        worker = Worker(hello.address, line, hello.pid, hello.pool, idle_since=self.host.clock())
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

    def _to_worker(self, worker: Worker, message: Any) -> None:
        """On the worker's line, or through Thespian when the line does not take it."""
        if not worker.link.send(message):
            self.host.send(worker.address, Cast(message))

    def _read_link(self, worker: Worker) -> None:
        """What waits on ``worker``'s line, in order (also before a message from it that
        came through Thespian, or its exit: those came later)."""
        for message in worker.link.receive():
            self._from_worker(message, worker)
        if worker.link.closed and worker in self.workers:  # its process is gone
            self._remove(worker)

    def _dispatch_backlog(self) -> None:
        """Give waiting turns (oldest first) to workers with room, while there are some.
        Choosing a worker may find one dead, whose removal hands the backlog out itself:
        then this goes on from the backlog as it is now, not with the turn it looked at."""
        while self.backlog:
            head = self.backlog[0]
            session, run = head
            if run.outcome is not None or run.run_id not in self.runs:
                self.backlog.popleft()  # ended while it waited (cancelled, timed out)
                continue
            if self._choose_worker(session.key) is None:
                return
            if not self.backlog or self.backlog[0] is not head:  # handed out meanwhile (_remove)
                continue
            self.backlog.popleft()
            self.runs.pop(run.run_id, None)
            self.dispatch(session, run)

    def _choose_worker(self, key: str) -> Worker | None:
        """The worker for a turn of session ``key``; None when none may take it now. A
        chosen worker whose process is known to be gone (its line's end not read yet), or
        killed and not yet exited (a SIGKILL pending), is handled as gone, and another is
        chosen (one liveness check per turn, from its /proc files held open: ``_proc_watch``)."""
        while True:
            worker = self._pick_worker(key)
            if worker is None or self._may_take_turns(worker):
                return worker
            self._worker_gone(worker)

    def _may_take_turns(self, worker: Worker) -> bool:
        """``worker``'s process runs, and no SIGKILL is pending on it or acting on it."""
        held = self.watches.get(worker.pid)
        if held is None or held[0] is not worker:  # (a pid reused by a new worker: not the old one's files)
            if held is not None:
                held[1].close()
            held = self.watches[worker.pid] = (worker, ProcessWatch(worker.pid))
        return held[1].may_take_turns()

    def _forget_process(self, worker: Worker) -> None:
        """``worker`` is gone: its /proc files are closed."""
        held = self.watches.get(worker.pid)
        if held is not None and held[0] is worker:
            del self.watches[worker.pid]
            held[1].close()

    def _pick_worker(self, key: str) -> Worker | None:
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

    def _worker_gone(self, worker: Worker) -> None:
        """A worker's process is gone (its line ended): its live runs fail, and the
        turns waiting go to the others (its pool replaces it)."""
        self._read_link(worker)  # what it sent before it died (its line's end removes it)
        if worker in self.workers:
            self._remove(worker)

    def _remove(self, worker: Worker) -> None:
        self.workers.remove(worker)
        worker.link.close()
        self._forget_process(worker)
        self.host.lines_changed()
        wait_exited(worker.pid)  # its line ends as it exits: its turns' ends are told once it has
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

    def _from_worker(self, message: Any, worker: Worker) -> None:
        if isinstance(message, RunOutput):
            self._on_output(message, worker)
        elif isinstance(message, NeedHistory):
            self._resend(message.run_id, worker)

    def _on_output(self, output: RunOutput, worker: Worker) -> None:
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

    def _idle_workers(self) -> list[Worker]:
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

    def _resend(self, run_id: str, worker: Worker) -> None:
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
                    state=session.fresh_state(), turn=run.turn, run_config=run.request.run_config or RunConfig())
