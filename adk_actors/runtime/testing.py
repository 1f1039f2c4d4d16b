"""A host in this process, for unit tests of code that uses :class:`~.Runner`: :class:`LocalHost`.

``LocalHost`` implements the :class:`~._host_view.HostView` a Runner needs and starts
no process: one partition lives in the test's process, holding real
:class:`~._session.Session` objects over a SQLite store (``:memory:`` unless a path is
given), and the real engine (``engine.run_invocation`` / ``resume_invocation``) runs
each turn on an asyncio loop of its own thread, as a run worker would. In order, for a
Runner's request: its endpoint (``system.private()``) hands the call to the partition
under one lock (the partition serves one message at a time, as an actor does); a
session's read or change is answered from its ``Session``; a turn is taken by the
session (``Session.take``: checked, recorded, queued behind the run in progress), given
to the loop thread, and each event the engine yields is committed by the session before
the session relays it to the Runner's endpoint; the run's outcome ends it with its one
terminal message (``RunDone`` / ``RunFailed``). A refusal (an unknown session, a bad
request, a busy session) is answered as the error the partition answers, which the
Runner raises as its typed error.

What it does not have: services (artifacts, memory, approvals, credentials,
breakers: ``root`` is None, so the Runner's service calls raise ``HostError``), live
runs, crashes and restarts, other members of a cluster. :meth:`LocalHost.close` (or
leaving its ``with`` block) cancels the turns still running, stops the loop thread and
closes the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from supervision import BadRequest, CallError, SupervisorClient
from supervision.protocol import Call, ErrorReply, Reply

from .._types import LiveRequest, RunConfig
from .._validate import check_fields
from ..engine import (
    AppCatalog,
    CancelToken,
    SessionView,
    as_app,
)
from ..messages import (
    CancelRun,
    CreateSession,
    DeleteSession,
    GetSession,
    GetState,
    LastRun,
    Limits,
    ListSessions,
    RunFailed,
    RunRequest,
    SessionInfo,
    UpdateState,
)
from ..models import resolve_model
from ..plugins.plugin_manager import PluginManager
from ..store import SessionExists, SessionNotFound, SessionStores, SQLiteSessionStore
from ._partition_timers import CancelGraceOver, RunDeadline
from ._run_engine import failed_outcome, invocation_events
from ._run_protocol import RunOutcome, RunOutput
from ._session import Session, SessionRun
from ._turns import NewTurn, ResumeTurn

__all__ = ["LocalHost"]


class LocalHost:
    """A host in this process (see the module). ``apps``: app name -> its root agent or
    ``App``, or its import path (``"package.module:attribute"``, as a host's ``[apps]``);
    ``limits``, ``run_timeout`` and ``run_stop_grace`` as the host's settings of those names."""

    def __init__(self, apps: Mapping[str, Any], *, store_path: str = ":memory:", limits: Limits | None = None,
                 run_timeout: float | None = 600.0, run_stop_grace: float = 2.0) -> None:
        self.system = _LocalSystem()
        self.partition = _LocalPartition(apps, store_path, limits or Limits(), run_timeout)
        self.partition.run_stop_grace = run_stop_grace

    @property
    def root(self) -> SupervisorClient | None:
        return None  # no services here

    def close(self) -> None:
        """Cancel the turns still running, stop the loop thread, close the store."""
        self.partition.close()

    def __enter__(self) -> LocalHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- HostView: one partition, always there --------------------------------------------------

    def partitions(self, refresh: bool = False) -> list[Any]:
        return [self.partition]

    def partition_for(self, app_name: str, user_id: str, session_id: str, refresh: bool = False) -> Any:
        return self.partition

    def listed_partition_for(self, app_name: str, user_id: str, session_id: str) -> Any:
        return self.partition

    def partition_alive(self, address: Any) -> bool | None:
        return address is self.partition and not self.partition.closed

    def tree_process_alive(self, pid: int | None) -> bool | None:
        return None

    def session_home(self, app_name: str, user_id: str, session_id: str) -> Any | None:
        return None

    def forget_home(self, address: Any) -> None:
        pass

    def is_member_sessions(self, address: Any) -> bool:
        return False


class _LocalEndpoint:
    """A Thespian endpoint's ``ask``/``listen``/``tell``, over the partition in this process."""

    def __init__(self) -> None:
        self.inbox: queue.Queue[Any] = queue.Queue()

    def ask(self, address: Any, message: Any, timeout: float) -> Any:
        if not isinstance(address, _LocalPartition) or address.closed:
            return None  # refused at once, as a delivery to a dead address
        address.receive(message, self)
        return self.listen(timeout)

    def tell(self, address: Any, message: Any) -> None:
        if isinstance(address, _LocalPartition) and not address.closed:
            address.receive(message, self)

    def listen(self, timeout: float) -> Any:
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None


class _LocalSystem:
    """The actor system a Runner leases endpoints of: ``private()`` yields a new one."""

    @contextlib.contextmanager
    def private(self) -> Iterator[_LocalEndpoint]:
        yield _LocalEndpoint()


class _LocalPartition:
    """The one partition: the sessions' ``SessionOwner``, serving one message at a time."""

    def __init__(self, apps: Mapping[str, Any], store_path: str, limits: Limits, run_timeout: float | None) -> None:
        self.apps = {name: app for name, app in apps.items() if not isinstance(app, str)}
        self.catalog = AppCatalog({name: app for name, app in apps.items() if isinstance(app, str)})
        self.store: SessionStores = SQLiteSessionStore(store_path)
        self.address = self
        self.limits = limits
        self.max_queued_runs = 16
        self.run_timeout = run_timeout
        self.run_stop_grace = 2.0
        self.trace_turns = 0
        self.closed = False
        self.sessions: dict[str, Session] = {}
        self.lock = threading.RLock()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="local-host-turns", daemon=True)
        self.thread.start()
        self.tokens: dict[str, CancelToken] = {}

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
        with contextlib.suppress(Exception):  # the turns still running: cancelled, awaited 10 s at most
            asyncio.run_coroutine_threadsafe(self._cancel_turns(), self.loop).result(10.0)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10.0)
        self.loop.close()
        self.store.close()

    async def _cancel_turns(self) -> None:
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- a call, as the partition's handle_call ----------------------------------------------------

    def receive(self, message: Any, endpoint: _LocalEndpoint) -> None:
        """A call: answered ``Reply`` (a direct turn: not at all, its messages are its
        answer), or ``ErrorReply`` with the code the host's partition answers."""
        if not isinstance(message, Call):
            return
        with self.lock:
            try:
                answer = self._answer(message.request, endpoint)
            except CallError as error:
                endpoint.inbox.put(ErrorReply(message.ref, error.code, error.detail))
                return
            if not (isinstance(message.request, RunRequest) and not message.request.reply_accepted):
                endpoint.inbox.put(Reply(message.ref, answer))

    def _answer(self, request: Any, endpoint: _LocalEndpoint) -> Any:
        """The request checked as the partition's ``check_request`` does (``invalid_request``),
        then served: a read or change of the store, or a session's request (``_to_session``)."""
        check_fields(request)
        self.limits.check_input(request)
        match request:
            case ListSessions():
                return [SessionInfo(s.app_name, s.user_id, s.id, s.state, [], s.last_update_time)
                        for s in self.store.list_sessions(request.app_name, request.user_id)]
            case CreateSession():
                return self._create(request)
            case DeleteSession():
                self.sessions.pop(request.key, None)
                try:
                    self.store.delete_session(request.app_name, request.user_id, request.session_id)
                except SessionNotFound as exc:
                    raise CallError(str(exc), code="unknown_session") from None
                return "deleted"
            case LastRun():
                return self.store.last_run(request.app_name, request.user_id, request.session_id)
            case RunRequest() | GetSession() | GetState() | UpdateState() | CancelRun():
                return self._to_session(request, endpoint)
        if type(request).__name__ == "LinePath":
            return None  # no direct line: runs go through the endpoint
        raise BadRequest(f"{type(request).__name__} is not served by a LocalHost")

    def _to_session(self, request: RunRequest | GetSession | GetState | UpdateState | CancelRun,
                    endpoint: _LocalEndpoint) -> Any:
        """A session's request, answered by its ``Session`` (a run request: taken, or
        joined when it follows a run; the session created first when it asks so)."""
        if isinstance(request, RunRequest) and request.create_session and request.key not in self.sessions:
            with contextlib.suppress(CallError):
                self._create(CreateSession(request.app_name, request.user_id, request.session_id, {}))
        session = self._session(request)
        match request:
            case GetSession():
                return session.info()
            case GetState():
                return session.fresh_state()
            case UpdateState():
                return session.update_state(request.state_delta)
            case CancelRun():
                return session.cancel(request.run_id)
        return session.take(request, endpoint)

    def _create(self, request: CreateSession) -> SessionInfo:
        if request.app_name not in self.apps and self.catalog.source(request.app_name) is None:
            raise CallError(f"unknown app {request.app_name!r}", code="unknown_app")
        try:
            data = self.store.create_session(request.app_name, request.user_id, request.session_id,
                                             dict(request.state))
        except SessionExists as exc:
            raise CallError(str(exc), code="session_exists") from None
        self.sessions[request.key] = Session(self, data.app_name, data.user_id, data.id, dict(data.state), [],
                                             data.last_update_time)
        return SessionInfo(data.app_name, data.user_id, data.id, data.state, [], data.last_update_time)

    def _session(self, request: Any) -> Session:
        session = self.sessions.get(request.key)
        if session is not None:
            return session
        try:
            data = self.store.get_session(request.app_name, request.user_id, request.session_id)
        except SessionNotFound:
            raise CallError(f"no session {request.session_id!r} for {request.app_name}/{request.user_id}",
                            code="unknown_session") from None
        session = Session(self, data.app_name, data.user_id, data.id, data.state, data.events,
                          data.last_update_time)
        self.sessions[request.key] = session
        return session

    # -- SessionOwner ----------------------------------------------------------------------------------

    def clock(self) -> float:
        return self.loop.time()

    def send(self, address: Any, message: Any) -> None:
        if isinstance(address, _LocalEndpoint):
            address.inbox.put(message)

    def durable_address(self, caller: Any) -> Any:
        return None  # an endpoint of this process is not there for a later host

    def send_after(self, seconds: float, payload: Any) -> None:
        if isinstance(payload, (RunDeadline, CancelGraceOver)):
            self.loop.call_soon_threadsafe(self.loop.call_later, seconds, self._locked, self._timer, payload)

    def _timer(self, payload: RunDeadline | CancelGraceOver) -> None:
        session = self.sessions.get(payload.key)
        if session is not None:
            session.on_timer(payload)

    def _locked(self, action: Callable[..., None], *args: Any) -> None:
        with self.lock:
            if not self.closed:
                action(*args)

    def dispatch(self, session: Session, run: SessionRun) -> None:
        """Run the turn on the loop thread, with the session's history and state as now."""
        token = CancelToken()
        run.worker = token
        self.tokens[run.run_id] = token
        view = SessionView(session.app_name, session.user_id, session.session_id, session.fresh_state(),
                           list(session.events))
        asyncio.run_coroutine_threadsafe(self._turn(session, run, view, token), self.loop)

    def cancel_on_worker(self, run: SessionRun, reason: str) -> None:
        token = self.tokens.get(run.run_id)
        if token is not None:
            token.cancel(reason)

    def live_on_worker(self, run: SessionRun, request: LiveRequest) -> None:
        raise BadRequest("a LocalHost has no live runs")

    def abandon(self, run: SessionRun, *, waited: bool, then: Callable[[], None]) -> None:
        self.cancel_on_worker(run, "abandoned")
        then()  # nothing to kill: the turn's task ends at its next step, its output no longer taken

    def run_ended(self, session: Session, run: SessionRun, status: str) -> None:
        self.tokens.pop(run.run_id, None)

    def follow_stopping(self, run_id: str, caller: Any) -> bool:
        return False

    def auto_resume(self, session: Session, run: SessionRun, failed: RunFailed) -> RunRequest | str | None:
        return None

    # -- a turn, on the loop thread ------------------------------------------------------------------

    async def _turn(self, session: Session, run: SessionRun, view: SessionView, token: CancelToken) -> None:
        """Each event the engine yields, then the outcome, given to the session under the lock."""
        run_id = run.run_id
        try:
            app = as_app(self.apps[session.app_name]) if session.app_name in self.apps \
                else self.catalog.load(session.app_name)
            context: dict[str, Any] = dict(
                run_config=run.request.run_config or RunConfig(), plugins=PluginManager(app.plugins),
                policies=app.policies,
                cancel=token, context_cache_config=app.context_cache_config,
                events_compaction_config=app.events_compaction_config, tool_errors=app.tool_errors,
                resolve_model=resolve_model, run_id=run_id)
            if not isinstance(run.turn, NewTurn | ResumeTurn):
                raise BadRequest(f"a LocalHost does not run a {type(run.turn).__name__}")
            events = invocation_events(app, run.turn, view, run.invocation_id, **context)
            async with contextlib.aclosing(events):
                async for event in events:
                    self._locked(session.on_output, run, RunOutput(run_id, [event]))
        except Exception as exc:
            outcome = failed_outcome(run_id, exc)
        else:
            outcome = RunOutcome(run_id, True)
        self._locked(session.on_output, run, RunOutput(run_id, [], outcome))
