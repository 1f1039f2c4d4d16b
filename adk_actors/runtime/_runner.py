"""Runner: plain Python code talking to a host (sync iterator and asyncio).

It starts nothing hidden: it sends the message API to the host's partitions and
waits with timeouts. ``run`` yields the run's events as they arrive and returns
after ``RunDone``; ``RunFailed`` raises :class:`RunFailedError`. It never hangs:
while a run is silent it asks the session's partition itself, through the actor
system, whether it is still there (a refused connection: gone; the caller's own
process table is never consulted, so a Runner on another machine judges the same).
When it is gone, the Runner asks the restarted partition for the session: the
restarted partition reports the run as ``interrupted`` before it answers, so the
caller gets the true reason; only if no report comes within ``orphan_grace``
seconds after that does the run fail with reason ``killed``.

A run the host resumes on its own after a crash (``App.resume_interrupted``) is
followed: its failure names the run that resumes it (``RunFailed.resumed_as``), and
the Runner joins that run (``FollowRun``) and goes on yielding, so its caller sees one
run, each committed event once (``follow_resumes=False``: the failure is raised).

One Runner may be used from many threads at once: every call and every run leases
a Thespian endpoint of its own (an endpoint serves one thread at a time), kept for
later calls once its answer came.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from supervision import (
    Call,
    CallError,
    CallTimeout,
    Reply,
    ServerDiedAnswering,
    ServerNotRunning,
    SupervisorClient,
    call,
)
from supervision.lowlevel import ask_delivered, partition_index, takes_connection
from supervision.protocol import Cast, ErrorReply, error_for_code

from .._decisions import CallDecision
from .._event_print import print_event
from .._exceptions import (
    AdkError,
    HostError,
    InternalError,
    InvalidRequestError,
    LimitExceededError,
    NotFoundError,
    RunFailedError,
    SessionBusyError,
    SessionElsewhereError,
    SessionExistsError,
    SessionFailedError,
    SessionNotFoundError,
    SessionUnreadableError,
    UnknownAppError,
)
from .._types import Content, Event, LiveRequest, Part, RunConfig
from .._validate import MAX_JSON_DEPTH, check_input
from ..messages import (
    PROBE,
    AdkEvent,
    CancelRun,
    CrashSession,
    CreateSession,
    DeleteSession,
    FollowRun,
    GetEventTrace,
    GetSession,
    GetState,
    GetTrace,
    KillRun,
    LastRun,
    LinePath,
    ListSessions,
    LiveInput,
    ResetSession,
    ResumeRun,
    RunAccepted,
    RunDone,
    RunFailed,
    RunInfo,
    RunMessages,
    RunRequest,
    SessionInfo,
    SessionStatus,
    UpdateState,
    WatchSession,
    session_key,
)
from ..tracing import TraceSpan
from ._async_line import CLOSED, AsyncLines, AsyncRunnerLine
from ._caller_line import RunnerLine
from ._live_run import LiveRun, iterate_in_thread
from ._run_transport import LineTransport, NotTaken, RunTransport, ThespianTransport
from ._service_calls import (
    AddSessionToMemory,
    Approve,
    ArtifactMetadata,
    ArtifactVersions,
    BreakerStatus,
    DeleteArtifact,
    DeleteCredential,
    Deny,
    ListApprovals,
    ListArtifacts,
    LoadArtifact,
    PutCredential,
    SaveArtifact,
    SearchMemory,
)
from ._session_watch import SessionWatch

__all__ = ["Runner"]

#: How many idle endpoints a Runner keeps for its next runs (one per concurrent run).
_MAX_IDLE_ENDPOINTS = 256
#: How long a request sent straight to a session's partition waits for its first
#: answer before the run's stream takes over (a refused connection answers sooner).
_FIRST_WAIT = 0.2
#: While a run is silent, how often the session's partition is asked whether it is
#: there, and how long for an answer.
_PROBE_EVERY = 1.0
_PROBE_WAIT = 0.02
#: The most resumes of one run a Runner follows (the host bounds them itself: ``App.resume_interrupted``).
_MAX_FOLLOWS = 100
#: how often a request asks the host for a restarting partition's new address
_RESTART_POLL = 0.005
_HOLDER_GONE_POLL = 0.2  # asking again while a dead holder's lease runs out (seconds)
#: while a call waits, how often its partition's process is looked at (when it can be: see Host.partition_alive)
_ALIVE_POLL = 0.01

_T = TypeVar("_T")
_debug_log = logging.getLogger("adk_actors.runtime")


_ERRORS: dict[str, type[AdkError]] = {
    "unknown_app": UnknownAppError,
    "unknown_session": SessionNotFoundError,
    "session_exists": SessionExistsError,
    "busy": SessionBusyError,
    "limit_exceeded": LimitExceededError,
    "invalid_request": InvalidRequestError,
    "bad_request": InvalidRequestError,
    "unknown_request": InvalidRequestError,
    "unknown_message": InvalidRequestError,
    "not_found": NotFoundError,
    "session_unreadable": SessionUnreadableError,
    "internal_error": InternalError,
    "session_failed": SessionFailedError,
    "session_elsewhere": SessionElsewhereError,
}


def _checked(request: Any) -> Any:
    """``request`` itself, or :class:`InvalidRequestError` when it breaks the input rules
    at the most any host accepts (``MAX_JSON_DEPTH``): refused here, before it is
    pickled (a value nested 1,000 deep cannot be); the host applies its own limits."""
    try:
        check_input(request, MAX_JSON_DEPTH)
    except CallError as exc:
        raise InvalidRequestError(exc.detail) from None
    return request


def typed_error(error: CallError) -> AdkError:
    """The adk_actors exception for an error reply's code: a user of the kit never
    sees supervision's exception types (an unknown code is a :class:`HostError`)."""
    typed = _ERRORS.get(error.code)
    if typed is not None:
        return typed(error.detail)
    return HostError(f"the host answered {error.code}: {error.detail}")


