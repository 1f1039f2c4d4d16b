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

import os
import signal
from collections import deque
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import Any

from thespian.actors import ActorExitRequest, ChildActorExited

from ._exceptions import (
    BadRequest,
    CallError,
    ChildAlreadyPresent,
    ChildAlreadyStarted,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    MaxChildren,
    SpecError,
    StartFailed,
    UnknownRequest,
)
from ._health import HealthMonitor
from ._messages import (
    KILLED,
    SHUTDOWN,
    Cast,
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
    Init,
    InitFailed,
    InitOk,
    Register,
    Reply,
    RestartChild,
    Shutdown,
    StartChild,
    Started,
    TerminateChild,
    Unregister,
    WhichChildren,
)
from ._registry import REGISTRY_OWNER
from ._server import NO_REPLY, CallerRef, GenServer, _describe
from ._spec import (
    AutoShutdown,
    ChildSpec,
    ChildType,
    DynamicSupervisorSpec,
    Restart,
    Strategy,
    SupervisorSpec,
    import_object,
)
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
from ._system import node_id
from ._timing import RestartIntensity

__all__ = ["DynamicSupervisor", "Job", "Supervisor"]

#: How long to wait for a process to disappear after SIGKILL before giving up on it.
_KILL_GRACE = 5.0
#: After a child's pidfd says it ended: how long Thespian's own ChildActorExited (and
#: the child's Exiting, sent before it) may take before the death is handled without them.
_DOWN_GRACE = 0.05
#: A supervisor's job: a generator that yields what it waits for, and is sent the answer.
Job = Generator[Wait, Any, Any]
_START_WAITS = (WaitFor.START, WaitFor.STARTS)


