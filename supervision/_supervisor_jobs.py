"""OTP's supervisor procedures, each a job (a generator of waits, see
:mod:`supervision._supervisor_steps`), in the order a supervisor's life meets them:

1. start: the children in order, or all at once (``concurrent_start``); at the first
   failure those started are stopped in reverse order and the start is refused;
   otherwise it is answered and the health check's first timer set;
2. a child exited: kept (restart ``permanent``, or ``transient`` and abnormal) it is
   restarted; otherwise it is forgotten or marked undefined, and a significant one may
   shut the supervisor down (``auto_shutdown``);
3. restart: the strategy picks the group (one_for_one, one_for_all, rest_for_one), the
   bystanders are stopped in reverse order, and the group becomes one pending restart
   (a ticket), started at once or after the failed child's backoff. Started, it is
   counted against the intensity first (over it: the supervisor leaves), then each
   child starts in order; at a failed start that child and those after it become a
   new pending restart;
4. calls answered when done: ``start_child``, ``terminate_child``, ``restart_child``;
5. leave: every child stopped in shutdown order, then the supervisor exits.
"""

from __future__ import annotations

from dataclasses import replace

from ._exceptions import (
    BadRequest,
    CallError,
    ChildRunning,
    StartFailed,
)
from ._messages import (
    SHUTDOWN,
    ExitReason,
    Started,
)
from ._server_types import CallerRef
from ._spec import (
    AutoShutdown,
    ChildSpec,
    Restart,
    Strategy,
)
from ._supervisor_state import (
    ChildRecord,
    ChildStatus,
    HealthCheckDue,
    RestartDue,
)
from ._supervisor_steps import Job, SupervisorSteps

__all__ = ["SupervisorJobs"]


