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
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import queue
import signal
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from supervision import Call, CallerRef, CallError, GenServer, Reply
from supervision.lowlevel import WallClock
from supervision.protocol import Cast, ErrorReply, Init, InitOk, Lookup, UnknownRequest

from .. import telemetry
from .._exceptions import InvalidRequestError, NotFoundError
from .._types import Content
from .._validate import check_message, invalid
from ..engine import AppCatalog
from ..jobs import (
    CancelJob,
    CronEntry,
    Discard,
    DiscardJob,
    EnqueueJob,
    EnqueueJobs,
    GetJob,
    Job,
    JobInfo,
    JobsConfig,
    ListJobs,
    RetryJob,
    Snooze,
    cron_problem,
    next_cron_time,
    resolve_function,
    validate_spec,
)
from ..messages import (
    AdkEvent,
    CancelRun,
    CreateSession,
    FollowRun,
    RunDone,
    RunFailed,
    RunMessages,
    RunRequest,
)
from ..store import JobStore
from ._job_calls import JobsArgs
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


@dataclass(frozen=True)
class _Execute:
    job: Job


@dataclass(frozen=True)
class _Finished:
    """What came of an attempt: ``outcome`` "completed" (``value``: its result),
    "failed" (``value``: the error), "discarded" (the same) or "snoozed" (``value``: s)."""

    job_id: str
    attempt: int
    outcome: str
    value: Any = None


@dataclass
class _Executor:
    address: Any
    link: RunLink
    pid: int | None = None
    job: Job | None = None


@dataclass(frozen=True)
class _ExecutorArgs:
    link_fd: int  # the executor's end of its line to the queue
    inherited_fds: tuple[int, ...]  # the queue's ends, closed in the executor


@dataclass
class _AgentRun:
    job: Job
    session_id: str
    run_id: str
    ref: str = ""
    text: str = ""


_TICK = "tick"
_FOLLOW = "follow:"  # a call ref's mark: following a run being stopped
_LOOK_UP = "look-up"
_INTERRUPTED = "interrupted: the jobs actor stopped during this attempt"
#: On a shared queue: how long past its lease another host's attempt is left alone
#: before it is given up as its host's death (the hosts' clocks may differ a little).
ABANDONED_GRACE = 5.0
#: A run being stopped (see the module, 1) whose end has not come after this long is
#: followed and cancelled again (its partition may have restarted meanwhile).
STOP_RECHECK = 10.0
_STOP_CHECK = "stop-check"


