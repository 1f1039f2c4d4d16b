"""Supervisor, DynamicSupervisor and PartitionSupervisor actors.

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
"""

from __future__ import annotations

import inspect
import os
import signal
import zlib
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from thespian.actors import ChildActorExited, WakeupMessage

from ._exceptions import (
    BadRequest,
    ChildAlreadyPresent,
    ChildAlreadyStarted,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    MaxChildren,
    ServerNotRunning,
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
    ToPartitions,
    Unregister,
    WhichChildren,
)
from ._registry import REGISTRY_OWNER
from ._server import FORWARDED, NO_REPLY, CallerRef, GenServer, _describe
from ._spec import (
    AutoShutdown,
    ChildSpec,
    ChildType,
    DynamicSupervisorSpec,
    PartitionSupervisorSpec,
    Restart,
    Strategy,
    SupervisorSpec,
    import_object,
)
from ._system import node_id, process_alive
from ._timing import BackoffState, RestartIntensity

__all__ = ["DynamicSupervisor", "Job", "Keyed", "PartitionSupervisor", "Supervisor", "partition_index"]

#: How long to wait for a process to disappear after SIGKILL before giving up on it.
_KILL_GRACE = 5.0
#: After a child's pidfd says it ended: how long Thespian's own ChildActorExited (and
#: the child's Exiting, sent before it) may take before the death is handled without them.
_DOWN_GRACE = 0.05
#: The children a health check pings (see ``_check_health``).
_CHECKED = ("running", "stopping")


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


TIMEOUT = _Marker("TIMEOUT")
_STARTED = _Marker("STARTED")  # a "starts" answer: that child was settled as running already


@dataclass
class _Wait:
    kind: str  # "start" | "starts" | "exit" | "exits" | "sleep"
    children: tuple[_Child, ...]
    timeout: float | None
    seq: int = 0
    answers: dict[str, Any] = field(default_factory=dict)  # "starts": child id -> InitOk | InitFailed


class _Child:
    """The supervisor's record of one child spec and its current process."""

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.address: Any = None
        self.pid: int | None = None
        self.status = "undefined"
        self.incarnation = 0
        self.restarts = 0
        self.reported: ExitReason | None = None
        self.stop_requested = False
        self.killed = False
        self.exit_reason: ExitReason | None = None
        self.local = False  # its process runs on this machine (it can be watched, checked, killed)
        self.backoff = BackoffState(spec.backoff) if spec.backoff else None
        #: The pending restart that will start this child (while "restarting"): each new
        #: one a child joins replaces the one it was in (see ``Supervisor._schedule_restart``).
        self.restart_ticket = 0

    @property
    def alive(self) -> bool:
        return self.address is not None

    def info(self) -> ChildInfo:
        return ChildInfo(
            id=self.spec.id,
            status=self.status,
            type=self.spec.type.value,
            address=self.address if self.status in ("running", "stopping") else None,
            pid=self.pid,
            restarts=self.restarts,
            name=self.spec.name,
            start=self.spec.start_path,
            last_exit=str(self.exit_reason) if self.exit_reason is not None and self.restarts else None,
        )


Job = Generator[_Wait, Any, Any]


