"""Stopping a turn on a run worker: :class:`WorkerStops`, which ``_run_workers.RunWorkers`` inherits.

A turn that must stop (killed, cancelled, timed out, over its limit, its session
crashed or let go: ``abandon``) has been told to (``Cancel``), and its session's
terminal message waits (OTP's ``shutdown`` with a timeout, then ``brutal_kill``). In
order:

1. the terminal message is sent once the worker reports the turn ended (it stopped at
   a step boundary), or once the worker's process is gone (at once if the worker does
   not hold the turn);
2. a worker that still runs the turn ``STOP_NOTICE`` seconds after it was told (a tool
   that does not return) takes no new turn: its pool starts another in its place
   (``RetireWorker``), so the turns that come meanwhile are not on a worker that may be
   killed; it is stopped once its turns have ended;
3. a worker that still runs the turn ``stop_grace`` seconds after it was told is
   killed (SIGKILL): its pool starts another in its place (``RetireWorker``) and kills
   it (``StopWorker``);
4. should it still live another ``stop_grace`` later, the partition kills it itself.

The other turns it held end ``interrupted`` (``RunWorkerKilled``: their apps may
resume them, see durable runs) once its line has ended and its process has exited
(:func:`wait_exited`). No caller hears that a turn ended while its work may still go
on. A terminal message that fails is logged; the partition goes on.
"""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable
from typing import Any

from supervision.lowlevel import open_pidfd, process_alive

from ._partition_timers import SlowToStop, StalledRun
from ._run_protocol import RetireWorker, StopWorker
from ._session import Session, SessionRun
from ._worker_state import Worker, WorkerHost, WorkerLimits

__all__ = ["EXIT_WAIT", "STOP_NOTICE", "WorkerStops", "wait_exited"]

#: How long a turn told to stop may still run on its worker before that worker takes no
#: new turn (at most half the host's ``run_stop_grace``). A turn stops at its next step
#: boundary, within milliseconds unless a tool is running.
STOP_NOTICE = 0.5


class WorkerStops:
    """The stopping of turns on the partition's workers (see the module). Every method
    runs on the partition's main thread."""

    host: WorkerHost
    limits: WorkerLimits
    workers: list[Worker]
    runs: dict[str, tuple[Session, SessionRun]]  # live runs given to the workers (not ended)
    #: run id -> (its worker, what to do once it stopped there): turns told to stop (see abandon)
    stopping: dict[str, tuple[Worker, Callable[[], None]]]

    def abandon(self, run: SessionRun, *, waited: bool, then: Callable[[], None]) -> None:
        """``run`` ended on its session without its worker's outcome (the worker was told
        to stop it, ``stop_grace`` ago if ``waited``). ``then`` (the run's terminal
        message) is called once the worker reports the run ended or its process is gone
        (now, if the worker does not hold the run); a worker that still holds it
        ``stop_grace`` after it was told (now, if ``waited``) is killed (see the module)."""
        worker = run.worker
        if not isinstance(worker, Worker) or worker not in self.workers or run.run_id not in worker.runs:
            self._settle(then)
            return
        self.stopping[run.run_id] = (worker, then)
        if waited:
            self._stalled(run.run_id, worker.address)
        else:
            self.host.send_after(min(STOP_NOTICE, self.limits.stop_grace / 2), SlowToStop(run.run_id, worker.address))
            self.host.send_after(self.limits.stop_grace, StalledRun(run.run_id, worker.address))

    def _worker_at(self, address: Any) -> Worker | None:
        return next((w for w in self.workers if w.address == address), None)

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

    def _slow_to_stop(self, run_id: str, address: Any) -> None:
        """Run ``run_id`` was told to stop ``STOP_NOTICE`` ago: if ``address``'s worker still
        runs it, the worker is retired (its pool starts another; no new turn goes to it)
        and stopped once its turns have ended, unless its grace runs out first."""
        worker = self._worker_at(address)
        if worker is None or run_id not in worker.runs or worker.retired:
            return
        self.host.slog.info("run worker retired: a turn told to stop still runs on it",
                            worker_pid=worker.pid, run=run_id, other_runs=len(worker.runs) - 1)
        self._retire(worker)

    def _retire(self, worker: Worker) -> None:
        """No new turn for ``worker``; its pool starts another in its place (not while the
        partition stops)."""
        if not worker.retired:
            worker.retired = True
            if not self.host.stopping:
                self.host.send(worker.pool, RetireWorker(worker.address))

    def _kill(self, worker: Worker, run_id: str) -> None:
        """Kill ``worker``: a turn it holds did not stop within its grace. Its pool starts
        another in its place and kills it; its line's end then ends its turns (see
        ``_remove``). Checked again ``stop_grace`` later (``_stalled``)."""
        worker.killed = True
        self.host.slog.warning("run worker killed: a turn it held did not stop within its grace",
                               worker_pid=worker.pid, run=run_id, grace=self.limits.stop_grace,
                               other_runs=len(worker.runs) - 1)
        self._retire(worker)
        worker.stop_asked = True
        self.host.send(worker.pool, StopWorker(worker.address, True))
        self.host.send_after(self.limits.stop_grace, StalledRun(run_id, worker.address))

    def _settle(self, then: Callable[[], None]) -> None:
        """Call ``then`` (a stopped turn's end); a failure is logged, the partition goes on."""
        try:
            then()
        except Exception as exc:
            self.host.slog.error("a stopped run's end failed", error=f"{type(exc).__name__}: {exc}", exc_info=True)

    def _kill_if_done(self, worker: Worker) -> None:
        """Stop retired ``worker`` once it holds no live turn and no turn told to stop is
        still within its grace on it (that one ends by stopping, or by ``_stalled``)."""
        if any(run_id in self.runs for run_id in worker.runs):
            return
        if any(holder is worker for holder, _ in self.stopping.values()):
            return
        self._stop(worker)

    def _stop(self, worker: Worker, *, kill: bool = True) -> None:
        """Ask ``worker``'s pool to end it (once)."""
        if not worker.stop_asked:
            worker.stop_asked = True
            self.host.send(worker.pool, StopWorker(worker.address, kill))


#: How long a killed worker whose line has ended may take to finish exiting.
EXIT_WAIT = 1.0


def wait_exited(pid: int) -> None:
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
