"""A session partition: one actor process that holds many sessions and runs their turns.

The host's ``sessions`` supervisor (a ``PartitionSupervisor``) owns N partitions; a
session belongs to the partition its key hashes to (``messages.partition_of``). A
partition is the single writer of its sessions: it holds each one it serves as a
:class:`~adk_actors.runtime._session.Session` (its one in-memory view, loaded from the
store on its first request and dropped after ``idle_timeout`` seconds without one),
and it owns the run workers (``_run.RunActor``) its turns run on.

A request, in order: malformed ones are refused (``invalid_request``); sessions are
created, listed and deleted here through the partition's store connection; every
other request goes to its session (loaded if needed; ``unknown_session`` if the
store does not have it).

Its turns run on the run workers of its pool (``_run_pool.RunPool``, a sibling
process under the host's ``run_pools`` supervisor, which starts, replaces and
health-checks them under its own restart intensity). Each worker connects a direct
line to the partition (``_link``); the partition checks one out per turn
(``_run_workers.RunWorkers``), gives it the turn and takes the run's output from it
to commit and relay. A worker's death fails the runs it held (``killed``); the
pool's death fails them all, and the partition's sessions wait for the new pool's
workers. The partition's own death ends its workers' lines: they exit, and the pool
starts others, which connect to the partition's next self.

A (re)started partition holds no session: a run the store still marks as running in
one of its sessions died with the previous process, and its caller gets
``RunFailed(interrupted)`` at once.

Several hosts on one store: a partition holds the lease of each session it holds
(``store.Lease``, with its address). Asked for a session another host's partition
holds, it forwards the request there (the holder answers the caller, and streams a
run's events to it), after checking that the holder's host takes a connection; a
holder whose host does not is answered ``session_elsewhere`` until its lease ends,
and the session is then activated here from the store.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from supervision import BadRequest, Call, CallerRef, CallError, GenServer
from supervision.lowlevel import FORWARDED, partition_index, takes_connection
from supervision.protocol import ErrorReply

from .._types import LiveRequest
from .._validate import check_fields
from ..log import enabled_for, get_logger
from ..messages import (
    PROBE,
    CancelRun,
    CrashSession,
    CreateSession,
    DeleteSession,
    FollowRun,
    GetEventTrace,
    GetSession,
    GetState,
    GetTrace,
    HeldKeys,
    HeldSessions,
    KillRun,
    LastRun,
    Limits,
    LinePath,
    ListSessions,
    LiveInput,
    LiveWorkers,
    ResetSession,
    ResumeRun,
    RewindSession,
    RunFailed,
    RunRequest,
    RunStatus,
    SessionInfo,
    SessionLifecycle,
    SessionStatus,
    UpdateState,
    WatchSession,
    WorkerRuns,
    session_key,
)
from ..store import (
    LeaseLost,
    RunRecord,
    SessionExists,
    SessionLeased,
    SessionLimitReached,
    SessionNotFound,
    StoreError,
    Unreadable,
    Unstorable,
    connection_name,
    open_session_store,
)
from ._caller_line import CallerLine, LineServer
from ._link import worker_line_path
from ._partition_timers import (
    CancelGraceOver,
    CatchUp,
    FlushLines,
    ForwardRecheck,
    MoveHome,
    PassivateIdle,
    RenewLeases,
    ResumeInterrupted,
    RunDeadline,
    SendLater,
)
from ._placement import ClusterView, Homed, Member, Reachability, ranked
from ._run_protocol import (
    RunOutput,
    load_apps,
)
from ._run_workers import RunWorkers, WorkerLimits
from ._session import Session, SessionRun

__all__ = ["PartitionArgs", "SessionPartition"]

#: How long a partition waits for another host's actor system to take a connection
#: before it forwards a request to that host (see SessionPartition._host_answers).
HOLDER_CONNECT_WAIT = 0.25
#: How long after forwarding a request the holder's host is looked at again (see
#: SessionPartition._recheck_forward).
FORWARD_RECHECK = 0.3
#: How often what the Runners' lines did not take at once is offered again.
_FLUSH_EVERY = 0.002

@dataclass(frozen=True)
class PartitionArgs:
    store: str  # the session store's location (store.open_session_store): a SQLite file or a postgresql:// URL
    apps: dict[str, str]  # app name -> root agent import path or YAML file
    lines_dir: str  # where Runners' and run workers' direct lines listen (see _caller_line, _link)
    lease_holder: str = "local"  # this host's name among the store's writers (its partitions add their index)
    lease_seconds: float = 15.0  # a lease on a held session lasts this long unless renewed (every third)
    agents_dir: str | None = None  # a folder of YAML apps (see engine.AppCatalog)
    conformance_dir: str | None = None  # where conformance cases are recorded and replayed (see _conformance)
    idle_timeout: float = 300.0
    run_timeout: float | None = None  # a run's deadline when its RunConfig sets none
    max_queued_runs: int = 8
    partitions: int = 1
    workers: WorkerLimits = field(default_factory=WorkerLimits)  # how busy its pool's workers may be
    trace_turns: int = 0  # turns whose trace each session keeps (0: no trace is recorded)
    limits: Limits = field(default_factory=Limits)
    session_intensity: int = 5  # a session that crashes more often than this ...
    session_period: float = 60.0  # ... within this many seconds fails: it answers session_failed until reset


@dataclass
class _Faults:
    """One session's crashes, for its restart intensity (OTP's, per child)."""

    crashes: deque[float] = field(default_factory=deque)  # the partition's clock at each, within the period
    restarts: int = 0  # crashes since it was reset (or first crashed)
    last: str | None = None  # why it crashed last
    failed: bool = False  # over its intensity: it answers session_failed until reset
    down: bool = False  # crashed, not yet read from the store again (its next activation is a restart)


#: Watchers a session keeps (``WatchSession``): one that went away without a word stays
#: until the session is deleted or more watch it.
_MAX_WATCHERS = 16

_ROUTED = (RunRequest, GetSession, GetState, CancelRun, UpdateState, LiveInput, RewindSession)
_SESSION_REQUESTS = (*_ROUTED, CreateSession, DeleteSession)  # each names one session (its ``key``)
_READS = (ListSessions, GetTrace, GetEventTrace, LastRun)  # change nothing: a failure leaves nothing to drop


class SessionPartition(GenServer):
    def check_request(self, request: Any) -> None:
        """Malformed requests (a wrong type, a bad name, text that cannot be encoded,
        nesting deeper than ``Limits.max_json_depth``): ``invalid_request``, never a crash."""
        if isinstance(request, Homed):
            request = request.request
        check_fields(request)
        self.limits.check_input(request)

    # -- start ------------------------------------------------------------------------------

    def init(self, args: PartitionArgs) -> None:
        """Import the apps (a bad path fails the start), open the store, listen for the
        run workers' lines (a folder that cannot hold the socket fails the start), fail
        the runs orphaned by a previous process. The pool's workers connect when they
        find the partition listening."""
        if not isinstance(args, PartitionArgs):
            raise BadRequest("SessionPartition needs PartitionArgs")
        self.config = args
        self.catalog = load_apps(args.apps, args.agents_dir)
        self.index = int(self.child_id.rsplit("-", 1)[1]) if self.child_id and self.child_id[-1].isdigit() else 0
        self.holder = f"{args.lease_holder}/partition-{self.index}"
        self.store = open_session_store(args.store,
                                        application_name=connection_name(args.lease_holder, f"partition-{self.index}"))
        self.pool = RunWorkers(self, worker_line_path(args.lines_dir, args.lease_holder, self.index), args.workers)
        self.hosts_seen = Reachability(1.0, keep_success=False)  # which other hosts take a connection
        self.view: ClusterView | None = None  # the cluster, when this host is in one (runtime._placement)
        self.move_armed = False
        self.leaving: set[str] = set()  # busy sessions whose home is another member: they move once idle
        self.address = self.myAddress
        self.limits = args.limits
        self.max_queued_runs = args.max_queued_runs
        self.run_timeout = args.run_timeout
        self.run_stop_grace = args.workers.stop_grace
        self.trace_turns = args.trace_turns
        self.sessions: dict[str, Session] = {}
        self.faults: dict[str, _Faults] = {}  # sessions that crashed: their restart intensity, failed or not
        self.watchers: dict[str, list[Any]] = {}  # session key -> who watches its life (WatchSession)
        #: interrupted run id -> the id of the run that will resume it (its caller was told: see _fail_orphan)
        self.resume_ids: dict[str, str] = {}
        self.idle_timer_armed = False
        self.log_runs_ended_well = enabled_for("adk_actors.session", logging.DEBUG)
        self.slog = get_logger("adk_actors.session", actor=f"partition:{os.getpid()}")
        self.lines = self._open_lines(args.lines_dir)
        self.callers: list[CallerLine] = []  # the Runners' lines (see _caller_line)
        self.flush_armed = False
        self._fail_orphaned_runs()
        self.lines_changed()
        self.send_after(args.lease_seconds / 3, RenewLeases())

    def _open_lines(self, lines_dir: str) -> LineServer | None:
        """Listen for Runners' direct lines in ``lines_dir`` (none when the folder cannot
        hold a socket: Runners then use Thespian)."""
        try:
            return LineServer(Path(lines_dir).resolve())
        except OSError as exc:
            self.slog.warning("no direct lines for Runners", error=str(exc))
            return None

    def _fail_orphaned_runs(self) -> None:
        """At start: the runs of our sessions that died with our earlier self (or with a
        host whose lease on them ran out) end ``interrupted``, their callers told. The
        sessions of those whose app resumes crashed runs are activated just after
        (``ResumeInterrupted``: activation resumes them)."""
        resumed: list[tuple[str, str, str]] = []
        for app, user, session_id, record in self.store.orphaned_runs(self.holder):
            if self._ours(session_key(app, user, session_id)):
                self._fail_orphan(record, "the session's partition was restarted while this run was in flight")
                if self._resume_limit(app) > 0:
                    resumed.append((app, user, session_id))
        if resumed:
            self.send_after(0.001, ResumeInterrupted(tuple(dict.fromkeys(resumed))))

    def _resume_limit(self, app: str) -> int:
        """How many times a crashed run of ``app`` is resumed on its own (``App.resume_interrupted``)."""
        try:
            return int(self.catalog.load(app).resume_interrupted)
        except Exception:
            return 0

    def auto_resume(self, session: Session, run: SessionRun, failed: RunFailed) -> RunRequest | str | None:
        """The request resuming ``run`` when a crash ended it (its worker died) and its app
        resumes such runs, fewer times so far than it allows; why not, when it has been
        resumed as often as allowed; else None."""
        if self.stopping or run.request.live or failed.error_type not in (
                "RunActorDied", "RunActorUnresponsive", "RunWorkerKilled"):
            return None
        limit = self._resume_limit(session.app_name)
        if limit <= 0:
            return None
        if run.attempt >= limit:
            return f"resumed {run.attempt} times already, the most its app allows: not resumed again"
        return ResumeRun(session.app_name, session.user_id, session.session_id, run_config=run.request.run_config,
                         resume=run.run_id)

    def _resume_after_activation(self, session: Session) -> None:
        """A session just activated: its latest run, when a crash of a partition or host
        ended it ``interrupted`` and nothing ran on the session since, is resumed (its
        app's ``resume_interrupted``, fewer times so far than it allows)."""
        limit = self._resume_limit(session.app_name)
        if limit <= 0:
            return
        last = self.store.last_run(session.app_name, session.user_id, session.session_id)
        if last is None or last.status != "interrupted" or last.attempt >= limit:
            return
        latest = next((e.invocation_id for e in reversed(session.events) if not e.invocation_id.startswith("p-")), None)
        if latest != last.invocation_id:
            return
        try:
            resume = ResumeRun(session.app_name, session.user_id, session.session_id, resume=last.run_id)
            run_id = self.resume_ids.pop(last.run_id, "")
            session.resume(replace(resume, run_id=run_id) if run_id else resume)
        except StoreError as exc:  # the store failed, or the lease went meanwhile: the request goes on without it
            self.slog.warning("an interrupted run was not resumed", run=last.run_id, error=str(exc))

    def _fail_orphan(self, record: RunRecord, why: str) -> None:
        """End a run whose partition or host died ``interrupted``, telling its caller;
        when its app resumes such runs (and has not as often as it allows), the caller
        is told the id of the run that will resume it once its session is activated
        (``_resume_after_activation``), so it can follow it (``FollowRun``)."""
        resumed_as = ""
        info = self.store.run_info(record.run_id)
        if info is not None and info.attempt < self._resume_limit(info.app_name):
            resumed_as = self.resume_ids[record.run_id] = f"run-{uuid.uuid4().hex}"
        if record.caller is not None:
            self.send(record.caller, RunFailed(record.run_id, "interrupted", "PartitionRestarted", why,
                                               resumed_as=resumed_as))
        self.store.end_run(record.run_id, "interrupted")

    # -- requests ---------------------------------------------------------------------------

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        homed = isinstance(request, Homed)  # sent here by another host: this host is its home
        if homed:
            request = request.request
            if not isinstance(request, _SESSION_REQUESTS):
                raise BadRequest(f"{type(request).__name__} is not sent to a session's home")
        if isinstance(request, ListSessions):
            self._check_app(request.app_name)
            return [SessionInfo(s.app_name, s.user_id, s.id, s.state, [], s.last_update_time)
                    for s in self.store.list_sessions(request.app_name, request.user_id)]
        if isinstance(request, GetTrace):
            self._check_app(request.app_name)
            return self.store.session_trace(request.app_name, request.session_id, request.user_id)
        if isinstance(request, GetEventTrace):
            self._check_app(request.app_name)
            return self.store.event_trace(request.app_name, request.event_id, request.user_id)
        if isinstance(request, LastRun):
            self._check_app(request.app_name)
            return self._last_run(request)
        if isinstance(request, CreateSession):
            return self._create(request, caller, homed)
        if isinstance(request, DeleteSession):
            return self._delete(request, caller)
        if isinstance(request, _ROUTED):
            return self._route(request, caller, homed)
        if isinstance(request, HeldSessions):
            return self._held(request.offset, request.limit, request.search)
        if isinstance(request, (CrashSession, ResetSession, KillRun, WatchSession)):
            return self._operate(request, caller)
        if isinstance(request, LinePath):
            return str(self.lines.path) if self.lines is not None else None
        if isinstance(request, LiveWorkers):
            return self.pool.live_pids()
        if isinstance(request, WorkerRuns):
            return self.pool.runs_by_worker()
        if isinstance(request, HeldKeys):
            return sorted(self.sessions)
        return super().handle_call(request, caller)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, ClusterView):
            self.view = request
            self._move_home()
        elif request != PROBE:  # a probe only needed to be delivered
            super().handle_cast(request)

    def _last_run(self, request: LastRun) -> Any:
        """The session's latest run as stored. One stored ``running`` that no process
        here runs, of a session this partition would serve but does not hold, may be
        a dead host's: the session is activated here (which ends that host's runs
        ``interrupted`` once its lease ran out) and the run read again. A session held
        elsewhere, unknown or unreadable leaves the answer as stored."""
        found = self.store.last_run(request.app_name, request.user_id, request.session_id)
        if (found is None or found.status != "running" or found.run_id in self.pool.runs
                or request.key in self.sessions or not self._ours(request.key)
                or self._home_elsewhere(request.key) is not None):
            return found
        try:
            self._session(request)
        except (CallError, SessionLeased):
            return found
        return self.store.last_run(request.app_name, request.user_id, request.session_id)

    def _check_app(self, app_name: Any) -> None:
        if app_name not in self.catalog:
            raise CallError(f"unknown app {app_name!r}; known apps: {self.catalog.names()}", code="unknown_app")

    def _ours(self, key: str) -> bool:
        return partition_index(key, self.config.partitions) == self.index

    def _check_ours(self, key: str) -> None:
        """One writer per session: a session of another partition is refused, never served."""
        if not self._ours(key):
            raise CallError(f"session {key!r} belongs to another partition", code="not_running")

    def _create(self, request: CreateSession, caller: CallerRef | None = None, homed: bool = True) -> Any:
        """Create a session and hold it. One whose id the caller names is created at its
        home (another member of the cluster: the request is sent there); one it names
        none gets an id whose home is here, and of this partition."""
        self._check_app(request.app_name)
        session_id = request.session_id
        if session_id and not homed and caller is not None:
            home = self._home_elsewhere(request.key)
            if home is not None:
                return self._send_home(request, caller, home)
        live = self._live_members()
        while not session_id:  # one of ours, for a caller that names none
            candidate = uuid.uuid4().hex
            key = session_key(request.app_name, request.user_id, candidate)
            if self._ours(key) and (not live or ranked(key, live)[0].name == self.config.lease_holder):
                session_id = candidate
        self._check_ours(session_key(request.app_name, request.user_id, session_id))
        try:
            data = self.store.create_session(request.app_name, request.user_id, session_id, dict(request.state),
                                             max_per_user=self.config.limits.max_sessions_per_user)
        except SessionExists as exc:
            raise CallError(str(exc), code="session_exists") from None
        except SessionLimitReached as exc:
            raise CallError(str(exc), code="limit_exceeded") from None
        except Unstorable as exc:
            raise BadRequest(str(exc)) from None
        # Held at once (its lease taken): its first turn is about to come, and needs no store read.
        try:
            lease = self._lease(data.app_name, data.user_id, data.id)
        except SessionLeased as held:  # a holder of an earlier session of that id, not yet gone
            raise CallError(str(held), code="session_elsewhere") from None
        self._hold(Session(self, data.app_name, data.user_id, data.id, dict(data.state), [], data.last_update_time,
                           lease=lease))
        return SessionInfo(data.app_name, data.user_id, data.id, data.state, [], data.last_update_time)

    def _delete(self, request: DeleteSession, caller: CallerRef) -> Any:
        """Delete a session: its runs end ``interrupted`` first (a running one is
        told to stop on its worker, see ``_drop``), then the store forgets it."""
        self._check_app(request.app_name)
        self._check_ours(request.key)
        if request.key not in self.sessions and self.store.session_exists(request.app_name, request.user_id,
                                                                          request.session_id):
            try:  # deleted by its holder only (which drops its view first)
                self._lease(request.app_name, request.user_id, request.session_id)
            except SessionLeased as held:
                return self._forward(request, caller, held)
        self._drop(request.key, "the session was deleted")
        self._tell(request.key, "deleted")
        self.watchers.pop(request.key, None)
        try:
            self.store.delete_session(request.app_name, request.user_id, request.session_id)
        except SessionNotFound as exc:
            raise CallError(str(exc), code="unknown_session") from None
        return "deleted"

    def _route(self, request: Any, caller: CallerRef, homed: bool = False) -> Any:
        self._check_app(request.app_name)  # (its names were checked by check_request: the grammar)
        self._check_ours(request.key)
        if not homed and request.key not in self.sessions:
            home = self._home_elsewhere(request.key)
            if home is not None:
                return self._send_home(request, caller, home)
        faults = self.faults.get(request.key)
        if faults is not None and faults.failed:
            raise CallError(f"session {request.session_id!r} failed: it crashed {faults.restarts} times "
                            f"(last: {faults.last}); an operator may reset it", code="session_failed")
        if isinstance(request, RunRequest) and request.create_session:
            self._create_if_missing(request)
        try:
            session = self._session(request)
        except SessionLeased as held:
            return self._forward(request, caller, held)
        session.idle_since = self.clock()
        if isinstance(request, GetSession):
            return session.info()
        if isinstance(request, GetState):
            return session.fresh_state()
        if isinstance(request, UpdateState):
            return session.update_state(request.state_delta)
        if isinstance(request, CancelRun):
            return session.cancel(request.run_id)
        if isinstance(request, LiveInput):
            return session.live_input(request.run_id, request.request)
        if isinstance(request, RewindSession):
            return session.rewind(request.rewind_before_invocation_id, dict(request.artifact_delta),
                                  request.expected_events)
        if request.key in self.leaving and not isinstance(request, FollowRun):
            # Going home once its runs end: no new run starts here (the caller asks
            # again, and is then sent to the home).
            raise CallError(f"session {request.session_id!r} is moving to its home host: ask again",
                            code="not_running")
        accepted = session.take(request, caller.address)
        return accepted if request.reply_accepted else FORWARDED

    def _create_if_missing(self, request: RunRequest) -> None:
        """The run's session, created with an empty state when neither held nor stored
        (``RunRequest.create_session``); one made meanwhile by another holder is as good."""
        if request.key in self.sessions or self.store.session_exists(request.app_name, request.user_id,
                                                                     request.session_id):
            return
        try:
            self._create(CreateSession(request.app_name, request.user_id, request.session_id, {}))
        except CallError as error:
            if error.code != "session_exists":
                raise

    def _session(self, request: Any) -> Session:
        """The session a request names: held, or loaded from the store and held."""
        session = self.sessions.get(request.key)
        if session is not None:
            return session
        self._tell(request.key, "activating")
        try:
            # The lease first, then the read: no other holder can write between them.
            lease = self._lease(request.app_name, request.user_id, request.session_id)
            data = self.store.get_session(request.app_name, request.user_id, request.session_id)
            if lease.epoch > 1:  # held before: by another host that died with runs in flight?
                for record in self.store.running_runs(request.app_name, request.user_id, request.session_id):
                    if record.run_id not in self.pool.runs:
                        self._fail_orphan(record, "the host that held the session stopped while this run was "
                                                  "in flight")
        except SessionNotFound:
            self._tell(request.key, "activation_failed", "unknown_session")
            raise CallError(f"no session {request.session_id!r} for {request.app_name}/{request.user_id}",
                            code="unknown_session") from None
        except Unreadable as exc:
            self._tell(request.key, "activation_failed", f"session_unreadable: {exc}")
            raise CallError(str(exc), code="session_unreadable") from None
        session = self._hold(Session(self, data.app_name, data.user_id, data.id, data.state, data.events,
                                     data.last_update_time, lease=lease))
        self._resume_after_activation(session)
        return session

    def _lease(self, app: str, user: str, session_id: str) -> Any:
        """This partition's lease on a session it is about to hold (``store.Lease``,
        naming this partition's address for other hosts to forward to); SessionLeased
        when another host's partition holds it (never two writers)."""
        return self.store.acquire_lease(app, user, session_id, self.holder, self.config.lease_seconds,
                                        address=self.address)

    def _forward(self, request: Any, caller: CallerRef, held: SessionLeased) -> Any:
        """Another host's partition holds the session: the request goes on to it, and it
        answers the caller itself (a run's events stream from it to the caller). Where
        the holder left no address (or named this partition), CallError
        ``session_elsewhere`` names the holder instead. A holder that died within its
        lease gets the request and never answers: the caller's deadline ends the wait,
        and its next try, once the lease ran out, is served here."""
        self._tell(request.key, "activation_failed", f"session_elsewhere: {held}")
        if held.address is None or held.address == self.address:
            raise CallError(str(held), code="session_elsewhere")
        if not self._host_answers(held.holder):
            raise CallError(f"{held}; its host does not answer (stopped, or cut off): the session is served "
                            "again once that lease ends", code="session_elsewhere")
        # Homed: the holder serves it (or forwards it by the lease), never sends it on by
        # rendezvous, so that a holder about to let go cannot send it back here and forth.
        return self._hand_on(request, caller, held.address, held.holder, str(held), "partition")

    def _live_members(self) -> list[Member]:
        """The cluster's members whose actor systems take a connection now, this host
        among them; empty outside a cluster, or while this host is not in the view yet
        (it then serves as a host alone would: the leases keep one writer)."""
        view, me = self.view, self.config.lease_holder
        if view is None or view.member(me) is None:
            return []
        return [m for m in view.members if m.name == me or (m.sessions is not None and self._host_answers(m.name))]

    def _home_elsewhere(self, key: str) -> Member | None:
        """The session's home when it is another member (the first of the ranking whose
        host takes a connection: a dead or cut-off home is passed over); None when it
        is this host, or outside a cluster."""
        view, me = self.view, self.config.lease_holder
        if view is None or view.member(me) is None:
            return None
        for member in view.ranked(key):
            if member.name == me:
                return None
            if member.sessions is not None and self._host_answers(member.name):
                return member
        return None

    def _send_home(self, request: Any, caller: CallerRef, home: Member) -> Any:
        """Send a request to its session's home (its ``sessions`` supervisor routes it to
        the partition), which answers the caller itself. A Runner's direct line reaches
        this process only: ``not_running`` makes it send the request again through
        Thespian, whose address the home reaches."""
        return self._hand_on(request, caller, home.sessions, home.name,
                             f"session {request.session_id!r} lives on {home.name}", "session supervisor")

    def _hand_on(self, request: Any, caller: CallerRef, to: Any, holder: str, where: str, what: str) -> Any:
        """Hand ``request`` on to ``to`` (another host's ``what``), as ``Homed``, which
        answers the caller itself; look at ``holder``'s host again ``FORWARD_RECHECK``
        later. ``not_running`` (the caller asks again) when the caller is a Runner's
        direct line (it reaches this process only: the Runner then asks through
        Thespian, whose address ``to`` reaches) or ``to`` takes no connection
        (restarted: the view or the lease names its new address soon)."""
        if isinstance(caller.address, CallerLine):
            raise CallError(f"{where}: the request goes there through Thespian", code="not_running")
        if takes_connection(to) is False:
            raise CallError(f"{where}, whose {what} is restarting: ask again", code="not_running")
        self.hand_over(caller, request if isinstance(request, Homed) else Homed(request), to)
        self.send_after(FORWARD_RECHECK, ForwardRecheck(holder, caller.address, caller.ref, where))
        return FORWARDED

    def _move_home(self) -> None:
        """A new view (``MoveHome``, or the last run of a leaving session ended): the idle
        sessions held here whose home is now another live member are let go (their
        leases released), so that their next request activates them there. Busy ones
        are *leaving*: they take no new run (``not_running``: the caller asks again and
        is sent home), and go once their runs in flight and queued have ended (looked at
        again as each run ends, and a second later)."""
        live = self._live_members()
        self.leaving = set()
        if not live:
            return
        me = self.config.lease_holder
        busy = False
        for key, session in list(self.sessions.items()):
            if ranked(key, live)[0].name == me:
                continue
            if session.active is not None or session.waiting:
                busy = True
                self.leaving.add(key)
                continue
            del self.sessions[key]
            self._forget(key)
            self._let_go(session)
            self._tell(key, "passivated")
        if busy and not self.move_armed:
            self.move_armed = True
            self.send_after(1.0, MoveHome())

    def _recheck_forward(self, holder: str, address: Any, ref: str, held: str) -> None:
        """``FORWARD_RECHECK`` after a forward: a holder's host that no longer takes a
        connection died about when the request reached it (or before it answered; or
        it is too busy to take one): the caller is answered ``holder_gone`` now instead
        of at its deadline. Never ``session_elsewhere``, which promises that nothing was
        written: the holder may have acted on the request (the Runner asks again, the
        same request, until the session's next holder answers it). (A caller that had
        its answer drops this one: its ref is no longer awaited.)"""
        self.hosts_seen.forget(holder.split("/", 1)[0])
        if not self._host_answers(holder):
            self.send(address, ErrorReply(ref, "holder_gone", f"{held}; its host stopped before it answered: "
                                                              "the session is served again once that lease ends"))

    def _host_answers(self, holder: str) -> bool:
        """Does the actor system of ``holder`` (``<address>:<port>/partition-<n>``) take a
        TCP connection now? Asked before each forward (a killed host refuses at once, a
        cut-off one within ``HOLDER_CONNECT_WAIT``); one that did not is not asked again
        for a second."""
        where = holder.split("/", 1)[0]
        return self.hosts_seen.answers(where, self.clock(), lambda: _takes_connection(where))

    def _let_go(self, session: Session) -> None:
        """Release a session's lease (passivated or dropped here): another holder may
        take it at once. A store that fails here is logged: the lease expires alone."""
        if session.lease is None:
            return
        try:
            self.store.release_lease(session.lease)
        except StoreError as exc:
            self.slog.warning("a session's lease was not released; it expires on its own", session=session.key,
                              error=str(exc))

    def _renew_leases(self) -> None:
        """Renew the leases of every session held here; a session whose lease another
        holder took (this partition was cut off from the store for longer than a
        lease) is dropped: its runs end ``interrupted``, and its new holder serves it."""
        self.send_after(self.config.lease_seconds / 3, RenewLeases())
        if not self.sessions:
            return
        try:
            held = self.store.renew_leases(self.holder, self.config.lease_seconds)
        except StoreError as exc:
            self.slog.warning("leases not renewed: the store failed", error=str(exc))
            return
        for key, session in list(self.sessions.items()):
            if (session.app_name, session.user_id, session.session_id) not in held:
                self.slog.warning("a session's lease was taken by another holder; dropped here", session=key)
                self._drop(key, "the session moved to another host (its lease was taken)")

    def _hold(self, session: Session) -> Session:
        session.idle_since = self.clock()
        self.sessions[session.key] = session
        faults = self.faults.get(session.key)
        if faults is not None and faults.down:  # back after a crash: OTP's restarted child
            faults.down = False
            self._tell(session.key, "restarted", faults.last)
        else:
            self._tell(session.key, "activated")
        if not self.idle_timer_armed:
            self.idle_timer_armed = True
            self.send_after(self.config.idle_timeout, PassivateIdle())
        return session

    def _passivate(self) -> None:
        """Drop the sessions idle for ``idle_timeout`` (no run, no request); come back
        when the next one would be due."""
        self.idle_timer_armed = False
        now = self.clock()
        for key, session in list(self.sessions.items()):
            if session.active is None and not session.waiting and now - session.idle_since >= self.config.idle_timeout:
                del self.sessions[key]
                self._forget(key)
                self._let_go(session)
                self._tell(key, "passivated")
        for key, faults in list(self.faults.items()):  # quiet for a period, and not failed: forgotten
            if not faults.failed and key not in self.sessions and (
                    not faults.crashes or now - faults.crashes[-1] > self.config.session_period):
                del self.faults[key]
        if self.sessions:
            self.idle_timer_armed = True
            due = min(s.idle_since for s in self.sessions.values()) + self.config.idle_timeout
            self.send_after(max(due - now, 0.05), PassivateIdle())

    def _drop(self, key: str, why: str) -> None:
        """Let go of session ``key`` held in memory (nothing if it is not held): its
        runs end ``interrupted`` with ``why`` (a running one is told to stop on its
        worker, and its end waits until it stopped there or the worker, killed past
        ``run_stop_grace``, is gone); the store's copy is read again on its next request."""
        session = self.sessions.pop(key, None)
        if session is None:
            return
        for run in [session.active, *session.waiting]:
            if run is not None:
                self.pool.drop(run)
        session.interrupt(why, stop_active=True)
        self._forget(key)
        self._let_go(session)

    def handle_error(self, request: Any, error: Exception) -> CallError | None:
        """A request failed inside the partition (a bug: not the caller's input, which
        ``check_request`` refuses): the session it names is dropped (``_drop``: its
        view is read from the store again on its next request), its caller is answered
        ``internal_error``, and the partition and its other sessions carry on. A
        request that names no session (the partition's own commands) crashes it."""
        if isinstance(request, _SESSION_REQUESTS) and isinstance(error, LeaseLost):
            self._drop(request.key, "the session moved to another host (its lease was taken)")
            return CallError(str(error), code="session_elsewhere")
        if isinstance(request, _SESSION_REQUESTS):
            self._crash_session(request.key, f"{type(error).__name__} while handling {type(request).__name__}")
        elif not isinstance(request, _READS):
            return None
        return CallError("the request failed inside the host (it was logged there); the session is read from the "
                         "store again on its next request", code="internal_error")

    def _crash_session(self, key: str, reason: str) -> None:
        """Session ``key`` crashed (a handler of its failed, or on request): its view is
        dropped (``_drop``: its runs end ``interrupted``, and it is read from the store
        on its next request), and the crash counts: more than ``session_intensity``
        within ``session_period`` seconds and it fails, answering ``session_failed``
        until an operator resets it (OTP's restart intensity, per session)."""
        faults = self.faults.setdefault(key, _Faults())
        now = self.clock()
        faults.crashes.append(now)
        while faults.crashes and now - faults.crashes[0] > self.config.session_period:
            faults.crashes.popleft()
        faults.restarts += 1
        faults.last = reason
        faults.down = True
        self._drop(key, f"the session crashed ({reason})")
        self._tell(key, "crashed", reason)
        if len(faults.crashes) > self.config.session_intensity and not faults.failed:
            faults.failed = True
            self.slog.error("session failed: it crashed more often than its restart intensity allows", session=key,
                            crashes=len(faults.crashes), period=self.config.session_period, reason=reason)
            self._tell(key, "failed", reason)
        else:
            self.slog.warning("session crashed; it is read from the store again on its next request", session=key,
                              reason=reason)

    def _operate(self, request: CrashSession | ResetSession | KillRun | WatchSession, caller: CallerRef) -> Any:
        """An operator's (or a fault injector's) request for one session: crash it, reset
        it, kill one of its runs, or watch its life (see their messages)."""
        self._check_app(request.app_name)
        self._check_ours(request.key)
        if isinstance(request, CrashSession):
            self._crash_session(request.key, request.reason)
            return self._status(request.key)
        if isinstance(request, ResetSession):
            if self.faults.pop(request.key, None) is not None:
                self._tell(request.key, "reset")
            return "reset"
        if isinstance(request, WatchSession):
            watching = [w for w in self.watchers.get(request.key, []) if w != caller.address]
            if not request.stop:
                watching = [*watching[-(_MAX_WATCHERS - 1):], caller.address]  # the oldest ones go first
            if watching:
                self.watchers[request.key] = watching
            else:
                self.watchers.pop(request.key, None)
            return self._status(request.key)
        session = self.sessions.get(request.key)
        if session is None or not session.kill(request.run_id):
            raise CallError(f"no run {request.run_id!r} on session {request.session_id!r}", code="invalid_request")
        return "killed"

    def _tell(self, key: str, event: str, reason: str | None = None) -> None:
        """Send the session's watchers (``WatchSession``) what happened to it."""
        watching = self.watchers.get(key)
        if watching:
            app, user, session_id = key.split("/", 2)
            for watcher in watching:
                self.send(watcher, SessionLifecycle(app, user, session_id, event, reason, time.time()))

    def _status(self, key: str) -> SessionStatus:
        app, user, session_id = key.split("/", 2)
        faults = self.faults.get(key) or _Faults()
        session = self.sessions.get(key)
        runs: list[RunStatus] = []
        state = "failed" if faults.failed else "passivated"
        if session is not None and not faults.failed:
            for run in [session.active, *session.waiting]:
                if run is not None and run.outcome is None:
                    runs.append(RunStatus(run.run_id, "running" if run is session.active else "waiting", run.agent,
                                          run.seq, run.queued_at))
            state = "running" if session.active is not None else "idle"
        return SessionStatus(app, user, session_id, state, faults.restarts, faults.last, tuple(runs))

    def _held(self, offset: int, limit: int, search: str = "") -> tuple[int, list[SessionStatus]]:
        """(how many, a page of) the sessions held and those that crashed lately (failed
        or not: an operator sees why), those matching ``search`` only, see
        ``HeldSessions``; ``BadRequest`` for an offset or limit that is no integer, or a
        search that is no string."""
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (offset, limit)):
            raise BadRequest(f"HeldSessions: offset and limit are integers, got {offset!r} and {limit!r}")
        if not isinstance(search, str):
            raise BadRequest(f"HeldSessions: search is a string, got {type(search).__name__}")
        keys = set(self.sessions) | set(self.faults)
        statuses = sorted((self._status(key) for key in keys), key=lambda s: (s.state != "running", s.key))
        if search:
            statuses = [s for s in statuses if search in s.key or any(search in run.run_id for run in s.runs)]
        return len(statuses), statuses[max(offset, 0):max(offset, 0) + max(limit, 0)]

    def _forget(self, key: str) -> None:
        self.pool.forget(key)

    # -- lines: the Runners' and the run workers' -------------------------------------------

    def lines_changed(self) -> None:
        """Watch the workers' lines, the Runners' lines and the sockets they connect to."""
        fds = self.pool.fds() + [line.fd for line in self.callers if not line.closed]
        self.watch_fds(fds + ([self.lines.fd] if self.lines is not None else []))

    def handle_watch(self, ready: list[int]) -> None:
        self.pool.read(ready)
        if self.lines is not None and self.lines.fd in ready:
            self.callers.extend(self.lines.accept())
            self.lines_changed()
        for line in list(self.callers):
            if line.fd in ready and not line.closed:
                for message in line.receive():
                    if isinstance(message, Call) and isinstance(message.request, RunRequest):
                        self.serve_call(message, line)  # its answers go back on the line (send)
                if line.closed:
                    self.callers.remove(line)
                    self.lines_changed()

    def durable_address(self, caller: Any) -> Any:
        """A Runner's line dies with this process (the Runner sees it end): not kept."""
        return None if isinstance(caller, CallerLine) else caller

    def send(self, address: Any, message: Any) -> None:
        """To a Runner's line (see _caller_line), or through Thespian."""
        if not isinstance(address, CallerLine):
            super().send(address, message)
            return
        address.send(message)
        if address.pending and not self.flush_armed:
            self.flush_armed = True
            self.send_after(_FLUSH_EVERY, FlushLines())

    # -- turns: what a session asks of its partition (SessionOwner), done by the pool ---------

    def dispatch(self, session: Session, run: SessionRun) -> None:
        self.pool.dispatch(session, run)

    def live_on_worker(self, run: SessionRun, request: LiveRequest) -> None:
        self.pool.live(run, request)

    def cancel_on_worker(self, run: SessionRun, reason: str) -> None:
        self.pool.cancel(run, reason)

    def abandon(self, run: SessionRun, *, waited: bool, then: Callable[[], None]) -> None:
        self.pool.abandon(run, waited=waited, then=then)

    def run_ended(self, session: Session, run: SessionRun, status: str) -> None:
        self.pool.run_ended(run)
        session.idle_since = self.clock()
        if session.key in self.leaving and not session.waiting:  # its last run here: home it goes
            self.send_after(0, MoveHome())
        if status != "done" or self.log_runs_ended_well:  # (a run that went well: at DEBUG only)
            (self.slog.debug if status == "done" else self.slog.warning)(
                "run ended", app=session.app_name, user=session.user_id, session=session.session_id,
                run=run.run_id, status=status, events=run.seq,
                seconds=round(self.clock() - run.started, 4) if run.started else None,
                error=run.outcome.detail if run.outcome is not None else None)

    def run_output(self, session: Session, run: SessionRun, output: RunOutput) -> None:
        """A live run's output, from its worker: committed and relayed by its session. A
        lease another host took drops the session; any other failure is a bug, and that
        session alone is dropped (see handle_error)."""
        try:
            session.on_output(run, output)
        except LeaseLost as exc:  # another host's partition holds the session now
            self.slog.warning("a session's lease was taken; its run ends here", session=session.key,
                              run=output.run_id, error=str(exc))
            self._drop(session.key, "the session moved to another host (its lease was taken)")
        except Exception as exc:
            self.slog.error("a session failed while committing its run's output; dropped",
                            session=session.key, run=output.run_id, error=f"{type(exc).__name__}: {exc}",
                            exc_info=True)
            self._crash_session(session.key, f"{type(exc).__name__} while committing its run's output")

    def handle_info(self, message: Any, sender: Any) -> None:
        if not self.pool.on_info(message, sender):
            super().handle_info(message, sender)

    def handle_timeout(self, payload: Any) -> None:
        """A timer fired (``_partition_timers``): do what it asks."""
        if isinstance(payload, PassivateIdle):
            self._passivate()
        elif isinstance(payload, RenewLeases):
            self._renew_leases()
        elif isinstance(payload, ForwardRecheck):
            self._recheck_forward(payload.holder, payload.caller, payload.ref, payload.held)
        elif isinstance(payload, MoveHome):
            self.move_armed = False
            self._move_home()
        elif isinstance(payload, FlushLines):
            self._flush_lines()
        elif isinstance(payload, SendLater):
            self.send(payload.to, payload.message)
        elif isinstance(payload, (RunDeadline, CancelGraceOver)):
            session = self.sessions.get(payload.key)
            if session is not None:
                session.on_timer(payload)
        elif isinstance(payload, CatchUp):
            session = self.sessions.get(payload.key)
            if session is not None:
                session.caught_up(payload.run_id)
        elif isinstance(payload, ResumeInterrupted):
            for app, user, session_id in payload.sessions:
                try:
                    self._session(GetSession(app, user, session_id))
                except (CallError, StoreError) as exc:  # gone, unreadable, or another host holds it now
                    self.slog.warning("an interrupted run was not resumed", app=app, user=user,
                                      session=session_id, error=str(exc))
        else:
            self.pool.on_timer(payload)

    def _flush_lines(self) -> None:
        """Offer the Runners' lines what they did not take at once; come back while any waits."""
        self.flush_armed = False
        for line in self.callers:
            line.flush()
        if any(line.pending for line in self.callers):
            self.flush_armed = True
            self.send_after(_FLUSH_EVERY, FlushLines())

    def terminate(self, reason: Any) -> None:
        """Every run not ended gets ``RunFailed(interrupted)``; the workers' lines close
        (each worker exits, and its pool starts another)."""
        if "store" not in vars(self):
            return
        for session in self.sessions.values():
            session.interrupt(f"the session's partition stopped: {reason}")
        self.pool.close()
        for line in self.callers:
            line.flush()  # the runs' ends, sent just above
            line.close()
        if self.lines is not None:
            self.lines.close()
        try:
            self.store.close()
        except Exception:
            pass



def _takes_connection(where: str) -> bool:
    """Does ``<address>:<port>`` take a TCP connection within ``HOLDER_CONNECT_WAIT``?"""
    address, _, port = where.rpartition(":")
    try:
        socket.create_connection((address, int(port)), timeout=HOLDER_CONNECT_WAIT).close()
    except (OSError, ValueError):
        return False
    return True