class Supervisor(GenServer):
    """OTP supervisor over static children (see :class:`SupervisorSpec`).

    Subclasses may override :meth:`configure` to build their spec from ``init`` args.
    """

    dynamic = False

    def __init__(self) -> None:
        super().__init__()
        self._children: list[_Child] = []
        self._jobs: deque[Job] = deque()
        self._job: Job | None = None
        self._wait: _Wait | None = None
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
    # start and when, as adk_actors' session partitions do: it reads a child with
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
    def stopping(self) -> bool:
        """Whether this supervisor is shutting down."""
        return self._stopping

    def enqueue(self, job: Job) -> None:
        """Run ``job`` (a generator of waits, as :meth:`start_children` is) after the
        jobs queued before it; jobs run one at a time, in order."""
        self._enqueue(job)

    def start_children(self, specs: list[ChildSpec]) -> Generator[_Wait, Any, dict[str, str | None]]:
        """Inside a job (``yield from``): add these children and start them at once
        (each gets a new process, then ``Init``; one wait for all the
        answers). Returns each child's failure by id (None: started). A child that
        failed, or that ended its start with nothing to run (``ignore``), is
        forgotten; the others are supervised as any child."""
        children = [_Child(spec) for spec in specs]
        self._children.extend(children)
        failures = yield from self._start_concurrently(children)
        for child in children:
            if (failures.get(child.spec.id) is not None or child.status == "undefined") and child in self._children:
                self._children.remove(child)
        return failures

    def stop_children(self, child_ids: list[str]) -> Generator[_Wait, Any, None]:
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

    def _begin_init(self, args: Any, starter: Any) -> None:
        try:
            spec = self.configure(args)
        except Exception as exc:
            self.send(starter, InitFailed(_describe(exc)))
            self._stopping = self._terminated = True
            self._exit()
            return
        self._intensity = RestartIntensity(spec.intensity, spec.period)
        self._health = HealthMonitor(spec.health) if spec.health is not None else None
        self._strategy = spec.strategy
        self._auto_shutdown = spec.auto_shutdown
        self._child_registry = self.registry
        self._children = [_Child(c) for c in spec.children]
        self._starter = starter
        self._enqueue(self._start_all_job(spec.concurrent_start))

    # -- message handling --------------------------------------------------------------

    def _dispatch(self, message: Any, sender: Any) -> None:
        if isinstance(message, (Reply, ErrorReply)) and self._health is not None and self._health.answered(message.ref):
            return  # a child answered its health check
        if isinstance(message, (InitOk, InitFailed)) and self._wait is not None and self._wait.kind == "start":
            child = self._wait.children[0]
            if child.address is not None and child.address == sender:
                if isinstance(message, InitOk):
                    child.address = sender  # the real, picklable address replaces the local one
                self._resume(message)
            return
        if isinstance(message, (InitOk, InitFailed)) and self._wait is not None and self._wait.kind == "starts":
            child_id = getattr(message, "child_id", None)  # InitOk names its child: one address to compare
            for child in self._wait.children:
                if child_id is not None and child.spec.id != child_id:
                    continue
                if child.address is not None and child.address == sender and child.spec.id not in self._wait.answers:
                    if isinstance(message, InitOk):
                        child.address = sender
                    self._answer_start(child, message)
                    break
            return
        if isinstance(message, Exiting):
            reporter = self._find_by_address(sender)
            if reporter is not None:
                reporter.reported = message.reason
            return
        if not self._stopping:
            # Timers, exits and shutdown requests matter while the children still start.
            if isinstance(message, WakeupMessage):
                self._on_wakeup(message)
                return
            if isinstance(message, ChildActorExited):
                self._on_child_exited(message, sender)
                return
            if isinstance(message, Shutdown):
                self._on_shutdown_request(sender)
                return
        super()._dispatch(message, sender)

    def _on_child_exited(self, message: Any, sender: Any) -> None:
        child = self._find_by_address(message.childAddress)
        if child is not None:
            self._child_down(child)
        else:  # a process the subclass made itself: its handle_info hears of it
            self.handle_info(message, sender)

    def handle_process_down(self, tag: Any) -> None:
        """A child's pidfd fired: give Thespian ``_DOWN_GRACE`` to report it, then act."""
        self.send_after(_DOWN_GRACE, tag)

    def _child_down(self, child: _Child) -> None:
        """``child``'s process has ended: record why, resume a job waiting for it, or
        start the restart procedure of a running child."""
        reason = child.reported
        if reason is None:
            reason = SHUTDOWN if child.stop_requested and not child.killed else KILLED
        if child.stop_requested and reason.kind is ExitKind.CRASH:
            reason = SHUTDOWN  # terminate() raising while asked to stop is still a shutdown
        self._forget_process(child, reason)
        wait = self._wait
        if wait is not None and child in wait.children:
            if wait.kind == "exit":
                self._resume(reason)
                return
            if wait.kind == "start":
                self._resume(InitFailed(f"exited during start: {reason}"))
                return
            if wait.kind == "starts" and child.spec.id not in wait.answers:
                self._answer_start(child, InitFailed(f"exited during start: {reason}"))
                return
            # (In a "starts" wait, one that had started already exits like any running child: below.)
            if wait.kind == "exits":
                if all(not c.alive for c in wait.children):
                    self._resume(None)
                return
        if child.status in ("running", "starting"):
            child.status = "dead"
            self._enqueue(self._child_exited_job(child, child.incarnation, reason))

    def _answer_start(self, child: _Child, answer: Any) -> None:
        """Record a child's answer in a "starts" wait (one that runs is settled now: its
        waiting requests need not wait for the others); resume when all have answered."""
        wait = self._wait
        assert wait is not None
        if isinstance(answer, InitOk) and not answer.ignored:
            self._started(child, answer)
            answer = _STARTED
        wait.answers[child.spec.id] = answer
        if len(wait.answers) == len(wait.children):
            self._resume(None)

    def handle_timeout(self, payload: Any) -> None:
        if not isinstance(payload, tuple):
            return
        if payload[0] == "wait":
            if self._wait is not None and self._wait.seq == payload[1]:
                self._resume(TIMEOUT)
        elif payload[0] == "down":
            _, child_id, incarnation = payload
            for child in self._children:
                if child.spec.id == child_id and child.incarnation == incarnation and child.alive:
                    # Thespian lost it too (it drops every dead child from its process
                    # list when it handles any one child's exit, and reports only that
                    # one), so it would wait for this child forever when we exit: the
                    # message it failed to make is made here, and its handling of it
                    # (after ours) forgets the child there as well.
                    self.log.warning("child %s (pid %s) ended with no ChildActorExited; handled as dead",
                                     child_id, child.pid)
                    self.send(self.myAddress, ChildActorExited(child.address))
        elif payload[0] == "health":
            self._check_health()
        elif payload[0] == "restart":
            self._enqueue(self._start_group_job(payload[1]))

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
        if monitor is None or self._stopping:
            return
        now = self.clock()
        for verdict in monitor.judge(now):
            child = next((c for c in self._children if (c.spec.id, c.incarnation) == verdict.key), None)
            if child is None or child.status not in _CHECKED or child.pid is None or not child.local:
                continue
            if verdict.kind == "busy":
                self.log.warning("child %s (pid %s) is %s", child.spec.id, child.pid, verdict.reason)
                continue
            self.log.error("child %s (pid %s) is %s; killing it", child.spec.id, child.pid, verdict.reason)
            child.reported = ExitReason(ExitKind.CRASH, verdict.reason)
            _sigkill(child.pid)
        for child in self._children:
            if child.status in _CHECKED and child.local and child.address is not None:
                ping = monitor.ping((child.spec.id, child.incarnation), now, child.pid)
                if ping is not None:
                    self.send(child.address, ping)
        self.send_after(monitor.check.interval, ("health",))

    def _on_shutdown_request(self, sender: Any) -> None:
        self._enqueue(self._leave_job(SHUTDOWN, notify=False))

    def _on_exit_request(self, request: Any = None) -> None:
        """ActorExitRequest (e.g. the actor system's shutdown): Thespian stops our children
        itself and waits for them, except that a child still starting (forked, not yet
        connected) may never get the request, and Thespian would wait for it forever
        (the system's shutdown then gives up after 10 s, leaving processes behind). So
        while a child is starting: the connected children are asked to exit, and we
        exit without waiting; the starting child dies with us (PR_SET_PDEATHSIG).
        The graceful path is ``Shutdown``, which waits for starts to finish.
        """
        if request is not None and any(c.alive and c.pid is None for c in self._children):
            from thespian.actors import ActorExitRequest

            for child in self._children:
                if child.alive and child.pid is not None:
                    self.send(child.address, ActorExitRequest())
            request.notRecursive()
        self._jobs.clear()
        self._job = None
        self._wait = None
        super()._on_exit_request()

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, WhichChildren):
            return [c.info() for c in self._children]
        if isinstance(request, CountChildren):
            return ChildCounts(
                specs=len(self._children),
                active=sum(1 for c in self._children if c.status == "running"),
                supervisors=sum(1 for c in self._children if c.spec.type is ChildType.SUPERVISOR),
                workers=sum(1 for c in self._children if c.spec.type is ChildType.WORKER),
            )
        if isinstance(request, GetChildSpec):
            return self._lookup(request.id).spec
        if isinstance(request, GetRegistry):
            return self._child_registry
        if isinstance(request, StartChild):
            self._check_start_child(request.spec)
            self._enqueue(self._start_child_job(request.spec, caller))
            return NO_REPLY
        if isinstance(request, TerminateChild):
            child = self._lookup(request.id)
            self._enqueue(self._terminate_child_job(child, caller))
            return NO_REPLY
        if isinstance(request, RestartChild):
            child = self._lookup(request.id)
            if self.dynamic:
                raise BadRequest("a dynamic supervisor cannot restart a child on request")
            if child.status == "restarting":
                raise ChildRestarting(request.id)
            if child.alive or child.status in ("running", "starting"):
                raise ChildRunning(request.id)
            self._enqueue(self._restart_child_job(child, caller))
            return NO_REPLY
        if isinstance(request, DeleteChild):
            child = self._lookup(request.id)
            if self.dynamic:
                raise BadRequest("a dynamic supervisor cannot delete a child spec")
            if child.status == "restarting":
                raise ChildRestarting(request.id)
            if child.alive:
                raise ChildRunning(request.id)
            self._children.remove(child)
            return "ok"
        raise UnknownRequest(f"supervisor does not handle {type(request).__name__}")

    # -- the job engine ----------------------------------------------------------------

    def _enqueue(self, job: Job) -> None:
        self._jobs.append(job)
        self._run_next()

    def _run_next(self) -> None:
        while self._job is None and self._jobs and not self._terminated:
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
            self.send_after(wait.timeout, ("wait", wait.seq))
        if wait.kind == "exits" and all(not c.alive for c in wait.children):
            self._resume(None)

    # -- steps (generators) -------------------------------------------------------------

    def _start(self, child: _Child) -> Generator[_Wait, Any, str | None]:
        """Start ``child``; return None on success or the reason it failed."""
        failure = self._launch(child)
        if failure is not None:
            return failure
        result = yield _Wait("start", (child,), child.spec.start_timeout)
        return (yield from self._settle_start(child, result))

    def _start_concurrently(self, children: list[_Child]) -> Generator[_Wait, Any, dict[str, str | None]]:
        """Start several (dynamic) children at once: each gets its process and Init, then
        one wait for all their answers (the longest start_timeout). Returns each
        child's failure (None: started), by child id. Each child ends as :meth:`_start`
        leaves it."""
        failures: dict[str, str | None] = {}
        launched: list[_Child] = []
        for child in children:
            failure = self._launch(child)
            if failure is None:
                launched.append(child)
            else:
                failures[child.spec.id] = failure
        if launched:
            wait = _Wait("starts", tuple(launched), max(c.spec.start_timeout for c in launched))
            yield wait
            for child in launched:
                failures[child.spec.id] = yield from self._settle_start(child, wait.answers.get(child.spec.id, TIMEOUT))
        return failures

    def _launch(self, child: _Child) -> str | None:
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
            child.status = "undefined"
            return _describe(exc)
        if child.status != "restarting":  # a retry stays "restarting" until it is up (OTP)
            child.status = "starting"
        self.send(
            child.address,
            Init(args=child.spec.args, supervisor=self.myAddress, child_id=child.spec.id, registry=self._child_registry),
        )
        return None

    def _settle_start(self, child: _Child, result: Any) -> Generator[_Wait, Any, str | None]:
        """Act on a launched child's answer to Init (or TIMEOUT); None if it runs."""
        if result is TIMEOUT:
            yield from self._kill(child)
            return f"no reply to init within {child.spec.start_timeout} s"
        if isinstance(result, InitFailed):
            if child.alive:
                yield _Wait("exit", (child,), _KILL_GRACE)
                self._forget_process(child, KILLED)
            child.status = "undefined"
            return result.reason
        if result is _STARTED:
            return None  # settled when its InitOk came (see _answer_start)
        assert isinstance(result, InitOk)
        if result.ignored:
            if child.alive:
                yield _Wait("exit", (child,), _KILL_GRACE)
                self._forget_process(child, KILLED)
            child.status = "undefined"
            return None
        self._started(child, result)
        return None

    def _started(self, child: _Child, result: InitOk) -> None:
        child.pid = result.pid
        child.status = "running"
        child.local = result.node == node_id()
        if child.local:
            self.monitor_process(result.pid, ("down", child.spec.id, child.incarnation))
        if child.backoff is not None:
            child.backoff.started(self.clock())
        if child.spec.provides_registry:
            self._child_registry = child.address
            # Its owner is found there too (as REGISTRY_OWNER): the tree's top, for its actors.
            self.send(child.address, Cast(Register(REGISTRY_OWNER, self.myAddress, os.getpid(), node_id())))
        if child.spec.name is not None and self._child_registry is not None:
            self.send(self._child_registry, Cast(Register(child.spec.name, child.address, child.pid, node_id())))
        self.on_child_started(child.spec.id, child.address, child.pid)

    def _kill(self, child: _Child) -> Generator[_Wait, Any, None]:
        if not child.alive:
            return
        child.stop_requested = True
        child.killed = True
        if child.pid is not None:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            from thespian.actors import ActorExitRequest

            self.send(child.address, ActorExitRequest())
        result = yield _Wait("exit", (child,), _KILL_GRACE)
        if result is TIMEOUT:
            self.log.error("child %s (pid %s) did not exit after SIGKILL; forgetting it", child.spec.id, child.pid)
            self._forget_process(child, KILLED)

    def _stop(self, child: _Child) -> Generator[_Wait, Any, None]:
        """Stop one child as its ``shutdown`` spec says and wait until it is gone."""
        if not child.alive:
            return
        child.status = "stopping"
        shutdown = child.spec.shutdown
        if shutdown == "brutal_kill":
            yield from self._kill(child)
            return
        child.stop_requested = True
        self.send(child.address, Shutdown())
        timeout = None if shutdown == "infinity" else float(shutdown)  # type: ignore[arg-type]
        result = yield _Wait("exit", (child,), timeout)
        if result is TIMEOUT:
            self.log.warning("child %s ignored shutdown for %s s; killing it", child.spec.id, timeout)
            yield from self._kill(child)

    def _stop_many(self, children: list[_Child]) -> Generator[_Wait, Any, None]:
        """Stop children one at a time, in the order given (callers pass reverse start order)."""
        for child in children:
            yield from self._stop(child)

    def _stop_concurrently(self, children: list[_Child]) -> Generator[_Wait, Any, None]:
        """Dynamic children: signal all at once, one shared deadline, then kill the rest."""
        live = [c for c in children if c.alive]
        timeouts: list[float] = []
        for child in live:
            child.status = "stopping"
            child.stop_requested = True
            if child.spec.shutdown == "brutal_kill":
                child.killed = True
                if child.pid is not None:
                    _sigkill(child.pid)
                timeouts.append(_KILL_GRACE)
            else:
                self.send(child.address, Shutdown())
                if child.spec.shutdown != "infinity":
                    timeouts.append(float(child.spec.shutdown))  # type: ignore[arg-type]
        if not live:
            return
        infinite = any(c.spec.shutdown == "infinity" for c in live)
        result = yield _Wait("exits", tuple(live), None if infinite else max(timeouts, default=0.0))
        if result is TIMEOUT:
            stragglers = [c for c in live if c.alive]
            for child in stragglers:
                child.killed = True
                if child.pid is not None:
                    _sigkill(child.pid)
            result = yield _Wait("exits", tuple(stragglers), _KILL_GRACE)
            if result is TIMEOUT:
                for child in stragglers:
                    if child.alive:
                        self._forget_process(child, KILLED)

    # -- jobs ---------------------------------------------------------------------------

    def _start_all_job(self, concurrent: bool) -> Job:
        """Start the children in order (or all at once: ``SupervisorSpec.concurrent_start``);
        at the first failure, stop those started, in reverse order, and fail the start."""
        started: list[_Child] = []
        together: dict[str, str | None] = {}
        if concurrent:
            together = yield from self._start_concurrently(list(self._children))
        for child in list(self._children):
            failure = together[child.spec.id] if concurrent else (yield from self._start(child))
            if failure is not None:
                self.log.error("child %s failed to start: %s", child.spec.id, failure)
                running = [c for c in self._children if c.alive and c not in started] if concurrent else []
                yield from self._stop_many(list(reversed(started + running)))
                self.send(self._starter, InitFailed(f"child {child.spec.id!r} failed to start: {failure}"))
                self._stopping = self._terminated = True
                self._exit()
                return
            if child.status == "undefined" and child.spec.restart is Restart.TEMPORARY:
                self._children.remove(child)  # an ignored temporary child is not kept
            else:
                started.append(child)
        self._initialized = True
        self.send(self._starter, InitOk(os.getpid(), child_id=self.child_id, node=node_id()))
        if self._health is not None:
            self.send_after(self._health.check.interval, ("health",))

    def _child_exited_job(self, child: _Child, incarnation: int, reason: ExitReason) -> Job:
        if child not in self._children or child.incarnation != incarnation or child.status != "dead":
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
                child.status = "undefined"
            if child.spec.significant and self._auto_shutdown_due(child):
                yield from self._leave_job(SHUTDOWN, notify=True)
            return
        yield from self._restart_job(child)

    def _auto_shutdown_due(self, exited: _Child) -> bool:
        if self._auto_shutdown is AutoShutdown.ANY_SIGNIFICANT:
            return True
        if self._auto_shutdown is AutoShutdown.ALL_SIGNIFICANT:
            return not any(c.alive for c in self._children if c.spec.significant and c is not exited)
        return False

    def _restart_job(self, failed: _Child) -> Job:
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

    def _schedule_restart(self, group: list[_Child], delay: float) -> int:
        """Make ``group`` one pending restart and return its ticket: each child is
        ``restarting`` and belongs to this restart only (a restart it was waiting in
        before, a sibling's backoff timer or retry, no longer starts it: this one
        does, in start order). With ``delay`` > 0 a timer starts it then; otherwise
        the caller starts it at once, or queues it (:meth:`_start_group_job`)."""
        self._tickets += 1
        ticket = self._tickets
        for child in group:
            child.status = "restarting"
            child.restart_ticket = ticket
        if delay > 0:
            self.send_after(delay, ("restart", ticket))
        return ticket

    def _start_group_job(self, ticket: int) -> Job:
        """(Re)start, in start order, the children still waiting in restart ``ticket``
        (none: a later restart took them all over, and this one is void); the restart
        is counted against the intensity first (over it: the supervisor leaves). At a
        failed start, that child and those after it become a new pending restart,
        after that child's backoff (at once: queued), and are counted again then."""
        ordered = [c for c in self._children if c.status == "restarting" and c.restart_ticket == ticket]
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
            if child.status == "undefined" and child.spec.restart is Restart.TEMPORARY:
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
        self._fail_pending("not_running", "supervisor shut down")
        self._run_terminate(reason)
        if notify:
            self._notify_supervisor(reason)
        self._exit()

    def _start_child_job(self, spec: ChildSpec, caller: CallerRef) -> Job:
        try:
            self._check_start_child(spec)
        except Exception as err:
            from ._exceptions import CallError

            self.reply_error(caller, err if isinstance(err, CallError) else BadRequest(str(err)))
            return
        if self.dynamic:
            self._next_dynamic_id += 1
            spec = replace(spec, id=f"{spec.id}#{self._next_dynamic_id}")
        child = _Child(spec)
        self._children.append(child)
        failure = yield from self._start(child)
        if failure is not None:
            self._children.remove(child)
            self.reply_error(caller, StartFailed(f"child {spec.id!r} failed to start: {failure}"))
            return
        if child.status == "undefined" and (self.dynamic or spec.restart is Restart.TEMPORARY):
            self._children.remove(child)
        self.reply(caller, Started(spec.id, child.address if child.status == "running" else None, child.pid))

    def _terminate_child_job(self, child: _Child, caller: CallerRef) -> Job:
        if child in self._children:
            if self.dynamic:
                yield from self._stop_concurrently([child])
            else:
                yield from self._stop(child)
            if child.spec.restart is Restart.TEMPORARY or self.dynamic:
                if child in self._children:
                    self._children.remove(child)
            else:
                child.status = "undefined"
        self.reply(caller, "ok")

    def _restart_child_job(self, child: _Child, caller: CallerRef) -> Job:
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

    def _lookup(self, child_id: str) -> _Child:
        for child in self._children:
            if child.spec.id == child_id:
                return child
        raise ChildNotFound(child_id)

    def _find_by_address(self, address: Any) -> _Child | None:
        for child in self._children:
            if child.address is not None and child.address == address:
                return child
        return None

    def _forget_process(self, child: _Child, reason: ExitReason) -> None:
        registered = child.spec.name is not None and not child.spec.provides_registry
        if registered and self._child_registry is not None and child.address is not None:
            assert child.spec.name is not None
            self.send(self._child_registry, Cast(Unregister(child.spec.name, child.address)))
        self.demonitor_process(("down", child.spec.id, child.incarnation))
        if self._health is not None:
            self._health.forget((child.spec.id, child.incarnation))
        child.address = None
        child.pid = None
        child.exit_reason = reason
        self.on_child_gone(child.spec.id)
        if child.status == "stopping":
            child.status = "undefined"


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


