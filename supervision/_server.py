"""GenServer: a Thespian actor with OTP's server contract and "let it crash".

Lifecycle, in order:

1. The process is forked by its supervisor; ``__init__`` asks the kernel to kill it
   when its parent process dies (``PR_SET_PDEATHSIG``), so no actor is ever orphaned.
2. The first message is :class:`Init`. ``init(args)`` runs; on success the server
   answers :class:`InitOk` (with its pid), on an exception :class:`InitFailed` and it
   exits. ``init`` may return :data:`IGNORE` to not run at all (OTP's ``ignore``).
3. :class:`Call` goes to ``handle_call(request, caller)``; its return value is the
   reply, or :data:`NO_REPLY` to answer later with :meth:`GenServer.reply`. A
   parent's health check (``HEALTH_PING``, see :mod:`supervision._health`) and the
   questions :class:`~supervision.protocol.OsPid` and
   :class:`~supervision.protocol.PidSpace` are answered at once, before any hook.
   :class:`Cast` goes to ``handle_cast``, timers to ``handle_timeout``, anything
   else to ``handle_info``.
4. ``check_request`` sees every Call's and Cast's request first (a malformed one is
   answered with its ``CallError``, or dropped if a cast). A handler that raises
   :class:`~supervision.CallError` (e.g. ``BadRequest``)
   answers the caller with that error and carries on. Any other exception from
   ``handle_call`` goes to ``handle_error``, which may answer it with a CallError
   (the server carries on); otherwise, as every other exception, it
   *crashes* the server: every pending caller gets an error reply, ``terminate``
   runs, the supervisor is told the reason, and the process exits. Thespian's
   retry-then-PoisonMessage never happens, so no broken actor stays alive.
   Other messages that come before ``Init`` are dropped (a call is answered
   ``not_running``).
5. :class:`Shutdown` (from the supervisor) or ``ActorExitRequest`` runs
   ``terminate(shutdown)`` and exits; :meth:`GenServer.stop` exits with any reason.

Process monitors (OTP's ``monitor/2`` for local processes): :meth:`GenServer.monitor_process`
watches a pid through a Linux pidfd, so ``handle_process_down(tag)`` is called once when
that process ends, whatever Thespian noticed (of several children that die together,
Thespian may report only one: see :mod:`supervision._supervisor`).

Extension points, for a server that runs its own lifecycle (as
:class:`~supervision.Supervisor` does: its start waits for its children, its shutdown
stops them first). They are protected: overridden by such subclasses, never called
from outside. In the order a message meets them:

* :meth:`GenServer.on_message` sees every message first, whatever the server's state
  (before its ``Init``, while it stops); it returns True for one it took, which then
  goes no further.
* :meth:`GenServer.begin_init` runs on ``Init``: by default ``init(args)`` and the
  answer; a server that answers later calls :meth:`GenServer.answer_init` or
  :meth:`GenServer.refuse_init` itself. Timers fire from ``Init`` on, also while the
  answer is pending.
* :meth:`GenServer.on_shutdown_request` runs on ``Shutdown``; by default the server
  leaves at once with :meth:`GenServer.exit_now`.
* :meth:`GenServer.on_exit_request` runs first on ``ActorExitRequest``, before the
  pending callers are failed and ``terminate`` runs; with
  :meth:`GenServer.exit_waits_for_children` it decides whether Thespian waits for the
  server's children.
* :meth:`GenServer.on_child_exited` hears of every ``ChildActorExited`` (also before
  ``Init`` and while stopping); by default it goes to ``handle_info``.
"""

from __future__ import annotations

import heapq
import logging
import math
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from thespian.actors import (
    Actor,
    ActorExitRequest,
    ActorSystemMessage,
    ChildActorExited,
    ThespianWatch,
    WakeupMessage,
    WatchMessage,
)

from ._clock import MONOTONIC, ManualClock
from ._exceptions import BadRequest, CallError, UnknownRequest
from ._frame_chunk import call_on_fresh_chunk
from ._health import HEALTH_PING
from ._messages import (
    NORMAL,
    SHUTDOWN,
    AdvanceClock,
    Call,
    Cast,
    ErrorReply,
    Exiting,
    ExitKind,
    ExitReason,
    Handed,
    Init,
    InitFailed,
    InitOk,
    OsPid,
    PidSpace,
    Reply,
    Shutdown,
)
from ._system import forked_by, node_id, open_pidfd, pid_space, set_parent_death_signal