class SupervisorJobs(SupervisorSteps):
    """The procedures of a supervisor (see the module); :class:`~supervision.Supervisor`
    queues them."""

    def _start_all_job(self, concurrent: bool) -> Job:
        """Start the children in order (or all at once: ``SupervisorSpec.concurrent_start``);
        at the first failure, stop those started, in reverse order, and fail the start."""
        started: list[ChildRecord] = []
        together: dict[str, str | None] = {}
        if concurrent:
            together = yield from self._start_concurrently(list(self._children))
        for child in list(self._children):
            failure = together[child.spec.id] if concurrent else (yield from self._start(child))
            if failure is not None:
                self.log.error("child %s failed to start: %s", child.spec.id, failure)
                running = [c for c in self._children if c.alive and c not in started] if concurrent else []
                yield from self._stop_many(list(reversed(started + running)))
                self.refuse_init(self._starter, f"child {child.spec.id!r} failed to start: {failure}")
                return
            if child.status is ChildStatus.UNDEFINED and child.spec.restart is Restart.TEMPORARY:
                self._children.remove(child)  # an ignored temporary child is not kept
            else:
                started.append(child)
        self.answer_init(self._starter)
        if self._health is not None:
            self.send_after(self._health.check.interval, HealthCheckDue())

    def _child_exited_job(self, child: ChildRecord, incarnation: int, reason: ExitReason) -> Job:
        if child not in self._children or child.incarnation != incarnation or child.status is not ChildStatus.DEAD:
            return
        child.exit_reason = reason
        restart = child.spec.restart
        wanted = restart is Restart.PERMANENT or (restart is Restart.TRANSIENT and reason.abnormal)
        if reason.abnormal:
            self.log.error("child %s exited: %s", child.spec.id, reason)
        if not wanted:
            if restart is Restart.TEMPORARY or self.dynamic:
                self._children.remove(child)
            else:
                child.status = ChildStatus.UNDEFINED
            if child.spec.significant and self._auto_shutdown_due(child):
                yield from self._leave_job(SHUTDOWN, notify=True)
            return
        yield from self._restart_job(child)

    def _auto_shutdown_due(self, exited: ChildRecord) -> bool:
        if self._auto_shutdown is AutoShutdown.ANY_SIGNIFICANT:
            return True
        if self._auto_shutdown is AutoShutdown.ALL_SIGNIFICANT:
            return not any(c.alive for c in self._children if c.spec.significant and c is not exited)
        return False

    def _restart_job(self, failed: ChildRecord) -> Job:
        """Apply the strategy to a failed child: stop the bystanders, restart the group."""
        index = self._children.index(failed)
        if self._strategy is Strategy.ONE_FOR_ALL:
            group = list(self._children)
        elif self._strategy is Strategy.REST_FOR_ONE:
            group = self._children[index:]
        else:
            group = [failed]
        bystanders = [c for c in group if c is not failed]
        yield from self._stop_many(list(reversed(bystanders)))
        for child in bystanders:
            if child.spec.restart is Restart.TEMPORARY:
                self._children.remove(child)  # temporary children are never restarted
        group = [c for c in group if c in self._children]
        waits = failed.backoff is not None and failed.backoff.policy.after_crashes
        delay = failed.backoff.next_delay(self.clock()) if waits and failed.backoff is not None else 0.0
        ticket = self._schedule_restart(group, delay)
        if delay <= 0:
            yield from self._start_group_job(ticket)

    def _schedule_restart(self, group: list[ChildRecord], delay: float) -> int:
        """Make ``group`` one pending restart and return its ticket: each child is
        ``restarting`` and belongs to this restart only (a restart it was waiting in
        before, a sibling's backoff timer or retry, no longer starts it: this one
        does, in start order). With ``delay`` > 0 a timer starts it then; otherwise
        the caller starts it at once, or queues it (:meth:`_start_group_job`)."""
        self._tickets += 1
        ticket = self._tickets
        for child in group:
            child.status = ChildStatus.RESTARTING
            child.restart_ticket = ticket
        if delay > 0:
            self.send_after(delay, RestartDue(ticket))
        return ticket

    def _start_group_job(self, ticket: int) -> Job:
        """(Re)start, in start order, the children still waiting in restart ``ticket``
        (none: a later restart took them all over, and this one is void); the restart
        is counted against the intensity first (over it: the supervisor leaves). At a
        failed start, that child and those after it become a new pending restart,
        after that child's backoff (at once: queued), and are counted again then."""
        ordered = [c for c in self._children if c.status is ChildStatus.RESTARTING and c.restart_ticket == ticket]
        if not ordered:
            return
        if not self._intensity.add_restart(self.clock()):
            self.log.error("reached max restart intensity (%s in %s s); shutting down",
                           self._intensity.intensity, self._intensity.period)
            yield from self._leave_job(SHUTDOWN, notify=True)
            return
        for position, child in enumerate(ordered):
            if child not in self._children or child.restart_ticket != ticket:
                continue  # forgotten, or taken over by a later restart while this one waited
            child.restarts += 1
            failure = yield from self._start(child)
            if failure is not None:
                self.log.error("restart of %s failed: %s", child.spec.id, failure)
                rest = [c for c in ordered[position:] if c in self._children and c.restart_ticket == ticket]
                delay = child.backoff.next_delay(self.clock()) if child.backoff is not None else 0.0
                retry = self._schedule_restart(rest, delay)
                if delay <= 0:
                    self._jobs.append(self._start_group_job(retry))
                return
            if child.status is ChildStatus.UNDEFINED and child.spec.restart is Restart.TEMPORARY:
                self._children.remove(child)

    def _leave_job(self, reason: ExitReason, *, notify: bool) -> Job:
        """Stop every child in shutdown order, then exit with ``reason``."""
        if self._leaving:
            return
        self._leaving = True
        self._jobs.clear()
        if self.dynamic:
            yield from self._stop_concurrently(list(self._children))
        else:
            yield from self._stop_many(list(reversed(self._children)))
        self.exit_now(reason, detail="supervisor shut down", notify=notify)

    def _start_child_job(self, spec: ChildSpec, caller: CallerRef) -> Job:
        try:
            self._check_start_child(spec)
        except Exception as err:
            self.reply_error(caller, err if isinstance(err, CallError) else BadRequest(str(err)))
            return
        if self.dynamic:
            self._next_dynamic_id += 1
            spec = replace(spec, id=f"{spec.id}#{self._next_dynamic_id}")
        child = ChildRecord(spec)
        self._children.append(child)
        failure = yield from self._start(child)
        if failure is not None:
            self._children.remove(child)
            self.reply_error(caller, StartFailed(f"child {spec.id!r} failed to start: {failure}"))
            return
        if child.status is ChildStatus.UNDEFINED and (self.dynamic or spec.restart is Restart.TEMPORARY):
            self._children.remove(child)
        self.reply(caller, Started(spec.id, child.address if child.status is ChildStatus.RUNNING else None, child.pid))

    def _terminate_child_job(self, child: ChildRecord, caller: CallerRef) -> Job:
        if child in self._children:
            if self.dynamic:
                yield from self._stop_concurrently([child])
            else:
                yield from self._stop(child)
            if child.spec.restart is Restart.TEMPORARY or self.dynamic:
                if child in self._children:
                    self._children.remove(child)
            else:
                child.status = ChildStatus.UNDEFINED
        self.reply(caller, "ok")

    def _restart_child_job(self, child: ChildRecord, caller: CallerRef) -> Job:
        if child not in self._children or child.alive:
            self.reply_error(caller, ChildRunning(child.spec.id))
            return
        failure = yield from self._start(child)
        if failure is not None:
            self.reply_error(caller, StartFailed(f"child {child.spec.id!r} failed to start: {failure}"))
            return
        self.reply(caller, Started(child.spec.id, child.address, child.pid))
