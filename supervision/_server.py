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
4. A Call whose ``deadline`` is neither None nor a number (a string, a bool, NaN) is
   answered ``bad_request`` before anything else sees it. ``check_request`` sees
   every Call's and Cast's request first (a malformed one is answered with its
   ``CallError``, or dropped if a cast). A handler that raises
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
Thespian may report only one: see :mod:`supervision._supervisor`). The monitors, the
timers and the clock are the server's base (:mod:`supervision._server_base`); this
module is its contract: the hooks, the dispatch of each message, the lifecycle.

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

import os
import traceback
from typing import Any

from thespian.actors import (
    ActorExitRequest,
    ActorSystemMessage,
    ChildActorExited,
    ThespianWatch,
    WakeupMessage,
    WatchMessage,
)

from ._exceptions import CallError, UnknownRequest
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
from ._server_base import ServerBase
from ._server_types import FORWARDED, IGNORE, NO_REPLY, CallerRef, checked_deadline, describe
from ._system import node_id, pid_space

__all__ = ["FORWARDED", "IGNORE", "NO_REPLY", "CallerRef", "GenServer"]

_REPLY_TYPES = (Reply, ErrorReply, InitOk, InitFailed)


class GenServer(ServerBase):
    """Base class for supervised actors; override the ``init``/``handle_*`` hooks.

    ``self.clock()`` is the time (seconds, monotonic) every deadline of the server is
    measured with; :meth:`send_after` timers follow the same clock (see
    :data:`MANUAL_CLOCK_VARIABLE`)."""

    def __init__(self) -> None:
        super().__init__()  # the clock, timers and watches (ServerBase)
        self.supervisor: Any = None
        self.registry: Any = None
        self.child_id: str | None = None
        self._initialized = False
        self._init_received = False
        self._terminated = False
        self._current: CallerRef | None = None
        self._pending: dict[str, CallerRef] = {}

    # -- hooks (``handle_timeout``, ``handle_watch``, ``handle_process_down``: ServerBase) ---

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

    def handle_info(self, message: Any, sender: Any) -> None:
        """Any other message. The default answers senders of unknown messages with an error."""
        if isinstance(message, (ActorSystemMessage, Exiting, *_REPLY_TYPES)):
            return
        self.send(sender, ErrorReply(None, "unknown_message", f"{type(self).__name__} does not handle {type(message).__name__}"))

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
        and watches ``to`` from now on; its deadline (``CallerRef.deadline``) goes on with
        it. Return FORWARDED from ``handle_call`` after it; a
        call deferred earlier (NO_REPLY) and handed over now is no longer this server's
        to answer (its exit fails it no more)."""
        self._pending.pop(caller.ref, None)
        self.send(to, Call(request, ref=caller.ref, reply_to=caller.address, watch=caller.watch,
                           deadline=caller.deadline))
        if caller.watch:
            self.send(caller.address, Handed(caller.ref, to))

    def reply_error(self, caller: CallerRef, error: CallError) -> None:
        self._pending.pop(caller.ref, None)
        self.send(caller.address, ErrorReply(caller.ref, error.code, error.detail))

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
            self.log.error("init failed: %s", describe(exc), exc_info=True)
            self.refuse_init(starter, describe(exc))
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
        """One call, in order: its deadline checked (one that is no number, or NaN, is
        answered ``bad_request`` and goes no further: no handler sees it); the questions
        every server answers at once; ``check_request`` and ``handle_call``."""
        try:
            deadline = checked_deadline(message.deadline)
        except CallError as err:
            self.send(message.reply_to or sender, ErrorReply(message.ref, err.code, err.detail))
            return
        caller = CallerRef(message.reply_to or sender, message.ref, message.watch, deadline)
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
                           describe(exc), answer.code, "".join(traceback.format_exception(exc)))
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
        reason = ExitReason(ExitKind.CRASH, describe(exc))
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