__all__ = ["FORWARDED", "IGNORE", "NO_REPLY", "CallerRef", "GenServer"]


class _Sentinel:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: Return from ``handle_call`` to reply later with :meth:`GenServer.reply`.
NO_REPLY: Final = _Sentinel("NO_REPLY")
#: Return from ``handle_call`` when the call was forwarded to another server that replies.
FORWARDED: Final = _Sentinel("FORWARDED")
#: Return from ``init`` to not start (the supervisor keeps the spec, OTP's ``ignore``).
IGNORE: Final = _Sentinel("IGNORE")

_REPLY_TYPES = (Reply, ErrorReply, InitOk, InitFailed)


@dataclass(frozen=True)
class _ChildDown:
    """A monitored child's pidfd fired (see ``GenServer.monitor_child``)."""

    pid: int


#: After a monitored child's pidfd fired: how long Thespian's own ChildActorExited may
#: take before the server makes it.
CHILD_DOWN_GRACE = 0.05


@dataclass(frozen=True)
class CallerRef:
    """Where (and under which ref) to send the reply of one call; ``watch``: the caller
    watches whoever has the call (:meth:`GenServer.hand_over`)."""

    address: Any
    ref: str
    watch: bool = False


#: The clock seam. Unset, every server's ``clock`` is ``time.monotonic`` and its timers
#: are Thespian's. Set in an actor system's environment before it starts (its actors
#: inherit it) to a comma-separated list of server class names, or ``*`` for all: those
#: servers get a manual clock, which stands still until they are sent ``AdvanceClock``;
#: then the timers due fire at once, in order. Restart windows, backoff, passivation
#: and grace periods are tested exactly that way, without waiting for them.
MANUAL_CLOCK_VARIABLE: Final = "SUPERVISION_MANUAL_CLOCK"


class _TimersDue:
    """The payload of the one Thespian wakeup a server keeps armed for its timers."""


_TIMERS_DUE: Final = _TimersDue()
_LOST_WAKEUP: Final = 1.0  # seconds


def _manual_clock_for(name: str) -> bool:
    wanted = {part.strip() for part in os.environ.get(MANUAL_CLOCK_VARIABLE, "").split(",")}
    return "*" in wanted or name in wanted