class Supervisor(GenServer):
    """OTP supervisor over static children (see :class:`SupervisorSpec`).

    Subclasses may override :meth:`configure` to build their spec from ``init`` args.
    """

    dynamic = False

    def __init__(self) -> None:
        super().__init__()
        self._children: list[ChildRecord] = []
        self._jobs: deque[Job] = deque()
        self._job: Job | None = None
        self._wait: Wait | None = None
        self._seq = 0
        self._tickets = 0  # the last pending restart's number (``_schedule_restart``)
        self._intensity = RestartIntensity(3, 5.0)
        self._strategy = Strategy.ONE_FOR_ONE
        self._auto_shutdown = AutoShutdown.NEVER
        self._max_children: int | None = None
        self._starter: Any = None
        self._child_registry: Any = None
        self._leaving = False
        self._next_dynamic_id = 0
        self._health: HealthMonitor | None = None

    # -- hooks for subclasses ----------------------------------------------------------------

    def on_child_started(self, child_id: str, address: Any, pid: int | None) -> None:
        """Called after every successful (re)start of a child."""

    def on_child_gone(self, child_id: str) -> None:
        """Called when a child's process has ended (whatever happens next)."""

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
            self.refuse_init(starter, _describe(exc))
            return
        self._intensity = RestartIntensity(spec.intensity, spec.period)
        self._health = HealthMonitor(spec.health) if spec.health is not None else None
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
            _sigkill(child.pid)

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

    # -- the job engine ----------------------------------------------------------------

    def _enqueue(self, job: Job) -> None:
        self._jobs.append(job)
        self._run_next()

    def _run_next(self) -> None:
        while self._job is None and self._jobs and not self.stopping:
            self._job = self._jobs.popleft()
            self._advance(None)

    def _resume(self, value: Any) -> None:
        self._wait = None
        self._advance(value)
        self._run_next()

    def _advance(self, value: Any) -> None:
        job = self._job
        assert job is not None
        try:
            wait = job.send(value)
        except StopIteration:
            self._job = None
            self._wait = None
            return
        self._seq += 1
        wait.seq = self._seq
        self._wait = wait
        if wait.timeout is not None:
            self.send_after(wait.timeout, WaitTimedOut(wait.seq))
        if wait.kind is WaitFor.EXITS and all(not c.alive for c in wait.children):
            self._resume(None)

    # -- steps (generators) -------------------------------------------------------------

    def _start(self, child: ChildRecord) -> Generator[Wait, Any, str | None]:
        """Start ``child``; return None on success or the reason it failed."""
        failure = self._launch(child)
        if failure is not None:
            return failure
        result = yield Wait(WaitFor.START, (child,), child.spec.start_timeout)
        return (yield from self._settle_start(child, result))

    def _start_concurrently(self, children: list[ChildRecord]) -> Generator[Wait, Any, dict[str, str | None]]:
        """Start several (dynamic) children at once: each gets its process and Init, then
        one wait for all their answers (the longest start_timeout). Returns each
        child's failure (None: started), by child id. Each child ends as :meth:`_start`
        leaves it."""
        failures: dict[str, str | None] = {}
        launched: list[ChildRecord] = []
        for child in children:
            failure = self._launch(child)
            if failure is None:
                launched.append(child)
            else:
                failures[child.spec.id] = failure
        if launched:
            wait = Wait(WaitFor.STARTS, tuple(launched), max(c.spec.start_timeout for c in launched))
            yield wait
            for child in launched:
                failures[child.spec.id] = yield from self._settle_start(child, wait.answers.get(child.spec.id, TIMEOUT))
        return failures

    def _launch(self, child: ChildRecord) -> str | None:
        """Give ``child`` a process and send it Init; the reason if that failed."""
        child.incarnation += 1
        child.reported = None
        child.stop_requested = child.killed = False
        try:
            target = import_object(child.spec.start_path)
            if not (isinstance(target, type) and issubclass(target, GenServer)):
                raise SpecError(f"{child.spec.start_path} is not a GenServer subclass")
            child.address = self.createActor(target)
        except Exception as exc:
            child.status = ChildStatus.UNDEFINED
            return _describe(exc)
        if child.status is not ChildStatus.RESTARTING:  # a retry stays "restarting" until it is up (OTP)
            child.status = ChildStatus.STARTING
        self.send(
            child.address,
            Init(args=child.spec.args, supervisor=self.myAddress, child_id=child.spec.id, registry=self._child_registry),
        )
        return None

    def _settle_start(self, child: ChildRecord, result: Any) -> Generator[Wait, Any, str | None]:
        """Act on a launched child's answer to Init (or TIMEOUT); None if it runs."""
        if result is TIMEOUT:
            yield from self._kill(child)
            return f"no reply to init within {child.spec.start_timeout} s"
        if isinstance(result, InitFailed):
            if child.alive:
                yield Wait(WaitFor.EXIT, (child,), _KILL_GRACE)
                self._forget_process(child, KILLED)
            child.status = ChildStatus.UNDEFINED
            return result.reason
        if result is STARTED:
            return None  # settled when its InitOk came (see _answer_start)
        assert isinstance(result, InitOk)
        if result.ignored:
            if child.alive:
                yield Wait(WaitFor.EXIT, (child,), _KILL_GRACE)
                self._forget_process(child, KILLED)
            child.status = ChildStatus.UNDEFINED
            return None
        self._started(child, result)
        return None

    def _started(self, child: ChildRecord, result: InitOk) -> None:
        child.pid = result.pid
        child.status = ChildStatus.RUNNING
        child.local = result.node == node_id()
        if child.local:
            self.monitor_process(result.pid, child.process_tag)
        if child.backoff is not None:
            child.backoff.started(self.clock())
        if child.spec.provides_registry:
            self._child_registry = child.address
            # Its owner is found there too (as REGISTRY_OWNER): the tree's top, for its actors.
            self.send(child.address, Cast(Register(REGISTRY_OWNER, self.myAddress, os.getpid(), node_id())))
        if child.spec.name is not None and self._child_registry is not None:
            self.send(self._child_registry, Cast(Register(child.spec.name, child.address, child.pid, node_id())))
        self.on_child_started(child.spec.id, child.address, child.pid)

    def _kill(self, child: ChildRecord) -> Generator[Wait, Any, None]:
        if not child.alive:
            return
        child.stop_requested = True
        child.killed = True
        if child.pid is not None:
            _sigkill(child.pid)
        else:
            self.send(child.address, ActorExitRequest())
        result = yield Wait(WaitFor.EXIT, (child,), _KILL_GRACE)
        if result is TIMEOUT:
            self.log.error("child %s (pid %s) did not exit after SIGKILL; forgetting it", child.spec.id, child.pid)
            self._forget_process(child, KILLED)

    def _stop(self, child: ChildRecord) -> Generator[Wait, Any, None]:
        """Stop one child as its ``shutdown`` spec says and wait until it is gone."""
        if not child.alive:
            return
        child.status = ChildStatus.STOPPING
        shutdown = child.spec.shutdown
        if shutdown == "brutal_kill":
            yield from self._kill(child)
            return
        child.stop_requested = True
        self.send(child.address, Shutdown())
        timeout = None if shutdown == "infinity" else float(shutdown)  # type: ignore[arg-type]
        result = yield Wait(WaitFor.EXIT, (child,), timeout)
        if result is TIMEOUT:
            self.log.warning("child %s ignored shutdown for %s s; killing it", child.spec.id, timeout)
            yield from self._kill(child)

    def _stop_many(self, children: list[ChildRecord]) -> Generator[Wait, Any, None]:
        """Stop children one at a time, in the order given (callers pass reverse start order)."""
        for child in children:
            yield from self._stop(child)

    def _stop_concurrently(self, children: list[ChildRecord]) -> Generator[Wait, Any, None]:
        """Dynamic children: signal all at once, one shared deadline (none if any
        waits ``infinity``), then kill the rest (:meth:`_kill_stragglers`)."""
        live = [c for c in children if c.alive]
        if not live:
            return
        timeouts = [t for t in map(self._ask_to_stop, live) if t is not None]
        infinite = any(c.spec.shutdown == "infinity" for c in live)
        result = yield Wait(WaitFor.EXITS, tuple(live), None if infinite else max(timeouts, default=0.0))
        if result is TIMEOUT:
            yield from self._kill_stragglers([c for c in live if c.alive])

    def _ask_to_stop(self, child: ChildRecord) -> float | None:
        """Stop ``child`` as its spec's ``shutdown`` says (``brutal_kill``: SIGKILL;
        otherwise ``Shutdown``); how long to wait for it (None: ``infinity``)."""
        child.status = ChildStatus.STOPPING
        child.stop_requested = True
        if child.spec.shutdown == "brutal_kill":
            child.killed = True
            if child.pid is not None:
                _sigkill(child.pid)
            return _KILL_GRACE
        self.send(child.address, Shutdown())
        return None if child.spec.shutdown == "infinity" else float(child.spec.shutdown)  # type: ignore[arg-type]

    def _kill_stragglers(self, stragglers: list[ChildRecord]) -> Generator[Wait, Any, None]:
        """SIGKILL each; those still not gone after ``_KILL_GRACE`` are forgotten."""
        for child in stragglers:
            child.killed = True
            if child.pid is not None:
                _sigkill(child.pid)
        result = yield Wait(WaitFor.EXITS, tuple(stragglers), _KILL_GRACE)
        if result is TIMEOUT:
            for child in stragglers:
                if child.alive:
                    self._forget_process(child, KILLED)

    # -- jobs ---------------------------------------------------------------------------

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

    # -- bookkeeping ---------------------------------------------------------------------

    def _check_start_child(self, spec: Any) -> None:
        if not isinstance(spec, ChildSpec):
            raise BadRequest(f"start_child needs a ChildSpec, got {type(spec).__name__}")
        if self.dynamic:
            if self._max_children is not None and len(self._children) >= self._max_children:
                raise MaxChildren(f"max_children ({self._max_children}) reached")
            return
        for child in self._children:
            if child.spec.id == spec.id:
                if child.alive:
                    raise ChildAlreadyStarted(spec.id)
                raise ChildAlreadyPresent(spec.id)

    def _lookup(self, child_id: str) -> ChildRecord:
        for child in self._children:
            if child.spec.id == child_id:
                return child
        raise ChildNotFound(child_id)

    def _find_by_address(self, address: Any) -> ChildRecord | None:
        for child in self._children:
            if child.address is not None and child.address == address:
                return child
        return None

    def _forget_process(self, child: ChildRecord, reason: ExitReason) -> None:
        registered = child.spec.name is not None and not child.spec.provides_registry
        if registered and self._child_registry is not None and child.address is not None:
            assert child.spec.name is not None
            self.send(self._child_registry, Cast(Unregister(child.spec.name, child.address)))
        self.demonitor_process(child.process_tag)
        if self._health is not None:
            self._health.forget((child.spec.id, child.incarnation))
        child.address = None
        child.pid = None
        child.exit_reason = reason
        self.on_child_gone(child.spec.id)
        if child.status is ChildStatus.STOPPING:
            child.status = ChildStatus.UNDEFINED


def _sigkill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


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
