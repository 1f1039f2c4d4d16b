"""The run actor: executes the engine for an invocation, off its main thread.

In order: forked by its session actor with the session's history in memory (see
``_handoff``); starts its worker thread (one thread and one asyncio loop for the
actor's life) and waits as a warm spare until ``StartRun``; then runs the engine on
that thread. Events come back to the main thread through a queue and a ``Doorbell``
(an ``os.pipe`` watched with ``ThespianWatch``: a send made inside a long handler
would leave only when it returns), rung once per batch, not per event. A non-partial
event is held by the worker while it keeps computing, so that what follows it, the
outcome included, leaves with it: a fast turn costs the main thread one wakeup and
the session one message (one store transaction). The held events go when the worker's
loop is about to wait (for the model, a tool, a timer), or once the worker thread has
used ``FINAL_WINDOW`` (2 ms) of CPU time since the last of them (``HOLD_LIMIT``, 20 ms,
since the first); CPU time, not wall time, because on a busy machine a worker
preempted for a few ms between a turn's answer and its end would otherwise split the
turn in two messages and two transactions. The worker releases held events with a
marker on the queue, so the main thread, when woken for anything else meanwhile (a
StartRun on the line, a service request), does not send them early.
Partial events are signalled at once and leading-edge batched by the main thread (the
first of a burst at once, the rest every ``PARTIAL_WINDOW`` seconds).
The session's ``StartRun`` and our ``RunOutput`` messages travel on a direct line
(``_link``: a socket pair the session made before forking us), and through Thespian
only when the line cannot take one; ``Cancel`` and ``Shutdown`` come through Thespian,
and a ``Cancel`` is handled after whatever waits on the line.
``Cancel`` sets the engine's cancel token (checked between steps). After a run that
ended well the actor stays, holding the history it has seen and made, and the session
gives it its next turn (no fork on the turn's path, no history sent, and the same
worker thread and asyncio loop); after any other end the session discards it. The
actor creates no children, so forking while its worker thread runs never happens.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import queue
import selectors
import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from supervision import (
    BadRequest,
    Call,
    CallerRef,
    Cast,
    ErrorReply,
    GenServer,
    Lookup,
    Reply,
    import_object,
)

from .._secrets import redact, register_secret
from .._types import Event
from .._validate import check_fields
from ..engine import App, CancelToken, RunCancelled, SessionView, as_app, run_invocation
from ..engine._services import Decision
from ..models import ModelError, close_pooled_clients, resolve_model
from ..store._artifacts import ArtifactError
from . import _handoff
from ._approvals import Deny, RegisterApproval, WaitDecision
from ._artifacts import ListArtifacts, LoadArtifact, SaveArtifact
from ._breakers import Acquire, Record
from ._credentials import GetCredential, PutCredential
from ._link import RunLink
from ._memory import SearchMemory
from ._run_protocol import Cancel, RunOutcome, RunOutput, RunSettings, StartRun
from ._warmup import warm_run_process

__all__ = ["PARTIAL_WINDOW", "Cancel", "Doorbell", "RunActor", "RunOutcome", "RunOutput", "StartRun", "load_agent"]

#: Partial (streaming) events after the first of a burst are sent in batches this often.
PARTIAL_WINDOW = 0.03
#: A non-partial event waits for the events and outcome that follow it while the worker
#: computes (a scripted or cached turn then costs one message instead of one per event):
#: held events go once the worker has used this much of its thread's CPU time since the
#: last of them, and at once when the worker's loop would wait.
FINAL_WINDOW = 0.002
#: ... and at most this much of the worker's CPU time since the first of them.
HOLD_LIMIT = 0.02


def release_due(timeout: float | None, now: float, *, first: float, last: float) -> bool:
    """Should a worker holding events release them at this turn of its loop? ``timeout``:
    what the loop is about to wait (None: until something happens); ``now``, ``first``,
    ``last``: the worker's CPU clock now and at its first and last held events.
    Yes when the loop is about to wait, or after FINAL_WINDOW since the last held event,
    or HOLD_LIMIT since the first."""
    return timeout is None or timeout > 0 or now - last >= FINAL_WINDOW or now - first >= HOLD_LIMIT


class _WaitWatchingSelector(selectors.DefaultSelector):
    """The worker loop's selector: tells ``before_select`` the timeout of each select
    before making it (None or > 0: the loop is about to wait)."""

    def __init__(self, before_select: Callable[[float | None], None]) -> None:
        super().__init__()
        self._before_select = before_select

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        self._before_select(timeout)
        return super().select(timeout)


#: How long a model call waits for the breaker actor before failing fast.
BREAKER_WAIT = 2.0
#: How long a tool waits for a host service (artifacts ...) before failing.
SERVICE_WAIT = 10.0


class ServiceError(Exception):
    """A host service refused a request or could not be reached."""

    def __init__(self, service: str, code: str, detail: str) -> None:
        super().__init__(f"{service}: {code}: {detail}")
        self.code = code
        self.detail = detail


def _unavailable(why: str) -> Exception:
    return ModelError(f"the circuit breaker service is unavailable: {why}", error_type="breaker_unavailable")


class _BreakerBridge:
    """The breaker client of a run: the host's breaker actor, through the run actor."""

    def __init__(self, actor: RunActor) -> None:
        self.actor = actor

    async def acquire(self, model: str) -> Any:
        future = self.actor.service_call("breakers", Acquire(model))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), BREAKER_WAIT)
        except TimeoutError:
            self.actor.service_forget("breakers")
            raise _unavailable(f"no answer within {BREAKER_WAIT} s (it may be restarting)") from None
        except ServiceError as error:
            raise _unavailable(str(error)) from None

    def record(self, model: str, permit_id: str, outcome: str, duration: float, retry_after: float | None) -> None:
        self.actor.service_cast("breakers", Record(model, permit_id, outcome, duration, retry_after))


