"""Session partitions: dynamic supervisors of session actors that also route to them.

A partition is the parent of its session actors, so it always knows where each one
is, also right after a restart. A session request is handled, in order:

* the session's actor runs: the request is forwarded to it (it replies straight to
  the caller);
* it is being started or restarted: the request waits and is forwarded once it is up;
* it is not running: if the store has the session, its actor is started (activation)
  and the request forwarded; else the caller gets ``unknown_session``.

Session actors are transient: restarted after a crash or kill -9 (they reload from
the store), not after passivation (a normal exit). Creating, listing and deleting
sessions are handled here, through the partition's own store connection.

Session pool: a partition keeps up to ``session_pool`` session actors started ahead
of need, each with a blank run actor of its own (``prepare``). An activation or a
restart takes one, which only gets ``Init`` (it opens the store and loads the
session), instead of forking two processes on the first turn's path; a session just
created is activated at once while one is ready (its first turn is about to come):
that one is reserved for it and named in the answer to ``CreateSession``, so the
creator's first turn can go straight to it.
The pool is refilled as
background work: at most one process pair per ``POOL_REFILL_INTERVAL`` seconds, only
while no activation is in progress, and when the machine's CPUs were at least
``POOL_REFILL_IDLE`` idle over the last interval, so that refilling does not compete
with the turns of the burst it absorbed; on a machine kept busy, one pair per
``POOL_REFILL_MAX_WAIT`` seconds all the same (``_refill.RefillGate``). A busy host
whose pool ran dry activates sessions as without one (two forks on the first turn's
path).
Pooled processes are not children in ``which_children``; they die with their partition.
"""

from __future__ import annotations

import importlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from supervision import (
    FORWARDED,
    NO_REPLY,
    BadRequest,
    Call,
    CallerRef,
    CallError,
    ChildInfo,
    ChildSpec,
    GenServer,
    Job,
    Prepare,
    Prepared,
    Restart,
    Supervisor,
    SupervisorSpec,
    partition_index,
    process_alive,
)

from .._validate import check_fields
from ..messages import (
    CancelRun,
    CreateSession,
    DeleteSession,
    GetSession,
    GetState,
    Limits,
    ListSessions,
    RunFailed,
    RunRequest,
    SessionInfo,
    UpdateState,
    session_key,
)
from ..store import SessionExists, SessionLimitReached, SQLiteSessionStore
from ._refill import POOL_REFILL_INTERVAL, RefillGate, cpu_idle_counters
from ._run import load_agent
from ._session import SessionActor, SessionArgs

__all__ = ["PartitionArgs", "SessionPartition"]


@dataclass(frozen=True)
class PartitionArgs:
    store_path: str
    apps: dict[str, str]  # app name -> root agent import path
    idle_timeout: float = 300.0
    run_timeout: float | None = None  # a run's deadline when its RunConfig sets none
    max_queued_runs: int = 8
    intensity: int = 10
    period: float = 5.0
    session_shutdown: float = 10.0
    partitions: int = 1
    model_base_urls: dict[str, str] | None = None
    breakers: bool = True
    model_options: dict[str, Any] | None = None
    session_pool: int = 0  # session actors started ahead of need (see the module doc)
    limits: Limits = field(default_factory=Limits)


@dataclass
class _Pooled:
    address: Any
    pid: int | None = None  # known once it answered Prepared: it is up and prepared
    reserved_for: str | None = None  # the session key it is about to be activated for


_ROUTED = (RunRequest, GetSession, GetState, CancelRun, UpdateState)

#: Imported by a partition before it forks session and run actors: a module imported
#: first in a forked actor is imported again by every session (structlog: ~10 ms).
_PRELOAD = ("adk_actors.log", "adk_actors.telemetry", "adk_actors.engine._flow", "adk_actors.models")


