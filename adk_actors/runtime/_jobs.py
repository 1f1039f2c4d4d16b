"""The host's background jobs: the ``jobs`` actor (a child of the root) and its executors.

:class:`JobQueueActor` keeps the jobs in their store (``jobs.db``, :mod:`adk_actors.jobs`)
and answers the job requests below. In order, at its start:

1. jobs left ``executing`` by an earlier instance are attempts cut short: a
   function's executor died with it (an executor dies with its parent), so its
   attempt is failed at once (``interrupted``; retried after its backoff); an agent
   run may still go on on its session: it is followed (``FollowRun``) and cancelled,
   and its attempt is failed only once its end comes (the session sends it once the
   run stopped, or once its run worker, killed past the host's ``run_stop_grace``, is
   dead), so that no job ever runs twice at once;
2. it looks the session supervisor up in the host's registry, and ticks.

At each tick (every ``JobsConfig.tick`` s, and at once after an enqueue or when the
earliest scheduled job is due) it: fails the attempts whose lease (``timeout``) ran out
(a function's executor is killed at once; an agent's run is cancelled, and its attempt
failed once the run's end says it stopped); enqueues the cron
schedules that came due (each due time once: its unique key); prunes finished jobs
older than ``prune_after``; then claims due jobs of each queue up to its concurrency
and starts them:

* a **function** job goes to an idle executor (:class:`JobExecutor`, a child process,
  started as needed, up to the queues' total concurrency), which calls it in a thread
  and sends back what came of it, which this actor stores (the store's one writer);
  an executor that dies (kill -9) fails its attempt;
* an **agent** job is a run on its session (a new ``<job id>`` session unless one is
  named), sent with the message API; its ``RunDone`` completes the attempt (the
  result: the session and the final answer's text), its ``RunFailed`` or an error
  reply fails it.

Requests (``Call``): :class:`EnqueueJob` and :class:`EnqueueJobs` (validated first: a
typed ``invalid_request`` and nothing stored), :class:`GetJob`, :class:`ListJobs`, :class:`CancelJob` (an
executing one is stopped), :class:`RetryJob`, :class:`DiscardJob`. Each names the
user it acts for; None is the operator's (every user's jobs).

The parts: the agent jobs' runs on sessions and the store's writes of every attempt's
outcome (``_job_runs.AgentJobRuns``, which this actor inherits), the executors'
process (``_job_executor``); here, the requests, the tick, and handing function jobs
to executors.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, replace
from typing import Any

from supervision import CallerRef, CallError
from supervision.lowlevel import WallClock
from supervision.protocol import Call, Cast, ErrorReply, Init, InitOk, Reply, UnknownRequest

from .. import telemetry
from .._exceptions import InvalidRequestError, NotFoundError
from .._validate import check_message, invalid
from ..engine import AppCatalog
from ..jobs import (
    CancelJob,
    CronEntry,
    DiscardJob,
    EnqueueJob,
    EnqueueJobs,
    GetJob,
    Job,
    JobsConfig,
    ListJobs,
    RetryJob,
    cron_problem,
    next_cron_time,
    validate_spec,
)
from ..messages import (
    AdkEvent,
    CancelRun,
    RunDone,
    RunFailed,
    RunMessages,
)
from ..store import JobStore
from ._job_calls import JobsArgs
from ._job_executor import Execute, ExecutorArgs, Finished, JobExecutor
from ._job_runs import (
    INTERRUPTED,
    LOOK_UP,
    STOP_CHECK,
    AgentJobRuns,
    AgentRun,
    job_metadata,
    run_id_of,
    session_of,
)
from ._link import RunLink, fork_linked

__all__ = ["JobExecutor", "JobQueueActor", "check_jobs"]


def check_jobs(config: JobsConfig | None, apps: dict[str, str], agents_dir: str | None) -> None:
    """Check a host's jobs before it starts: each cron entry's job must be able to run
    on a host serving ``apps`` and the YAML apps of ``agents_dir`` (:meth:`JobsConfig.check`:
    its app, its function importable, its queue). :class:`ConfigError` naming the first
    entry that cannot, and its key; nothing when jobs are off (``config`` None)."""
    if config is not None:
        config.check(AppCatalog(dict(apps), agents_dir).names())


# -- between the queue and its executors -----------------------------------------------------


@dataclass
class _Executor:
    address: Any
    link: RunLink
    pid: int | None = None
    job: Job | None = None


_TICK = "tick"
#: On a shared queue: how long past its lease another host's attempt is left alone
#: before it is given up as its host's death (the hosts' clocks may differ a little).
ABANDONED_GRACE = 5.0


class JobQueueActor(AgentJobRuns):
    """See the module."""

    check_request = staticmethod(check_message)

    def init(self, args: JobsArgs) -> None:
        self.config = args.config
        self.store_path = args.path
        self.store = JobStore(args.path, WallClock(), node=args.node)
        self.catalog = AppCatalog(dict(args.apps), args.agents_dir)  # YAML apps may come and go
        self.executors: list[_Executor] = []
        self.waiting: list[Job] = []  # function jobs claimed, waiting for an idle executor
        self.runs: dict[str, AgentRun] = {}  # run id -> the agent job it runs
        self.refs: dict[str, str] = {}  # call ref -> run id
        self.sessions: Any = None
        self.cron_checked = time.time()
        self.cron_skipped: dict[str, str] = {}  # cron entry name -> why it cannot run (logged once)
        self.ticks = 0
        self.tick_due: float | None = None
        self.orphaned: list[tuple[str, str, str, str]] = []  # (app, user, session, run id) to follow and cancel
        #: run id -> (its agent job, why its attempt fails): attempts failed once their run's end comes
        self.ending_runs: dict[str, tuple[Job, str]] = {}
        self.ending_text: dict[str, str] = {}  # run id -> the last answer text a run being stopped gave
        for job in self.store.executing():
            if job.kind == "agent":
                self.orphaned.append((job.payload["app_name"], job.user_id, session_of(job), run_id_of(job)))
                self.ending_runs[run_id_of(job)] = (job, INTERRUPTED)
            else:
                self._fail(job.id, job.attempt, INTERRUPTED)
        self.stop_check_armed = False
        self._arm_stop_check()
        self._look_up_sessions()
        self._tick_in(0.0)

    # -- requests -----------------------------------------------------------------------------

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        try:
            return self._answer(request)
        except InvalidRequestError as exc:
            raise invalid(str(exc)) from None
        except NotFoundError as exc:
            raise CallError(str(exc), code="not_found") from None

    def _answer(self, request: Any) -> Any:
        if isinstance(request, EnqueueJob):
            validate_spec(request.spec, apps=set(self.catalog.names()), queues=set(self.config.queues))
            spec = request.spec
            job, inserted = self.store.insert(spec, default_backoff=self.config.backoff_of(spec.queue))
            if inserted and job.state == "available":
                self._claim_and_start()
            elif inserted:
                self._tick_in(job.scheduled_at - time.time())
            return job
        if isinstance(request, EnqueueJobs):
            queues, apps = set(self.config.queues), set(self.catalog.names())
            for spec in request.specs:
                validate_spec(spec, apps=apps, queues=queues)
            stored = self.store.insert_many(list(request.specs), backoff_of=self.config.backoff_of)
            self._claim_and_start()
            return stored
        if isinstance(request, GetJob):
            return self.store.get(request.job_id, request.user_id)
        if isinstance(request, ListJobs):
            return self.store.list(user_id=request.user_id, queue=request.queue, state=request.state,
                                   limit=request.limit)
        if isinstance(request, CancelJob):
            job = self.store.cancel(request.job_id, request.user_id)
            self._stop(job.id, "cancelled")
            return job
        if isinstance(request, RetryJob):
            job = self.store.retry(request.job_id, request.user_id)
            self._claim_and_start()
            return job
        if isinstance(request, DiscardJob):
            return self.store.discard(request.job_id, request.user_id)
        if request == "executors":  # their pids, for the tree's walk (chaos, status)
            return [e.pid for e in self.executors if e.pid is not None]
        raise UnknownRequest(f"the jobs actor does not handle {type(request).__name__}")

    # -- the tick -----------------------------------------------------------------------------

    def _tick_in(self, seconds: float) -> None:
        """A tick ``seconds`` from now, unless one is due sooner."""
        due = time.time() + max(seconds, 0.0)
        if self.tick_due is not None and self.tick_due <= due:
            return
        self.tick_due = due
        self.send_after(max(seconds, 0.0), _TICK)

    def handle_timeout(self, payload: Any) -> None:
        if payload == LOOK_UP:
            self._look_up_sessions()
        if payload == STOP_CHECK:
            self.stop_check_armed = False
            self._recheck_stopping()
        if payload != _TICK:
            return
        if self.tick_due is not None and time.time() + 0.0005 < self.tick_due:
            return  # an earlier tick's timer: a later one is armed
        self.tick_due = None
        self.ticks += 1
        self._expire_leases()
        self._enqueue_cron()
        if self.ticks % 60 == 1:
            self.store.prune(self.config.prune_after)
        self._claim_and_start()

    def _claim_and_start(self) -> None:
        """Claim the due jobs each queue has room for and start them; then arm the tick
        for the earliest job due later (or ``tick`` s from now)."""
        for name, limit in self.config.queues.items():
            busy = sum(1 for job in [*self._attempts(), *(j for j, _ in self.ending_runs.values())] if job.queue == name)
            if busy < limit:
                for job in self.store.claim(name, limit - busy):
                    self._start(job)
        upcoming = self.store.next_due(after=time.time())
        self._tick_in(self.config.tick if upcoming is None else min(self.config.tick, upcoming - time.time()))

    def _attempts(self) -> list[Job]:
        """The attempts this actor is running (or about to)."""
        return ([e.job for e in self.executors if e.job is not None] + list(self.waiting)
                + [run.job for run in self.runs.values()])

    def _expire_leases(self) -> None:
        """Give up this host's attempts past their lease (timed out), and, on a queue
        several hosts share, the attempts of hosts that died during them (their lease
        ran out ``ABANDONED_GRACE`` seconds ago): retried like any failed attempt."""
        now = time.time()
        for job in self._attempts():
            if job.lease_until is not None and job.lease_until < now:
                run = next((r for r in self.runs.values() if r.job.id == job.id), None)
                if run is not None and self.sessions is not None:  # failed once its run stopped
                    self.ending_runs[run.run_id] = (job, f"timed out after {job.timeout} s")
                    self._stop(job.id, "timed out")
                    self._arm_stop_check()
                    continue
                self._fail(job.id, job.attempt, f"timed out after {job.timeout} s")
                self._stop(job.id, "timed out")
        for job in self.store.abandoned(ABANDONED_GRACE):
            self._fail(job.id, job.attempt, f"interrupted: its host ({job.node}) stopped during this attempt")

    def _enqueue_cron(self) -> None:
        """Enqueue each cron entry's job once for each of its due times since the last
        tick (its unique key: the entry and the due time). An entry whose job cannot run
        (checked at the host's start, but a YAML app may have gone since) or whose
        schedule names no time is skipped, with an error in the log once: nothing that
        cannot run is stored, and the actor goes on."""
        now = time.time()
        apps, queues = set(self.catalog.names()), set(self.config.queues)
        for entry in self.config.cron:
            try:
                problem = cron_problem(entry, apps=apps, queues=queues)
                if problem is not None:
                    raise InvalidRequestError(problem)
                due = next_cron_time(entry.expression, self.cron_checked, entry.timezone)
                while due <= now:
                    self._enqueue_due(entry, due)
                    due = next_cron_time(entry.expression, due, entry.timezone)
            except InvalidRequestError as exc:
                if self.cron_skipped.get(entry.name) != str(exc):
                    self.log.error("cron %r is skipped: %s", entry.name, exc)
                self.cron_skipped[entry.name] = str(exc)
            else:
                self.cron_skipped.pop(entry.name, None)
        self.cron_checked = now

    def _enqueue_due(self, entry: CronEntry, due: float) -> None:
        spec = replace(entry.spec, unique_key=f"cron:{entry.name}:{due:.0f}", unique_period=366 * 86_400.0,
                       meta={**entry.spec.meta, "cron": entry.name})
        self.store.insert(spec, default_backoff=self.config.backoff_of(spec.queue))

    # -- starting and stopping attempts ---------------------------------------------------------

    def _start(self, job: Job) -> None:
        telemetry.execute(("adk", "job", "start"), {"system_time": time.time(),
                                                    "queue_time": max(0.0, time.time() - job.scheduled_at)},
                          job_metadata(job))
        if job.kind == "function":
            self.waiting.append(job)
            self._hand_out()
        else:
            self._start_run(job)

    def _hand_out(self) -> None:
        """Give waiting function jobs to idle executors, starting executors as needed."""
        for executor in self.executors:
            if executor.job is None and executor.pid is not None and self.waiting:
                executor.job = self.waiting.pop(0)
                if not executor.link.send(Execute(executor.job)):
                    self.send(executor.address, Cast(Execute(executor.job)))
        starting = sum(1 for e in self.executors if e.pid is None)
        room = sum(self.config.queues.values()) - len(self.executors)
        for _ in range(min(len(self.waiting) - starting, room)):
            self._start_executor()

    def _start_executor(self) -> None:
        """Fork an executor with a direct line to this actor (``_link``: a job's two
        messages skip Thespian's transport, which cost most of a no-op job)."""
        address, ours, their_fd = fork_linked(self, JobExecutor)
        inherited = (ours.fd, *(e.link.fd for e in self.executors if not e.link.closed))
        self.send(address, Init(args=ExecutorArgs(their_fd, inherited), supervisor=self.myAddress))
        self.executors.append(_Executor(address, ours))
        self._watch_links()

    def _watch_links(self) -> None:
        self.watch_fds([e.link.fd for e in self.executors if not e.link.closed])

    def handle_watch(self, ready: list[int]) -> None:
        for executor in list(self.executors):
            if not executor.link.closed and executor.link.fd in ready:
                for message in executor.link.receive():
                    self.handle_cast(message)

    def _stop(self, job_id: str, why: str) -> None:
        """Stop the attempt of job ``job_id`` if one runs here (its outcome is already stored)."""
        self.waiting = [job for job in self.waiting if job.id != job_id]
        for executor in self.executors:
            if executor.job is not None and executor.job.id == job_id and executor.pid is not None:
                os.kill(executor.pid, signal.SIGKILL)  # a thread cannot be stopped: its process can
                executor.job = None
        for run_id, run in list(self.runs.items()):
            if run.job.id == job_id:
                del self.runs[run_id]
                self.refs.pop(run.ref, None)
                if self.sessions is not None:
                    self.send(self.sessions, Call(CancelRun(run.job.payload["app_name"], run.job.user_id,
                                                            run.session_id, run_id)))
                self.log.info("job %s stopped: %s", job_id, why)

    # -- messages -----------------------------------------------------------------------------

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, Finished):
            self._record(request)
            for executor in self.executors:
                if executor.job is not None and executor.job.id == request.job_id:
                    executor.job = None
            self._hand_out()
            self._claim_and_start()
        else:
            super().handle_cast(request)

    def handle_info(self, message: Any, sender: Any) -> None:
        if isinstance(message, (Reply, ErrorReply)) and message.ref in self.refs:
            self._on_reply(message, self.refs.pop(message.ref or ""))
        elif isinstance(message, RunMessages):
            for item in message.messages:
                self._on_run_message(item)
        elif isinstance(message, (AdkEvent, RunDone, RunFailed)):
            self._on_run_message(message)
        elif isinstance(message, InitOk):
            executor = next((e for e in self.executors if e.address == sender), None)
            if executor is not None:
                executor.pid = message.pid
                self.monitor_child(sender, message.pid)
                self._hand_out()
        elif type(message).__name__ == "ChildActorExited":
            self._executor_gone(message.childAddress)
        elif not isinstance(message, (Reply, ErrorReply)):
            super().handle_info(message, sender)

    def _record(self, finished: Finished) -> None:
        """Store what came of a function's attempt (nothing, if it is no longer the current one)."""
        if finished.outcome == "completed":
            self._complete(finished.job_id, finished.attempt, finished.value)
        elif finished.outcome == "snoozed":
            self.store.snooze(finished.job_id, finished.attempt, float(finished.value))
        else:
            self._fail(finished.job_id, finished.attempt, str(finished.value), discard=finished.outcome == "discarded")

    def _executor_gone(self, address: Any) -> None:
        executor = next((e for e in self.executors if e.address == address), None)
        if executor is None:
            return
        self.executors.remove(executor)
        executor.link.close()
        self._watch_links()
        if executor.job is not None:
            self._fail(executor.job.id, executor.job.attempt, "the executor died during this attempt")
            self._tick_in(0.0)
        self._hand_out()