class JobQueueActor(GenServer):
    """See the module."""

    check_request = staticmethod(check_message)

    def init(self, args: JobsArgs) -> None:
        self.config = args.config
        self.store_path = args.path
        self.store = JobStore(args.path, WallClock(), node=args.node)
        self.catalog = AppCatalog(dict(args.apps), args.agents_dir)  # YAML apps may come and go
        self.executors: list[_Executor] = []
        self.waiting: list[Job] = []  # function jobs claimed, waiting for an idle executor
        self.runs: dict[str, _AgentRun] = {}  # run id -> the agent job it runs
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
                self.orphaned.append((job.payload["app_name"], job.user_id, _session_of(job), _run_id(job)))
                self.ending_runs[_run_id(job)] = (job, _INTERRUPTED)
            else:
                self._fail(job.id, job.attempt, _INTERRUPTED)
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
        if payload == _LOOK_UP:
            self._look_up_sessions()
        if payload == _STOP_CHECK:
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
                          _job_metadata(job))
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
                if not executor.link.send(_Execute(executor.job)):
                    self.send(executor.address, Cast(_Execute(executor.job)))
        starting = sum(1 for e in self.executors if e.pid is None)
        room = sum(self.config.queues.values()) - len(self.executors)
        for _ in range(min(len(self.waiting) - starting, room)):
            self._start_executor()

    def _start_executor(self) -> None:
        """Fork an executor with a direct line to this actor (``_link``: a job's two
        messages skip Thespian's transport, which cost most of a no-op job)."""
        address, ours, their_fd = fork_linked(self, JobExecutor)
        inherited = (ours.fd, *(e.link.fd for e in self.executors if not e.link.closed))
        self.send(address, Init(args=_ExecutorArgs(their_fd, inherited), supervisor=self.myAddress))
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

    def _start_run(self, job: Job) -> None:
        run = _AgentRun(job, _session_of(job), _run_id(job))
        self.runs[run.run_id] = run
        if self.sessions is None:
            return  # sent once the session supervisor is known
        self._send_run(run)

    def _send_run(self, run: _AgentRun) -> None:
        payload = run.job.payload
        if payload.get("session_id") is None:  # a new session of its own, made first
            create = Call(CreateSession(payload["app_name"], run.job.user_id, run.session_id, {}))
            self.refs[create.ref] = run.run_id
            self.send(self.sessions, create)
            return
        self._send_request(run)

    def _send_request(self, run: _AgentRun) -> None:
        payload = run.job.payload
        request = Call(RunRequest(payload["app_name"], run.job.user_id, run.session_id,
                                  new_message=Content.user(payload["message"]), state_delta=payload.get("state_delta"),
                                  run_id=run.run_id, batched=True, reply_accepted=False))
        run.ref = request.ref
        self.refs[request.ref] = run.run_id
        self.send(self.sessions, request)

    def _look_up_sessions(self) -> None:
        if self.registry is not None:
            lookup = Call(Lookup("sessions", 10.0))
            self.refs[lookup.ref] = ""
            self.send(self.registry, lookup)

    # -- messages -----------------------------------------------------------------------------

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, _Finished):
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

    def _on_reply(self, message: Reply | ErrorReply, run_id: str) -> None:
        if run_id == "":  # the registry's answer: where the session supervisor is
            if isinstance(message, Reply) and message.value is not None:
                self.sessions = message.value[0]  # (address, pid, node)
                for app, user, session, orphan in self.orphaned:
                    self._follow_and_cancel(app, user, session, orphan)
                self.orphaned.clear()
                for waiting in self.runs.values():
                    self._send_run(waiting)
            else:
                self.send_after(0.5, _LOOK_UP)
            return
        if run_id.startswith(_FOLLOW):  # following a run being stopped
            stopped = run_id[len(_FOLLOW):]
            if isinstance(message, ErrorReply) and stopped in self.ending_runs:
                if message.code == "not_running":  # followed again at the next check
                    self.sessions = None
                    self._look_up_sessions()
                else:  # no such run on its session (its session is gone): nothing runs
                    self._stopped(stopped)
            return
        run = self.runs.get(run_id)
        if run is None:
            return
        if isinstance(message, Reply) or message.code == "session_exists":
            if message.ref != run.ref:  # the session was made (or was there): the run now
                self._send_request(run)
            return
        if message.code == "not_running":
            self.sessions = None
            self._look_up_sessions()
        self._end_run(run, None, f"{message.code}: {message.detail}")

    def _on_run_message(self, message: Any) -> None:
        if message.run_id in self.ending_runs:
            self._on_ending_run(message)
            return
        run = self.runs.get(message.run_id)
        if run is None:
            return
        if isinstance(message, AdkEvent):
            event = message.event
            if not event.partial and event.author != "user" and event.content is not None and event.content.text:
                run.text = event.content.text
        elif isinstance(message, RunDone):
            self._end_run(run, {"session_id": run.session_id, "text": run.text}, None)
        elif isinstance(message, RunFailed):
            self._end_run(run, None, f"{message.reason}: {message.error_type} {message.detail}".strip())

    def _on_ending_run(self, message: Any) -> None:
        """A message of a run being stopped: its answer's text is kept; its end fails
        the attempt (``_stopped``), unless the run was done (the attempt completes with
        it) or its app resumed it (the run that resumes it is stopped in turn)."""
        job, why = self.ending_runs[message.run_id]
        if isinstance(message, AdkEvent):
            event = message.event
            if not event.partial and event.author != "user" and event.content is not None and event.content.text:
                self.ending_text[message.run_id] = event.content.text
        elif isinstance(message, RunDone):
            del self.ending_runs[message.run_id]
            self._complete(job.id, job.attempt, {"session_id": _session_of(job),
                                                 "text": self.ending_text.pop(message.run_id, "")})
            self._claim_and_start()
        elif isinstance(message, RunFailed) and message.resumed_as:
            del self.ending_runs[message.run_id]
            self.ending_runs[message.resumed_as] = (job, why)
            self._follow_and_cancel(job.payload["app_name"], job.user_id, _session_of(job), message.resumed_as)
        elif isinstance(message, RunFailed):
            self._stopped(message.run_id)

    def _follow_and_cancel(self, app: str, user: str, session: str, run_id: str) -> None:
        """Become the caller of run ``run_id`` (its end comes here) and cancel it."""
        if self.sessions is None:
            return  # followed at the next check, once the session supervisor is known
        follow = Call(FollowRun(app, user, session, run_id=run_id, batched=True))
        self.refs[follow.ref] = _FOLLOW + run_id
        self.send(self.sessions, follow)
        self.send(self.sessions, Call(CancelRun(app, user, session, run_id)))

    def _recheck_stopping(self) -> None:
        """Follow and cancel again each run being stopped whose end has not come."""
        for run_id, (job, _why) in list(self.ending_runs.items()):
            self._follow_and_cancel(job.payload["app_name"], job.user_id, _session_of(job), run_id)
        self._arm_stop_check()

    def _arm_stop_check(self) -> None:
        """Recheck the runs being stopped ``STOP_RECHECK`` from now, while there are some."""
        if self.ending_runs and not self.stop_check_armed:
            self.stop_check_armed = True
            self.send_after(STOP_RECHECK, _STOP_CHECK)

    def _stopped(self, run_id: str) -> None:
        """The run of a stopped attempt ended (its process is gone or it stopped): the
        attempt fails now (retried after its backoff)."""
        job, why = self.ending_runs.pop(run_id)
        self.ending_text.pop(run_id, None)
        self._fail(job.id, job.attempt, why)
        self._claim_and_start()

    def _end_run(self, run: _AgentRun, result: Any, error: str | None) -> None:
        self.runs.pop(run.run_id, None)
        self.refs.pop(run.ref, None)  # a run that was taken gets no reply to its call: forget the call
        if error is None:
            self._complete(run.job.id, run.job.attempt, result)
        else:
            self._fail(run.job.id, run.job.attempt, error)
        self._claim_and_start()

    def _record(self, finished: _Finished) -> None:
        """Store what came of a function's attempt (nothing, if it is no longer the current one)."""
        if finished.outcome == "completed":
            self._complete(finished.job_id, finished.attempt, finished.value)
        elif finished.outcome == "snoozed":
            self.store.snooze(finished.job_id, finished.attempt, float(finished.value))
        else:
            self._fail(finished.job_id, finished.attempt, str(finished.value), discard=finished.outcome == "discarded")

    def _complete(self, job_id: str, attempt: int, result: Any) -> None:
        """The attempt succeeded: stored, and told (``[adk, job, stop]``)."""
        if self.store.complete(job_id, attempt, result):
            job = self.store.get(job_id)
            telemetry.execute(("adk", "job", "stop"), {"duration": _took(job)}, _job_metadata(job))

    def _fail(self, job_id: str, attempt: int, error: str, *, discard: bool = False) -> None:
        """The attempt failed: stored (retryable or discarded), and told (``[adk, job, exception]``)."""
        if self.store.fail(job_id, attempt, error, discard=discard):
            job = self.store.get(job_id)
            telemetry.execute(("adk", "job", "exception"), {"duration": _took(job)},
                              {**_job_metadata(job), "kind": "JobFailed", "reason": error, "state": job.state})

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


