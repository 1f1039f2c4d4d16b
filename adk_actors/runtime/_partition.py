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

The class is split by job: ``SessionPartition`` (here: its start, requests, lines and
turns) inherits ``_partition_holding.PartitionHolding`` (the sessions held: activation,
leases, passivation, crash-interrupted runs resumed), which inherits
``_partition_homes.PartitionHomes`` (forwards to a session's holder or home; the
fence of a dead caller's write), which inherits ``_partition_faults.PartitionFaults``
(crashes, failures, watchers, statuses).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervision import BadRequest, CallerRef, CallError
from supervision.lowlevel import FORWARDED
from supervision.protocol import Call

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
    LinePath,
    ListSessions,
    LiveInput,
    LiveWorkers,
    ResetSession,
    RewindSession,
    RunRequest,
    SessionInfo,
    UpdateState,
    WatchSession,
    WorkerRuns,
    session_key,
)
from ..store import (
    LeaseLost,
    SessionExists,
    SessionLeased,
    SessionLimitReached,
    SessionNotFound,
    StoreError,
    Unstorable,
    connection_name,
    open_session_store,
)
from ._caller_line import CallerLine, LineServer
from ._link import worker_line_path
from ._partition_args import PartitionArgs
from ._partition_faults import READS, ROUTED, SESSION_REQUESTS, Faults
from ._partition_holding import PartitionHolding
from ._partition_homes import FORWARD_RECHECK, HOLDER_CONNECT_WAIT
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
from ._placement import ClusterView, Homed, Reachability, ranked
from ._run_protocol import (
    RunOutput,
    load_apps,
)
from ._run_workers import RunWorkers
from ._session import Session, SessionRun

__all__ = ["FORWARD_RECHECK", "HOLDER_CONNECT_WAIT", "PartitionArgs", "SessionPartition"]

#: How often what the Runners' lines did not take at once is offered again.
_FLUSH_EVERY = 0.002


class SessionPartition(PartitionHolding):
    """A session partition (see the module): its requests, its lines and its turns here;
    its sessions' holding, homes and faults in the classes it inherits."""

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
        self.store = open_session_store(args.store, lease_seconds=args.lease_seconds,
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
        self.faults: dict[str, Faults] = {}  # sessions that crashed: their restart intensity, failed or not
        self.watchers: dict[str, list[Any]] = {}  # session key -> who watches its life (WatchSession)
        #: interrupted run id -> the id of the run that will resume it (its caller was told: see _fail_orphan)
        self.resume_ids: dict[str, str] = {}
        self.draining_runs: dict[str, SessionRun] = {}  # dropped sessions' runs not stopped yet (_drop)
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

    # -- requests ---------------------------------------------------------------------------

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        """A request, by its kind: a read of the store (``_read``), a session's creation
        or deletion, a request for one session (``_route``), an operator's or a tool's
        (``_operate``, ``_inspect``). One another host sent here (``Homed``: this host is
        its session's home) must name a session."""
        if isinstance(request, Homed):  # sent here by another host: this host is its home
            request = request.request
            if not isinstance(request, SESSION_REQUESTS):
                raise BadRequest(f"{type(request).__name__} is not sent to a session's home")
        elif isinstance(request, (CreateSession, *ROUTED)):
            home = self._home_of(request)
            if home is not None:
                return self._send_home(request, caller, home)
        if isinstance(request, READS):
            return self._read(request)
        if isinstance(request, CreateSession):
            return self._create(request)
        if isinstance(request, DeleteSession):
            return self._delete(request, caller)
        if isinstance(request, ROUTED):
            return self._route(request, caller)
        if isinstance(request, HeldSessions):
            return self._held(request.offset, request.limit, request.search)
        if isinstance(request, (CrashSession, ResetSession, KillRun, WatchSession)):
            return self._operate(request, caller)
        if isinstance(request, (LinePath, LiveWorkers, WorkerRuns, HeldKeys)):
            return self._inspect(request)
        return super().handle_call(request, caller)

    def _read(self, request: ListSessions | GetTrace | GetEventTrace | LastRun) -> Any:
        """A read of one app's sessions, traces or runs (``unknown_app`` for an app not here)."""
        self._check_app(request.app_name)
        match request:
            case ListSessions():
                return [SessionInfo(s.app_name, s.user_id, s.id, s.state, [], s.last_update_time)
                        for s in self.store.list_sessions(request.app_name, request.user_id)]
            case GetTrace():
                return self.store.session_trace(request.app_name, request.session_id, request.user_id)
            case GetEventTrace():
                return self.store.event_trace(request.app_name, request.event_id, request.user_id)
            case LastRun():
                return self._last_run(request)

    def _inspect(self, request: LinePath | LiveWorkers | WorkerRuns | HeldKeys) -> Any:
        """What tests and tools ask of the partition: its lines' path, its workers' pids,
        the runs each worker holds, the keys of the sessions it holds."""
        match request:
            case LinePath():
                return str(self.lines.path) if self.lines is not None else None
            case LiveWorkers():
                return self.pool.live_pids()
            case WorkerRuns():
                return self.pool.runs_by_worker()
            case HeldKeys():
                return sorted(self.sessions)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, ClusterView):
            self.view = request
            self._move_home()
        elif request != PROBE:  # a probe only needed to be delivered
            super().handle_cast(request)

    def _create(self, request: CreateSession) -> Any:
        """Create a session and hold it (one sent to its home elsewhere went there:
        ``_home_of``). One whose id the caller names none gets an id whose home is here,
        and of this partition."""
        self._check_app(request.app_name)
        session_id = request.session_id
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

    def _route(self, request: Any, caller: CallerRef) -> Any:
        """A request of one session (one whose home is elsewhere went there: ``_home_of``)."""
        self._check_app(request.app_name)  # (its names were checked by check_request: the grammar)
        self._check_ours(request.key)
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
            self._check_caller_lives(request, caller, "state update")
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
        self._check_caller_lives(request, caller, "turn")
        accepted = session.take(request, caller.address)
        return accepted if request.reply_accepted else FORWARDED

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