def partition_index(key: str, partitions: int) -> int:
    """The partition (0 .. partitions-1) that owns ``key``: ``crc32(key) % partitions``,
    stable across processes and restarts."""
    return zlib.crc32(key.encode(errors="surrogatepass")) % partitions


class Keyed(Protocol):
    """A request a :class:`PartitionSupervisor` routes: it names the key (e.g. a session's
    ``app/user/session``) whose partition must handle it."""

    @property
    def partition_key(self) -> str: ...


class PartitionSupervisor(Supervisor):
    """``partitions`` dynamic supervisors behind one address (one_for_one).

    ``StartChild(spec, key)`` is forwarded to partition :func:`partition_index` of the
    key, which replies to the original caller directly. The partitions are
    DynamicSupervisors, or the class ``PartitionSupervisorSpec.partition_start`` names.

    A call whose request is :class:`Keyed` is routed the same way, so that a caller
    addresses a key, not a partition (Elixir's ``{:via, PartitionSupervisor, {name,
    key}}``): it is forwarded to the key's partition, which answers the caller (and
    sends it whatever else the request asks for) directly. While that partition is
    restarting, or its process is seen gone before its exit is handled, the call is
    held and forwarded as soon as the partition runs again; after
    ``PartitionSupervisorSpec.route_hold`` seconds it is answered ``restarting``; on
    shutdown, ``not_running``. A call forwarded to a partition that dies before it
    handles it is lost: the caller's own deadline covers that (as for any call).
    """

    def __init__(self) -> None:
        super().__init__()
        self._route_hold = 10.0
        self._held: dict[str, list[tuple[Any, CallerRef]]] = {}  # partition id -> calls waiting for it
        self._settings: dict[str, Any] = {}  # ToPartitions: topic -> the latest message

    def configure(self, args: Any) -> SupervisorSpec:
        if not isinstance(args, PartitionSupervisorSpec):
            raise SpecError(f"PartitionSupervisor needs a PartitionSupervisorSpec, got {type(args).__name__}")
        self._route_hold = args.route_hold
        start: Any = args.partition_start
        partition_args = args.partition_args
        if start is None:
            start, partition_args = DynamicSupervisor, DynamicSupervisorSpec(
                max_children=args.max_children_per_partition, intensity=args.intensity, period=args.period)
        children = tuple(
            ChildSpec(id=f"{args.partition_prefix}-{i}", start=start, args=partition_args, type=args.partition_type,
                      shutdown=args.partition_shutdown, start_timeout=args.partition_start_timeout,
                      backoff=args.partition_backoff)
            for i in range(args.partitions))
        return SupervisorSpec(children=children, strategy=Strategy.ONE_FOR_ONE, intensity=args.intensity,
                              period=args.period, concurrent_start=True, health=args.health)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, StartChild):
            if not isinstance(request.spec, ChildSpec):
                raise BadRequest("start_child needs a ChildSpec")
            key = request.key if request.key is not None else request.spec.id
            partition = self._children[partition_index(key, len(self._children))]
            if partition.status != "running":
                raise ChildRestarting(f"partition {partition.spec.id} is restarting")
            self._forward(partition.address, request, caller)
            return FORWARDED
        if inspect.getattr_static(request, "partition_key", None) is not None:  # Keyed (nothing evaluated yet)
            return self._route(request, caller)
        return super().handle_call(request, caller)

    def _route(self, request: Keyed, caller: CallerRef) -> Any:
        """Forward ``request`` to its key's partition, or hold it while that partition
        restarts (see the class)."""
        try:
            index = partition_index(request.partition_key, len(self._children))
        except Exception as exc:  # a key that is no string: the caller's error, never our crash
            raise BadRequest(f"{type(request).__name__} names no routable key ({_describe(exc)})") from None
        if self.stopping or self._leaving:
            raise ServerNotRunning("the partitions are shutting down")
        partition = self._children[index]
        if self._reachable(partition):
            self._forward(partition.address, request, caller)
            return FORWARDED
        self._held.setdefault(partition.spec.id, []).append((request, caller))
        self.send_after(self._route_hold, ("held", partition.spec.id, caller.ref))
        return NO_REPLY

    def _forward(self, address: Any, request: Any, caller: CallerRef) -> None:
        """Hand ``caller``'s call to the partition at ``address``, which answers it directly
        (a caller that watches is told: ``hand_over``)."""
        self.hand_over(caller, request, address)

    @staticmethod
    def _reachable(partition: _Child) -> bool:
        return partition.status == "running" and not (
            partition.local and partition.pid is not None and not process_alive(partition.pid))

    def handle_cast(self, request: Any) -> None:
        """``ToPartitions``: kept, and cast to every running partition."""
        if isinstance(request, ToPartitions):
            self._settings[request.topic] = request.message
            for child in self._children:
                if child.status == "running" and child.address is not None:
                    self.send(child.address, Cast(request.message))
            return
        super().handle_cast(request)

    def on_child_started(self, child_id: str, address: Any, pid: int | None) -> None:
        """A partition runs (again): it is cast the kept ``ToPartitions`` messages, then
        the calls held for it are forwarded, in order."""
        for message in self._settings.values():
            self.send(address, Cast(message))
        for request, caller in self._held.pop(child_id, []):
            self._pending.pop(caller.ref, None)
            self._forward(address, request, caller)

    def handle_timeout(self, payload: Any) -> None:
        if isinstance(payload, tuple) and payload[0] == "held":
            _, child_id, ref = payload
            held = self._held.get(child_id, [])
            for entry in [e for e in held if e[1].ref == ref]:
                held.remove(entry)
                self.reply_error(entry[1], ChildRestarting(
                    f"partition {child_id} did not run again within {self._route_hold:g} s"))
            return
        super().handle_timeout(payload)
