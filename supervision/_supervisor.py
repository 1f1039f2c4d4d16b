"""Supervisor and DynamicSupervisor actors (PartitionSupervisor: :mod:`supervision._partition_supervisor`).

A supervisor is the Thespian parent of its children, so it learns of every death
through ``ChildActorExited`` (~5 ms after a kill -9). Children say why they exit
(:class:`Exiting`) just before they go; a death with no such word is ``killed``.

The actor never blocks. Each OTP procedure (start all in order, stop in reverse
order with timeouts, restart a group, escalate) is a *job*: a generator that yields
what it waits for (a child's start reply, a child's exit, a timer) and is resumed
when that arrives. Jobs run one at a time, in order, as OTP's supervisor handles one
thing at a time; calls such as ``which_children`` are answered at once, even while a
job waits.

In three modules, each a layer of the class: :mod:`supervision._supervisor_steps` (its
state, the job engine, and the steps a job is made of: start, stop, kill, forget a
child), :mod:`supervision._supervisor_jobs` (OTP's procedures, each a job), and this
one: the actor that takes each message (children's answers and exits, timers, the
health check, calls, shutdown) and queues the jobs.

A supervisor learns of every child's death, whatever it is doing (starting,
stopping, restarting a group): besides ``ChildActorExited``, every running local
child is watched through a pidfd (:meth:`GenServer.monitor_process`). When two
children die at once Thespian reports only one (handling a child's exit, it drops
every dead child from its list and reports none of the others: measured, about one
try in two); the pidfd still fires, and if no ``ChildActorExited`` came within
``_DOWN_GRACE`` the supervisor sends itself the one Thespian did not make (its last
words, if any, arrive before that). So no wait for an exit can outlive the process
it waits for, and Thespian no longer waits for that child when the supervisor exits.

The supervisor's states are types (:mod:`supervision._supervisor_state`): each child's
:class:`ChildStatus`, what a job waits for (:class:`WaitFor`), and one frozen dataclass
per timer. It runs on :class:`GenServer`'s extension points (``on_message`` for its
children's answers, ``begin_init`` / ``answer_init`` / ``refuse_init`` for a start that
waits for the children, ``on_shutdown_request`` / ``on_exit_request`` /
``on_child_exited``, ``exit_now``), never on its internals.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from thespian.actors import ActorExitRequest, ChildActorExited

from ._exceptions import (
    BadRequest,
    ChildRestarting,
    ChildRunning,
    SpecError,
    UnknownRequest,
)
from ._health import HealthMonitor, load_scaled
from ._messages import (
    KILLED,
    SHUTDOWN,
    ChildCounts,
    ChildInfo,
    CountChildren,
    DeleteChild,
    ErrorReply,
    Exiting,
    ExitKind,
    ExitReason,
    GetChildSpec,
    GetRegistry,
    InitFailed,
    InitOk,
    Reply,
    RestartChild,
    StartChild,
    TerminateChild,
    WhichChildren,
)
from ._server_types import NO_REPLY, CallerRef, describe
from ._spec import (
    ChildSpec,
    ChildType,
    DynamicSupervisorSpec,
    SupervisorSpec,
)
from ._supervisor_jobs import SupervisorJobs
from ._supervisor_state import (
    LIVE_STATUSES,
    STARTED,
    TIMEOUT,
    ChildRecord,
    ChildStatus,
    HealthCheckDue,
    ProcessEnded,
    RestartDue,
    Wait,
    WaitFor,
    WaitTimedOut,
)
from ._supervisor_steps import Job, sigkill
from ._timing import RestartIntensity

__all__ = ["DynamicSupervisor", "Supervisor"]

#: After a child's pidfd says it ended: how long Thespian's own ChildActorExited (and
#: the child's Exiting, sent before it) may take before the death is handled without them.
_DOWN_GRACE = 0.05
_START_WAITS = (WaitFor.START, WaitFor.STARTS)


class Supervisor(SupervisorJobs):
    """OTP supervisor over static children (see :class:`SupervisorSpec`).

    Subclasses may override :meth:`configure` to build their spec from ``init`` args,
    and the hooks ``on_child_started`` / ``on_child_gone`` (called by its steps, see
    :class:`~supervision._supervisor_steps.SupervisorSteps`).
    """

    # -- for subclasses that manage dynamic children themselves ------------------------
    # A DynamicSupervisor subclass (``dynamic = True``) may decide which children to
    # start and when (a partition of a PartitionSupervisor may): it reads a child with
    # :meth:`child`, queues its own jobs with :meth:`enqueue`, and inside a job
    # starts and stops children with :meth:`start_children` / :meth:`stop_children`.

    def child(self, child_id: str) -> ChildInfo | None:
        """The child ``child_id`` as ``which_children`` shows it, or None if there is none."""
        found = next((c for c in self._children if c.spec.id == child_id), None)
        return found.info() if found is not None else None

    @property
    def busy(self) -> bool:
        """Whether a job (a start, stop, restart...) is running or queued."""
        return self._job is not None or bool(self._jobs)

    @property
    def leaving(self) -> bool:
        """Whether this supervisor's exit has begun (a shutdown or an escalation): its
        children are being stopped, and it exits then."""
        return self._leaving

    @property
    def child_records(self) -> Sequence[ChildRecord]:
        """For subclasses, read-only: the supervisor's record of each child, in start order."""
        return self._children

    def enqueue(self, job: Job) -> None:
        """Run ``job`` (a generator of waits, as :meth:`start_children` is) after the
        jobs queued before it; jobs run one at a time, in order."""
        self._enqueue(job)

    def start_children(self, specs: list[ChildSpec]) -> Generator[Wait, Any, dict[str, str | None]]:
        """Inside a job (``yield from``): add these children and start them at once
        (each gets a new process, then ``Init``; one wait for all the
        answers). Returns each child's failure by id (None: started). A child that
        failed, or that ended its start with nothing to run (``ignore``), is
        forgotten; the others are supervised as any child."""
        children = [ChildRecord(spec) for spec in specs]
        self._children.extend(children)
        failures = yield from self._start_concurrently(children)
        for child in children:
            if (failures.get(child.spec.id) is not None or child.status is ChildStatus.UNDEFINED) and child in self._children:
                self._children.remove(child)
        return failures

    def stop_children(self, child_ids: list[str]) -> Generator[Wait, Any, None]:
        """Inside a job (``yield from``): stop these children at once (each as its spec's
        ``shutdown`` says, then killed), and forget them."""
        children = [c for c in self._children if c.spec.id in child_ids]
        yield from self._stop_concurrently(children)
        for child in children:
            if child in self._children:
                self._children.remove(child)

    # -- configuration -------------------------------------------------------------------

    def configure(self, args: Any) -> SupervisorSpec:
        """Return this supervisor's spec (OTP's ``init/1``); default: ``args`` itself."""
        if isinstance(args, SupervisorSpec):
            return args
        raise SpecError(f"{type(self).__name__} needs a SupervisorSpec, got {type(args).__name__}")

    def begin_init(self, args: Any, starter: Any) -> None:
        """``Init`` came: the spec is made (:meth:`configure`; raising, the start is
        refused), then the job that starts the children is queued; it answers
        ``starter`` when they run (see ``_start_all_job``)."""
        try:
            spec = self.configure(args)
        except Exception as exc:
            self.refuse_init(starter, describe(exc))
            return
        self._intensity = RestartIntensity(spec.intensity, spec.period)
        self._health = HealthMonitor(spec.health, scale=load_scaled) if spec.health is not None else None
        self._strategy = spec.strategy
        self._auto_shutdown = spec.auto_shutdown
        self._child_registry = self.registry
        self._children = [ChildRecord(c) for c in spec.children]
        self._starter = starter
        self._enqueue(self._start_all_job(spec.concurrent_start))

    # -- message handling --------------------------------------------------------------

    def on_message(self, message: Any, sender: Any) -> bool:
        """Taken here, whatever the supervisor's state: a child's answer to its health
        check, a starting child's answer to ``Init`` (while a job waits for it), and a
        child's last words (``Exiting``: the reason its exit is handled with)."""
        match message:
            case Reply() | ErrorReply() if self._health is not None and self._health.answered(message.ref):
                return True
            case InitOk() | InitFailed() if self._wait is not None and self._wait.kind in _START_WAITS:
                self._on_start_answer(self._wait, message, sender)
                return True
            case Exiting():
                reporter = self._find_by_address(sender)
                if reporter is not None:
                    reporter.reported = message.reason
                return True
        return False

    def _on_start_answer(self, wait: Wait, answer: InitOk | InitFailed, sender: Any) -> None:
        """A child's answer to ``Init`` while a job waits for starts: the job resumes
        (START), or the answer is recorded (STARTS, :meth:`_answer_start`). An answer
        from no child it waits for is dropped."""
        if wait.kind is WaitFor.START:
            child = wait.children[0]
            if child.address is not None and child.address == sender:
                if isinstance(answer, InitOk):
                    child.address = sender  # the real, picklable address replaces the local one
                self._resume(answer)
            return
        child_id = getattr(answer, "child_id", None)  # InitOk names its child: one address to compare
        for child in wait.children:
            if child_id is not None and child.spec.id != child_id:
                continue
            if child.address is not None and child.address == sender and child.spec.id not in wait.answers:
                if isinstance(answer, InitOk):
                    child.address = sender
                self._answer_start(child, answer)
                break

    def on_child_exited(self, message: Any, sender: Any) -> None:
        """A child's process ended (:meth:`_child_down`); a process a subclass made
        itself goes to its ``handle_info``."""
        child = self._find_by_address(message.childAddress)
        if child is not None:
            self._child_down(child)
        else:  # a process the subclass made itself: its handle_info hears of it
            self.handle_info(message, sender)

    def handle_process_down(self, tag: Any) -> None:
        """A child's pidfd fired: give Thespian ``_DOWN_GRACE`` to report it, then act."""
        self.send_after(_DOWN_GRACE, tag)

    def _child_down(self, child: ChildRecord) -> None:
        """``child``'s process has ended: record why, resume a job waiting for it, or
        start the restart procedure of a running child."""
        reason = child.reported
        if reason is None:
            reason = SHUTDOWN if child.stop_requested and not child.killed else KILLED
        if child.stop_requested and reason.kind is ExitKind.CRASH:
            reason = SHUTDOWN  # terminate() raising while asked to stop is still a shutdown
        self._forget_process(child, reason)
        wait = self._wait
        if wait is not None and child in wait.children and self._resume_on_exit(wait, child, reason):
            return
        if child.status in (ChildStatus.RUNNING, ChildStatus.STARTING):
            child.status = ChildStatus.DEAD
            self._enqueue(self._child_exited_job(child, child.incarnation, reason))

    def _resume_on_exit(self, wait: Wait, child: ChildRecord, reason: ExitReason) -> bool:
        """``child``, which ``wait`` is about, has exited: the wait's answer (its exit, or
        its failed start). False when the wait has nothing to say of it (a child of a
        STARTS wait that had started already exits as any running child)."""
        match wait.kind:
            case WaitFor.EXIT:
                self._resume(reason)
            case WaitFor.START:
                self._resume(InitFailed(f"exited during start: {reason}"))
            case WaitFor.STARTS if child.spec.id not in wait.answers:
                self._answer_start(child, InitFailed(f"exited during start: {reason}"))
            case WaitFor.EXITS:
                if all(not c.alive for c in wait.children):
                    self._resume(None)
            case _:
                return False
        return True

    def _answer_start(self, child: ChildRecord, answer: Any) -> None:
        """Record a child's answer in a "starts" wait (one that runs is settled now: its
        waiting requests need not wait for the others); resume when all have answered."""
        wait = self._wait
        assert wait is not None
        if isinstance(answer, InitOk) and not answer.ignored:
            self._started(child, answer)
            answer = STARTED
        wait.answers[child.spec.id] = answer
        if len(wait.answers) == len(wait.children):
            self._resume(None)

    def handle_timeout(self, payload: Any) -> None:
        """The supervisor's own timers, by type: a wait's timeout, a child's process seen
        ended (``handle_process_down``), the health check, a restart after its backoff.
        Anything else is ignored."""
        match payload:
            case WaitTimedOut(seq=seq):
                if self._wait is not None and self._wait.seq == seq:
                    self._resume(TIMEOUT)
            case ProcessEnded():
                self._on_process_ended(payload)
            case HealthCheckDue():
                self._check_health()
            case RestartDue(ticket=ticket):
                self._enqueue(self._start_group_job(ticket))

    def _on_process_ended(self, ended: ProcessEnded) -> None:
        """A child's pidfd fired ``_DOWN_GRACE`` ago and that incarnation still counts as
        alive: Thespian lost it too (it drops every dead child from its process list
        when it handles any one child's exit, and reports only that one), so it would
        wait for this child forever when we exit. The message it failed to make is made
        here, and its handling of it (after ours) forgets the child there as well."""
        for child in self._children:
            if child.process_tag == ended and child.alive:
                self.log.warning("child %s (pid %s) ended with no ChildActorExited; handled as dead",
                                 ended.child_id, child.pid)
                self.send(self.myAddress, ChildActorExited(child.address))

    def _check_health(self) -> None:
        """The health check's timer (``SupervisorSpec.health``), in order: judge each
        child that left a ping unanswered for the check's timeout (``HealthMonitor.judge``:
        stopped, or no CPU time used, or silent past the ceiling is stuck; using CPU is
        busy). A stuck one is killed (a running one is restarted as any child that died,
        with that reason; one being stopped is stopped: a stopped process would never
        exit, and a shutdown of ``infinity`` would wait for it for ever); a busy one is
        logged and left to work. Then ping the others (with their pids, so that their
        CPU time is read), and come back."""
        monitor = self._health
        if monitor is None or self.stopping:
            return
        now = self.clock()
        self._act_on_verdicts(monitor, now)
        for child in self._children:
            if child.status in LIVE_STATUSES and child.local and child.address is not None:
                ping = monitor.ping((child.spec.id, child.incarnation), now, child.pid)
                if ping is not None:
                    self.send(child.address, ping)
        self.send_after(monitor.check.interval, HealthCheckDue())

    def _act_on_verdicts(self, monitor: HealthMonitor, now: float) -> None:
        """Kill each stuck child (its reason: a crash, with the verdict); log each busy one."""
        for verdict in monitor.judge(now):
            child = next((c for c in self._children if (c.spec.id, c.incarnation) == verdict.key), None)
            if child is None or child.status not in LIVE_STATUSES or child.pid is None or not child.local:
                continue
            if verdict.kind == "busy":
                self.log.warning("child %s (pid %s) is %s", child.spec.id, child.pid, verdict.reason)
                continue
            self.log.error("child %s (pid %s) is %s; killing it", child.spec.id, child.pid, verdict.reason)
            child.reported = ExitReason(ExitKind.CRASH, verdict.reason)
            sigkill(child.pid)

    def on_shutdown_request(self, sender: Any) -> None:
        """``Shutdown`` (from our supervisor): stop every child, then exit (``_leave_job``)."""
        self._enqueue(self._leave_job(SHUTDOWN, notify=False))

    def exit_waits_for_children(self) -> bool:
        """Not while a child is starting (forked, not yet connected): see :meth:`on_exit_request`."""
        return not self._child_starting()

    def on_exit_request(self, request: Any) -> None:
        """ActorExitRequest (e.g. the actor system's shutdown): Thespian stops our children
        itself and waits for them, except that a child still starting (forked, not yet
        connected) may never get the request, and Thespian would wait for it forever
        (the system's shutdown then gives up after 10 s, leaving processes behind). So
        while a child is starting: the connected children are asked to exit, and we
        exit without waiting (:meth:`exit_waits_for_children`); the starting child dies
        with us (PR_SET_PDEATHSIG). Either way no job runs any more.
        The graceful path is ``Shutdown``, which waits for starts to finish.
        """
        if self._child_starting():
            for child in self._children:
                if child.alive and child.pid is not None:
                    self.send(child.address, ActorExitRequest())
        self._jobs.clear()
        self._job = None
        self._wait = None

    def _child_starting(self) -> bool:
        return any(c.alive and c.pid is None for c in self._children)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        """OTP's supervisor calls: which / count children, a child's spec, the registry;
        start, terminate, restart and delete a child (the first three as jobs, answered
        when done)."""
        match request:
            case WhichChildren():
                return [c.info() for c in self._children]
            case CountChildren():
                return ChildCounts(
                    specs=len(self._children),
                    active=sum(1 for c in self._children if c.status is ChildStatus.RUNNING),
                    supervisors=sum(1 for c in self._children if c.spec.type is ChildType.SUPERVISOR),
                    workers=sum(1 for c in self._children if c.spec.type is ChildType.WORKER),
                )
            case GetChildSpec():
                return self._lookup(request.id).spec
            case GetRegistry():
                return self._child_registry
            case StartChild():
                self._check_start_child(request.spec)
                self._enqueue(self._start_child_job(request.spec, caller))
                return NO_REPLY
            case TerminateChild():
                self._enqueue(self._terminate_child_job(self._lookup(request.id), caller))
                return NO_REPLY
            case RestartChild():
                child = self._stopped_child(request.id, "restart a child on request", running_counts=True)
                self._enqueue(self._restart_child_job(child, caller))
                return NO_REPLY
            case DeleteChild():
                self._children.remove(self._stopped_child(request.id, "delete a child spec", running_counts=False))
                return "ok"
        raise UnknownRequest(f"supervisor does not handle {type(request).__name__}")

    def _stopped_child(self, child_id: str, action: str, *, running_counts: bool) -> ChildRecord:
        """The child ``child_id``, to ``action`` on request: refused by a dynamic
        supervisor, and while the child restarts or has a process (or, with
        ``running_counts``, still counts as running or starting)."""
        child = self._lookup(child_id)
        if self.dynamic:
            raise BadRequest(f"a dynamic supervisor cannot {action}")
        if child.status is ChildStatus.RESTARTING:
            raise ChildRestarting(child_id)
        if child.alive or (running_counts and child.status in (ChildStatus.RUNNING, ChildStatus.STARTING)):
            raise ChildRunning(child_id)
        return child


class DynamicSupervisor(Supervisor):
    """Children started at run time with ``start_child``; one_for_one; ``max_children``.

    A child's id is made unique by a ``#n`` suffix. Children are temporary unless
    their spec says otherwise, and are all stopped at once on shutdown.
    """

    dynamic = True

    def configure(self, args: Any) -> SupervisorSpec:
        if not isinstance(args, DynamicSupervisorSpec):
            raise SpecError(f"DynamicSupervisor needs a DynamicSupervisorSpec, got {type(args).__name__}")
        self._max_children = args.max_children
        return SupervisorSpec(children=(), intensity=args.intensity, period=args.period)