def _step(message: Any, run_id: str, ref: str | None) -> tuple[list[Event], bool, Exception | None]:
    """What one message of a run's stream says: its events, whether the run is over,
    and the error it ended with. Messages of another run (late ones of an earlier run
    on the same endpoint or line) and a RunAccepted say nothing. The direct call's
    error reply (``ref``) ends it: ``not_running`` as :class:`NotTaken` (ask the host's
    current partition), any other code as its typed error."""
    if ref is not None and isinstance(message, (ErrorReply, Reply)) and message.ref == ref:
        if isinstance(message, Reply):
            return [], False, None
        if message.code == "not_running":
            return [], True, NotTaken()
        return [], True, typed_error(error_for_code(message.code, message.detail))
    if getattr(message, "run_id", None) != run_id:
        return [], False, None
    events: list[Event] = []
    for item in message.messages if isinstance(message, RunMessages) else (message,):
        if isinstance(item, AdkEvent):
            events.append(item.event)
        elif isinstance(item, RunDone):
            return events, True, None
        elif isinstance(item, RunFailed):
            return events, True, RunFailedError(item.run_id, item.reason, item.error_type, item.detail, item.resumed_as)
    return events, False, None


class _Seen:
    """The committed events a run's caller was given: a followed run's catch-up
    (``FollowRun``) may repeat some, and each is given once; ``last``: the latest one's id."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.last = ""

    def first_time(self, event: Event) -> bool:
        if event.partial:
            return True
        if event.id in self.ids:
            return False
        self.ids.add(event.id)
        self.last = event.id
        return True


class PrivateEndpoint:
    """A private endpoint of ``system`` that closes when this object is collected (or
    by ``close``, with its sockets)."""

    def __init__(self, system: Any) -> None:
        self.system = system
        self.clean = False  # its last run is over: nothing more will arrive for it
        #: Sessions whose actors this endpoint has talked to (each keeps a socket open).
        self.peers: set[int] = set()  # the partitions it has talked to
        #: its direct lines to partitions (see _caller_line), by partition address, kept
        #: from run to run: one line per endpoint made consecutive runs on sessions of
        #: different partitions connect a new one each time
        self.lines: dict[str, RunnerLine] = {}
        manager = system.private()
        self.context = manager.__enter__()
        self.close = weakref.finalize(self, _close_endpoint, manager)


def _close_endpoint(manager: Any) -> None:
    try:
        manager.__exit__(None, None, None)
    except Exception:  # the actor system may be gone already
        pass


class Runner:
    def __init__(self, host: Any, app_name: str, *, timeout: float = 660.0, call_timeout: float = 30.0,
                 orphan_grace: float = 3.0, follow_resumes: bool = True, auto_create_session: bool = False) -> None:
        self.host = host
        self.app_name = app_name
        #: a run on a session that does not exist creates it (google-adk's ``auto_create_session``)
        self.auto_create_session = auto_create_session
        self.follow_resumes = follow_resumes
        self.timeout = timeout
        self.call_timeout = call_timeout
        self.orphan_grace = orphan_grace
        self._runs: dict[str, tuple[str, str]] = {}
        self._line_paths: dict[str, str | None] = {}  # partition address -> its line's socket (see _line)
        self._async_lines = AsyncLines()  # run_async's lines, one per event loop and partition
        self._endpoints: list[PrivateEndpoint] = []  # idle ones; see _lease_endpoint
        self._endpoints_lock = threading.Lock()

    # -- requests ---------------------------------------------------------------------------

    def _request(self, endpoint: Any, request: Any, session_id: str, user_id: str) -> Any:
        """Call the partition owning the session (in a cluster, a session at home on
        another member: that member's ``sessions`` supervisor, ``Host.session_home``);
        ask again while the partition restarts (at once after the first failure, with
        the partition's new address; then every ``_RESTART_POLL`` while it is still
        restarting). A partition whose process is
        known to be gone (``Host.partition_alive``) is not called, and one that dies
        while the call waits fails it within ``_ALIVE_POLL``: Thespian takes about 40 ms
        to fail a call to a dead address (its retries of the refused connection).
        A run request handed to another host's partition that died before answering
        (``ServerDiedAnswering``) may have been acted on: it is asked again, the same
        request, while that holder's lease lasts (``session_elsewhere``) until the
        session's next holder answers it (a run request again for a run that ended is
        answered with that run's events and end: never run twice); past the deadline it
        is a ``HostError``, never a refusal that says nothing was written."""
        deadline = time.monotonic() + self.call_timeout
        refresh = False
        lost_with_a_holder = False
        while True:
            try:
                home = self.host.session_home(self.app_name, user_id, session_id) if session_id else None
                if home is not None:  # another member of the cluster: straight to its sessions supervisor
                    try:
                        return call(endpoint, home, request, timeout=max(0.1, deadline - time.monotonic()),
                                    poll=_ALIVE_POLL)
                    except ServerNotRunning:  # gone (restarted elsewhere, or its host): this host's partition
                        self.host.forget_home(home)
                        continue
                address = self.host.partition_for(self.app_name, user_id, session_id, refresh=refresh)
                alive = self.host.partition_alive(address) if address is not None else False
                if alive is False:
                    raise ServerNotRunning("the session's partition is restarting")
                # While it waits: gone when its process is, or when the host lists another
                # partition in its place (another thread saw the restart: its pid is no
                # longer known here, and a call to the dead address would wait for ever).
                return call(endpoint, address, request, timeout=max(0.1, deadline - time.monotonic()),
                            alive=None if alive is None else lambda: self.host.partition_alive(address) is True,
                            poll=_ALIVE_POLL)
            except (ServerNotRunning, HostError) as exc:
                # A turn handed on may have been written: never answered by a refusal that says
                # nothing was (a read is: it wrote nothing either way).
                lost_with_a_holder = lost_with_a_holder or (
                    isinstance(exc, ServerDiedAnswering) and isinstance(request, RunRequest))
                if time.monotonic() >= deadline:
                    raise HostError(f"the host did not take the request: {exc}") from exc
                if refresh:
                    time.sleep(_RESTART_POLL)
                refresh = True
            except CallError as exc:
                if exc.code == "not_running" and time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
                if exc.code == "session_elsewhere" and lost_with_a_holder:
                    if time.monotonic() >= deadline:
                        raise HostError(f"the host holding the session died with this request, which it may have "
                                        f"acted on, and no other host took the session within {self.call_timeout} "
                                        f"s: {exc}") from None
                    time.sleep(_HOLDER_GONE_POLL)  # its lease runs out, then the next holder answers
                    continue
                raise typed_error(exc) from None
            except CallTimeout as exc:
                raise HostError(f"no answer from the host within {self.call_timeout} s") from exc

    def _call(self, request: Any, session_id: str, user_id: str) -> Any:
        """Call the partition owning the session from an endpoint of this call's own
        (leased like a run's): a Runner may be used from many threads at once, and a
        Thespian endpoint from one at a time only."""
        _checked(request)
        peer = self._peer(user_id, session_id) if session_id else None  # none: ListSessions
        return self._on_endpoint(lambda context: self._request(context, request, session_id, user_id), peer)

    def _peer(self, user_id: str, session_id: str) -> int | None:
        """Which of the host's partitions the session's requests go to (an endpoint that
        talked to it before has its connection open); None while the host's partitions
        cannot be listed (they restart: the request's own retries wait for them)."""
        try:
            count = len(self.host.partitions())
        except AdkError:
            return None
        return partition_index(session_key(self.app_name, user_id, session_id), count)

    def _on_endpoint(self, work: Callable[[Any], _T], peer: int | None = None) -> _T:
        """``work(context)`` on a leased endpoint, kept for reuse only if it got an
        answer (a value or a typed error): after a timeout a late reply may still come."""
        endpoint = self._lease_endpoint(peer)
        try:
            result = work(endpoint.context)
            endpoint.clean = True
            return result
        except (HostError, CallTimeout):
            raise
        except Exception:
            endpoint.clean = True
            raise
        finally:
            self._return_endpoint(endpoint)

    def create_session(self, user_id: str, session_id: str | None = None,
                       state: dict[str, Any] | None = None) -> SessionInfo:
        session_id = session_id or uuid.uuid4().hex
        result: SessionInfo = self._call(CreateSession(self.app_name, user_id, session_id, dict(state or {})),
                                         session_id, user_id)
        return result

    def get_session(self, user_id: str, session_id: str) -> SessionInfo:
        result: SessionInfo = self._call(GetSession(self.app_name, user_id, session_id), session_id, user_id)
        return result

    def get_state(self, user_id: str, session_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call(GetState(self.app_name, user_id, session_id), session_id, user_id)
        return result

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        result: list[SessionInfo] = self._call(ListSessions(self.app_name, user_id), "", user_id)
        return result

    def session_trace(self, session_id: str, user_id: str | None = None) -> list[TraceSpan]:
        """The trace of the session's last turns (``[host] trace_turns`` of them), oldest
        first; empty when none is kept. ``user_id`` None: whoever's session it is."""
        result: list[TraceSpan] = self._call(GetTrace(self.app_name, session_id, user_id), "", user_id or "")
        return result

    def last_run(self, user_id: str, session_id: str) -> RunInfo | None:
        """The session's latest run as recorded (status, attempt, the run it resumes), or None."""
        result: RunInfo | None = self._call(LastRun(self.app_name, user_id, session_id), session_id, user_id)
        return result

    def event_trace(self, event_id: str, user_id: str | None = None) -> TraceSpan | None:
        """The span of the model call that made event ``event_id``, or None (not kept,
        or not of ``user_id``'s sessions when given)."""
        result: TraceSpan | None = self._call(GetEventTrace(self.app_name, event_id, user_id), "", user_id or "")
        return result

    def delete_session(self, user_id: str, session_id: str) -> None:
        self._call(DeleteSession(self.app_name, user_id, session_id), session_id, user_id)

    def update_state(self, user_id: str, session_id: str, state_delta: dict[str, Any]) -> SessionInfo:
        """Change a session's state outside a run: an event of author ``user`` carrying
        ``state_delta`` is committed (a key set to None is deleted); returns the session."""
        result: SessionInfo = self._call(UpdateState(self.app_name, user_id, session_id, dict(state_delta)),
                                         session_id, user_id)
        return result

    def crash_session(self, user_id: str, session_id: str, reason: str = "crashed on request") -> SessionStatus:
        """Crash the session as a failing handler would (fault injection): its runs end
        ``interrupted``, it is read from the store on its next request, and the crash
        counts toward its restart intensity; returns its status after the crash."""
        status: SessionStatus = self._call(CrashSession(self.app_name, user_id, session_id, reason), session_id,
                                           user_id)
        return status

    def reset_session(self, user_id: str, session_id: str) -> None:
        """Let a failed session (``SessionFailedError``) serve again."""
        self._call(ResetSession(self.app_name, user_id, session_id), session_id, user_id)

    def kill_run(self, user_id: str, session_id: str, run_id: str) -> None:
        """End a run of the session: it is asked to stop, and its worker process is
        killed if it has not stopped within ``[host] run_stop_grace`` (the other runs of
        that worker then end ``interrupted``, ``RunWorkerKilled``, and resume where their
        app allows); its caller gets ``RunFailed(killed, RunKilled)`` once its work has
        stopped or its process is dead."""
        self._call(KillRun(self.app_name, user_id, session_id, run_id), session_id, user_id)

    def watch_session(self, user_id: str, session_id: str) -> SessionWatch:
        """Watch the session's life (activating, activated, crashed, restarted, failed, reset, passivated,
        deleted) as it happens: ``watch.next(timeout)``, ``watch.events(timeout)``;
        ``watch.status`` is its status when the watch began. Close it when done."""
        return SessionWatch(self.host, _checked(WatchSession(self.app_name, user_id, session_id)), self.call_timeout)

    def save_artifact(self, user_id: str, session_id: str, name: str, part: Part,
                      custom_metadata: dict[str, Any] | None = None) -> int:
        """Store a new version of artifact ``name`` (with ``custom_metadata``); returns its
        version (0, 1, ...)."""
        return int(self._service("artifacts", SaveArtifact(self.app_name, user_id, session_id, name, part,
                                                           custom_metadata)))

    def load_artifact(self, user_id: str, session_id: str, name: str, version: int | None = None) -> Part | None:
        """Artifact ``name`` at ``version`` (the latest when None), or None."""
        found: Part | None = self._service("artifacts", LoadArtifact(self.app_name, user_id, session_id, name,
                                                                     version))
        return found

    def list_artifacts(self, user_id: str, session_id: str) -> list[str]:
        names: list[str] = self._service("artifacts", ListArtifacts(self.app_name, user_id, session_id))
        return names

    def artifact_versions(self, user_id: str, session_id: str, name: str) -> list[int]:
        versions: list[int] = self._service("artifacts", ArtifactVersions(self.app_name, user_id, session_id, name))
        return versions

    def artifact_metadata(self, user_id: str, session_id: str, name: str,
                          version: int | None = None) -> dict[str, Any] | None:
        """What was recorded with a version of artifact ``name`` (the latest when None):
        ``version``, ``mime_type``, ``size``, ``sha256``, ``created``; or None."""
        found: dict[str, Any] | None = self._service("artifacts", ArtifactMetadata(
            self.app_name, user_id, session_id, name, version))
        return found

    def delete_artifact(self, user_id: str, session_id: str, name: str) -> None:
        self._service("artifacts", DeleteArtifact(self.app_name, user_id, session_id, name))

    def add_session_to_memory(self, user_id: str, session_id: str) -> int:
        """Index a session's text events in the host's memory; returns how many entries."""
        return int(self._service("memory", AddSessionToMemory(self.app_name, user_id, session_id)))

    def search_memory(self, user_id: str, query: str, limit: int = 10) -> list[Any]:
        found: list[Any] = self._service("memory", SearchMemory(self.app_name, user_id, query, limit))
        return found

    def approvals(self, user_id: str | None = None, status: str | None = "pending") -> list[Any]:
        """Approvals of this app (pending by default)."""
        found: list[Any] = self._service("approvals", ListApprovals(self.app_name, user_id, status))
        return found

    def approve(self, approval_id: str) -> Any:
        return self._service("approvals", Approve(approval_id))

    def deny(self, approval_id: str, reason: str = "denied by a human") -> Any:
        return self._service("approvals", Deny(approval_id, reason))

    def put_credential(self, user_id: str, key: str, credential: Any) -> None:
        """Store a credential the client obtained (the end of an auth flow)."""
        self._service("credentials", PutCredential(self.app_name, user_id, key, credential))

    def delete_credential(self, user_id: str, key: str) -> bool:
        return bool(self._service("credentials", DeleteCredential(self.app_name, user_id, key)))

    def breaker_states(self) -> dict[str, Any]:
        """Every model's circuit breaker as the host's breaker actor sees it (state,
        failures, when it may close...), by model name."""
        states: dict[str, Any] = self._service("breakers", BreakerStatus())
        return states

    def _service(self, child_id: str, request: Any) -> Any:
        _checked(request)
        root = self.host.root
        if root is None:
            raise HostError("the host is not running")
        deadline = time.monotonic() + self.call_timeout

        def ask(context: Any) -> Any:
            while True:
                try:
                    services = SupervisorClient(context, root.address, timeout=self.call_timeout).child("services")
                    info = (SupervisorClient(context, services.address, timeout=self.call_timeout).child(child_id)
                            if services.address is not None else None)
                except (CallTimeout, ServerNotRunning, CallError) as exc:  # the tree is restarting
                    info = None
                    if time.monotonic() >= deadline:
                        raise HostError(f"the {child_id} service cannot be found: {exc}") from None
                if info is not None and info.address is not None:
                    pid = info.pid
                    watched = self.host.tree_process_alive(pid) is not None
                    try:  # a service that dies while the call waits fails it at once (then: asked again)
                        return call(context, info.address, request, timeout=self.call_timeout,
                                    alive=(lambda: self.host.tree_process_alive(pid) is True) if watched else None,
                                    poll=_ALIVE_POLL)
                    except ServerNotRunning:
                        pass
                    except CallError as exc:
                        raise typed_error(exc) from None
                if time.monotonic() >= deadline:
                    raise HostError(f"the {child_id} service did not answer within {self.call_timeout} s")
                time.sleep(0.02)

        return self._on_endpoint(ask)

    def cancel(self, run_id: str, *, user_id: str | None = None, session_id: str | None = None) -> None:
        """Cancel a run that has not ended: one this Runner is streaming, or, given its
        ``user_id`` and ``session_id``, any run of that session (one whose stream was
        given up already: an async consumer that was cancelled). ``invalid_request``
        when there is no such run. A run the host resumed (and this Runner follows) is
        cancelled as the run that continues it: the session finds it by its invocation."""
        if run_id in self._runs:
            user_id, session_id = self._runs[run_id]
        elif user_id is None or session_id is None:
            raise InvalidRequestError(f"no run {run_id!r} in progress on this runner")
        self._call(CancelRun(self.app_name, user_id, session_id, run_id), session_id, user_id)

    # -- runs ---------------------------------------------------------------------------------

    def run(self, user_id: str, session_id: str, message: str | Content, *, run_config: RunConfig | None = None,
            state_delta: dict[str, Any] | None = None, reject_if_busy: bool = False,
            run_id: str | None = None, create_session: bool | None = None) -> Generator[Event, None, None]:
        """Run one turn; yield its events (the user's first, with ``state_delta``, which
        is committed with the message); raise RunFailedError on failure. A session that
        does not exist is refused (SessionNotFoundError), or created for the turn with
        ``create_session`` (None: the Runner's ``auto_create_session``)."""
        request = self._run_request(user_id, session_id, message, run_config, state_delta, reject_if_busy, run_id,
                                    create_session)
        self._runs[request.run_id] = (user_id, session_id)
        try:
            yield from self._followed(request, run_config)
        finally:
            self._runs.pop(request.run_id, None)

    def resume(self, user_id: str, session_id: str, run_id: str, *,
               decisions: Mapping[str, CallDecision] | None = None, run_config: RunConfig | None = None,
               new_run_id: str | None = None) -> Generator[Event, None, None]:
        """Continue run ``run_id`` of the session (interrupted, killed, timed out, failed,
        or stopped ``needs_decision``) from its committed steps, as a new run of the same
        invocation: yield the events made now; raise RunFailedError as ``run`` does
        (``needs_decision``: its ``pending_calls`` each need a :class:`CallDecision`, given
        in ``decisions`` by call id on the next resume). A run is resumed once:
        ``invalid_request`` for one resumed already, still running, done or cancelled."""
        request = self._resume_request(user_id, session_id, run_id, decisions, run_config, new_run_id)
        self._runs[request.run_id] = (user_id, session_id)
        try:
            yield from self._followed(request, run_config)
        finally:
            self._runs.pop(request.run_id, None)

    async def resume_async(self, user_id: str, session_id: str, run_id: str, *,
                           decisions: Mapping[str, CallDecision] | None = None, run_config: RunConfig | None = None,
                           new_run_id: str | None = None) -> AsyncIterator[Event]:
        """:meth:`resume` as an async iterator (on a thread of its own)."""
        request = self._resume_request(user_id, session_id, run_id, decisions, run_config, new_run_id)
        self._runs[request.run_id] = (user_id, session_id)
        try:
            async for event in iterate_in_thread(lambda: self._followed(request, run_config)):
                yield event
        finally:
            self._runs.pop(request.run_id, None)

    def follow(self, user_id: str, session_id: str, run_id: str, *, after: str = "",
               run_config: RunConfig | None = None) -> Generator[Event, None, None]:
        """Join run ``run_id`` of the session as its caller (``FollowRun``): yield the
        committed events of its invocation after event ``after`` (all of them when
        empty), then its events as they come; return at its end, or raise
        RunFailedError as ``run`` does (following on when the host resumes it on its
        own). A run that ended already yields its events and ends so. Its earlier caller
        hears nothing more of it. InvalidRequestError for a run the session never had."""
        request = _checked(FollowRun(self.app_name, user_id, session_id, run_id=run_id, after=after, batched=True))
        yield from self._followed(request, run_config)

    def _followed(self, request: RunRequest, run_config: RunConfig | None, direct: bool = True,
                  seen: _Seen | None = None, failure: RunFailedError | None = None) -> Iterator[Event]:
        """``_run``'s events, then, each time the run ends resumed by the host on its own
        (``RunFailed.resumed_as``) and this Runner follows resumes, the resuming run's
        (``FollowRun``, asking for the committed events after the last one given):
        each committed event once (``seen``). ``failure``: ``request`` follows the run
        that failure named already. A follow refused (the host did not resume the run
        after all: its session was used meanwhile, or it failed to) raises the failure
        that named it."""
        seen = seen if seen is not None else _Seen()
        for _ in range(_MAX_FOLLOWS + 1):
            try:
                for event in self._run(request, run_config, direct):
                    if seen.first_time(event):
                        yield event
                return
            except InvalidRequestError:
                if failure is None:
                    raise
                raise failure from None
            except RunFailedError as error:
                if not self._follows(error):
                    raise
                failure, request, direct = error, self._follow_request(request, error, seen), True
        assert failure is not None
        raise failure

    def _follows(self, error: RunFailedError) -> bool:
        return self.follow_resumes and bool(error.resumed_as)

    def _follow_request(self, request: RunRequest, error: RunFailedError, seen: _Seen) -> FollowRun:
        return FollowRun(self.app_name, request.user_id, request.session_id, run_id=error.resumed_as,
                         after=seen.last, batched=True)

    def _resume_request(self, user_id: str, session_id: str, run_id: str,
                        decisions: Mapping[str, CallDecision] | None, run_config: RunConfig | None,
                        new_run_id: str | None) -> RunRequest:
        request = ResumeRun(self.app_name, user_id, session_id, run_config=run_config, batched=True, resume=run_id,
                            decisions=dict(decisions) if decisions else None)
        if new_run_id:
            request = replace(request, run_id=new_run_id)
        return _checked(request)  # type: ignore[no-any-return]

    def _run_request(self, user_id: str, session_id: str, message: str | Content, run_config: RunConfig | None,
                     state_delta: dict[str, Any] | None, reject_if_busy: bool, run_id: str | None,
                     create_session: bool | None) -> RunRequest:
        """The run's request (InvalidRequestError when it breaks the input rules)."""
        content = Content.user(message) if isinstance(message, str) else message
        request = RunRequest(self.app_name, user_id, session_id, new_message=content, run_config=run_config,
                             state_delta=dict(state_delta) if state_delta else None,
                             reject_if_busy=reject_if_busy, batched=True,
                             create_session=self.auto_create_session if create_session is None else create_session)
        if run_id:
            request = replace(request, run_id=run_id)
        return _checked(request)  # type: ignore[no-any-return]

    def _run(self, request: RunRequest, run_config: RunConfig | None, direct: bool = True) -> Iterator[Event]:
        """The run's events: sent straight to the session's partition first (unless not
        ``direct``), then through the host's current partition (see ``run``)."""
        user_id, session_id = request.user_id, request.session_id
        endpoint = self._lease_endpoint(self._peer(user_id, session_id)) if direct else None
        try:
            if endpoint is not None:
                direct_start = self._send_direct(endpoint, request)
                if direct_start is not None:
                    try:
                        yield from self._stream(endpoint, *direct_start, run_config, user_id, session_id)
                        return
                    except NotTaken:
                        # That partition was gone (or died during the run: asked again, the
                        # restarted one answers with the run's recorded end).
                        pass
                # From an endpoint of its own: this one's last send was refused, and Thespian may
                # still be retrying it (seen under kills: the next call on it got no answer for 30 s).
                endpoint.clean = False
                self._return_endpoint(endpoint)
            endpoint = PrivateEndpoint(self.host.system)
            accepted = self._start_run(endpoint, request)
            yield from self._stream(endpoint, accepted, None, None, ThespianTransport(endpoint.context), run_config,
                                    user_id, session_id)
        finally:
            if endpoint is not None:
                self._return_endpoint(endpoint)

    def _lease_endpoint(self, peer: int | None = None) -> PrivateEndpoint:
        """A Thespian endpoint for one run or call, used by nobody else until it is
        returned; endpoints are kept from run to run (a new one would cost the session
        a new connection to reply on, every turn). An idle one that has talked to
        ``peer`` (a partition) before is preferred: its connection is open. Messages
        of an earlier run that still arrive on one are told apart by run id and dropped."""
        with self._endpoints_lock:
            endpoint = None
            if peer is not None:
                for position in range(len(self._endpoints) - 1, -1, -1):
                    candidate = self._endpoints[position]
                    if peer in candidate.peers and candidate.system is self.host.system:
                        endpoint = self._endpoints.pop(position)
                        break
            while endpoint is None and self._endpoints:
                endpoint = self._endpoints.pop()
                if endpoint.system is not self.host.system:
                    endpoint = None
        if endpoint is None:
            endpoint = PrivateEndpoint(self.host.system)
        if peer is not None:
            endpoint.peers.add(peer)
        return endpoint

    def _return_endpoint(self, endpoint: PrivateEndpoint) -> None:
        """Keep the endpoint for another run only if its run is over (its terminal
        message came, or the request was refused): an abandoned or timed-out run may
        still send to it."""
        if not endpoint.clean:
            return  # closed when collected
        endpoint.clean = False
        with self._endpoints_lock:
            if len(self._endpoints) < _MAX_IDLE_ENDPOINTS:
                self._endpoints.append(endpoint)

    def _send_direct(self, endpoint: PrivateEndpoint,
                     request: RunRequest) -> tuple[RunAccepted, Any, Any, RunTransport] | None:
        """Send the request straight to the session's partition as the host last listed
        them (a session at home on another member of a cluster: to that member's
        ``sessions`` supervisor, through Thespian), asking for no RunAccepted (one message less: the run's messages are the
        answer), on the endpoint's direct line when it has one or can get one
        (``_line``), else through Thespian (``_run_transport``). Returns (acceptance,
        the first message if one came, the call's ref, the transport its run goes on),
        or None when that partition is gone or answered ``not_running``: the request
        started nothing there, and the host's current partition is asked instead
        (``_start_run``)."""
        try:
            home = self.host.session_home(request.app_name, request.user_id, request.session_id)
            address = home if home is not None else self.host.partition_for(request.app_name, request.user_id,
                                                                              request.session_id)
        except AdkError:  # the partitions restart: _start_run's retries wait for them
            return None
        if home is None and self.host.partition_alive(address) is False:
            # Its process is gone: _start_run asks the host's current partition. (The
            # wait below is not cut in slices to look at the process meanwhile, as a call
            # does: each of Thespian's listen() costs enough that, for every turn of a
            # burst, it tripled the client's CPU per turn: docs/benchmarks.md.)
            return None
        message = Call(replace(request, reply_accepted=False))
        line = self._line(endpoint, address) if home is None else None  # another member: through Thespian
        transport: RunTransport = (LineTransport(line) if line is not None
                                   else ThespianTransport(endpoint.context, address, self._partition_there))
        try:
            answer = transport.first(message, _FIRST_WAIT)
        except NotTaken:
            if home is not None:
                self.host.forget_home(home)  # _start_run asks this host's partition meanwhile
            return None  # it died: whether it took the request, its next self says
        if isinstance(answer, ErrorReply) and answer.ref == message.ref and answer.code == "not_running":
            return None
        return RunAccepted(request.run_id, 0, 0, address), answer, message.ref, transport

    def _line(self, endpoint: PrivateEndpoint, address: Any) -> RunnerLine | None:
        """The endpoint's direct line to the partition at ``address`` (see
        ``_caller_line``), connected on first use; None when the partition runs on
        another machine (``Host.partition_alive`` cannot tell), has no line, or its
        socket cannot be reached from here: then Thespian carries the run. Lines that
        ended are dropped."""
        key = str(address)  # (Thespian's addresses are not hashable)
        line = endpoint.lines.get(key)
        if line is None or line.closed:
            for ended in [k for k, known in endpoint.lines.items() if known.closed]:
                del endpoint.lines[ended]
            line = None
            if self.host.partition_alive(address) is not None:
                path = self._line_path(address)
                line = RunnerLine.connect(path) if path else None
            if line is not None:
                endpoint.lines[key] = line
        return line

    def _line_path(self, address: Any) -> str | None:
        """Where the partition at ``address`` listens for lines (asked once, through
        Thespian); None when it has none or did not answer (asked again next time)."""
        key = str(address)  # (Thespian's addresses are not hashable)
        if key not in self._line_paths:
            try:
                with self.host.system.private() as asking:
                    self._line_paths[key] = call(asking, address, LinePath(), timeout=self.call_timeout)
            except (CallError, CallTimeout, ServerNotRunning):
                return None
        return self._line_paths[key]

    def _start_run(self, endpoint: PrivateEndpoint, request: RunRequest) -> RunAccepted:
        """Ask the partition that owns the session to start the run (the host's list of
        partitions looked up again while one restarts). A refusal marks ``endpoint``
        clean (nothing more will come for this run); no answer leaves it unclean (one
        may still come, so it is not reused)."""
        try:
            accepted: RunAccepted = self._request(endpoint.context, request, request.session_id, request.user_id)
        except HostError:
            raise
        except Exception:
            endpoint.clean = True
            raise
        return accepted

    def _partition_there(self, address: Any) -> bool:
        """Is the session's partition there? Its process is looked at when the host runs
        on this machine (``Host.partition_alive``). Otherwise it is asked from an endpoint
        of its own with a ``PROBE`` cast: a refused delivery says it is gone; a delivery,
        that it is not known to be gone. No answer ever comes, so none can find this
        endpoint closed (a busy partition answering late to closed endpoints only got
        busier). (Under a burst of 200 new sessions the probes' new endpoints and
        connections took a quarter of the client's time and made the partitions
        slower, so more turns waited past ``_FIRST_WAIT`` and were probed in turn:
        docs/benchmarks.md.)"""
        if address is None:
            return True
        alive: bool | None = self.host.partition_alive(address)
        if alive is not None:
            return alive
        if self.host.is_member_sessions(address):  # another member's: is that host there?
            return takes_connection(address) is not False
        with self.host.system.private() as probe:
            try:
                ask_delivered(probe, address, Cast(PROBE), _PROBE_WAIT)
            except ServerNotRunning:
                return False
        return True

    def _reactivate(self, user_id: str, session_id: str) -> None:
        """Ask the session's partition for its state: that loads the session
        again if it is not running, and a restarted one tells the callers of its
        interrupted runs before it answers."""
        try:
            self.get_state(user_id, session_id)
        except AdkError:
            pass  # the host is restarting more than the session: orphan_grace decides

    def _run_limit(self, run_config: RunConfig | None) -> float:
        """How long a caller waits for a run's end: the Runner's ``timeout``, or the
        run's own deadline and 10 s more (the host ends it at its deadline)."""
        return self.timeout if run_config is None or not run_config.timeout else run_config.timeout + 10

    def _stream(self, leased: PrivateEndpoint, accepted: RunAccepted, first: Any, ref: Any,
                transport: RunTransport, run_config: RunConfig | None, user_id: str,
                session_id: str) -> Iterator[Event]:
        """Yield the run's events until its terminal message (``first``: one that came
        already), as ``transport`` brings them. ``ref``: the direct call's ref, whose
        error reply (it is the only answer that may come instead of the run's messages)
        raises NotTaken for ``not_running``, else its typed error. A transport that ends
        (its partition died) raises NotTaken too: asked again, the restarted partition
        answers with the run's recorded end."""
        limit = self._run_limit(run_config)
        deadline = time.monotonic() + limit
        next_probe = time.monotonic() + _PROBE_EVERY
        give_up_at: float | None = None  # set once the partition is known to be gone
        while True:
            message, first = (first, None) if first is not None else (transport.receive(0.2), None)
            if message is None:
                now = time.monotonic()
                if now >= deadline:
                    raise RunFailedError(accepted.run_id, "timeout", "RunnerTimeout",
                                         f"no end of run within {limit} s")
                if give_up_at is not None and now >= give_up_at:
                    raise RunFailedError(accepted.run_id, "killed", "HostGone",
                                         "the session's partition died and its restarted self did not report the run")
                if give_up_at is None and now >= next_probe:
                    next_probe = now + _PROBE_EVERY
                    if not self._partition_there(accepted.session):
                        self._reactivate(user_id, session_id)  # its restarted self reports the run first
                        give_up_at = time.monotonic() + self.orphan_grace
                continue
            events, ended, error = _step(message, accepted.run_id, ref)
            yield from events
            if ended:
                leased.clean = True
                if error is not None:
                    raise error
                return

    async def run_async(self, user_id: str, session_id: str, message: str | Content, *,
                        run_config: RunConfig | None = None, state_delta: dict[str, Any] | None = None,
                        reject_if_busy: bool = False, run_id: str | None = None,
                        create_session: bool | None = None) -> AsyncIterator[Event]:
        """The same as :meth:`run`, as an async iterator. On the host's machine the run
        goes on this event loop's direct line to the session's partition
        (``_async_line``: no thread); when there is none (the partitions not listed yet,
        another machine, a partition that died before answering), :meth:`run` carries it
        on a thread of its own (``_live_run.iterate_in_thread``)."""
        request = self._run_request(user_id, session_id, message, run_config, state_delta, reject_if_busy, run_id,
                                    create_session)
        self._runs[request.run_id] = (user_id, session_id)
        try:
            line = await self._async_line(request)
            direct, seen, failure = True, _Seen(), None
            if line is not None:
                try:
                    async for event in self._stream_async(line, request, run_config):
                        if seen.first_time(event):
                            yield event
                    return
                except NotTaken:
                    direct = False  # as in _run: the host's current partition is asked
                except RunFailedError as error:
                    if not self._follows(error):
                        raise
                    failure, request = error, self._follow_request(request, error, seen)
            following = request
            async for event in iterate_in_thread(lambda: self._followed(following, run_config, direct, seen, failure)):
                yield event
        finally:
            self._runs.pop(request.run_id, None)

    async def _async_line(self, request: RunRequest) -> AsyncRunnerLine | None:
        """This loop's line to the session's partition as the host last listed them,
        or None (see ``run_async``; also for a session at home on another member of a
        cluster, which Thespian reaches). A line still open is used as it is (a partition
        that died since closes it, and its run then goes the other way); before a new
        one is connected, the partition's process must be alive. Where the partition's
        socket is, is asked once per partition, on a thread (a Thespian call)."""
        if self.host.session_home(request.app_name, request.user_id, request.session_id) is not None:
            return None  # at home on another member of the cluster: through Thespian, on a thread
        address = self.host.listed_partition_for(request.app_name, request.user_id, request.session_id)
        if address is None:
            return None
        line = self._async_lines.open_line(str(address))
        if line is not None:
            return line
        if self.host.partition_alive(address) is not True:
            return None
        return await self._async_lines.line(str(address), lambda: self._line_path(address))

    async def _stream_async(self, line: AsyncRunnerLine, request: RunRequest,
                            run_config: RunConfig | None) -> AsyncIterator[Event]:
        """Send the run on ``line`` (no RunAccepted: its messages are the answer) and
        yield its events until its terminal message; the run's deadline as in
        ``_stream``. The line's end before the run's (its partition died) raises
        NotTaken: asked again, the restarted partition answers with the run's end."""
        message = Call(replace(request, reply_accepted=False))
        queue = line.open(request.run_id, message.ref)
        try:
            if not line.send(message):
                raise NotTaken()
            limit = self._run_limit(run_config)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + limit
            while True:
                try:
                    received = await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    raise RunFailedError(request.run_id, "timeout", "RunnerTimeout",
                                         f"no end of run within {limit} s") from None
                if received is CLOSED:
                    raise NotTaken()
                events, ended, error = _step(received, request.run_id, message.ref)
                for event in events:
                    yield event
                if ended:
                    if error is not None:
                        raise error
                    return
        finally:
            line.release(request.run_id, message.ref)

    # -- live runs ----------------------------------------------------------------------------

    async def run_debug(self, user_messages: str | list[str], *, user_id: str = "debug_user_id",
                        session_id: str = "debug_session_id", run_config: RunConfig | None = None,
                        quiet: bool = False, verbose: bool = False) -> list[Event]:
        """google-adk's quick try-out, as the in-process Runner's (``adk_actors.Runner``):
        in order, the session ``session_id`` of ``user_id`` is read, or created when the
        host has none; each of ``user_messages`` (one string or a list) is run in turn
        with :meth:`run_async`; every event the turns yielded but the user's own
        message is returned, in order.
        Unless ``quiet``: which session is used and each message are logged (the
        ``adk_actors.runtime`` logger, at INFO) and each event is printed as it comes
        (its texts; with ``verbose`` its tool calls, results, code and data too). A
        turn's error is raised here."""
        try:
            await asyncio.to_thread(self.get_session, user_id, session_id)
            created = False
        except SessionNotFoundError:
            await asyncio.to_thread(self.create_session, user_id, session_id)
            created = True
        if not quiet:
            _debug_log.info("%s session: %s", "Created new" if created else "Continue", session_id)
        collected: list[Event] = []
        for text in [user_messages] if isinstance(user_messages, str) else list(user_messages):
            if not quiet:
                _debug_log.info("User > %s", text)
            first = True
            async for event in self.run_async(user_id, session_id, text, run_config=run_config):
                users_own, first = first and event.author == "user", False
                if users_own:
                    continue  # the host's runs yield the message first; google-adk's run_debug shows it not
                if not quiet:
                    print_event(event, verbose=verbose)
                collected.append(event)
        return collected

    def run_live(self, user_id: str, session_id: str, *, run_config: RunConfig | None = None,
                 reject_if_busy: bool = False) -> LiveRun:
        """Start a live run on the session (see ``_live_run``): returns once the
        session's partition accepted it; raises the typed error it answered instead."""
        request = _checked(RunRequest(self.app_name, user_id, session_id, run_config=run_config,
                                      reject_if_busy=reject_if_busy, batched=True, live=True,
                                      create_session=self.auto_create_session))
        endpoint = PrivateEndpoint(self.host.system)
        try:
            accepted = self._start_run(endpoint, request)
        finally:
            if endpoint.clean:  # refused
                self._return_endpoint(endpoint)
        self._runs[request.run_id] = (user_id, session_id)

        def stream() -> Iterator[Event]:
            try:
                yield from self._stream(endpoint, accepted, None, None, ThespianTransport(endpoint.context),
                                        run_config, user_id, session_id)
            finally:
                self._runs.pop(request.run_id, None)
                self._return_endpoint(endpoint)

        def send(live: LiveRequest) -> Any:
            return self._call(LiveInput(self.app_name, user_id, session_id, request.run_id, live), session_id, user_id)

        return LiveRun(request.run_id, send, stream())