class _RemoteArtifacts:
    """The engine's artifact service for a run: the host's artifact actor (sync calls
    from tool threads; each waits at most ``SERVICE_WAIT`` seconds)."""

    def __init__(self, actor: RunActor) -> None:
        self.actor = actor

    def _call(self, request: Any) -> Any:
        try:
            return self.actor.service_result("artifacts", request, ArtifactError)
        except ServiceError as error:
            raise ArtifactError(error.detail if error.code == "bad_request" else str(error)) from None

    def save(self, app: str, user: str, session: str, name: str, part: Any) -> int:
        version: int = self._call(SaveArtifact(app, user, session, name, part))
        return version

    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Any:
        return self._call(LoadArtifact(app, user, session, name, version))

    def list(self, app: str, user: str, session: str) -> list[str]:
        names: list[str] = self._call(ListArtifacts(app, user, session))
        return names


class _RemoteMemory:
    """The engine's memory service for a run: the host's memory actor."""

    def __init__(self, actor: RunActor) -> None:
        self.actor = actor

    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[Any]:
        found: list[Any] = self.actor.service_result("memory", SearchMemory(app, user, query, limit))
        return found

    def add_session(self, app: str, user: str, session: str, events: list[Any]) -> None:
        raise NotImplementedError("sessions are added to memory through the host (Runner.add_session_to_memory)")


