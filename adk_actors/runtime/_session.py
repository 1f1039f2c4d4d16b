"""One session inside its partition: the session's one in-memory view, and its runs.

A :class:`Session` is a plain object owned by a session partition (``_partition``),
which is the single writer of every session it holds. The store is the durable
truth; the session's ``state`` and ``events`` are the one view of it in memory,
changed only after the store committed the change, with the same delta rule the
store uses (``_types.apply_state_delta``).

A turn, in order:

1. ``take``: the ``RunRequest`` is read as its turn (``_turns``: new, live, resume
   or follow), checked (non-empty message, size limit, the same run id again),
   recorded as running in the store (a ``ResumeTurn`` of an earlier run: its
   invocation, once), and answered ``RunAccepted``; the run starts now or waits behind
   the run in progress (serialized; the queue is bounded, ``busy`` beyond it).
2. ``begin``: the partition gives the turn to one of its run workers
   (``SessionOwner.dispatch``) with what the turn needs; a deadline is armed (the
   RunConfig's timeout, else the host's ``run_timeout``).
3. ``on_output``: the worker's events; each non-partial one is appended to the store
   (atomically with its state delta, duplicates ignored; the last ones with the
   run's end and its trace) BEFORE it is relayed to the caller (a live run's inputs
   reach its worker through ``live_input``, in order); partial ones are relayed as
   they come (google-adk's compaction summary is kept, not relayed); what one output
   makes goes to the caller in one ``RunMessages`` envelope. The session is the only
   sender to the caller, so order holds, and the only sender of the one terminal
   message (``RunDone`` / ``RunFailed``): on the run's outcome, on its worker's death
   (``killed``), on its deadline (``timeout``) or on ``cancel``. A run ended
   without its worker's outcome (killed, timed out, not stopped within the host's
   ``run_stop_grace`` of a cancel) is told to stop, and its terminal message waits
   until its worker says it stopped or the worker's process is gone: a worker that
   still runs it a grace later is killed (``SessionOwner.abandon``). No caller hears
   that a run ended while its work may still go on.

A run another request started can be joined (``FollowRun``, see ``follow``): its
follower gets the run's committed events it may have missed, then the run's
messages, then its end, as its caller would have.

``take`` and ``follow`` (with :class:`SessionRun`) are in ``_session_requests``
(``SessionRequests``, which ``Session`` inherits); a rewind's artifact side is in
``_session_rewind``.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

from supervision import BadRequest, CallError

from .._exceptions import InvocationNotFoundError
from .._rewind import rewind_event
from .._types import Event, EventActions, LiveRequest, RunConfig, apply_state_delta
from ..engine._compaction_adk import is_summary
from ..messages import (
    AdkEvent,
    Limits,
    RunDone,
    RunFailed,
    RunMessages,
    RunRequest,
    SessionInfo,
)
from ..store import Lease, SessionStores, Unstorable
from ._partition_timers import CancelGraceOver, ResumeInterrupted, RunDeadline
from ._run_protocol import RunOutcome, RunOutput
from ._session_requests import CANCEL_GRACE, KEPT_ENDS, SessionRequests, SessionRun
from ._session_rewind import NotSaved, SavedVersions
from ._turns import LiveTurn

__all__ = ["CANCEL_GRACE", "Session", "SessionOwner", "SessionRun"]



class SessionOwner(Protocol):
    """What a session needs from the partition that holds it."""

    store: SessionStores
    address: Any  # the partition's address (RunAccepted.session)
    limits: Limits
    max_queued_runs: int
    run_timeout: float | None
    run_stop_grace: float  # how long a cancelled run may take to stop before it is ended (and killed)
    trace_turns: int  # turns whose trace a session keeps

    def clock(self) -> float:
        """Now, in seconds of the owner's clock (monotonic): a run's start is measured on it."""

    def send(self, address: Any, message: Any) -> None: ...

    def durable_address(self, caller: Any) -> Any:
        """``caller`` as the store keeps it, for the partition's next self to tell it of
        an interrupted run (None: a caller that would not be there then)."""

    def send_after(self, seconds: float, payload: Any) -> None: ...

    def dispatch(self, session: Session, run: SessionRun) -> None:
        """Give ``run`` to a run worker (sets ``run.worker``)."""

    def cancel_on_worker(self, run: SessionRun, reason: str) -> None: ...

    def live_on_worker(self, run: SessionRun, request: LiveRequest) -> None:
        """Send an input of the live ``run`` to its worker."""

    def abandon(self, run: SessionRun, *, waited: bool, then: Callable[[], None]) -> None:
        """The run ended without its worker's outcome (the worker was told to stop it,
        ``run_stop_grace`` ago if ``waited``): call ``then`` once the worker says it
        stopped or the worker is gone; kill the worker if it still runs it a grace
        after it was told."""

    def run_ended(self, session: Session, run: SessionRun, status: str) -> None: ...

    def follow_stopping(self, run_id: str, caller: Any) -> bool: ...  # see _session_requests

    def auto_resume(self, session: Session, run: SessionRun, failed: RunFailed) -> RunRequest | str | None:
        """The request that resumes ``run``, which a crash just ended (``failed``), when
        its app resumes such runs on its own; why it is not resumed, when it was as often
        as allowed (added to the failure's detail); else None."""


@dataclass
class Session(SessionRequests):
    owner: SessionOwner
    app_name: str
    user_id: str
    session_id: str
    state: dict[str, Any]
    events: list[Event]
    last_update: float
    active: SessionRun | None = None
    waiting: deque[SessionRun] = field(default_factory=deque)
    idle_since: float = 0.0  # the owner's clock at its last request or run end
    lease: Lease | None = None  # its single-writer lease: every write names it (store.Lease)
    #: run id -> (its new follower, the messages held for it until CatchUp): see follow
    catching_up: dict[str, tuple[Any, list[Any]]] = field(default_factory=dict)
    ends: dict[str, RunDone | RunFailed] = field(default_factory=dict)  # the latest KEPT_ENDS runs' ends

    # -- reads and state ----------------------------------------------------------------------

    def info(self) -> SessionInfo:
        return SessionInfo(self.app_name, self.user_id, self.session_id, self.fresh_state(), list(self.events),
                           self.last_update)

    def fresh_state(self) -> dict[str, Any]:
        """Session state plus the current app:/user: state (other sessions may change it)."""
        merged = {k: v for k, v in self.state.items() if not k.startswith(("app:", "user:", "temp:"))}
        merged.update(self.owner.store.scoped_state(self.app_name, self.user_id))
        return merged

    def update_state(self, delta: dict[str, Any]) -> SessionInfo:
        """Commit an event of author ``user`` carrying ``delta`` (invocation ``p-...``,
        as google-adk's PATCH), then answer the session. ``temp:`` keys are refused: they
        would never be stored. A run in progress keeps running."""
        if any(key.startswith("temp:") for key in delta):
            raise BadRequest("temp: state lives for one invocation; it cannot be set on a session")
        event = Event(author="user", invocation_id=f"p-{uuid.uuid4()}", actions=EventActions(state_delta=delta))
        try:
            self._commit([event])
        except Unstorable as exc:
            raise BadRequest(str(exc)) from None
        return self.info()

    def rewind(self, invocation_id: str, artifact_delta: dict[str, int], expected_events: int) -> SessionInfo:
        """Commit the event that rewinds the session to before ``invocation_id``, then
        answer the session. In order: a run in progress or waiting, or more events than
        the caller read (``expected_events``), is refused ``busy``; the rewind event is
        built from the session's events and state (``_rewind.rewind_event``; an unknown
        invocation: ``invocation_not_found``), its artifact versions being the ones the
        caller saved (``artifact_delta``: one it did not save is refused ``busy``, the
        session having changed since); the event is committed as any other."""
        if self.active is not None or self.waiting:
            raise CallError(f"session {self.session_id!r} is running a turn: it cannot be rewound now", code="busy")
        if len(self.events) != expected_events:
            raise CallError(f"session {self.session_id!r} changed while its rewind was prepared: ask again",
                            code="busy")
        try:
            event = rewind_event(self.events, self.state, invocation_id, SavedVersions(artifact_delta),
                                 (self.app_name, self.user_id, self.session_id))
        except InvocationNotFoundError as exc:
            raise CallError(str(exc), code="invocation_not_found") from None
        except NotSaved as exc:
            raise CallError(f"session {self.session_id!r} changed while its rewind was prepared ({exc}): ask again",
                            code="busy") from None
        try:
            self._commit([event])
        except Unstorable as exc:
            raise BadRequest(str(exc)) from None
        return self.info()

    def _commit(self, events: list[Event], end_run: tuple[str, str] | None = None,
                outcome: RunOutcome | None = None) -> list[Event | None]:
        """Append ``events`` to the store (one transaction, with ``end_run`` and the
        ``outcome``'s trace), then to the view: each one the store took, with its
        state delta."""
        stored_events = self.owner.store.append_events(
            self.app_name, self.user_id, self.session_id, events, end_run=end_run,
            trace=outcome.trace if outcome is not None else None, keep_turns=self.owner.trace_turns,
            lease=self.lease)
        for stored in stored_events:
            if stored is not None:
                self.events.append(stored)
                self.state = apply_state_delta(self.state, stored.actions.state_delta)
                self.last_update = self.owner.store.clock.current_time()
        return stored_events

    # -- runs --------------------------------------------------------------------------------

    def _begin(self, run: SessionRun) -> None:
        run.started = self.owner.clock()
        self.active = run
        self.owner.dispatch(self, run)
        run.deadline = (run.request.run_config or RunConfig()).timeout or self.owner.run_timeout
        if run.deadline:
            self.owner.send_after(run.deadline, RunDeadline(self.key, run.run_id))

    def cancel(self, run_id: str) -> str:
        """Cancel the run in progress (it stops at a step boundary; past the host's
        ``run_stop_grace`` it is ended all the same, once its worker is killed) or a
        waiting one (ended now). A run that ended and was
        resumed is cancelled as the run that continues its invocation, if one runs or waits."""
        run = self.active
        if run is not None and run.run_id == run_id and run.worker is None:  # waiting for a worker
            self._end(run, RunOutcome(run_id, False, "cancelled", "RunCancelled", "cancelled before it started"),
                      abandon=False)
            return "cancelled"
        if run is not None and run.run_id == run_id:
            run.cancel_requested = True
            self.owner.cancel_on_worker(run, "cancelled by request")
            self.owner.send_after(self.owner.run_stop_grace, CancelGraceOver(self.key, run_id))
            return "cancelling"
        for waiting in list(self.waiting):
            if waiting.run_id == run_id:
                self.waiting.remove(waiting)
                self._finish(waiting, RunFailed(run_id, "cancelled", "RunCancelled", "cancelled before it started"))
                return "cancelled"
        successor = self._continuing(run_id)
        if successor is not None:
            return self.cancel(successor.run_id)
        raise CallError(f"no run {run_id!r} on this session", code="invalid_request")

    def _continuing(self, run_id: str) -> SessionRun | None:
        """The running or waiting run that continues the invocation of run ``run_id``
        (which ended and was resumed: a resume, ``attempt`` > 0; not a new turn that
        answers its calls, which shares its invocation too), or None."""
        info = self._recorded_run(run_id)
        if info is None:
            return None
        return next((run for run in [self.active, *self.waiting] if run is not None and run.run_id != run_id
                     and run.attempt > 0 and run.invocation_id == info.invocation_id and run.outcome is None),
                    None)

    def kill(self, run_id: str) -> bool:
        """End run ``run_id``, ``killed`` (``KillRun``): a running one is told to stop on
        its worker and gets no more output; its ``killed`` end is sent once the worker
        says it stopped, or once the worker, killed ``run_stop_grace`` later, is gone
        (its other runs then end ``interrupted``); a waiting one leaves the queue now.
        False if there is no such run."""
        detail = "the run was killed on request"
        run = self.active
        if run is not None and run.run_id == run_id and run.outcome is None:
            self.owner.cancel_on_worker(run, detail)
            self._end(run, RunOutcome(run_id, False, "killed", "RunKilled", detail), abandon=True)
            return True
        for waiting in list(self.waiting):
            if waiting.run_id == run_id:
                self.waiting.remove(waiting)
                self._finish(waiting, RunFailed(run_id, "killed", "RunKilled", detail))
                return True
        return False

    def live_input(self, run_id: str, request: LiveRequest) -> str:
        """Pass an input to the live run ``run_id``: to its worker (``"sent"``), or kept
        for it while it waits for one or for its turn (``"queued"``); a CallError when
        the session has no such live run, or the input is over the message limit."""
        size = len(request.to_json().encode())
        if size > self.owner.limits.max_message_bytes:
            raise CallError(f"the input has {size} bytes; the limit is {self.owner.limits.max_message_bytes}",
                            code="limit_exceeded")
        for run in [self.active, *self.waiting]:
            if run is None or run.run_id != run_id or run.outcome is not None:
                continue
            if not isinstance(run.turn, LiveTurn):
                raise CallError(f"run {run_id!r} is not a live run", code="invalid_request")
            if run is self.active and run.worker is not None:
                self.owner.live_on_worker(run, request)
                return "sent"
            run.live_inputs.append(request)
            return "queued"
        raise CallError(f"no live run {run_id!r} in progress on this session", code="invalid_request")

    def on_output(self, run: SessionRun, output: RunOutput) -> None:
        """The worker's events (and outcome): committed, relayed, and sent to the caller
        in one envelope (a ``RunMessages``, or the message alone when it is one)."""
        if run is not self.active or run.outcome is not None:
            return  # ended already (timed out, cancelled, over its limit)
        run.held = []
        try:
            self._relay(run, output)
            if output.outcome is not None and run.outcome is None:
                self._on_outcome(run, output.outcome)
        finally:
            held, run.held = run.held, None
            if held:
                self._deliver(run, held[0] if len(held) == 1 else RunMessages(run.run_id, tuple(held)))

    def _relay(self, run: SessionRun, output: RunOutput) -> None:
        """Commit the output's non-partial events in one transaction (with the run's end
        when the outcome came along), then relay every event (the summary aside) to the caller. Events past
        the turn's limit (``Limits.max_events_per_turn``) are neither stored nor relayed:
        the run is stopped and fails with ``TooManyEvents``."""
        finals = [event for event in output.events if not event.partial]
        limit = self.owner.limits.max_events_per_turn
        over = len(finals) > limit - run.committed
        if over:
            finals = finals[:max(limit - run.committed, 0)]
        end_run = None
        if not over and output.outcome is not None:
            end_run = (run.run_id, "done" if output.outcome.ok else output.outcome.reason)
        if finals or end_run:
            try:
                stored_events = self._commit(finals, end_run, output.outcome if end_run else None)
            except Unstorable as exc:  # the run made an event the store could not read back
                self.owner.cancel_on_worker(run, str(exc))
                self._end(run, RunOutcome(run.run_id, False, "error", "Unstorable", str(exc)), abandon=True)
                return
            run.end_stored = end_run is not None
            for event, stored in zip(finals, stored_events, strict=True):
                if stored is not None and not event.error_code and not is_summary(event):
                    run.final_event_id = event.id
        run.committed += len(finals)
        if output.events:
            run.agent = output.events[-1].author
        for event in finals if over else output.events:
            if is_summary(event):
                continue
            self._to_caller(run, AdkEvent(run.run_id, event, run.seq))
            run.seq += 1
        if over:
            detail = f"the turn went over its limit of {limit} events"
            self.owner.cancel_on_worker(run, detail)
            self._end(run, RunOutcome(run.run_id, False, "error", "TooManyEvents", detail), abandon=True)

    def _on_outcome(self, run: SessionRun, outcome: RunOutcome) -> None:
        self._end(run, outcome, abandon=False)

    def _end(self, run: SessionRun, outcome: RunOutcome, *, abandon: bool, waited: bool = False) -> None:
        """End the run with ``outcome``: no more of its output is taken, and its terminal
        message goes now, or, when ``abandon`` (its worker did not report this end and
        may still be running it; ``waited``: it was told to stop a grace ago), once its
        worker stopped it or is gone (``SessionOwner.abandon``)."""
        if run.outcome is not None:
            return
        run.outcome = outcome
        terminal: RunDone | RunFailed
        if outcome.ok:
            terminal = RunDone(run.run_id, run.final_event_id, run.seq)
        else:
            terminal = RunFailed(run.run_id, outcome.reason, outcome.error_type, outcome.detail, run.seq)
        if abandon and run.worker is not None:
            self.owner.abandon(run, waited=waited, then=lambda: self._finish(run, terminal))
        else:
            self._finish(run, terminal)

    def worker_died(self, run: SessionRun, *, unresponsive: bool = False, worker_killed: bool = False) -> None:
        """The process running ``run`` is gone (``unresponsive``: killed by its
        partition's health check; ``worker_killed``: killed by its partition, as another
        run on it did not stop in time: this one ends ``interrupted``, which its app may
        resume)."""
        if run.cancel_requested:
            self._end(run, RunOutcome(run.run_id, False, "cancelled", "RunCancelled",
                                      "the run did not stop at a step boundary in time and was killed"), abandon=False)
        elif worker_killed:
            self._end(run, RunOutcome(run.run_id, False, "interrupted", "RunWorkerKilled",
                                      "another run on the run's worker process did not stop in time, and the "
                                      "process was killed"), abandon=False)
        elif unresponsive:
            self._end(run, RunOutcome(run.run_id, False, "killed", "RunActorUnresponsive",
                                      "the run's worker process stopped answering and was killed"), abandon=False)
        else:
            self._end(run, RunOutcome(run.run_id, False, "killed", "RunActorDied",
                                      "the run's worker process died before the run ended"), abandon=False)

    def on_timer(self, timer: RunDeadline | CancelGraceOver) -> None:
        """A run's deadline or its cancel's grace period is over."""
        run = self.active
        if run is None or run.run_id != timer.run_id or run.outcome is not None:
            return
        if isinstance(timer, RunDeadline):
            self.owner.cancel_on_worker(run, "run deadline reached")
            self._end(run, RunOutcome(run.run_id, False, "timeout", "RunTimeout",
                                      f"the run exceeded its {run.deadline} s deadline"), abandon=True)
        else:
            self._end(run, RunOutcome(run.run_id, False, "cancelled", "RunCancelled",
                                      "the run did not stop at a step boundary in time and was abandoned"),
                      abandon=True, waited=True)

    def _to_caller(self, run: SessionRun, message: Any) -> None:
        """Send ``message`` to the run's caller, or, while the run's output is handled,
        hold it for one envelope."""
        if run.held is not None:
            run.held.append(message)
        else:
            self._deliver(run, message)

    def _deliver(self, run: SessionRun, message: Any) -> None:
        """Send ``message`` to the run's caller (none: a run the host resumed on its own
        that nobody follows), or hold it for a follower still catching up (``follow``)."""
        catching_up = self.catching_up.get(run.run_id)
        if catching_up is not None:
            catching_up[1].extend(message.messages if isinstance(message, RunMessages) else (message,))
        elif run.caller is not None:
            self.owner.send(run.caller, message)

    def _finish(self, run: SessionRun, terminal: RunDone | RunFailed) -> None:
        """Store the run's end, send its terminal message, then begin the next run: the
        one resuming this run when its app resumes crashed runs on its own (its caller is
        told ``resumed_as``), else the next waiting one."""
        status = "done" if isinstance(terminal, RunDone) else terminal.reason
        resume = None
        if isinstance(terminal, RunFailed):
            decided = self.owner.auto_resume(self, run, terminal)
            if isinstance(decided, str):  # resumed as often as allowed: say so
                terminal = replace(terminal, detail=f"{terminal.detail}; {decided}")
                if run.outcome is not None:
                    run.outcome = replace(run.outcome, detail=terminal.detail)  # the run's log line says it too
            elif decided is not None:
                resume = decided
                terminal = replace(terminal, resumed_as=resume.run_id)
        if not run.end_stored:
            self.owner.store.end_run(run.run_id, status)
            run.end_stored = True
        self._to_caller(run, terminal)
        self.ends[run.run_id] = terminal
        if len(self.ends) > KEPT_ENDS:
            del self.ends[next(iter(self.ends))]
        self.owner.run_ended(self, run, status)
        if run is self.active:
            self.active = None
            if resume is not None and self.resume(resume):
                return
            if self.waiting:
                self._begin(self.waiting.popleft())

    def resume(self, request: RunRequest) -> bool:
        """Take ``request`` (a resume the host makes on its own: no caller) ahead of the
        waiting runs; False when it is refused (the run cannot be resumed)."""
        waiting, self.waiting = self.waiting, deque()
        try:
            self.take(request, None)
            return True
        except CallError:
            return False
        finally:
            self.waiting.extend(waiting)

    def interrupt(self, why: str, *, stop_active: bool = False, resumed_as: str = "",
                  then: Callable[[], None] | None = None) -> None:
        """The session is let go (its partition stops, it crashed, its lease went): every
        run not ended gets ``RunFailed(interrupted)``. With ``stop_active``, the run in
        progress is told to stop on its worker, and its end goes once it stopped there
        or its worker is gone (``SessionOwner.abandon``). ``resumed_as``: the id of the
        run that resumes the run in progress (its app resumes crashed runs): its caller
        is told it, and once that run's end is stored the session is activated again
        (``ResumeInterrupted``), which resumes it. ``then`` is called once the run in
        progress stopped and its end is stored (at once when none is stopping)."""
        for run in [self.active, *self.waiting]:
            if run is not None and run.outcome is None:
                run.outcome = RunOutcome(run.run_id, False, "interrupted")
                terminal = RunFailed(run.run_id, "interrupted", "SessionStopped", why, run.seq,
                                     resumed_as=resumed_as if run is self.active else "")
                if stop_active and run is self.active and run.worker is not None:
                    self.owner.cancel_on_worker(run, why)
                    self.owner.abandon(run, waited=False, then=partial(self._interrupted, run, terminal, then))
                    then = None
                else:
                    self._interrupted(run, terminal)
        for run_id in list(self.catching_up):
            self.caught_up(run_id)
        self.active = None
        self.waiting.clear()
        if then is not None:
            then()

    def _interrupted(self, run: SessionRun, terminal: RunFailed, then: Callable[[], None] | None = None) -> None:
        """Send an interrupted run's end and record it (a store that fails: its next
        partition finds it running and ends it), then call ``then``."""
        self._deliver(run, terminal)
        try:
            self.owner.store.end_run(run.run_id, "interrupted")
        except Exception:
            pass
        if terminal.resumed_as:
            self.owner.send_after(0.001, ResumeInterrupted(((self.app_name, self.user_id, self.session_id),)))
        if then is not None:
            then()