def _job_metadata(job: Job) -> dict[str, Any]:
    """What telemetry says of a job's attempt."""
    return {"job_id": job.id, "queue": job.queue, "job_kind": job.kind, "attempt": job.attempt,
            "max_attempts": job.max_attempts, "user": job.user_id, "app": job.payload.get("app_name") or "",
            "function": job.payload.get("function") or "", "span_id": job.idempotency_key}


def _took(job: Job) -> float:
    end = job.finished_at if job.finished_at is not None else time.time()
    return max(0.0, end - job.attempted_at) if job.attempted_at is not None else 0.0


def _session_of(job: Job) -> str:
    session: str | None = job.payload.get("session_id")
    return session if session is not None else job.id


def _run_id(job: Job) -> str:
    return f"run-{job.idempotency_key}"


class JobExecutor(GenServer):
    """Runs function jobs one at a time on a thread of its own (so that it answers its
    parent while a job runs), and tells its parent what came of each (``_Finished``) on
    their direct line (through Thespian if the line does not take it). The thread
    rings a pipe when a job is over. The parent alone writes the store: one writer, no
    lock to wait for (an outcome lost with the parent is an attempt cut short, attempted
    again)."""

    def init(self, args: _ExecutorArgs) -> None:
        for fd in args.inherited_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.link = RunLink.adopt(args.link_fd)
        self.bell_read, self.bell_write = os.pipe()
        self.watch_fds([self.bell_read, self.link.fd])
        self.done: list[_Finished] = []
        self.jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        threading.Thread(target=self._work, name="job-executor", daemon=True).start()

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, _Execute):
            self.jobs.put(request.job)
        else:
            super().handle_cast(request)

    def _work(self) -> None:
        while True:
            self.done.append(_perform(self.jobs.get()))
            os.write(self.bell_write, b"!")

    def handle_watch(self, ready: list[int]) -> None:
        if self.link.fd in ready:
            for message in self.link.receive():
                self.handle_cast(message)
        if self.bell_read in ready:
            os.read(self.bell_read, 4096)
            while self.done:
                finished = self.done.pop(0)
                if not self.link.send(finished):
                    self.send(self.supervisor, Cast(finished))


def _perform(job: Job) -> _Finished:
    """Call the job's function: what came of it."""
    try:
        function = resolve_function(job.payload["function"])
        args = dict(job.payload.get("args") or {})
        if "job" in inspect.signature(function).parameters:
            args["job"] = JobInfo(job.id, job.attempt, job.max_attempts, job.idempotency_key, job.queue, job.user_id)
        result = function(**args)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
        return _Finished(job.id, job.attempt, "completed", _json_safe(result))
    except Snooze as snooze:
        return _Finished(job.id, job.attempt, "snoozed", snooze.seconds)
    except Discard as discard:
        return _Finished(job.id, job.attempt, "discarded", f"discarded: {discard}")
    except BaseException as exc:  # any failure of the job's code is the attempt's
        return _Finished(job.id, job.attempt, "failed", f"{type(exc).__name__}: {exc}")


def _json_safe(value: Any) -> Any:
    """``value`` as JSON can hold it (what is not JSON, as its text)."""
    return json.loads(json.dumps(value, default=str))


async def _awaited(value: Any) -> Any:
    return await value