class _RemoteApprovals:
    """Approvals through the host's approval server. Waits in 1 s slices, checking for
    cancellation between them; a server that restarts is looked up again and asked
    again (pending approvals are persisted, so the decision still arrives)."""

    def __init__(self, actor: RunActor) -> None:
        self.actor = actor

    async def _ask(self, request: Any, wait: float) -> Any:
        future = self.actor.service_call("approvals", request)
        return await asyncio.wait_for(asyncio.wrap_future(future), wait)

    async def request(self, ctx: Any, tool: str, args: dict[str, Any], hint: str, timeout: float) -> Any:
        session = ctx.session
        deadline = time.monotonic() + timeout
        approval = None
        while approval is None:
            ctx.check_cancelled()
            if time.monotonic() >= deadline:
                return Decision(False, f"the approval service could not be reached within {timeout:g} s")
            try:
                approval = await self._ask(RegisterApproval(session.app_name, session.user_id, session.session_id,
                                                            ctx.run_id, ctx.agent.name, tool, dict(args), hint),
                                           SERVICE_WAIT)
            except (TimeoutError, ServiceError):
                self.actor.service_forget("approvals")
                await asyncio.sleep(0.1)
        while True:
            ctx.check_cancelled()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.actor.service_cast("approvals", Deny(approval.id, f"no decision within {timeout:g} s"))
                return Decision(False, f"no decision within {timeout:g} s (timed out)", approval.id)
            slice_ = min(1.0, remaining)
            try:
                current = await self._ask(WaitDecision(approval.id, slice_), slice_ + 2.0)
            except (TimeoutError, ServiceError):
                self.actor.service_forget("approvals")  # restarting: ask the new one
                await asyncio.sleep(0.05)
                continue
            if current.status == "approved":
                return Decision(True, "", approval.id)
            if current.status != "pending":
                return Decision(False, current.reason or current.status, approval.id)


class _RemoteCredentials:
    """The user's credentials through the host's credential actor (sync, from tools)."""

    def __init__(self, actor: RunActor) -> None:
        self.actor = actor

    def get(self, app: str, user: str, key: str) -> Any:
        """The stored credential; its secrets are known secrets of this run's process
        from now on, so a tool result or error that holds one is redacted."""
        credential = self.actor.service_result("credentials", GetCredential(app, user, key))
        for value in vars(credential).values() if credential is not None else ():
            if isinstance(value, SecretStr):
                register_secret(value.get_secret_value())
        return credential

    def put(self, app: str, user: str, key: str, credential: Any) -> None:
        self.actor.service_result("credentials", PutCredential(app, user, key, credential))


