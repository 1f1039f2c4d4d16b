"""A jobs actor's agent jobs: each a run on a session, and how every attempt ends.

:class:`AgentJobRuns` is the half of the jobs actor (``_jobs.JobQueueActor``, which
inherits it) that speaks to the sessions. In order, for an agent job's attempt:

1. the session supervisor is looked up in the host's registry (again after 0.5 s
   while it is not there, and whenever it answers ``not_running``); attempts claimed
   meanwhile wait for it;
2. a job that names no session gets one of its own first (``CreateSession``, named by
   the job's id: ``session_exists`` on a later attempt is no error); then its
   ``RunRequest`` is sent, its run id derived from the job's idempotency key;
3. the run's events are read for the last answer's text; ``RunDone`` completes the
   attempt (its result: the session and that text); ``RunFailed`` or an error reply
   to the request fails it.

A run that must stop (its job cancelled or timed out, or left ``executing`` by an
earlier jobs actor) is followed (``FollowRun``: its end comes here) and cancelled;
its attempt fails only once its end comes (``RunDone``: it completes after all;
``resumed_as``: the run that resumes it is stopped in turn), so that no job runs twice
at once. Runs being stopped are followed and cancelled again every
:data:`STOP_RECHECK` s until their end comes. Every attempt's outcome is stored here
(the store's one writer) and told to telemetry (``[adk, job, stop]`` or
``[adk, job, exception]``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from supervision import GenServer
from supervision.protocol import Call, ErrorReply, Lookup, Reply

from .. import telemetry
from .._types import Content
from ..jobs import Job
from ..messages import AdkEvent, CancelRun, CreateSession, FollowRun, RunDone, RunFailed, RunRequest
from ..store import JobStore

__all__ = ["INTERRUPTED", "LOOK_UP", "STOP_CHECK", "STOP_RECHECK", "AgentJobRuns", "AgentRun", "job_metadata",
           "run_id_of", "session_of"]


@dataclass
class AgentRun:
    job: Job
    session_id: str
    run_id: str
    ref: str = ""
    text: str = ""


_FOLLOW = "follow:"  # a call ref's mark: following a run being stopped
LOOK_UP = "look-up"
INTERRUPTED = "interrupted: the jobs actor stopped during this attempt"
#: A run being stopped (see the module) whose end has not come after this long is
#: followed and cancelled again (its partition may have restarted meanwhile).
STOP_RECHECK = 10.0
STOP_CHECK = "stop-check"


class AgentJobRuns(GenServer):
    """The jobs actor's runs on sessions and its attempts' outcomes (see the module)."""

    store: JobStore
    sessions: Any  # the session supervisor's address, once looked up
    runs: dict[str, AgentRun]  # run id -> the agent job it runs
    refs: dict[str, str]  # call ref -> run id ("": the registry's look-up; _FOLLOW + id: a run being stopped)
    orphaned: list[tuple[str, str, str, str]]  # (app, user, session, run id) to follow and cancel
    ending_runs: dict[str, tuple[Job, str]]  # run id -> (its agent job, why its attempt fails once it ends)
    ending_text: dict[str, str]  # run id -> the last answer text a run being stopped gave
    stop_check_armed: bool

    def _claim_and_start(self) -> None:
        """Claim the due jobs each queue has room for and start them (the queue's job:
        ``JobQueueActor``)."""
        raise NotImplementedError

    def _start_run(self, job: Job) -> None:
        run = AgentRun(job, session_of(job), run_id_of(job))
        self.runs[run.run_id] = run
        if self.sessions is None:
            return  # sent once the session supervisor is known
        self._send_run(run)

    def _send_run(self, run: AgentRun) -> None:
        payload = run.job.payload
        if payload.get("session_id") is None:  # a new session of its own, made first
            create = Call(CreateSession(payload["app_name"], run.job.user_id, run.session_id, {}))
            self.refs[create.ref] = run.run_id
            self.send(self.sessions, create)
            return
        self._send_request(run)

    def _send_request(self, run: AgentRun) -> None:
        payload = run.job.payload
        request = Call(RunRequest(payload["app_name"], run.job.user_id, run.session_id,
                                  new_message=Content.user(payload["message"]), state_delta=payload.get("state_delta"),
                                  run_id=run.run_id, reply_accepted=False))
        run.ref = request.ref
        self.refs[request.ref] = run.run_id
        self.send(self.sessions, request)

    def _look_up_sessions(self) -> None:
        if self.registry is not None:
            lookup = Call(Lookup("sessions", 10.0))
            self.refs[lookup.ref] = ""
            self.send(self.registry, lookup)

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
                self.send_after(0.5, LOOK_UP)
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
            self._complete(job.id, job.attempt, {"session_id": session_of(job),
                                                 "text": self.ending_text.pop(message.run_id, "")})
            self._claim_and_start()
        elif isinstance(message, RunFailed) and message.resumed_as:
            del self.ending_runs[message.run_id]
            self.ending_runs[message.resumed_as] = (job, why)
            self._follow_and_cancel(job.payload["app_name"], job.user_id, session_of(job), message.resumed_as)
        elif isinstance(message, RunFailed):
            self._stopped(message.run_id)

    def _follow_and_cancel(self, app: str, user: str, session: str, run_id: str) -> None:
        """Become the caller of run ``run_id`` (its end comes here) and cancel it."""
        if self.sessions is None:
            return  # followed at the next check, once the session supervisor is known
        follow = Call(FollowRun(app, user, session, run_id=run_id))
        self.refs[follow.ref] = _FOLLOW + run_id
        self.send(self.sessions, follow)
        self.send(self.sessions, Call(CancelRun(app, user, session, run_id)))

    def _recheck_stopping(self) -> None:
        """Follow and cancel again each run being stopped whose end has not come."""
        for run_id, (job, _why) in list(self.ending_runs.items()):
            self._follow_and_cancel(job.payload["app_name"], job.user_id, session_of(job), run_id)
        self._arm_stop_check()

    def _arm_stop_check(self) -> None:
        """Recheck the runs being stopped ``STOP_RECHECK`` from now, while there are some."""
        if self.ending_runs and not self.stop_check_armed:
            self.stop_check_armed = True
            self.send_after(STOP_RECHECK, STOP_CHECK)

    def _stopped(self, run_id: str) -> None:
        """The run of a stopped attempt ended (its process is gone or it stopped): the
        attempt fails now (retried after its backoff)."""
        job, why = self.ending_runs.pop(run_id)
        self.ending_text.pop(run_id, None)
        self._fail(job.id, job.attempt, why)
        self._claim_and_start()

    def _end_run(self, run: AgentRun, result: Any, error: str | None) -> None:
        self.runs.pop(run.run_id, None)
        self.refs.pop(run.ref, None)  # a run that was taken gets no reply to its call: forget the call
        if error is None:
            self._complete(run.job.id, run.job.attempt, result)
        else:
            self._fail(run.job.id, run.job.attempt, error)
        self._claim_and_start()

    def _complete(self, job_id: str, attempt: int, result: Any) -> None:
        """The attempt succeeded: stored, and told (``[adk, job, stop]``)."""
        if self.store.complete(job_id, attempt, result):
            job = self.store.get(job_id)
            telemetry.execute(("adk", "job", "stop"), {"duration": _took(job)}, job_metadata(job))

    def _fail(self, job_id: str, attempt: int, error: str, *, discard: bool = False) -> None:
        """The attempt failed: stored (retryable or discarded), and told (``[adk, job, exception]``)."""
        if self.store.fail(job_id, attempt, error, discard=discard):
            job = self.store.get(job_id)
            telemetry.execute(("adk", "job", "exception"), {"duration": _took(job)},
                              {**job_metadata(job), "kind": "JobFailed", "reason": error, "state": job.state})


def job_metadata(job: Job) -> dict[str, Any]:
    """What telemetry says of a job's attempt."""
    return {"job_id": job.id, "queue": job.queue, "job_kind": job.kind, "attempt": job.attempt,
            "max_attempts": job.max_attempts, "user": job.user_id, "app": job.payload.get("app_name") or "",
            "function": job.payload.get("function") or "", "span_id": job.idempotency_key}


def _took(job: Job) -> float:
    end = job.finished_at if job.finished_at is not None else time.time()
    return max(0.0, end - job.attempted_at) if job.attempted_at is not None else 0.0


def session_of(job: Job) -> str:
    session: str | None = job.payload.get("session_id")
    return session if session is not None else job.id


def run_id_of(job: Job) -> str:
    return f"run-{job.idempotency_key}"
