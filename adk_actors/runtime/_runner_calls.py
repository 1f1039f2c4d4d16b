"""The Runner's plain calls: sessions (:class:`SessionCalls`) and services (:class:`ServiceCalls`).

Each method builds one request of the message API, checks it against the input rules
(an :class:`InvalidRequestError` before anything is sent), and hands it to the Runner's
:class:`~._routing.Router`: a session's request goes to the partition owning the
session, asked again while it restarts; a service's (artifacts, memory, approvals,
credentials, breakers) to that service under the host's root (``ServiceCalls``'
methods, also grouped by service: ``runner.artifacts.save``, ``runner.approvals.approve``). The answer is returned
as the host gave it; an error answer is raised as its typed ``adk_actors`` error. The
classes hold no state of their own: ``Runner`` inherits them, and they reach the host
only through ``self._router``.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from .._exceptions import AdkError, SessionNotFoundError
from .._rewind import is_tombstone, rewind_event
from .._types import Part, RunConfig
from ..messages import (
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
    ResetSession,
    RewindSession,
    RunInfo,
    SessionInfo,
    SessionStatus,
    UpdateState,
    WatchSession,
)
from ..tracing import TraceSpan
from ._routing import Router, checked
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

__all__ = ["Approvals", "Artifacts", "Breakers", "Credentials", "Memory", "ServiceCalls", "SessionCalls"]


class SessionCalls:
    """Calls to the sessions of the Runner's app (see the module)."""

    _router: Router

    def create_session(self, user_id: str, session_id: str | None = None,
                       state: dict[str, Any] | None = None) -> SessionInfo:
        session_id = session_id or uuid.uuid4().hex
        result: SessionInfo = self._router.call(
            CreateSession(self._router.app_name, user_id, session_id, dict(state or {})), session_id, user_id)
        return result

    def get_session(self, user_id: str, session_id: str) -> SessionInfo:
        result: SessionInfo = self._router.call(GetSession(self._router.app_name, user_id, session_id),
                                                session_id, user_id)
        return result

    def get_state(self, user_id: str, session_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._router.call(GetState(self._router.app_name, user_id, session_id),
                                                   session_id, user_id)
        return result

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        result: list[SessionInfo] = self._router.call(ListSessions(self._router.app_name, user_id), "", user_id)
        return result

    def session_trace(self, session_id: str, user_id: str | None = None) -> list[TraceSpan]:
        """The trace of the session's last turns (``[host] trace_turns`` of them), oldest
        first; empty when none is kept. ``user_id`` None: whoever's session it is."""
        result: list[TraceSpan] = self._router.call(GetTrace(self._router.app_name, session_id, user_id), "",
                                                    user_id or "")
        return result

    def last_run(self, user_id: str, session_id: str) -> RunInfo | None:
        """The session's latest run as recorded (status, attempt, the run it resumes), or None."""
        result: RunInfo | None = self._router.call(LastRun(self._router.app_name, user_id, session_id),
                                                   session_id, user_id)
        return result

    def _resumed_by(self, user_id: str, session_id: str, run_id: str) -> str:
        """The session's last run when it resumes run ``run_id`` (``RunInfo.resumes``),
        else "" (also when the host cannot say: the run's failure stands)."""
        try:
            last = self.last_run(user_id, session_id)
        except AdkError:
            return ""
        return last.run_id if last is not None and last.resumes == run_id else ""

    def event_trace(self, event_id: str, user_id: str | None = None) -> TraceSpan | None:
        """The span of the model call that made event ``event_id``, or None (not kept,
        or not of ``user_id``'s sessions when given)."""
        result: TraceSpan | None = self._router.call(GetEventTrace(self._router.app_name, event_id, user_id), "",
                                                     user_id or "")
        return result

    def delete_session(self, user_id: str, session_id: str) -> None:
        self._router.call(DeleteSession(self._router.app_name, user_id, session_id), session_id, user_id)

    def update_state(self, user_id: str, session_id: str, state_delta: dict[str, Any]) -> SessionInfo:
        """Change a session's state outside a run: an event of author ``user`` carrying
        ``state_delta`` is committed (a key set to None is deleted); returns the session."""
        result: SessionInfo = self._router.call(
            UpdateState(self._router.app_name, user_id, session_id, dict(state_delta)), session_id, user_id)
        return result

    async def rewind_async(self, *, user_id: str, session_id: str, rewind_before_invocation_id: str,
                           run_config: RunConfig | None = None) -> None:
        """google-adk's rewind, on the host: take the session back to before the
        invocation ``rewind_before_invocation_id`` (as the in-process Runner's; the
        events stay, the request compiler no longer sends the rewound ones to a model).
        In order, on a thread of its own: the session is read (missing:
        :class:`SessionNotFoundError`, unless the Runner creates sessions: then it is
        created); the invocation's first event is found (none:
        :class:`InvocationNotFoundError`, a ``ValueError``, and nothing is written); each
        session artifact changed since is saved back through the host's artifact service
        (a copy of its version then, or the tombstone google-adk loads as absent); the
        session's partition then builds the rewind event (the state changes undone) and
        commits it, refusing :class:`SessionBusyError` while a run is in progress or when
        the session changed since it was read (the artifact versions saved by such a
        refused rewind stay, newer than the session's record of them: rewind again).
        ``run_config`` is taken and not used, as in google-adk."""
        await asyncio.to_thread(self._rewind, user_id, session_id, rewind_before_invocation_id)

    def _rewind(self, user_id: str, session_id: str, invocation_id: str) -> None:
        app_name = self._router.app_name
        try:
            info = self.get_session(user_id, session_id)
        except SessionNotFoundError:
            if not getattr(self, "auto_create_session", False):
                raise
            info = self.create_session(user_id, session_id)  # as google-adk's: then the invocation is not found
        planned = rewind_event(info.events, info.state, invocation_id, _HostArtifacts(self._router),
                               (app_name, user_id, session_id))
        self._router.call(RewindSession(app_name, user_id, session_id, invocation_id,
                                        dict(planned.actions.artifact_delta), len(info.events)), session_id, user_id)

    def crash_session(self, user_id: str, session_id: str, reason: str = "crashed on request") -> SessionStatus:
        """Crash the session as a failing handler would (fault injection): its runs end
        ``interrupted``, it is read from the store on its next request, and the crash
        counts toward its restart intensity; returns its status after the crash."""
        status: SessionStatus = self._router.call(
            CrashSession(self._router.app_name, user_id, session_id, reason), session_id, user_id)
        return status

    def reset_session(self, user_id: str, session_id: str) -> None:
        """Let a failed session (``SessionFailedError``) serve again."""
        self._router.call(ResetSession(self._router.app_name, user_id, session_id), session_id, user_id)

    def kill_run(self, user_id: str, session_id: str, run_id: str) -> None:
        """End a run of the session: it is asked to stop, and its worker process is
        killed if it has not stopped within ``[host] run_stop_grace`` (the other runs of
        that worker then end ``interrupted``, ``RunWorkerKilled``, and resume where their
        app allows); its caller gets ``RunFailed(killed, RunKilled)`` once its work has
        stopped or its process is dead."""
        self._router.call(KillRun(self._router.app_name, user_id, session_id, run_id), session_id, user_id)

    def watch_session(self, user_id: str, session_id: str) -> SessionWatch:
        """Watch the session's life (activating, activated, crashed, restarted, failed, reset, passivated,
        deleted) as it happens: ``watch.next(timeout)``, ``watch.events(timeout)``;
        ``watch.status`` is its status when the watch began. Close it when done."""
        return SessionWatch(self._router.host, checked(WatchSession(self._router.app_name, user_id, session_id)),
                            self._router.call_timeout)


class ServiceCalls:
    """Calls to the host's services for the Runner's app (see the module): each a flat
    method (``save_artifact``), and the same calls grouped by service (``artifacts.save``)."""

    _router: Router

    @property
    def artifacts(self) -> Artifacts:
        return Artifacts(self)

    @property
    def memory(self) -> Memory:
        return Memory(self)

    @property
    def approvals(self) -> Approvals:
        """The approvals group; called, it lists them as ``approvals.list`` does."""
        return Approvals(self)

    @property
    def credentials(self) -> Credentials:
        return Credentials(self)

    @property
    def breakers(self) -> Breakers:
        return Breakers(self)

    def save_artifact(self, user_id: str, session_id: str, name: str, part: Part,
                      custom_metadata: dict[str, Any] | None = None) -> int:
        """Store a new version of artifact ``name`` (with ``custom_metadata``); returns its
        version (0, 1, ...)."""
        return int(self._router.service("artifacts", SaveArtifact(self._router.app_name, user_id, session_id, name,
                                                                  part, custom_metadata)))

    def load_artifact(self, user_id: str, session_id: str, name: str, version: int | None = None) -> Part | None:
        """Artifact ``name`` at ``version`` (the latest when None), or None."""
        found: Part | None = self._router.service("artifacts", LoadArtifact(self._router.app_name, user_id,
                                                                            session_id, name, version))
        return None if is_tombstone(found) else found  # a version a session rewind removed

    def list_artifacts(self, user_id: str, session_id: str) -> list[str]:
        names: list[str] = self._router.service("artifacts", ListArtifacts(self._router.app_name, user_id,
                                                                           session_id))
        return names

    def artifact_versions(self, user_id: str, session_id: str, name: str) -> list[int]:
        versions: list[int] = self._router.service("artifacts", ArtifactVersions(self._router.app_name, user_id,
                                                                                 session_id, name))
        return versions

    def artifact_metadata(self, user_id: str, session_id: str, name: str,
                          version: int | None = None) -> dict[str, Any] | None:
        """What was recorded with a version of artifact ``name`` (the latest when None):
        ``version``, ``mime_type``, ``size``, ``sha256``, ``created``; or None."""
        found: dict[str, Any] | None = self._router.service("artifacts", ArtifactMetadata(
            self._router.app_name, user_id, session_id, name, version))
        return found

    def delete_artifact(self, user_id: str, session_id: str, name: str) -> None:
        self._router.service("artifacts", DeleteArtifact(self._router.app_name, user_id, session_id, name))

    def add_session_to_memory(self, user_id: str, session_id: str) -> int:
        """Index a session's text events in the host's memory; returns how many entries."""
        return int(self._router.service("memory", AddSessionToMemory(self._router.app_name, user_id, session_id)))

    def search_memory(self, user_id: str, query: str, limit: int = 10) -> list[Any]:
        found: list[Any] = self._router.service("memory", SearchMemory(self._router.app_name, user_id, query, limit))
        return found

    def _list_approvals(self, user_id: str | None = None, status: str | None = "pending") -> list[Any]:
        """Approvals of this app (pending by default)."""
        found: list[Any] = self._router.service("approvals", ListApprovals(self._router.app_name, user_id, status))
        return found

    def approve(self, approval_id: str) -> Any:
        return self._router.service("approvals", Approve(approval_id))

    def deny(self, approval_id: str, reason: str = "denied by a human") -> Any:
        return self._router.service("approvals", Deny(approval_id, reason))

    def put_credential(self, user_id: str, key: str, credential: Any) -> None:
        """Store a credential the client obtained (the end of an auth flow)."""
        self._router.service("credentials", PutCredential(self._router.app_name, user_id, key, credential))

    def delete_credential(self, user_id: str, key: str) -> bool:
        return bool(self._router.service("credentials", DeleteCredential(self._router.app_name, user_id, key)))

    def breaker_states(self) -> dict[str, Any]:
        """Every model's circuit breaker as the host's breaker actor sees it (state,
        failures, when it may close...), by model name."""
        states: dict[str, Any] = self._router.service("breakers", BreakerStatus())
        return states


class Artifacts:
    """``runner.artifacts``: the artifact calls of :class:`ServiceCalls`, by shorter names."""

    def __init__(self, calls: ServiceCalls) -> None:
        self.save, self.load, self.delete = calls.save_artifact, calls.load_artifact, calls.delete_artifact
        self.list, self.versions, self.metadata = calls.list_artifacts, calls.artifact_versions, \
            calls.artifact_metadata


class Memory:
    """``runner.memory``: ``add_session`` (``add_session_to_memory``) and ``search`` (``search_memory``)."""

    def __init__(self, calls: ServiceCalls) -> None:
        self.add_session, self.search = calls.add_session_to_memory, calls.search_memory


class Approvals:
    """``runner.approvals``: ``list`` (also the group called: ``runner.approvals(user_id)``),
    ``approve`` and ``deny``."""

    def __init__(self, calls: ServiceCalls) -> None:
        self.list, self.approve, self.deny = calls._list_approvals, calls.approve, calls.deny

    def __call__(self, user_id: str | None = None, status: str | None = "pending") -> list[Any]:
        return self.list(user_id, status)


class Credentials:
    """``runner.credentials``: ``put`` (``put_credential``) and ``delete`` (``delete_credential``)."""

    def __init__(self, calls: ServiceCalls) -> None:
        self.put, self.delete = calls.put_credential, calls.delete_credential


class Breakers:
    """``runner.breakers``: ``states()`` (``breaker_states``)."""

    def __init__(self, calls: ServiceCalls) -> None:
        self.states = calls.breaker_states


class _HostArtifacts:
    """The host's artifact service as ``_rewind.rewind_event`` uses it (``load``, ``save``)."""

    def __init__(self, router: Router) -> None:
        self.router = router

    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Part | None:
        found: Part | None = self.router.service("artifacts", LoadArtifact(app, user, session, name, version))
        return found

    def save(self, app: str, user: str, session: str, name: str, part: Part) -> int:
        return int(self.router.service("artifacts", SaveArtifact(app, user, session, name, part, None)))
