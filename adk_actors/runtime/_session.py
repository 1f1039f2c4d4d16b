"""The session actor: the single writer of one session, and the owner of its runs.

Lifecycle, in order:

1. ``init``: open the store, load the session (state and events), then fail every
   run the store still marks as running: this process was restarted after a crash,
   those runs died with the previous one, and their callers get ``RunFailed``
   (``interrupted``) now instead of waiting forever. A warm spare run actor is forked,
   or, when this process was started ahead of need by its partition (``prepare``: it
   forked a blank run actor then) and the history is short, that one is used: it gets
   the history in its first ``StartRun``, and no fork is on the first turn's path.
2. ``RunRequest``: answered at once with ``RunAccepted`` (not at all with
   ``reply_accepted=False``: the run's messages are the answer); the run starts now, or
   waits its turn behind the run in progress (bounded queue; ``busy`` beyond it, or
   at once with ``reject_if_busy``). Runs are serialized: writes never interleave.
3. While a run goes: its run actor (our child) sends events, on the direct line we
   made before forking it (``_link``; what the line cannot take comes through
   Thespian, after what came on the line); each non-partial one is
   appended to the store (atomically with its state delta, duplicates ignored)
   BEFORE it is relayed to the caller; partial ones are relayed as they come. We are
   the only sender to the caller, so order holds, and the only sender of the one
   terminal message (``RunDone`` / ``RunFailed``): on the run's outcome, on its
   death (``killed``, noticed through ``ChildActorExited``), on its deadline
   (``timeout``: its RunConfig's, else the host's ``run_timeout``; cancel, then kill
   after a grace period) or on ``CancelRun``.
4. Idle for ``idle_timeout`` seconds with no run: passivate (exit normally; the
   partition forgets us and re-activates the session on its next request).
"""

from __future__ import annotations

import logging
import os
import signal
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from supervision import (
    FORWARDED,
    BadRequest,
    CallerRef,
    CallError,
    Cast,
    Exiting,
    GenServer,
    Init,
    InitFailed,
    InitOk,
    Prepare,
    Prepared,
    Shutdown,
    proc_stat,
    process_alive,
)

from .._types import Event, EventActions, RunConfig, apply_state_delta
from .._validate import check_fields
from ..log import enabled_for, get_logger
from ..messages import (
    AdkEvent,
    CancelRun,
    GetSession,
    GetState,
    Limits,
    RunAccepted,
    RunDone,
    RunFailed,
    RunMessages,
    RunRequest,
    SessionInfo,
    UpdateState,
    session_key,
)
from ..store import RunExists, SQLiteSessionStore
from . import _handoff
from ._link import RunLink
from ._run import RunActor
from ._run_protocol import Cancel, RunOutcome, RunOutput, RunSettings, StartRun
from ._warmup import warm_session_process

__all__ = ["SessionActor", "SessionArgs"]

#: How long a cancelled or timed-out run may take to stop before it is killed.
CANCEL_GRACE = 2.0
#: A run actor that has not answered Init after this long is presumed lost (killed
#: before it reported in, Thespian may never say that it exited) and is replaced.
RUN_ACTOR_INIT_WAIT = 10.0
#: A prepared (blank) run actor serves a session of at most this many events: they
#: travel in its first StartRun. A longer history is handed over by forking instead.
BLANK_RUN_MAX_EVENTS = 100
#: A pooled session actor answers Prepared after this long even if its blank run actor
#: has not answered its own (a lost one is then replaced at activation).
BLANK_PREPARE_WAIT = 10.0


@dataclass(frozen=True)
class SessionArgs:
    app_name: str
    user_id: str
    session_id: str
    store_path: str
    agent_path: str
    idle_timeout: float = 300.0
    max_queued_runs: int = 8
    warm_spare: bool = True
    model_base_urls: dict[str, str] | None = None
    breakers: bool = True
    model_options: dict[str, Any] | None = None
    run_timeout: float | None = None  # a run's deadline when its RunConfig sets none
    limits: Limits = field(default_factory=Limits)


