"""A partition's sessions as an operator sees them: crashes, failures, watchers, statuses.

:class:`PartitionFaults` is the part of ``SessionPartition`` (which inherits it) that
keeps each session's restart intensity (OTP's, per child) and its watchers. In order:
a request that failed inside the partition (a bug, not the caller's input) crashes
the session it names (``handle_error``; ``session_elsewhere`` when its lease was
taken meanwhile): its view is dropped and read from the store again on its next
request; more than ``session_intensity`` crashes within ``session_period`` seconds
and the session fails, answering ``session_failed`` until an operator resets it. An
operator's request (``CrashSession``, ``ResetSession``, ``KillRun``, ``WatchSession``)
is served by ``_operate``; each change in a session's life is told to its watchers
(``SessionLifecycle``); ``HeldSessions`` pages the sessions' statuses (``_held``).
It also says which sessions are the partition's (``_ours``) and which apps it serves.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from supervision import BadRequest, CallerRef, CallError, GenServer
from supervision.lowlevel import partition_index

from ..engine import AppCatalog
from ..messages import (
    CancelRun,
    CrashSession,
    CreateSession,
    DeleteSession,
    GetEventTrace,
    GetSession,
    GetState,
    GetTrace,
    KillRun,
    LastRun,
    ListSessions,
    LiveInput,
    ResetSession,
    RewindSession,
    RunRequest,
    RunStatus,
    SessionLifecycle,
    SessionStatus,
    UpdateState,
    WatchSession,
)
from ..store import LeaseLost
from ._partition_args import PartitionArgs
from ._session import Session

__all__ = ["READS", "ROUTED", "SESSION_REQUESTS", "Faults", "PartitionFaults"]


@dataclass
class Faults:
    """One session's crashes, for its restart intensity (OTP's, per child)."""

    crashes: deque[float] = field(default_factory=deque)  # the partition's clock at each, within the period
    restarts: int = 0  # crashes since it was reset (or first crashed)
    last: str | None = None  # why it crashed last
    failed: bool = False  # over its intensity: it answers session_failed until reset
    down: bool = False  # crashed, not yet read from the store again (its next activation is a restart)


#: Watchers a session keeps (``WatchSession``): one that went away without a word stays
#: until the session is deleted or more watch it.
_MAX_WATCHERS = 16

ROUTED = (RunRequest, GetSession, GetState, CancelRun, UpdateState, LiveInput, RewindSession)
SESSION_REQUESTS = (*ROUTED, CreateSession, DeleteSession)  # each names one session (its ``key``)
READS = (ListSessions, GetTrace, GetEventTrace, LastRun)  # change nothing: a failure leaves nothing to drop


class PartitionFaults(GenServer):
    """The sessions' crashes, failures, watchers and statuses (see the module)."""

    config: PartitionArgs
    catalog: AppCatalog
    index: int  # the partition's, among the host's
    sessions: dict[str, Session]  # the sessions held, by key
    faults: dict[str, Faults]  # sessions that crashed: their restart intensity, failed or not
    watchers: dict[str, list[Any]]  # session key -> who watches its life (WatchSession)
    slog: Any

    def _drop(self, key: str, why: str, *, resume: bool = False, queued: str = "") -> None:
        """Let go of session ``key`` (``_partition_holding``)."""
        raise NotImplementedError

    def _check_app(self, app_name: Any) -> None:
        if app_name not in self.catalog:
            raise CallError(f"unknown app {app_name!r}; known apps: {self.catalog.names()}", code="unknown_app")

    def _ours(self, key: str) -> bool:
        return partition_index(key, self.config.partitions) == self.index

    def _check_ours(self, key: str) -> None:
        """One writer per session: a session of another partition is refused, never served."""
        if not self._ours(key):
            raise CallError(f"session {key!r} belongs to another partition", code="not_running")

    def handle_error(self, request: Any, error: Exception) -> CallError | None:
        """A request failed inside the partition (a bug: not the caller's input, which
        ``check_request`` refuses): the session it names is dropped (``_drop``: its
        view is read from the store again on its next request), its caller is answered
        ``internal_error``, and the partition and its other sessions carry on. A
        request that names no session (the partition's own commands) crashes it."""
        if isinstance(request, SESSION_REQUESTS) and isinstance(error, LeaseLost):
            self._drop(request.key, "the session moved to another host (its lease was taken)")
            return CallError(str(error), code="session_elsewhere")
        if isinstance(request, SESSION_REQUESTS):
            self._crash_session(request.key, f"{type(error).__name__} while handling {type(request).__name__}")
        elif not isinstance(request, READS):
            return None
        return CallError("the request failed inside the host (it was logged there); the session is read from the "
                         "store again on its next request", code="internal_error")

    def _crash_session(self, key: str, reason: str) -> None:
        """Session ``key`` crashed (a handler of its failed, or on request): its view is
        dropped (``_drop``: its runs end ``interrupted``, and it is read from the store
        on its next request; its run in progress resumes when its app resumes crashed
        runs and this crash does not fail the session; the turns queued behind it, which
        never began, run in order on the session read again, or end ``SessionFailed``
        when this crash fails it), and the crash counts: more
        than ``session_intensity`` within ``session_period`` seconds and it fails,
        answering ``session_failed`` until an operator resets it (OTP's restart
        intensity, per session)."""
        faults = self.faults.setdefault(key, Faults())
        now = self.clock()
        faults.crashes.append(now)
        while faults.crashes and now - faults.crashes[0] > self.config.session_period:
            faults.crashes.popleft()
        faults.restarts += 1
        faults.last = reason
        faults.down = True
        # its run in progress resumes, unless this crash fails the session; the turns
        # queued behind it run on its restarted self (or end SessionFailed)
        fails = faults.failed or len(faults.crashes) > self.config.session_intensity
        self._drop(key, f"the session crashed ({reason})", resume=not fails, queued="fail" if fails else "run")
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
        faults = self.faults.get(key) or Faults()
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