class GenServer(Actor):  # type: ignore[misc]
    """Base class for supervised actors; override the ``init``/``handle_*`` hooks.

    ``self.clock()`` is the time (seconds, monotonic) every deadline of the server is
    measured with; :meth:`send_after` timers follow the same clock (see
    :data:`MANUAL_CLOCK_VARIABLE`)."""

    def __init__(self) -> None:
        super().__init__()
        set_parent_death_signal(started_by=forked_by())  # in the actor's own process, just forked
        # The clock seam (see _clock): a ManualClock when MANUAL_CLOCK_VARIABLE names this server.
        self._manual_clock: ManualClock | None = (ManualClock(time.monotonic())
                                                  if _manual_clock_for(type(self).__name__) else None)
        # Timers (send_after): a heap of (due on self.clock, order, payload). On the real
        # clock ONE Thespian wakeup is armed, for the earliest (``_arms``: the due times
        # of those armed and not fired yet). Thespian keeps its wakeups in a list it
        # sorts on every add (Python comparisons), so one per timer made every
        # send_after cost O(pending timers): a partition arming a 600 s deadline per
        # run slowed down with every turn it had served (bench/turns.py bursts).
        self._timers: list[tuple[float, int, Any]] = []
        self._timer_order = 0
        self._arms: list[float] = []
        self.clock: Callable[[], float] = (self._manual_clock or MONOTONIC).current_time
        self.supervisor: Any = None
        self.registry: Any = None
        self.child_id: str | None = None
        self.log = logging.getLogger(f"supervision.{type(self).__name__}")
        self._initialized = False
        self._init_received = False
        self._stopping = False
        self._terminated = False
        self._current: CallerRef | None = None
        self._pending: dict[str, CallerRef] = {}
        self._watch_fds: list[int] = []
        self._monitors: dict[int, Any] = {}  # pidfd -> tag
        self._child_monitors: dict[int, Any] = {}  # pid -> address (see monitor_child)

    def createActor(self, actorClass: Any, *args: Any, **kwargs: Any) -> Any:
        """Thespian's ``createActor``, called from the start of a fresh frame chunk: the
        child is forked inside it, so its loop never runs on a chunk's edge
        (``_frame_chunk``: a partition spent a third of a millisecond per turn there)."""
        return call_on_fresh_chunk(super().createActor, actorClass, *args, **kwargs)

    # -- hooks -------------------------------------------------------------------------

    def init(self, args: Any) -> Any:
        """Set up state from ``args``; raise to fail the start; return IGNORE to not run."""
        return None

    def check_request(self, request: Any) -> None:
        """Called with every Call's and Cast's request before ``handle_call`` or
        ``handle_cast``: raise a :class:`~supervision.CallError` (``BadRequest``) for a
        malformed one. A call is then answered with that error, a cast is logged and
        dropped; either way the server carries on. Default: every request passes."""

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        """Answer a call. Raise ``BadRequest`` for bad input; other exceptions crash."""
        raise UnknownRequest(f"{type(self).__name__} does not handle {type(request).__name__}")

    def exit_waits_for_children(self) -> bool:
        """Whether Thespian, as this server exits, stops the actors it created and waits
        for each to exit (the default). A child still starting (forked, not yet
        connected) never gets that request, and Thespian would wait for it until the
        supervisor's health check kills this server. A server that creates actors of its
        own returns False while one may be starting: its children then die with it
        (each has its parent's death signal), unasked."""
        return True

    def handle_error(self, request: Any, error: Exception) -> CallError | None:
        """``handle_call`` raised ``error`` (not a CallError) for ``request``. Return the
        CallError its caller is answered with, and the server carries on: it must first
        drop whatever state the request may have left unsound (a session partition
        drops that one session). Return None (the default) to crash: OTP's "let it
        crash", for state that cannot be dropped alone. Either way the error is logged
        with its traceback."""
        return None

    def handle_cast(self, request: Any) -> None:
        self.log.warning("unhandled cast %s", type(request).__name__)

    def handle_timeout(self, payload: Any) -> None:
        """A timer set with :meth:`send_after` fired."""

    def handle_info(self, message: Any, sender: Any) -> None:
        """Any other message. The default answers senders of unknown messages with an error."""
        if isinstance(message, (ActorSystemMessage, Exiting, *_REPLY_TYPES)):
            return
        self.send(sender, ErrorReply(None, "unknown_message", f"{type(self).__name__} does not handle {type(message).__name__}"))

    def handle_watch(self, ready: list[int]) -> None:
        """File descriptors registered with :meth:`watch_fds` are readable."""

    def handle_process_down(self, tag: Any) -> None:
        """A process watched with :meth:`monitor_process` ended (called once per monitor)."""

    def terminate(self, reason: ExitReason) -> None:
        """Last words before the process exits (not called after kill -9)."""

    # -- helpers for subclasses --------------------------------------------------------

    def reply(self, caller: CallerRef, value: Any) -> None:
        """Answer a call that ``handle_call`` deferred with NO_REPLY."""
        self._pending.pop(caller.ref, None)
        self.send(caller.address, Reply(caller.ref, value))

    def hand_over(self, caller: CallerRef, request: Any, to: Any) -> None:
        """Forward ``caller``'s call of ``request`` to the server at ``to``, which answers
        the caller itself; a caller that watches (``CallerRef.watch``) is told (``Handed``)
        and watches ``to`` from now on. Return FORWARDED from ``handle_call`` after it; a
        call deferred earlier (NO_REPLY) and handed over now is no longer this server's
        to answer (its exit fails it no more)."""
        self._pending.pop(caller.ref, None)
        self.send(to, Call(request, ref=caller.ref, reply_to=caller.address, watch=caller.watch))
        if caller.watch:
            self.send(caller.address, Handed(caller.ref, to))

    def reply_error(self, caller: CallerRef, error: CallError) -> None:
        self._pending.pop(caller.ref, None)
        self.send(caller.address, ErrorReply(caller.ref, error.code, error.detail))

    def send_after(self, seconds: float, payload: Any = None) -> None:
        """Deliver ``payload`` to ``handle_timeout`` after ``seconds`` of :attr:`clock`
        (not cancellable). Timers due at the same time fire in the order they were set."""
        self._timer_order += 1
        heapq.heappush(self._timers, (self.clock() + max(seconds, 0.001), self._timer_order, payload))
        if not self._manual_clock:
            self._arm_timers()

    def _arm_timers(self) -> None:
        """Arm a Thespian wakeup for the earliest timer, unless one is armed no later.
        An armed wakeup overdue by ``_LOST_WAKEUP`` is taken for lost (a server drops
        wakeups while it stops or before its init), so that it cannot hold the timers
        back for ever; if it comes after all, it only fires what is due."""
        now = time.monotonic()
        while self._arms and self._arms[0] < now - _LOST_WAKEUP:
            heapq.heappop(self._arms)
        if self._timers and (not self._arms or self._timers[0][0] < self._arms[0]):
            due = self._timers[0][0]
            heapq.heappush(self._arms, due)
            self.wakeupAfter(timedelta(seconds=max(due - now, 0.001)), payload=_TIMERS_DUE)

    def _on_wakeup(self, message: WakeupMessage) -> None:
        if isinstance(message.payload, _TimersDue):
            self._fire_due_timers()
        else:  # a wakeupAfter of a subclass's own
            self.handle_timeout(message.payload)

    def _fire_due_timers(self) -> None:
        """The armed wakeup fired (Thespian fires them in order: the earliest): each
        timer due by now goes to ``handle_timeout``, in order; then the next is armed."""
        if self._arms:
            heapq.heappop(self._arms)
        try:
            while self._timers and self._timers[0][0] <= time.monotonic() and not self._stopping:
                _, _, payload = heapq.heappop(self._timers)
                self.handle_timeout(payload)
        finally:
            self._arm_timers()

    def _advance_clock(self, seconds: float) -> int:
        """Move the manual clock ``seconds`` ahead, firing every timer due by then in
        order (each at its own due time); how many fired."""
        clock = self._manual_clock
        if clock is None:
            raise BadRequest(f"{type(self).__name__} runs on the real clock (see {MANUAL_CLOCK_VARIABLE})")
        if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
            raise BadRequest("AdvanceClock needs a finite number of seconds >= 0")
        target = clock.current_time() + seconds
        fired = 0
        while self._timers and self._timers[0][0] <= target and not self._stopping:
            due, _, payload = heapq.heappop(self._timers)
            clock.advance_to(due)
            self._dispatch(WakeupMessage(timedelta(0), payload), self.myAddress)
            fired += 1
        clock.advance_to(target)
        return fired

    def watch_fds(self, fds: list[int]) -> None:
        """Have ``handle_watch`` called when any of these descriptors becomes readable."""
        self._watch_fds = list(fds)

    def monitor_process(self, pid: int, tag: Any) -> bool:
        """Call ``handle_process_down(tag)`` once when local process ``pid`` ends.

        In order: a pidfd is opened for ``pid`` and watched with the actor's other
        descriptors. Returns False, and watches nothing, where pidfds are missing
        (not Linux, kernel < 5.3) or ``pid`` is already gone. ``tag`` must be hashable
        and unique among this actor's monitors; a second monitor with it replaces the first.
        """
        self.demonitor_process(tag)
        fd = open_pidfd(pid)
        if fd is None:
            return False
        self._monitors[fd] = tag
        return True

    def monitor_child(self, address: Any, pid: int) -> bool:
        """Make sure the death of child actor ``address`` (process ``pid``) is reported.

        Thespian reports a child's death with ``ChildActorExited``, but when two
        children die at once it may report only one (and then waits for the other
        for ever when this actor exits). In order: the child's pidfd is watched; when
        it fires and no ``ChildActorExited`` for ``address`` came within
        ``CHILD_DOWN_GRACE`` seconds, the server sends itself the one Thespian did not
        make (Thespian's handling of it, after ours, forgets the child there too). So
        ``ChildActorExited`` arrives exactly once per monitored child either way.
        Returns False (nothing watched) where pidfds are missing or ``pid`` is gone."""
        self._child_monitors[pid] = address
        if self.monitor_process(pid, _ChildDown(pid)):
            return True
        del self._child_monitors[pid]
        return False

    def demonitor_process(self, tag: Any) -> None:
        """Stop watching the process monitored under ``tag`` (nothing if there is none)."""
        for fd, known in list(self._monitors.items()):
            if known == tag:
                del self._monitors[fd]
                os.close(fd)

    def stop(self, reason: ExitReason = NORMAL) -> None:
        """Exit with ``reason``: pending callers get an error, ``terminate`` runs, the
        supervisor is told, then the process exits."""
        if self._stopping:
            return
        self.exit_now(reason, detail=f"server stopped: {reason}")

    @property
    def pid(self) -> int:
        return os.getpid()

    @property
    def stopping(self) -> bool:
        """True once this server is on its way out (told to shut down, asked to exit,
        or stopping on its own): a hook that would start a process or arm work for
        later should not, since nothing of it would be waited for. True in
        ``terminate`` too."""
        return self._stopping or self._terminated

    # -- Thespian entry point ----------------------------------------------------------

    def receiveMessage(self, message: Any, sender: Any) -> Any:
        try:
            if isinstance(message, WatchMessage) and self._monitors:
                message = self._take_downs(message)
            if message is not None:
                self._dispatch(message, sender)
        except Exception as exc:
            self._crash(exc)
        if (self._watch_fds or self._monitors) and not self._stopping:
            return ThespianWatch([*self._watch_fds, *self._monitors])
        return None

    def _take_downs(self, message: Any) -> Any:
        """Act on the monitors among ``message.ready``; the rest goes on as a WatchMessage
        (None when nothing is left). Each ended process's pidfd is closed, then
        ``handle_process_down`` runs."""
        rest = [fd for fd in message.ready if fd not in self._monitors]
        downs = [fd for fd in message.ready if fd in self._monitors]
        for fd in downs:
            tag = self._monitors.pop(fd)
            os.close(fd)
            if isinstance(tag, _ChildDown):
                self.wakeupAfter(timedelta(seconds=CHILD_DOWN_GRACE), payload=tag)
            elif not self._stopping:
                self.handle_process_down(tag)
        return WatchMessage(rest) if rest else None

    def _dispatch(self, message: Any, sender: Any) -> None:
        """One message, in order: the child monitors' bookkeeping; ``on_message``; an
        ``ActorExitRequest``; then by the server's state (stopping, starting, running)."""
        if self._track_child_monitors(message):
            return
        if self.on_message(message, sender):
            return
        if isinstance(message, ActorExitRequest):
            self._on_exit_request(message)
        elif self._stopping:
            self._dispatch_stopping(message, sender)
        elif isinstance(message, Init):
            self._on_init_message(message, sender)
        elif not self._initialized:
            self._dispatch_starting(message, sender)
        else:
            self._dispatch_running(message, sender)

    def _track_child_monitors(self, message: Any) -> bool:
        """Keep :meth:`monitor_child`'s books: a reported child is watched no more; a
        watched child's grace over with no report gets the report made here. True when
        ``message`` was the monitors' own (a grace timer)."""
        if isinstance(message, ChildActorExited) and self._child_monitors:
            for pid, address in list(self._child_monitors.items()):
                if address == message.childAddress:
                    del self._child_monitors[pid]
                    self.demonitor_process(_ChildDown(pid))
        elif isinstance(message, WakeupMessage) and isinstance(message.payload, _ChildDown):
            address = self._child_monitors.pop(message.payload.pid, None)
            if address is not None:  # Thespian lost it (see monitor_child)
                self.log.warning("child pid %s ended with no ChildActorExited; handled as dead", message.payload.pid)
                self.send(self.myAddress, ChildActorExited(address))
            return True
        return False

    def _dispatch_stopping(self, message: Any, sender: Any) -> None:
        """On its way out: a call is answered ``not_running``, a child's exit still heard."""
        if isinstance(message, Call):
            self.send(message.reply_to or sender, ErrorReply(message.ref, "not_running", "server is stopping"))
        elif isinstance(message, ChildActorExited):
            self.on_child_exited(message, sender)

    def _dispatch_starting(self, message: Any, sender: Any) -> None:
        """Before the server answered its ``Init`` (or before any came): a shutdown, a
        child's exit and (once ``Init`` came) timers are handled; a call is answered
        ``not_running``; anything else is dropped."""
        match message:
            case Shutdown():
                self.on_shutdown_request(sender)
            case Call():
                # "starting": Init came and is in progress (a supervisor starting its
                # children); "not initialised": no Init ever came (see find_global).
                state = "server starting" if self._init_received else "server not initialised"
                self.send(message.reply_to or sender, ErrorReply(message.ref, "not_running", state))
            case ChildActorExited():
                self.on_child_exited(message, sender)
            case WakeupMessage() if self._init_received:
                self._on_wakeup(message)

    def _dispatch_running(self, message: Any, sender: Any) -> None:
        match message:
            case Call():
                self._on_call(message, sender)
            case Cast():
                self._on_cast(message)
            case Shutdown():
                self.on_shutdown_request(sender)
            case WakeupMessage():
                self._on_wakeup(message)
            case WatchMessage():
                self.handle_watch(list(message.ready))
            case ChildActorExited():
                self.on_child_exited(message, sender)
            case _:
                self.handle_info(message, sender)

    # -- extension points (protected; see the module) -------------------------------------

    def on_message(self, message: Any, sender: Any) -> bool:
        """Every message, first, whatever the server's state: return True to take it
        (it goes no further), False to let the server handle it as usual (the default)."""
        return False

    def begin_init(self, args: Any, starter: Any) -> None:
        """``Init`` came with ``args`` from ``starter``. By default, in order: ``init(args)``
        runs; raising, the error is logged and the start refused (:meth:`refuse_init`);
        returning IGNORE, the starter is told so and the server exits; otherwise the
        start is answered (:meth:`answer_init`). A server whose start takes more than
        one message overrides it and answers later."""
        try:
            result = self.init(args)
        except Exception as exc:
            self.log.error("init failed: %s", _describe(exc), exc_info=True)
            self.refuse_init(starter, _describe(exc))
            return
        if result is IGNORE:
            self.send(starter, InitOk(os.getpid(), ignored=True, child_id=self.child_id, node=node_id()))
            self._stopping = True
            self._terminated = True
            self._exit()
            return
        self.answer_init(starter)

    def answer_init(self, starter: Any) -> None:
        """The start succeeded: the server runs (calls are served from now on) and
        ``starter`` is answered ``InitOk``."""
        self._initialized = True
        self.send(starter, InitOk(os.getpid(), child_id=self.child_id, node=node_id()))

    def refuse_init(self, starter: Any, reason: str) -> None:
        """The start failed: ``starter`` is answered ``InitFailed(reason)`` and the server
        exits (no ``terminate``: it never ran)."""
        self.send(starter, InitFailed(reason))
        self._stopping = True
        self._terminated = True
        self._exit()

    def on_shutdown_request(self, sender: Any) -> None:
        """``Shutdown`` came (from the supervisor): by default the server exits at once
        (:meth:`exit_now` with ``shutdown``; the supervisor, who asked, is not told)."""
        self.exit_now(SHUTDOWN, detail="server shut down", notify=False)

    def on_exit_request(self, request: Any) -> None:
        """``ActorExitRequest`` came (e.g. the actor system shuts down), before the server
        acts on it (its pending callers failed, ``terminate``, its supervisor told).
        Default: nothing."""

    def on_child_exited(self, message: Any, sender: Any) -> None:
        """A child actor ended (Thespian's ``ChildActorExited``), in any state. Default:
        ``handle_info``."""
        self.handle_info(message, sender)

    def exit_now(self, reason: ExitReason, *, detail: str, notify: bool = True) -> None:
        """Exit, in order: every pending caller is answered ``not_running`` with
        ``detail``, ``terminate(reason)`` runs (once), the supervisor is told ``reason``
        (if ``notify``), then the process exits."""
        self._fail_pending("not_running", detail)
        self._run_terminate(reason)
        if notify:
            self._notify_supervisor(reason)
        self._exit()

    # -- lifecycle internals ---------------------------------------------------------------

    def _on_init_message(self, message: Init, sender: Any) -> None:
        if self._initialized:
            self.send(sender, InitFailed("already initialised"))
            return
        self._init_received = True
        self.supervisor = message.supervisor
        self.registry = message.registry
        self.child_id = message.child_id
        self.begin_init(message.args, sender)

    def _on_exit_request(self, request: Any) -> None:
        self.on_exit_request(request)
        if not self.exit_waits_for_children():
            request.notRecursive()
        if not self._terminated:
            self._fail_pending("not_running", "server shut down")
            self._run_terminate(SHUTDOWN)
            if not self._stopping:
                self._notify_supervisor(SHUTDOWN)
        self._stopping = True

    def serve_call(self, message: Call, sender: Any) -> None:
        """Serve a :class:`Call` that came another way than Thespian (a direct line of
        the server's own), exactly as if ``sender`` had sent it: the request checked,
        ``handle_call``, and the ``Reply`` or ``ErrorReply`` sent to ``sender`` with
        :meth:`send` (which the server overrides to reach such a sender). Only between
        messages (from a handler such as ``handle_watch``), on the main thread."""
        self._on_call(message, sender)

    def _on_call(self, message: Call, sender: Any) -> None:
        caller = CallerRef(message.reply_to or sender, message.ref, message.watch)
        if isinstance(message.request, str) and message.request == HEALTH_PING:  # see supervision._health
            self.send(caller.address, Reply(caller.ref, "ok"))
            return
        if isinstance(message.request, OsPid | PidSpace):
            self.send(caller.address, Reply(caller.ref, os.getpid() if isinstance(message.request, OsPid) else pid_space()))
            return
        if isinstance(message.request, AdvanceClock):
            try:
                fired = self._advance_clock(message.request.seconds)
            except CallError as err:
                self.send(caller.address, ErrorReply(caller.ref, err.code, err.detail))
                return
            self.send(caller.address, Reply(caller.ref, fired))
            return
        self._current = caller
        try:
            self.check_request(message.request)
            result = self.handle_call(message.request, caller)
        except CallError as err:
            self._current = None
            self.send(caller.address, ErrorReply(caller.ref, err.code, err.detail))
            return
        except Exception as exc:
            answer = self.handle_error(message.request, exc)
            if answer is None:
                raise  # a crash (receiveMessage)
            self._current = None
            self.log.error("a %s failed: %s (answered %s; the server carries on)\n%s", type(message.request).__name__,
                           _describe(exc), answer.code, "".join(traceback.format_exception(exc)))
            self.send(caller.address, ErrorReply(caller.ref, answer.code, answer.detail))
            return
        self._current = None
        if result is NO_REPLY:
            self._pending[caller.ref] = caller
        elif result is not FORWARDED:
            self.send(caller.address, Reply(caller.ref, result))

    def _on_cast(self, message: Cast) -> None:
        try:
            self.check_request(message.request)
        except CallError as err:
            self.log.warning("dropped a malformed cast %s: %s", type(message.request).__name__, err.detail)
            return
        self.handle_cast(message.request)

    def _crash(self, exc: BaseException) -> None:
        reason = ExitReason(ExitKind.CRASH, _describe(exc))
        self.log.error("crashed: %s\n%s", reason.detail, "".join(traceback.format_exception(exc)))
        if self._current is not None:
            self._pending[self._current.ref] = self._current
            self._current = None
        self._fail_pending("crashed", reason.detail)
        if self._stopping:
            return
        self._run_terminate(reason)
        self._notify_supervisor(reason)
        self._exit()

    def _fail_pending(self, code: str, detail: str) -> None:
        for caller in list(self._pending.values()):
            self.send(caller.address, ErrorReply(caller.ref, code, detail))
        self._pending.clear()

    def _run_terminate(self, reason: ExitReason) -> None:
        if self._terminated:
            return
        self._terminated = True
        try:
            self.terminate(reason)
        except Exception:
            self.log.exception("terminate raised")

    def _notify_supervisor(self, reason: ExitReason) -> None:
        if self.supervisor is not None:
            self.send(self.supervisor, Exiting(reason))

    def _exit(self) -> None:
        """Leave gracefully: Thespian drains our outgoing sends, stops our children, exits."""
        self._stopping = True
        self.send(self.myAddress, ActorExitRequest())


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