@dataclass
class _Run:
    request: RunRequest
    caller: Any
    invocation_id: str = field(default_factory=lambda: "")
    actor: Any = None
    pid: int | None = None
    seq: int = 0
    final_event_id: str | None = None
    outcome: RunOutcome | None = None
    started: float = 0.0
    deadline: float | None = None  # seconds: the RunConfig's timeout, else the host's run_timeout
    cancel_requested: bool = False
    all_stored: bool = True
    end_stored: bool = False  # the store has the run's end already
    warm: bool = False  # served by a run actor forked ahead of time
    committed: int = 0  # non-partial events of this run in the store


class SessionActor(GenServer):
    check_request = staticmethod(check_fields)  # malformed requests: invalid_request, never a crash

    _blank_run: Any = None  # a run actor forked by prepare(), not yet initialised
    _blank_prepared: tuple[Any, int] | None = None  # (that run actor, its pid) once it answered Prepare

    def __init__(self) -> None:
        super().__init__()
        #: Our run actors and their direct lines (see ``_link``). A list: Thespian's
        #: addresses compare equal but do not hash.
        self._run_links: list[tuple[Any, RunLink]] = []
        self._links_watched = False  # from init on (see _watch_links)

    def prepare(self) -> bool:
        """Started ahead of need by a partition: fork a run actor holding no history
        now, so that neither fork is on an activation's path; then warm both processes
        (``_warmup``: the run actor on its own, once this handler returns). We answer
        Prepared when the run actor has answered its own (so its pid is known when a
        session is activated on us: see ``_spare_alive``), when it exits first, or
        after BLANK_PREPARE_WAIT at the latest."""
        self._blank_run = self._fork_run_actor([])
        self.send(self._blank_run, Prepare())
        self.send_after(BLANK_PREPARE_WAIT, ("blank-prepare-wait",))
        warm_session_process()
        return False

    def handle_before_init(self, message: Any, sender: Any) -> None:
        if isinstance(message, Prepared) and self._blank_run is not None and sender == self._blank_run:
            self._blank_prepared = (sender, message.pid)
            self.answer_prepared()
        elif getattr(message, "payload", None) == ("blank-prepare-wait",):  # our send_after
            self.answer_prepared()

    def init(self, args: SessionArgs) -> None:
        self._links_watched = True
        self.args = args
        self.key = session_key(args.app_name, args.user_id, args.session_id)
        self.store = SQLiteSessionStore(args.store_path)
        data = self.store.get_session(args.app_name, args.user_id, args.session_id)
        self.state: dict[str, Any] = data.state
        self.events: list[Event] = data.events
        self.last_update = data.last_update_time
        self.active: _Run | None = None
        self._held: tuple[_Run, list[Any]] | None = None  # see _to_caller
        self._log_later: list[dict[str, Any]] = []
        self.after_turn_armed = False
        self.waiting: deque[_Run] = deque()
        self.spare: Any = None
        self.spare_pid: int | None = None
        self.spare_count = 0
        self.idle_deadline = 0.0
        self.idle_timer_armed = False
        self.log_runs_ended_well = enabled_for("adk_actors.session", logging.DEBUG)
        self.slog = get_logger("adk_actors.session", app=args.app_name, user=args.user_id, session=args.session_id,
                               actor=f"session:{os.getpid()}")
        for record in self.store.running_runs(args.app_name, args.user_id, args.session_id):
            if record.caller is not None:
                self.send(record.caller, RunFailed(record.run_id, "interrupted", "SessionRestarted",
                                                   "the session actor was restarted while this run was in flight"))
            self.store.end_run(record.run_id, "interrupted")
        blank, self._blank_run = self._blank_run, None
        if blank is not None and len(self.events) <= BLANK_RUN_MAX_EVENTS:
            self.spare, self.spare_count = blank, 0
            self._init_run_actor(blank)
        else:
            if blank is not None:
                self._discard(blank, None)
            self._fork_spare()
        self._watch_links()
        self._arm_idle()

    # -- requests ---------------------------------------------------------------------------

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        self._arm_idle()
        if isinstance(request, (GetSession, GetState, CancelRun, UpdateState)) and request.key != self.key:
            # Sent straight to an address that now belongs to another session's actor.
            raise CallError(f"this actor serves session {self.key!r}, not {request.key!r}", code="not_running")
        if isinstance(request, GetSession):
            return SessionInfo(self.args.app_name, self.args.user_id, self.args.session_id, self._fresh_state(),
                               list(self.events), self.last_update)
        if isinstance(request, GetState):
            return self._fresh_state()
        if isinstance(request, UpdateState):
            return self._update_state(request.state_delta)
        if isinstance(request, RunRequest):
            return self._accept(request, caller)
        if isinstance(request, CancelRun):
            return self._cancel(request.run_id)
        if request == "pid":
            return os.getpid()
        return super().handle_call(request, caller)

    def _update_state(self, delta: dict[str, Any]) -> SessionInfo:
        """Commit an event of author ``user`` carrying ``delta`` (invocation ``p-...``,
        as google-adk's PATCH), then answer the session. ``temp:`` keys are refused: they
        would never be stored. A run in progress keeps running; its run actor did not
        see this event, so it is not kept for the next turn."""
        if any(key.startswith("temp:") for key in delta):
            raise BadRequest("temp: state lives for one invocation; it cannot be set on a session")
        event = Event(author="user", invocation_id=f"p-{uuid.uuid4()}", actions=EventActions(state_delta=delta))
        stored = self.store.append_events(self.args.app_name, self.args.user_id, self.args.session_id, [event])[0]
        if stored is not None:
            self.events.append(stored)
            apply_state_delta(self.state, stored.actions.state_delta)
            self.last_update = time.time()
            if self.active is not None:
                self.active.all_stored = False
        return SessionInfo(self.args.app_name, self.args.user_id, self.args.session_id, self._fresh_state(),
                           list(self.events), self.last_update)

    def _fresh_state(self) -> dict[str, Any]:
        """Session state plus the current app:/user: state (other sessions may change it)."""
        merged = {k: v for k, v in self.state.items() if not k.startswith(("app:", "user:", "temp:"))}
        merged.update(self.store.scoped_state(self.args.app_name, self.args.user_id))
        return merged

    def _accept(self, request: RunRequest, caller: CallerRef) -> Any:
        """Take a run request: RunAccepted (or, for ``reply_accepted=False``, no reply:
        the run's messages follow), or a CallError when it is refused."""
        accepted = self._take(request, caller)
        return accepted if request.reply_accepted else FORWARDED

    def _take(self, request: RunRequest, caller: CallerRef) -> RunAccepted:
        if request.key != self.key:
            # Sent straight to an address that now belongs to another session's actor.
            raise CallError(f"this actor serves session {self.key!r}, not {request.key!r}", code="not_running")
        if not request.new_message.parts:
            raise BadRequest("a RunRequest needs a non-empty new_message")
        too_large = self.args.limits.message_too_large(request.new_message)
        if too_large is not None:
            raise CallError(too_large, code="limit_exceeded")
        for position, known in enumerate([self.active, *self.waiting]):
            if known is not None and known.request.run_id == request.run_id:
                # The same request again (a caller retrying): the run is already ours.
                return RunAccepted(request.run_id, position, os.getpid(), self.myAddress)
        busy = self.active is not None
        if busy and (request.reject_if_busy or len(self.waiting) >= self.args.max_queued_runs):
            raise CallError(f"session {self.args.session_id!r} is running another turn", code="busy")
        run = _Run(request=request, caller=caller.address)
        try:
            self.store.start_run(self.args.app_name, self.args.user_id, self.args.session_id, request.run_id,
                                 caller.address)
        except RunExists as exc:
            raise CallError(str(exc), code="invalid_request") from None
        if busy:
            self.waiting.append(run)
            return RunAccepted(request.run_id, len(self.waiting), os.getpid(), self.myAddress)
        self._begin(run)
        return RunAccepted(request.run_id, 0, os.getpid(), self.myAddress)

    def _cancel(self, run_id: str) -> str:
        if self.active is not None and self.active.request.run_id == run_id:
            self.active.cancel_requested = True
            self.send(self.active.actor, _cast(Cancel("cancelled by request")))
            self.send_after(CANCEL_GRACE, ("kill", run_id))
            return "cancelling"
        for run in list(self.waiting):
            if run.request.run_id == run_id:
                self.waiting.remove(run)
                self._finish(run, RunFailed(run_id, "cancelled", "RunCancelled", "cancelled before it started"))
                return "cancelled"
        raise CallError(f"no run {run_id!r} on this session", code="invalid_request")

    # -- runs -----------------------------------------------------------------------------------

    def _fork_spare(self, *, now: bool = False) -> None:
        """Fork a run actor holding the current history: ahead of time (a warm spare, so
        a turn needs no fork) or, with ``now``, for a turn that has none."""
        if self.spare is not None or not (self.args.warm_spare or now):
            return
        self.spare = self._fork_run_actor(self.events)
        self.spare_count = len(self.events)
        self._init_run_actor(self.spare)

    def _fork_run_actor(self, events: list[Event]) -> Any:
        """Fork a run actor holding ``events``, with a direct line to us (``_link``): the
        child keeps its end of a new socket pair and closes every end of ours it inherits."""
        ours, theirs = RunLink.pair()
        _handoff.SNAPSHOT = {"events": events, "link": theirs,
                             "inherited": [ours, *(link for _, link in self._run_links)]}
        try:
            actor = self.createActor(RunActor)
        except BaseException:
            ours.close()
            raise
        finally:
            _handoff.SNAPSHOT = {}
            theirs.close()  # the child's now
        self._run_links.append((actor, ours))
        self._watch_links()
        return actor

    def _watch_links(self) -> None:
        """Watch our run actors' open lines (from ``init`` on: a line that reads end-of-file
        before it would wake us for nothing)."""
        self._run_links = [(actor, link) for actor, link in self._run_links if not link.closed]
        if self._links_watched:
            self.watch_fds([link.fd for _, link in self._run_links])

    def _link_of(self, actor: Any) -> RunLink | None:
        return next((link for known, link in self._run_links if known == actor), None)

    def _drop_link(self, actor: Any) -> None:
        link = self._link_of(actor)
        if link is not None:
            link.close()
            self._watch_links()

    def handle_watch(self, ready: list[int]) -> None:
        """A run actor's line is readable: its messages, in order, as if they came
        through Thespian from that actor."""
        for actor, link in list(self._run_links):
            if link.fd in ready:
                self._read_link(actor)

    def _read_link(self, actor: Any) -> None:
        """Handle whatever waits on ``actor``'s line (also before a message of its run
        that came through Thespian, or its exit: those came later)."""
        link = self._link_of(actor)
        if link is None:
            return
        for message in link.receive():
            if isinstance(message, RunOutput):
                self._on_run_output(message, actor)
        if link.closed:
            self._watch_links()

    def _init_run_actor(self, actor: Any) -> None:
        """Send a run actor its Init, and check in RUN_ACTOR_INIT_WAIT that it answered."""
        settings = RunSettings(agent_path=self.args.agent_path, app_name=self.args.app_name,
                               user_id=self.args.user_id, session_id=self.args.session_id,
                               registry=self.registry if self.args.breakers else None,
                               model_base_urls=self.args.model_base_urls, model_options=self.args.model_options)
        self.send(actor, Init(args=settings, supervisor=self.myAddress))
        self.send_after(RUN_ACTOR_INIT_WAIT, ("run-actor-init", actor))

    def _replace_if_silent(self, actor: Any) -> None:
        """A run actor that never answered its Init is presumed lost: a spare is replaced;
        a run waiting on it starts again on a new one (it never reported in, so it ran
        nothing; whatever it might still send is ignored, see handle_info)."""
        if self.spare is not None and self.spare == actor and self.spare_pid is None:
            self.spare = None
            self._discard(actor, None)
            self._fork_spare()
            return
        run = self.active
        if run is not None and run.actor == actor and run.pid is None and run.outcome is None:
            self.slog.warning("run actor never reported in; starting the run on a new one", run=run.request.run_id)
            self._discard(actor, None)
            run.actor = None
            self.active = None
            self._begin(run)

    def _begin(self, run: _Run) -> None:
        if self.spare is not None and not self._spare_alive():
            # Killed while it waited, and its exit has not reached us yet: a run sent
            # to it would fail as killed. It never ran anything: a new one serves.
            self._discard(self.spare, None)
            self.spare = self.spare_pid = None
        warm = self.spare is not None
        self._fork_spare(now=True)
        actor, base = self.spare, self.spare_count
        run.pid = self.spare_pid
        self.spare = None
        self.spare_pid = None
        run.actor = actor
        run.started = time.monotonic()
        run.warm = warm
        run.invocation_id = f"e-{run.request.run_id.removeprefix('run-')}"
        self.active = run
        run_config = run.request.run_config or RunConfig()
        start = StartRun(
            run_id=run.request.run_id, invocation_id=run.invocation_id, base_count=base,
            extra_events=self.events[base:], state=self._fresh_state(), new_message=run.request.new_message,
            run_config=run_config)
        link = self._link_of(actor)
        if link is None or not link.send(start):
            self.send(actor, _cast(start))
        run.deadline = run_config.timeout or self.args.run_timeout
        if run.deadline:
            self.send_after(run.deadline, ("deadline", run.request.run_id))

    def _spare_alive(self) -> bool:
        """False when the spare's process is known to be gone: its pid is known from its
        InitOk, or, for the blank run actor of a pooled start, from its Prepared."""
        pid = self.spare_pid
        if pid is None and self._blank_prepared is not None and self.spare == self._blank_prepared[0]:
            pid = self._blank_prepared[1]
        return pid is None or process_alive(pid)

    def handle_info(self, message: Any, sender: Any) -> None:
        if isinstance(message, RunOutput):
            self._read_link(sender)  # what it sent on its line came first
            self._on_run_output(message, sender)
        elif isinstance(message, InitOk):
            if self.active is not None and self.active.actor == sender:
                self.active.pid = message.pid
            elif self.spare is not None and self.spare == sender:
                self.spare_pid = message.pid
        elif isinstance(message, (Exiting, InitFailed, Prepared)):
            return
        else:
            super().handle_info(message, sender)

    def _on_run_output(self, message: RunOutput, sender: Any) -> None:
        run = self.active
        if run is None or message.run_id != run.request.run_id or sender != run.actor:
            return  # a run that has ended already (timed out, cancelled), or a replaced actor
        held: list[Any] = []
        self._held = (run, held)
        try:
            self._on_output(run, message)
            if message.outcome is not None:
                self._on_outcome(run, message.outcome)
        finally:
            self._held = None
            if held:
                self.send(run.caller, held[0] if len(held) == 1 else RunMessages(run.request.run_id, tuple(held)))

    def _on_output(self, run: _Run, output: RunOutput) -> None:
        """Commit the output's non-partial events in one transaction (with the run's end
        when the outcome came along), then relay every event to the caller. Events past
        the turn's limit (``Limits.max_events_per_turn``) are neither stored nor relayed:
        the run is stopped and fails with ``TooManyEvents``."""
        finals = [event for event in output.events if not event.partial]
        room = self.args.limits.max_events_per_turn - run.committed
        over = len(finals) > room
        if over:
            finals = finals[:max(room, 0)]
        relayed = finals if over else output.events
        end_run = None
        if not over and output.outcome is not None and run.outcome is None:
            end_run = (run.request.run_id, "done" if output.outcome.ok else output.outcome.reason)
        if finals or end_run:
            stored_events = self.store.append_events(self.args.app_name, self.args.user_id, self.args.session_id,
                                                     finals, end_run=end_run)
            run.end_stored = end_run is not None
            for event, stored in zip(finals, stored_events, strict=True):
                if stored is None:
                    run.all_stored = False  # the run actor's history no longer matches ours
                else:
                    self.events.append(stored)
                    apply_state_delta(self.state, stored.actions.state_delta)
                    self.last_update = time.time()
                if not event.error_code:
                    run.final_event_id = event.id
        run.committed += len(finals)
        for event in relayed:
            self._to_caller(run, AdkEvent(run.request.run_id, event, run.seq))
            run.seq += 1
        if over:
            self._stop_over_limit(run)

    def _stop_over_limit(self, run: _Run) -> None:
        """The run went over its events-per-turn limit: cancel and discard its run actor,
        end it ``RunFailed(error, TooManyEvents)``."""
        detail = f"the turn went over its limit of {self.args.limits.max_events_per_turn} events"
        run.outcome = RunOutcome(run.request.run_id, False, "error", "TooManyEvents", detail)
        run.all_stored = False
        if run.actor is not None:
            self.send(run.actor, _cast(Cancel(detail)))
            self._discard(run.actor, run.pid)
            run.actor = None
        self._finish(run, RunFailed(run.request.run_id, "error", "TooManyEvents", detail, run.seq))

    def _to_caller(self, run: _Run, message: Any) -> None:
        """Send ``message`` to the run's caller, or, while the run's output is handled
        and the caller asked for batches, hold it for one envelope."""
        if self._held is not None and self._held[0] is run and run.request.batched:
            self._held[1].append(message)
        else:
            self.send(run.caller, message)

    def _on_outcome(self, run: _Run, outcome: RunOutcome) -> None:
        if run.outcome is not None:
            return
        run.outcome = outcome
        if outcome.ok and run.all_stored and self.spare is None:
            # It holds exactly our history now: keep it for the next turn (no fork).
            self.spare, self.spare_pid, self.spare_count = run.actor, run.pid, len(self.events)
            run.actor = None
        elif run.actor is not None:
            self._discard(run.actor, run.pid)
            run.actor = None
        if outcome.ok:
            self._finish(run, RunDone(run.request.run_id, run.final_event_id, run.seq))
        else:
            self._finish(run, RunFailed(run.request.run_id, outcome.reason, outcome.error_type, outcome.detail, run.seq))

    def _discard(self, actor: Any, pid: int | None) -> None:
        """Stop a run actor that may not serve again (its worker may still be busy)."""
        self._drop_link(actor)
        self.send(actor, Shutdown())
        if pid:
            self.send_after(CANCEL_GRACE, ("kill-pid", pid))

    def _on_child_exited(self, message: Any, sender: Any) -> None:
        child = message.childAddress
        if self._initialized:
            self._read_link(child)  # what it sent before it died
        self._drop_link(child)
        if not self._initialized:
            if self._blank_run is not None and child == self._blank_run:
                self._blank_run = None  # init forks a spare instead
                self.answer_prepared()
            return
        if self.spare is not None and child == self.spare:
            self.spare = None
            self.spare_pid = None
            if not self._stopping:  # (a host stopping stops the spare first)
                self._fork_spare()
            return
        run = self.active
        if run is not None and run.actor is not None and child == run.actor and run.outcome is None:
            if run.cancel_requested:
                run.outcome = RunOutcome(run.request.run_id, False, "cancelled")
                self._finish(run, RunFailed(run.request.run_id, "cancelled", "RunCancelled",
                                            "the run did not stop at a step boundary in time and was killed",
                                            run.seq))
                return
            run.outcome = RunOutcome(run.request.run_id, False, "killed")
            self._finish(run, RunFailed(run.request.run_id, "killed", "RunActorDied",
                                        "the run actor died before the run ended", run.seq))

    def _finish(self, run: _Run, terminal: RunDone | RunFailed) -> None:
        status = "done" if isinstance(terminal, RunDone) else terminal.reason
        # Logged after this handler: a log line is a message to Thespian's logger
        # process, and the terminal message leaves only when this handler returns.
        if status != "done" or self.log_runs_ended_well:
            self._log_later.append(dict(run=run.request.run_id, status=status, events=run.seq,
                                        seconds=round(time.monotonic() - run.started, 4) if run.started else None,
                                        warm_run_actor=run.warm, error=getattr(terminal, "detail", None) or None))
        if not run.end_stored:
            self.store.end_run(run.request.run_id, status)
        self._to_caller(run, terminal)
        if run is self.active:
            self.active = None
            if self.waiting:
                self._begin(self.waiting.popleft())
        if not self.after_turn_armed and (self._log_later or (self.spare is None and self.args.warm_spare)):
            # The spare fork too: a fork here would hold the terminal back for ~10 ms.
            # (After a turn that ended well there is neither: no timer.)
            self.after_turn_armed = True
            self.send_after(0.001, ("after-turn",))
        self._arm_idle()

    # -- timers -----------------------------------------------------------------------------------

    def _arm_idle(self) -> None:
        """Push the passivation deadline back; at most one timer is ever pending (each
        message must not leave a timer behind for ``idle_timeout`` seconds)."""
        self.idle_deadline = self.clock() + self.args.idle_timeout
        if not self.idle_timer_armed:
            self.idle_timer_armed = True
            self.send_after(self.args.idle_timeout, ("idle",))

    def handle_timeout(self, payload: Any) -> None:
        if not isinstance(payload, tuple):
            return
        kind = payload[0]
        run = self.active
        if kind == "run-actor-init":
            self._replace_if_silent(payload[1])
            return
        if kind == "after-turn":
            self.after_turn_armed = False
            self._flush_log()
            if run is None:
                self._fork_spare()
            return
        if kind == "idle":
            self.idle_timer_armed = False
            left = self.idle_deadline - self.clock()
            if left > 0 or run is not None or self.waiting:
                self.idle_timer_armed = True
                self.send_after(max(left, 0.05) if left > 0 else self.args.idle_timeout, ("idle",))
            else:
                self.stop()  # passivate: the partition re-activates us on the next request
        elif kind == "deadline" and run is not None and run.request.run_id == payload[1] and run.outcome is None:
            self.send(run.actor, _cast(Cancel("run deadline reached")))
            run.outcome = RunOutcome(run.request.run_id, False, "timeout")
            self._finish(run, RunFailed(run.request.run_id, "timeout", "RunTimeout",
                                        f"the run exceeded its {run.deadline} s deadline", run.seq))
            self.send_after(CANCEL_GRACE, ("kill-pid", run.pid))
        elif kind == "kill" and run is not None and run.request.run_id == payload[1] and run.pid:
            _kill(run.pid)
        elif kind == "kill-pid" and payload[1]:
            _kill(payload[1])

    def _flush_log(self) -> None:
        """A run that ended well is logged at debug level (one message to Thespian's
        logger process per turn would cost more than the turn's own messages; the
        telemetry counts runs); any other end at warning level."""
        for fields in self._log_later:
            if fields["status"] == "done":
                self.slog.debug("run ended", **fields)
            else:
                self.slog.warning("run ended", **fields)
        self._log_later.clear()

    def terminate(self, reason: Any) -> None:
        if "store" not in vars(self):
            return  # a pooled actor stopped before its Init: it holds no session
        self._flush_log()
        for run in [self.active, *self.waiting]:
            if run is not None and run.outcome is None:
                run.outcome = RunOutcome(run.request.run_id, False, "interrupted")
                self.send(run.caller, RunFailed(run.request.run_id, "interrupted", "SessionStopped",
                                                f"the session actor stopped: {reason}", run.seq))
                try:
                    self.store.end_run(run.request.run_id, "interrupted")
                except Exception:
                    pass
        # Every run has ended now: a run actor's exit that Thespian delivers after this
        # (the store is closed below) finds nothing left to end.
        self.active = None
        self.waiting.clear()
        try:
            self.store.close()
        except Exception:
            pass


def _cast(request: Any) -> Any:
    return Cast(request)


def _kill(pid: int) -> None:
    """SIGKILL ``pid`` if it is still our child (a pid may have been reused since)."""
    stat = proc_stat(pid)
    if stat is None or stat[1] != os.getpid():
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