class SessionPartition(Supervisor):
    check_request = staticmethod(check_fields)  # malformed requests: invalid_request, never a crash

    dynamic = True

    def configure(self, args: Any) -> SupervisorSpec:
        if not isinstance(args, PartitionArgs):
            raise BadRequest("SessionPartition needs PartitionArgs")
        self.config = args
        for module in _PRELOAD:
            importlib.import_module(module)
        for app, path in args.apps.items():
            # Imported here once: every session and run actor forked below inherits it
            # (a run would otherwise import its agent anew); a bad path fails the start.
            try:
                load_agent(path)
            except Exception as exc:
                raise BadRequest(f"app {app!r}: cannot import its agent {path!r}: {type(exc).__name__}: {exc}") from exc
        self.store = SQLiteSessionStore(args.store_path)
        self.pending: dict[str, list[tuple[Any, CallerRef]]] = {}
        self.to_activate: dict[str, Any] = {}  # session key -> the request that activates it
        self.activation_queued = False
        self.pool: list[_Pooled] = []
        self.refill_armed = False
        self.refill_gate = RefillGate(cpu_idle_counters())
        self._arm_refill()
        self._fail_orphaned_runs()
        return SupervisorSpec(children=(), intensity=args.intensity, period=args.period)

    def _fail_orphaned_runs(self) -> None:
        """A (re)started partition has no session actors: any run still marked running
        in one of its sessions died with the previous partition. Tell its caller now."""
        index = int(self.child_id.rsplit("-", 1)[1]) if self.child_id and self.child_id[-1].isdigit() else 0
        for app, user, session_id, record in self.store.all_running_runs():
            if partition_index(session_key(app, user, session_id), self.config.partitions) != index:
                continue
            if record.caller is not None:
                self.send(record.caller, RunFailed(record.run_id, "interrupted", "PartitionRestarted",
                                                   "the session's partition was restarted while this run was in flight"))
            self.store.end_run(record.run_id, "interrupted")

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, ListSessions):
            self._check_app(request.app_name)
            return [SessionInfo(s.app_name, s.user_id, s.id, s.state, [], s.last_update_time)
                    for s in self.store.list_sessions(request.app_name, request.user_id)]
        if isinstance(request, CreateSession):
            self._check_app(request.app_name)
            session_id = request.session_id or uuid.uuid4().hex
            try:
                data = self.store.create_session(request.app_name, request.user_id, session_id, dict(request.state),
                                                 max_per_user=self.config.limits.max_sessions_per_user)
            except SessionExists as exc:
                raise CallError(str(exc), code="session_exists") from None
            except SessionLimitReached as exc:
                raise CallError(str(exc), code="limit_exceeded") from None
            actor = self._activate_early(request.app_name, request.user_id, session_id)
            return SessionInfo(data.app_name, data.user_id, data.id, data.state, [], data.last_update_time,
                               session_actor=actor)
        if isinstance(request, DeleteSession):
            self._check_app(request.app_name)
            self.enqueue(self._delete_job(request, caller))
            return NO_REPLY
        if isinstance(request, _ROUTED):
            return self._route(request, caller)
        if request == "pool":  # for tests and tools: the pids of the pooled session actors that are up
            return [p.pid for p in self._ready_pool()]
        return super().handle_call(request, caller)

    def _check_app(self, app_name: Any) -> None:
        if not isinstance(app_name, str) or app_name not in self.config.apps:
            raise CallError(f"unknown app {app_name!r}; known apps: {sorted(self.config.apps)}", code="unknown_app")

    def _route(self, request: Any, caller: CallerRef) -> Any:
        self._check_app(request.app_name)
        if not all(isinstance(x, str) and x for x in (request.user_id, request.session_id)):
            raise BadRequest("user_id and session_id must be non-empty strings")
        key = request.key
        child = self._session_child(key)
        if child is not None and child.status == "running" and child.address is not None:
            self.send(child.address, Call(request, ref=caller.ref, reply_to=caller.address))
            return FORWARDED
        if key in self.pending or child is not None:
            self.pending.setdefault(key, []).append((request, caller))
            return FORWARDED
        if not self.store.session_exists(request.app_name, request.user_id, request.session_id):
            raise CallError(f"no session {request.session_id!r} for {request.app_name}/{request.user_id}",
                            code="unknown_session")
        self.pending[key] = [(request, caller)]
        self._queue_activation(key, request)
        return FORWARDED

    def _activate_early(self, app_name: str, user_id: str, session_id: str) -> tuple[Any, int] | None:
        """A session just created is about to get its first turn: if a pooled session
        actor is ready, reserve it for the session and activate the session on it now
        (no fork; the first turn then finds it running or starting). Returns that
        actor's (address, pid), for the creator's first turn to go straight there (one
        hop less); with the pool empty, None: the session is activated by its first
        request, as any stored session."""
        key = session_key(app_name, user_id, session_id)
        ready = self._ready_pool()
        if not ready or key in self.pending or self._session_child(key):
            return None
        pooled = ready[0]
        pooled.reserved_for = key
        assert pooled.pid is not None  # ready
        self.pending[key] = []
        self._queue_activation(key, GetState(app_name, user_id, session_id))
        return pooled.address, pooled.pid

    def _queue_activation(self, key: str, request: Any) -> None:
        """Have ``key``'s session actor started by the next activation job (``request``
        names its app, user and session), queueing that job if none is queued."""
        self.to_activate[key] = request
        if not self.activation_queued:
            self.activation_queued = True
            self.enqueue(self._activate_job())

    def _session_child(self, key: str) -> ChildInfo | None:
        return self.child(key)

    def _activate_job(self) -> Job:
        """Start the actors of sessions waiting for activation: as many at once as the
        pool has processes ready (their inits run in parallel: a burst of new sessions
        does not queue behind one another's store loads), else one; forward each its
        waiting requests as it is up, or tell those callers it could not start. The
        rest, and sessions asked for meanwhile, wait for the next such job."""
        self.activation_queued = False
        # As many at once as pooled processes are ready (at least one): forking many
        # at once would only make them compete for the CPU (measured: worse).
        take = max(1, len(self._up_pool()))  # reserved ones too
        keys = list(self.to_activate)[:take]
        batch = {key: self.to_activate.pop(key) for key in keys}
        if self.to_activate:
            self.activation_queued = True
            self.enqueue(self._activate_job())
        specs: list[ChildSpec] = []
        for key, request in batch.items():
            if self._session_child(key) is not None:
                continue
            specs.append(ChildSpec(
                id=key, start=SessionActor, restart=Restart.TRANSIENT, shutdown=self.config.session_shutdown,
                args=SessionArgs(request.app_name, request.user_id, request.session_id, self.config.store_path,
                                 self.config.apps[request.app_name], self.config.idle_timeout,
                                 self.config.max_queued_runs, model_base_urls=self.config.model_base_urls,
                                 breakers=self.config.breakers, model_options=self.config.model_options,
                                 run_timeout=self.config.run_timeout, limits=self.config.limits)))
        failures = yield from self.start_children(specs)
        for pooled in self.pool:  # reserved for a session of this batch and not used: free again
            if pooled.reserved_for in batch:
                pooled.reserved_for = None
        for spec in specs:
            failure = failures.get(spec.id)
            if failure is not None:
                for _, caller in self.pending.pop(spec.id, []):
                    self.reply_error(caller, CallError(f"session {spec.id} could not start: {failure}",
                                                       code="not_running"))

    # -- the session pool ----------------------------------------------------------------

    def spawn(self, child_class: type[GenServer], spec: ChildSpec) -> Any:
        """A pooled session actor that is up (else a new one), for a session actor's
        (re)start."""
        if child_class is SessionActor:
            while True:
                pooled = next((p for p in self._up_pool() if p.reserved_for == spec.id), None)
                pooled = pooled or next(iter(self._ready_pool()), None)
                if pooled is None:
                    break
                self.pool.remove(pooled)
                self._arm_refill()
                if pooled.pid is not None and process_alive(pooled.pid):
                    return pooled.address
        return super().spawn(child_class, spec)

    def _up_pool(self) -> list[_Pooled]:
        """The pooled session actors that are up and prepared (they answered Prepared)."""
        return [p for p in self.pool if p.pid is not None]

    def _ready_pool(self) -> list[_Pooled]:
        """The pooled session actors that are up and not reserved for a session about to
        be activated."""
        return [p for p in self._up_pool() if p.reserved_for is None]

    def _arm_refill(self) -> None:
        if not self.refill_armed and len(self.pool) < self.config.session_pool:
            self.refill_armed = True
            self.send_after(POOL_REFILL_INTERVAL, ("refill-pool",))

    def _refill(self) -> None:
        """Start one pooled session actor, unless an activation (or any supervisor
        job) is in progress or the refill gate says no (``_refill``); come back later
        while the pool is short."""
        self.refill_armed = False
        if self.stopping:
            return
        if len(self.pool) >= self.config.session_pool:
            self.refill_gate.rest()
            return
        if not self.busy and self.refill_gate.may_start(self.clock(), cpu_idle_counters()):
            address = self.createActor(SessionActor)
            self.send(address, Prepare())
            self.pool.append(_Pooled(address))
        self._arm_refill()

    def handle_timeout(self, payload: Any) -> None:
        if payload == ("refill-pool",):
            self._refill()
        else:
            super().handle_timeout(payload)

    def handle_info(self, message: Any, sender: Any) -> None:
        if isinstance(message, Prepared):
            for pooled in self.pool:
                if pooled.address == sender:
                    pooled.pid = message.pid
            return
        super().handle_info(message, sender)

    def handle_other_exit(self, address: Any) -> None:
        gone = [p for p in self.pool if p.address == address]
        if gone:
            self.pool.remove(gone[0])
            self._arm_refill()

    def extra_processes(self) -> tuple[list[Any], bool]:
        up = self._up_pool()  # reserved ones too
        return [p.address for p in up], len(up) < len(self.pool)

    def on_child_started(self, child_id: str, address: Any, pid: int | None) -> None:
        for request, caller in self.pending.pop(child_id, []):
            self.send(address, Call(request, ref=caller.ref, reply_to=caller.address))

    def _delete_job(self, request: DeleteSession, caller: CallerRef) -> Job:
        if self._session_child(request.key) is not None:
            yield from self.stop_children([request.key])
        try:
            self.store.delete_session(request.app_name, request.user_id, request.session_id)
        except Exception as exc:
            self.reply_error(caller, CallError(str(exc), code="unknown_session"))
            return
        self.reply(caller, "deleted")