class Doorbell:
    """A pipe that threads ring to wake an actor's main thread (it watches ``read_fd``
    with ``ThespianWatch``); rings between two answers make one byte.

    The order in :meth:`answer` is what makes it safe: drain the pipe first, re-arm
    second, and only then read what the threads queued. A ring that lands while the
    pipe is drained either finds the bell not yet re-armed (its item is queued before
    it rang, so the read that follows the answer gets it) or writes a byte that stays
    (one more wakeup). Re-arming first would let a ring's byte be drained with the bell
    left rung: every later ring would be skipped and the main thread never woken (a
    turn that hangs; seen under a burst of 100 sessions)."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self._rung = False

    def ring(self) -> None:
        """Any thread, after queueing something for the main thread."""
        if not self._rung:
            self._rung = True
            try:
                os.write(self.write_fd, b"x")
            except OSError:  # closed: the actor is exiting
                pass

    def answer(self) -> None:
        """Main thread, woken: re-arm the bell, before reading what was queued."""
        try:
            while os.read(self.read_fd, 4096):
                pass
        except OSError:  # BlockingIOError included: the pipe is drained
            pass
        self._rung = False

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def load_agent(path: str) -> App:
    """The app an import path names (``"package.module:root_agent"``): an
    :class:`~adk_actors.engine.App`, or a bare root agent made one."""
    return as_app(import_object(path))


class RunActor(GenServer):
    check_request = staticmethod(check_fields)  # malformed requests: invalid_request, never a crash

    def __init__(self) -> None:
        super().__init__()
        snapshot = _handoff.SNAPSHOT
        self._base_events: list[Event] = list(snapshot.get("events", ()))
        for inherited in snapshot.get("inherited", ()):
            inherited.forget_in_child()
        #: Our direct line to the session actor (see ``_link``; None if we were made without one).
        self._link: RunLink | None = snapshot.get("link")
        self._link_failed = False  # a send on it failed this run: the rest of the run goes through Thespian
        self._cancel = CancelToken()
        self._thread: threading.Thread | None = None
        self._jobs: queue.SimpleQueue[tuple[StartRun, SessionView] | None] = queue.SimpleQueue()  # None: stop
        self._requests: queue.SimpleQueue[tuple[str, str, Any, Any]] = queue.SimpleQueue()
        self._registry: Any = None
        self._services: dict[str, Any] = {}
        self._lookups: dict[str, str] = {}
        self._waiting: dict[str, list[tuple[str, Any, Any]]] = {}
        self._service_calls: dict[str, concurrent.futures.Future[Any]] = {}
        self._queue: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._bell = Doorbell()  # the worker and tool threads wake the main thread with it
        self._outbox: list[Event] = []  # handed over by the worker, not yet sent
        #: How many events at the end of the outbox the worker still holds: they go only
        #: when it releases them (the main thread may be woken for something else, as a
        #: StartRun on the line, while the worker hands over a turn that is not done).
        self._held_count = 0
        self._held_since: float | None = None  # worker's CPU clock at its first held event
        self._held_last = 0.0  # ... and at its last one
        self._partial_armed = False
        self._run: StartRun | None = None
        self._session: Any = None

    def handle_cast(self, request: Any) -> None:
        self._read_link()  # a StartRun on the line came before this
        if isinstance(request, StartRun) and self._run is None:
            self._start(request)
        elif isinstance(request, Cancel):
            self._cancel.cancel(request.reason)
        else:
            super().handle_cast(request)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "pid":
            return os.getpid()
        return super().handle_call(request, caller)

    def _start(self, run: StartRun) -> None:
        self._run = run
        self._session = self.supervisor
        self._services.clear()  # looked up afresh each run: a service may have restarted since
        self._cancel = CancelToken()
        events = self._base_events[: run.base_count] + list(run.extra_events)
        settings = self._settings
        view = SessionView(app_name=settings.app_name, user_id=settings.user_id, session_id=settings.session_id,
                           state=dict(run.state), events=events)
        self._view = view
        self._link_failed = False
        self._watch()
        self._start_worker()
        self._jobs.put((run, view))

    def prepare(self) -> None:
        """A blank run actor of a pooled pair (see ``_warmup``)."""
        warm_run_process()

    def init(self, args: RunSettings) -> Any:
        if not isinstance(args, RunSettings):
            raise BadRequest("a run actor needs RunSettings")
        self._settings = args
        self._registry = args.registry
        self._start_worker()  # now, while a spare: not on the first turn's path
        self._watch()
        return None

    def _watch(self) -> None:
        """Watch our line to the session, and the worker's doorbell while a run goes."""
        fds = [self._link.fd] if self._link is not None and not self._link.closed else []
        self.watch_fds([*fds, self._bell.read_fd] if self._run is not None else fds)

    def _read_link(self) -> None:
        """Take what the session sent on our line: a StartRun. A line that reads
        end-of-file (the session actor died; we are about to) is no longer watched."""
        if self._link is None:
            return
        for message in self._link.receive():
            if isinstance(message, StartRun) and self._run is None:
                self._start(message)
        if self._link.closed:
            self._link = None
            self._watch()

    def _send_outbox(self, outcome: RunOutcome | None = None) -> None:
        """Send the run's events handed over so far, but for those the worker still holds
        (all of them when the outcome is given, and the outcome with them), to the
        session: on our line; through Thespian when it does not go (see ``_link``)."""
        assert self._run is not None
        if outcome is None and self._held_count:
            outbox = self._outbox[: -self._held_count]
            self._outbox = self._outbox[-self._held_count:]
        else:
            outbox, self._outbox, self._held_count = self._outbox, [], 0
        output = RunOutput(self._run.run_id, outbox, outcome)
        if self._link_failed or self._link is None or not self._link.send(output):
            self._link_failed = True
            self.send(self._session, output)

    def _start_worker(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._worker, name="run-worker", daemon=True)
            self._thread.start()

    def _worker(self) -> None:
        """Worker thread: one asyncio loop for every run this actor serves (a turn pays
        for no thread or loop start-up); the runs come one at a time from ``_jobs``. A
        ``None`` job (the actor stops) closes the loop's pooled HTTP clients and ends."""
        loop = asyncio.SelectorEventLoop(_WaitWatchingSelector(self._before_select))
        asyncio.set_event_loop(loop)
        while True:
            job = self._jobs.get()
            if job is None:
                loop.run_until_complete(close_pooled_clients())
                return
            self._work(loop, *job)

    def _work(self, loop: asyncio.AbstractEventLoop, run: StartRun, view: SessionView) -> None:
        """Run the engine for one run; hand every event, then the outcome, to the main
        thread; then cancel whatever tasks the run left behind (tools may start some)."""

        def hand(kind: str, item: Any) -> None:
            """Queue an event or the outcome for the main thread; wake it now, or, for a
            non-partial event, hold it (see ``_before_select``). What is handed after held
            events releases them first (a partial event cannot pass them)."""
            if kind == "event" and not item.partial:
                self._queue.put((kind, item))
                self._held_last = time.thread_time()
                if self._held_since is None:
                    self._held_since = self._held_last
                return
            if self._held_since is not None:
                self._held_since = None
                if kind != "outcome":  # the outcome sends everything before it
                    self._queue.put(("release", None))
            self._queue.put((kind, item))
            self._bell.ring()

        async def main() -> None:
            settings = self._settings
            app = load_agent(settings.agent_path)
            base_urls = settings.model_base_urls or {}
            options = dict(settings.model_options or {})
            services = settings.registry is not None
            events = run_invocation(app.root_agent, view, run.new_message, run_config=run.run_config,
                                              plugins=app.plugins, policies=app.policies,
                                              cancel=self._cancel, invocation_id=run.invocation_id,
                                              resolve_model=lambda name: resolve_model(name, base_urls=base_urls,
                                                                                       **options),
                                              breaker_client=_BreakerBridge(self) if services else None,
                                              artifacts=_RemoteArtifacts(self) if services else None,
                                              memory=_RemoteMemory(self) if services else None,
                                              approvals=_RemoteApprovals(self) if services else None,
                                              credentials=_RemoteCredentials(self) if services else None,
                                              run_id=run.run_id)
            async with contextlib.aclosing(events):
                async for event in events:
                    hand("event", event)

        try:
            loop.run_until_complete(main())
        except RunCancelled as exc:
            hand("outcome", RunOutcome(run.run_id, False, "cancelled", "RunCancelled", str(exc)))
        except BaseException as exc:
            hand("outcome", RunOutcome(run.run_id, False, "error", type(exc).__name__, redact(str(exc))))
        else:
            hand("outcome", RunOutcome(run.run_id, True))
        leftover = asyncio.all_tasks(loop)
        for task in leftover:
            task.cancel()
        if leftover:
            loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))

    def _before_select(self, timeout: float | None) -> None:
        """Worker thread, at each turn of its loop: release the held events (and wake the
        main thread for them) when the loop is about to wait, or when the worker has used
        FINAL_WINDOW of its CPU time since the last of them or HOLD_LIMIT since the first.
        The last, not the first: how long the worker computed before its answer (a cold
        first turn, a CPU shared with a busy sibling) says nothing of whether its end is
        near."""
        since = self._held_since
        if since is None:
            return
        if release_due(timeout, time.thread_time(), first=since, last=self._held_last):
            self._held_since = None
            self._queue.put(("release", None))
            self._bell.ring()

    def handle_watch(self, ready: list[int]) -> None:
        if self._link is not None and self._link.fd in ready:
            self._read_link()
        self._bell.answer()  # before reading the queues (see Doorbell)
        self._serve_requests()
        if self._run is None:
            return
        while True:
            try:
                kind, item = self._queue.get_nowait()
            except queue.Empty:
                break
            if kind == "release":
                self._held_count = 0
                continue
            if kind == "event":
                self._outbox.append(item)
                self._held_count = 0 if item.partial else self._held_count + 1
                continue
            self._send_outbox(item)
            # Ready for the session's next turn: the history is what we were given
            # plus every event this run committed.
            self._base_events = list(self._view.events)
            self._run = None
            self._watch()
            return
        sendable = len(self._outbox) - self._held_count
        if not sendable:
            return  # nothing, or only what the worker still holds
        if any(not event.partial for event in self._outbox[:sendable]):
            # The worker held it as long as it should already: it goes now.
            self._send_outbox()
        elif not self._partial_armed:
            # Leading edge: the first partial of a burst goes at once (first-token
            # latency); what follows within the window is batched.
            self._partial_armed = True
            self._send_outbox()
            self.send_after(PARTIAL_WINDOW, "flush-partials")

    # -- services (breakers, artifacts ...) reached from the worker and tool threads ------

    def _post(self, item: tuple[str, str, Any, Any]) -> None:
        """Any thread: hand a service request to the main thread."""
        self._requests.put(item)
        self._bell.ring()

    def service_call(self, name: str, request: Any) -> concurrent.futures.Future[Any]:
        """Call the host service registered as ``name``; the answer arrives in the future."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._post(("call", name, request, future))
        return future

    def service_result(self, name: str, request: Any, timeout_error: type[Exception] = RuntimeError) -> Any:
        """From a tool's thread: call the host service ``name`` and wait for its answer,
        at most ``SERVICE_WAIT`` seconds. No answer: forget its address (it may have
        restarted) and raise ``timeout_error``; a refusal raises :class:`ServiceError`."""
        future = self.service_call(name, request)
        try:
            return future.result(timeout=SERVICE_WAIT)
        except concurrent.futures.TimeoutError:
            self.service_forget(name)
            raise timeout_error(f"the {name} service did not answer within {SERVICE_WAIT} s") from None

    def service_cast(self, name: str, request: Any) -> None:
        self._post(("cast", name, request, None))

    def service_forget(self, name: str) -> None:
        """Look the service up again next time (it did not answer: it may have restarted)."""
        self._post(("forget", name, None, None))

    def _serve_requests(self) -> None:
        while True:
            try:
                kind, name, request, future = self._requests.get_nowait()
            except queue.Empty:
                return
            if kind == "forget":
                self._services.pop(name, None)
                continue
            address = self._services.get(name)
            if address is not None:
                self._send_to_service(kind, address, request, future)
                continue
            if self._registry is None:
                if future is not None:
                    future.set_exception(ServiceError(name, "not_running", "this run has no service registry"))
                continue
            self._waiting.setdefault(name, []).append((kind, request, future))
            if name not in self._lookups.values():
                lookup = Call(Lookup(name, 0.5))
                self._lookups[lookup.ref] = name
                self.send(self._registry, lookup)

    def _send_to_service(self, kind: str, address: Any, request: Any, future: Any) -> None:
        if kind == "cast":
            self.send(address, Cast(request))
        else:
            call = Call(request)
            self._service_calls[call.ref] = future
            self.send(address, call)

    def handle_info(self, message: Any, sender: Any) -> None:
        if isinstance(message, (Reply, ErrorReply)) and message.ref in self._lookups:
            name = self._lookups.pop(message.ref)
            entry = message.value if isinstance(message, Reply) else None
            waiting = self._waiting.pop(name, [])
            if entry is None:
                for _, _, future in waiting:
                    if future is not None:
                        future.set_exception(ServiceError(name, "not_running", f"no {name} service is registered"))
                return
            self._services[name] = entry[0]
            for kind, request, future in waiting:
                self._send_to_service(kind, entry[0], request, future)
        elif isinstance(message, Reply) and message.ref in self._service_calls:
            self._service_calls.pop(message.ref).set_result(message.value)
        elif isinstance(message, ErrorReply) and message.ref in self._service_calls:
            self._service_calls.pop(message.ref).set_exception(ServiceError("service", message.code, message.detail))
        else:
            super().handle_info(message, sender)

    def handle_timeout(self, payload: Any) -> None:
        if payload != "flush-partials":
            return
        self._partial_armed = False
        if len(self._outbox) > self._held_count and self._run is not None:
            self._send_outbox()

    def terminate(self, reason: Any) -> None:
        if self._thread is not None and self._run is None:  # idle: its pooled connections closed now
            self._jobs.put(None)
            self._thread.join(0.5)
        self._bell.close()
        if self._link is not None:
            self._link.close()
