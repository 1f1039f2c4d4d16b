"""The engine a supervisor runs its jobs on, and the steps jobs are made of.

A job is a generator that yields what it waits for (a :class:`Wait`) and is sent the
answer. The engine runs them one at a time, in order, as OTP's supervisor handles one
thing at a time: :meth:`SupervisorSteps._enqueue` queues one; the next job starts once
none runs; each ``Wait`` it yields gets a number and, with a timeout, a timer
(:class:`WaitTimedOut`); the supervisor resumes the job with the answer when it
comes (:meth:`SupervisorSteps._resume`), or at once when the children it would wait
for are gone already. A job that returns frees the engine for the next.

The steps, each a generator a job runs with ``yield from``, in a child's order of life:

* start: the child gets a process and ``Init`` (:meth:`~SupervisorSteps._launch`);
  its answer, or ``TIMEOUT`` (then it is killed), settles it: running (monitored by
  pidfd, registered by name, :meth:`~SupervisorSteps.on_child_started`), refused or
  ignored (its process waited for, then forgotten);
* stop: as its spec's ``shutdown`` says, ``Shutdown`` then a wait, or at once
  SIGKILL (``brutal_kill``); still there when the wait is over, it is killed; still
  there ``_KILL_GRACE`` after SIGKILL, it is forgotten. Static children stop one at a
  time, dynamic ones all at once with one deadline;
* forget: its name unregistered, its monitor and health ping dropped,
  :meth:`~SupervisorSteps.on_child_gone`.

The OTP procedures built from them are in :mod:`supervision._supervisor_jobs`; the
actor that takes the messages, in :mod:`supervision._supervisor`.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import Generator
from typing import Any

from thespian.actors import ActorExitRequest

from ._exceptions import (
    BadRequest,
    ChildAlreadyPresent,
    ChildAlreadyStarted,
    ChildNotFound,
    MaxChildren,
    SpecError,
)
from ._health import HealthMonitor, load_scaled
from ._messages import (
    KILLED,
    Cast,
    ExitReason,
    Init,
    InitFailed,
    InitOk,
    Register,
    Shutdown,
    Unregister,
)
from ._registry import REGISTRY_OWNER
from ._server import GenServer
from ._server_types import describe
from ._spec import (
    AutoShutdown,
    ChildSpec,
    Strategy,
    import_object,
)
from ._supervisor_state import (
    STARTED,
    TIMEOUT,
    ChildRecord,
    ChildStatus,
    Wait,
    WaitFor,
    WaitTimedOut,
)
from ._system import node_id
from ._timing import RestartIntensity

__all__ = ["Job", "SupervisorSteps", "sigkill"]

#: How long to wait for a process to disappear after SIGKILL before giving up on it.
_KILL_GRACE = 5.0
#: A supervisor's job: a generator that yields what it waits for, and is sent the answer.
Job = Generator[Wait, Any, Any]


class SupervisorSteps(GenServer):
    """A supervisor's state, its job engine and the steps of its jobs (see the module);
    :class:`~supervision.Supervisor` is built on it."""

    #: Whether children are started at run time (:class:`~supervision.lowlevel.DynamicSupervisor`).
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
        #: the last process's incarnation number: one count for every child, so that a
        #: child removed and added again under its id never repeats a tag of its old self
        #: (a timer of its old process's end would take the new one for dead)
        self._incarnations = 0

    # -- hooks for subclasses ----------------------------------------------------------------

    def on_child_started(self, child_id: str, address: Any, pid: int | None) -> None:
        """Called after every successful (re)start of a child."""

    def on_child_gone(self, child_id: str) -> None:
        """Called when a child's process has ended (whatever happens next)."""

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
        wait = Wait(WaitFor.START, (child,), load_scaled(child.spec.start_timeout))
        result = yield wait
        return (yield from self._settle_start(child, result, wait.timeout))

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
            wait = Wait(WaitFor.STARTS, tuple(launched), load_scaled(max(c.spec.start_timeout for c in launched)))
            yield wait
            for child in launched:
                failures[child.spec.id] = yield from self._settle_start(child, wait.answers.get(child.spec.id, TIMEOUT),
                                                                        wait.timeout)
        return failures

    def _launch(self, child: ChildRecord) -> str | None:
        """Give ``child`` a process and send it Init; the reason if that failed."""
        self._incarnations += 1
        child.incarnation = self._incarnations
        child.reported = None
        child.stop_requested = child.killed = False
        try:
            target = import_object(child.spec.start_path)
            if not (isinstance(target, type) and issubclass(target, GenServer)):
                raise SpecError(f"{child.spec.start_path} is not a GenServer subclass")
            child.address = self.createActor(target)
        except Exception as exc:
            child.status = ChildStatus.UNDEFINED
            return describe(exc)
        if child.status is not ChildStatus.RESTARTING:  # a retry stays "restarting" until it is up (OTP)
            child.status = ChildStatus.STARTING
        self.send(
            child.address,
            Init(args=child.spec.args, supervisor=self.myAddress, child_id=child.spec.id, registry=self._child_registry),
        )
        return None

    def _settle_start(self, child: ChildRecord, result: Any,
                      waited: float | None = None) -> Generator[Wait, Any, str | None]:
        """Act on a launched child's answer to Init (or TIMEOUT, after ``waited`` s); None if it runs."""
        if result is TIMEOUT:
            yield from self._kill(child)
            return f"no reply to init within {waited if waited is not None else child.spec.start_timeout:g} s"
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
            sigkill(child.pid)
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
                sigkill(child.pid)
            return _KILL_GRACE
        self.send(child.address, Shutdown())
        return None if child.spec.shutdown == "infinity" else float(child.spec.shutdown)  # type: ignore[arg-type]

    def _kill_stragglers(self, stragglers: list[ChildRecord]) -> Generator[Wait, Any, None]:
        """SIGKILL each; those still not gone after ``_KILL_GRACE`` are forgotten."""
        for child in stragglers:
            child.killed = True
            if child.pid is not None:
                sigkill(child.pid)
        result = yield Wait(WaitFor.EXITS, tuple(stragglers), _KILL_GRACE)
        if result is TIMEOUT:
            for child in stragglers:
                if child.alive:
                    self._forget_process(child, KILLED)

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


def sigkill(pid: int) -> None:
    """SIGKILL ``pid``; one already gone is no error."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
