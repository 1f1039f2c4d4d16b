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
"""

from __future__ import annotations

import importlib
import uuid
import zlib
from dataclasses import dataclass
from typing import Any

from supervision import (
    FORWARDED,
    NO_REPLY,
    BadRequest,
    Call,
    CallerRef,
    CallError,
    ChildSpec,
    ChildType,
    Restart,
)
from supervision._spec import SupervisorSpec
from supervision._supervisor import Job, Supervisor, _Child

from ..messages import (
    CancelRun,
    CreateSession,
    DeleteSession,
    GetSession,
    GetState,
    ListSessions,
    RunFailed,
    RunRequest,
    SessionInfo,
    session_key,
)
from ..store import SessionExists, SQLiteSessionStore
from ._run import load_agent
from ._session import SessionActor, SessionArgs

__all__ = ["PartitionArgs", "SessionPartition", "SessionsSupervisor"]


@dataclass(frozen=True)
class PartitionArgs:
    store_path: str
    apps: dict[str, str]  # app name -> root agent import path
    idle_timeout: float = 300.0
    max_queued_runs: int = 8
    intensity: int = 10
    period: float = 5.0
    session_shutdown: float = 10.0
    partitions: int = 1
    model_base_urls: dict[str, str] | None = None
    breakers: bool = True
    model_options: dict[str, Any] | None = None


_ROUTED = (RunRequest, GetSession, GetState, CancelRun)

#: Imported by a partition before it forks session and run actors: a module imported
#: first in a forked actor is imported again by every session (structlog: ~10 ms).
_PRELOAD = ("adk_actors.log", "adk_actors.telemetry", "adk_actors.engine._flow", "adk_actors.models")


class SessionPartition(Supervisor):
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
        self._fail_orphaned_runs()
        return SupervisorSpec(children=(), intensity=args.intensity, period=args.period)

    def _fail_orphaned_runs(self) -> None:
        """A (re)started partition has no session actors: any run still marked running
        in one of its sessions died with the previous partition. Tell its caller now."""
        index = int(self.child_id.rsplit("-", 1)[1]) if self.child_id and self.child_id[-1].isdigit() else 0
        for app, user, session_id, record in self.store.all_running_runs():
            if zlib.crc32(session_key(app, user, session_id).encode()) % self.config.partitions != index:
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
                data = self.store.create_session(request.app_name, request.user_id, session_id, dict(request.state))
            except SessionExists as exc:
                raise CallError(str(exc), code="session_exists") from None
            return SessionInfo(data.app_name, data.user_id, data.id, data.state, [], data.last_update_time)
        if isinstance(request, DeleteSession):
            self._check_app(request.app_name)
            self._enqueue(self._delete_job(request, caller))
            return NO_REPLY
        if isinstance(request, _ROUTED):
            return self._route(request, caller)
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
        self._enqueue(self._activate_job(request))
        return FORWARDED

    def _session_child(self, key: str) -> _Child | None:
        for child in self._children:
            if child.spec.id == key:
                return child
        return None

    def _activate_job(self, request: Any) -> Job:
        key = request.key
        if self._session_child(key) is None:
            spec = ChildSpec(
                id=key, start=SessionActor, restart=Restart.TRANSIENT, shutdown=self.config.session_shutdown,
                args=SessionArgs(request.app_name, request.user_id, request.session_id, self.config.store_path,
                                 self.config.apps[request.app_name], self.config.idle_timeout,
                                 self.config.max_queued_runs, model_base_urls=self.config.model_base_urls,
                                 breakers=self.config.breakers, model_options=self.config.model_options))
            child = _Child(spec)
            self._children.append(child)
            failure = yield from self._start(child)
            if failure is not None:
                self._children.remove(child)
                for _, caller in self.pending.pop(key, []):
                    self.reply_error(caller, CallError(f"session {key} could not start: {failure}", code="not_running"))
                return
            if child.status == "undefined":
                self._children.remove(child)

    def on_child_started(self, child_id: str, address: Any, pid: int | None) -> None:
        for request, caller in self.pending.pop(child_id, []):
            self.send(address, Call(request, ref=caller.ref, reply_to=caller.address))

    def _delete_job(self, request: DeleteSession, caller: CallerRef) -> Job:
        child = self._session_child(request.key)
        if child is not None:
            yield from self._stop_concurrently([child])
            if child in self._children:
                self._children.remove(child)
        try:
            self.store.delete_session(request.app_name, request.user_id, request.session_id)
        except Exception as exc:
            self.reply_error(caller, CallError(str(exc), code="unknown_session"))
            return
        self.reply(caller, "deleted")


class SessionsSupervisor(Supervisor):
    """N session partitions (one_for_one)."""

    def configure(self, args: Any) -> SupervisorSpec:
        partitions, partition_args = args
        children = tuple(
            ChildSpec(id=f"sessions-{i}", start=SessionPartition, args=partition_args, type=ChildType.SUPERVISOR,
                      shutdown="infinity", start_timeout=60.0)
            for i in range(partitions)
        )
        return SupervisorSpec(children=children, intensity=partition_args.intensity, period=partition_args.period)
