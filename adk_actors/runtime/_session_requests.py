"""A session's run requests: each taken as a run, or as a follower of one.

:class:`SessionRequests` is the part of ``_session.Session`` (which inherits it) that
answers a ``RunRequest``, in order (``take``): the request is read as its turn
(``_turns.turn_of``), once; a ``FollowTurn`` makes its caller the follower of a run
(``follow``); any other turn is checked (a new turn's message non-empty and within the
size limit, a resume's too), is the same run again when its run id runs or waits
here (its caller is now the one that asked last), is refused ``busy`` behind a run
in progress when its caller asked so or the queue is full, is recorded as running
in the store (a ``ResumeTurn``: the run it continues, once, whose message it takes),
and begins or waits (``_session``). A run id the store knows already is never run
again: the same request for a run that ended is answered as its follower is; one
interrupted by a partition that died is told its end. A follower gets the committed
events of the run's invocation it may have missed, then the run's messages as they
come, then its end, as its caller would have (``caught_up``, after the answer).
A :class:`SessionRun` is one run of the session, as it is taken.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from supervision import BadRequest, CallError

from .._types import Content, Event, LiveRequest
from ..engine import answered_invocation, own_user_event
from ..messages import (
    FAILURE_REASONS,
    AdkEvent,
    Limits,
    RunAccepted,
    RunDone,
    RunFailed,
    RunInfo,
    RunMessages,
    RunRequest,
    session_key,
)
from ..store import Lease, RunExists, RunNotResumable, SessionStores, request_of, request_text
from ._partition_timers import CatchUp, SendLater
from ._run_protocol import RunOutcome
from ._turns import FollowTurn, LiveTurn, NewTurn, ResumeTurn, RunTurn, turn_of

__all__ = ["CANCEL_GRACE", "KEPT_ENDS", "SessionRequests", "SessionRun"]

#: How long a run that must stop may take before its worker is killed, by default
#: (the host's ``run_stop_grace``).
CANCEL_GRACE = 2.0
#: How many of its latest runs' terminal messages a session keeps, as they were sent,
#: for a caller that follows a run after its end (``FollowRun``).
KEPT_ENDS = 16


@dataclass
class SessionRun:
    request: RunRequest
    caller: Any
    turn: RunTurn  # what it runs (read from its request by Session.take)
    invocation_id: str = ""  # as the store recorded the run (a resumed run continues its original's)
    attempt: int = 0  # how many resumes lie behind it
    worker: Any = None  # the partition's handle of the worker running it
    seq: int = 0
    final_event_id: str | None = None
    outcome: RunOutcome | None = None
    started: float = 0.0
    deadline: float | None = None  # seconds: the RunConfig's timeout, else the host's run_timeout
    cancel_requested: bool = False
    end_stored: bool = False  # the store has the run's end already
    committed: int = 0  # non-partial events of this run in the store
    held: list[Any] | None = None  # messages ready together, while its output is handled: sent as one envelope
    agent: str | None = None  # the author of its last event (what the tree shows)
    queued_at: float = 0.0  # the store's clock (epoch seconds): when it was taken
    live_inputs: list[LiveRequest] = field(default_factory=list)  # a live run's, until it has a worker

    @property
    def run_id(self) -> str:
        return self.request.run_id


class _Owner(Protocol):
    """What taking a request needs of the session's owner (``_session.SessionOwner``)."""

    store: SessionStores
    address: Any
    limits: Limits
    max_queued_runs: int

    def send(self, address: Any, message: Any) -> None: ...

    def durable_address(self, caller: Any) -> Any: ...

    def send_after(self, seconds: float, payload: Any) -> None: ...

    def follow_stopping(self, run_id: str, caller: Any) -> bool:
        """Make ``caller`` the caller of ``run_id`` when it is a crashed session's run still
        stopping on its worker; False for any other run."""


class SessionRequests:
    """A session's run requests and followers (see the module)."""

    owner: _Owner
    app_name: str
    user_id: str
    session_id: str
    events: list[Event]
    active: SessionRun | None
    waiting: deque[SessionRun]
    lease: Lease | None
    #: run id -> (its new follower, the messages held for it until CatchUp): see follow
    catching_up: dict[str, tuple[Any, list[Any]]]
    ends: dict[str, RunDone | RunFailed]  # the latest KEPT_ENDS runs' ends

    @property
    def key(self) -> str:
        return session_key(self.app_name, self.user_id, self.session_id)

    def _begin(self, run: SessionRun) -> None:
        """Begin ``run`` now (``_session.Session``)."""
        raise NotImplementedError

    def take(self, request: RunRequest, caller: Any) -> RunAccepted:
        """Accept a run request (``_session``, 1), or raise a CallError. In order: the
        request is read as its turn (``_turns.turn_of``), once; a ``FollowTurn`` joins a
        run instead (``follow``); a new turn's message must be non-empty and within the
        size limit (a resume's too); the same run id again is the same run
        (``_taken_again``); a busy session refuses it (``reject_if_busy``, or a full
        queue); the store records it (``_record``), and a resume takes its original's
        message from there; it begins now or waits."""
        turn = turn_of(request)
        match turn:
            case FollowTurn():
                return self.follow(turn, caller)
            case NewTurn(message=message) if not message.parts:
                raise BadRequest("a RunRequest needs a non-empty new_message")
            case NewTurn(message=message) | ResumeTurn(message=message):
                too_large = self.owner.limits.message_too_large(message)
                if too_large is not None:
                    raise CallError(too_large, code="limit_exceeded")
            case LiveTurn():
                pass
        again = self._taken_again(request.run_id, caller)
        if again is not None:
            return again
        busy = self.active is not None
        if busy and (request.reject_if_busy or len(self.waiting) >= self.owner.max_queued_runs):
            raise CallError(f"session {self.session_id!r} is running another turn", code="busy")
        recorded = self._record(request, turn, caller)
        if isinstance(recorded, RunAccepted):
            return recorded
        if isinstance(turn, ResumeTurn):
            original = request_of(recorded.request)
            if original is not None:  # a resume carries the message: the run may have committed nothing yet
                turn = replace(turn, message=original[0], state_delta=original[1])
        run = SessionRun(request, caller, turn, invocation_id=recorded.invocation_id, attempt=recorded.attempt,
                         queued_at=self.owner.store.clock.current_time())
        if busy:
            self.waiting.append(run)
            return RunAccepted(request.run_id, len(self.waiting), os.getpid(), self.owner.address)
        self._begin(run)
        return RunAccepted(request.run_id, 0, os.getpid(), self.owner.address)

    def requeue(self, run: SessionRun) -> None:
        """Take back a run this session's crashed self accepted but never began
        (``PartitionHolding._requeue``): it begins now, or waits behind the runs here."""
        if self.active is None:
            self._begin(run)
        else:
            self.waiting.append(run)

    def _taken_again(self, run_id: str, caller: Any) -> RunAccepted | None:
        """The same request again, for a run running or waiting here (a caller retrying,
        maybe from another endpoint: the Runner does when it took the first for
        undelivered): the run is already ours, and what it sends from now on goes to the
        caller that asked last, so that caller's stream ends; before, it waited on for
        its deadline. None for a run id not running or waiting here."""
        for position, known in enumerate([self.active, *self.waiting]):
            if known is not None and known.run_id == run_id:
                known.caller = caller
                return RunAccepted(run_id, position, os.getpid(), self.owner.address)
        return None

    def _record(self, request: RunRequest, turn: RunTurn, caller: Any) -> RunInfo | RunAccepted:
        """Record the run as running in the store (a resume: its invocation, once) and
        return what the store recorded. A run id the store knows already is answered
        here instead: the same request again for a run that ended, from a caller that
        never heard its end (its partition died after committing it), follows it; a run
        interrupted (and maybe resumed since) by a partition that died before its caller
        heard from it sends that end to the caller, after this answer; any other is
        refused ``invalid_request`` (a run id is never reused), as is a run that cannot
        be resumed. (The same request: a new turn with the same message, or a resume of
        the same run: a Runner asks again so when its partition died before it heard the
        run's end.) A new turn whose message answers function calls of one invocation
        is recorded as that invocation's (``engine.answered_invocation``), as google-adk
        runs it."""
        resumes = turn.resumes if isinstance(turn, ResumeTurn) else None
        kept = request_text(turn.message, turn.state_delta) if isinstance(turn, NewTurn) else None
        # a message answering calls goes on in their invocation (google-adk's rule)
        answered = answered_invocation(self.events, turn.message) if isinstance(turn, NewTurn) else None
        try:
            return self.owner.store.start_run(self.app_name, self.user_id, self.session_id, request.run_id,
                                              self.owner.durable_address(caller), lease=self.lease,
                                              resumes=resumes, request=kept, invocation_id=answered)
        except RunNotResumable as exc:
            raise CallError(str(exc), code="invalid_request") from None
        except RunExists as exc:
            status = self.owner.store.run_status(request.run_id)
            if status not in ("interrupted", "resumed"):
                info = self._recorded_run(request.run_id)
                again = info is not None and (info.request == kept if kept is not None else
                                              resumes is not None and info.resumes == resumes)
                if status != "running" and again:
                    return self.follow(FollowTurn(request.run_id), caller)
                raise CallError(str(exc), code="invalid_request") from None
        self.owner.send_after(0, SendLater(RunFailed(request.run_id, "interrupted", "PartitionRestarted",
                                                     "the session's partition was restarted while this run "
                                                     "was in flight", resumed_as=self._resumed_as(request.run_id)),
                                           caller))
        return RunAccepted(request.run_id, 0, os.getpid(), self.owner.address)

    def follow(self, turn: FollowTurn, caller: Any) -> RunAccepted:
        """Make ``caller`` the caller of run ``turn.run_id`` (``FollowRun``), in order:
        the run is looked for among the session's running and waiting runs, then among
        its crashed self's still stopping (the follower then gets its end alone, once it
        stopped: ``follow_stopping``), else in the store (``invalid_request`` when the
        session never had it); the committed events
        of its invocation after event ``turn.after`` are held for the follower, with
        every message the run sends meanwhile and, for a run that ended, its end (as it
        was sent when the session still keeps it, else rebuilt from its recorded
        status); the partition's ``CatchUp`` timer sends them in one envelope
        (``caught_up``), after this answer: a caller that waits for a call's answer
        drops what comes before it."""
        run = next((known for known in [self.active, *self.waiting]
                    if known is not None and known.run_id == turn.run_id and known.outcome is None), None)
        end: RunDone | RunFailed | None = None
        message: Content | None = None
        if run is not None:
            invocation = run.invocation_id
            run.caller = caller
            message = run.turn.message if isinstance(run.turn, NewTurn | ResumeTurn) else None
        elif self.owner.follow_stopping(turn.run_id, caller):
            # a run of this session's crashed self, still stopping (the partition's
            # PartitionHolding.follow_stopping): its end, once it stopped, names the run
            # resuming it, whose follow brings the events missed
            return RunAccepted(turn.run_id, 0, os.getpid(), self.owner.address)
        else:
            info = self._recorded_run(turn.run_id)
            if info is None:
                raise CallError(f"no run {turn.run_id!r} on this session", code="invalid_request")
            invocation = info.invocation_id
            end = self.ends.get(turn.run_id) or self._recorded_end(info)
            message = (request_of(info.request) or (None, None))[0]
        missed = self._committed_after(invocation, turn.after, message)
        held: list[Any] = [AdkEvent(turn.run_id, event, seq) for seq, event in enumerate(missed)]
        if end is not None:
            held.append(end)
        self.catching_up[turn.run_id] = (caller, held)
        self.owner.send_after(0, CatchUp(self.key, turn.run_id))
        return RunAccepted(turn.run_id, 0, os.getpid(), self.owner.address)

    def _recorded_run(self, run_id: str) -> RunInfo | None:
        """Run ``run_id`` as the store records it, if it is one of this session's."""
        info = self.owner.store.run_info(run_id)
        if info is None or (info.app_name, info.user_id, info.session_id) != (
                self.app_name, self.user_id, self.session_id):
            return None
        return info

    def _committed_after(self, invocation_id: str, after: str, message: Content | None = None) -> list[Event]:
        """The session's events of the run's own turn of ``invocation_id`` (the turn that
        sent ``message``: an invocation holds several turns when some answered its calls,
        ``engine.own_user_event``) after event ``after``; all of that turn's when
        ``after`` is empty or not one of the session's (none when an answering turn has
        committed nothing yet). The turn's events end where the invocation's next turn
        begins."""
        events = self.events
        start = 0
        if after:
            start = next((position + 1 for position in range(len(events) - 1, -1, -1)
                          if events[position].id == after), 0)
        own = own_user_event(events, invocation_id, message)
        if start == 0:
            answers = message is not None and any(r.id for r in message.function_responses)
            start = own if own is not None else (len(events) if answers else 0)
        begin = own if own is not None else start
        stop = next((i for i in range(begin + 1, len(events))
                     if events[i].author == "user" and events[i].invocation_id == invocation_id), len(events))
        return [event for event in events[start:stop] if event.invocation_id == invocation_id]

    def _recorded_end(self, info: RunInfo) -> RunDone | RunFailed:
        """The end of a run the session keeps no end of, from its recorded status:
        ``RunDone`` (the last event of its own turn that is no error), else ``RunFailed``
        for that reason, naming the run that continues it when that is the session's
        latest (``_resumed_as``). A status that is no failure reason (``resumed``;
        ``running`` in the store, with no run here: its partition died) ends it
        ``interrupted``."""
        if info.status == "done":
            message = (request_of(info.request) or (None, None))[0]
            final = next((event.id for event in reversed(self._committed_after(info.invocation_id, "", message))
                          if not event.error_code), None)
            return RunDone(info.run_id, final, 0)
        reason = info.status if info.status in FAILURE_REASONS else "interrupted"
        return RunFailed(info.run_id, reason, "RunEnded", f"the run ended {info.status}",
                         resumed_as=self._resumed_as(info.run_id))

    def _resumed_as(self, run_id: str) -> str:
        """The run that continues run ``run_id`` now: the session's latest run when it is
        a resume of the same invocation (of ``run_id``, or of a resume of it: a run
        resumed, interrupted again and resumed again); else ""."""
        last = self.owner.store.last_run(self.app_name, self.user_id, self.session_id)
        if last is None or last.run_id == run_id or not last.resumes:
            return ""
        info = self.owner.store.run_info(run_id)
        return last.run_id if info is not None and info.invocation_id == last.invocation_id else ""

    def caught_up(self, run_id: str) -> None:
        """Send the follower of run ``run_id`` what ``follow`` held for it, in one
        envelope; from now on the run's messages go to it as they come."""
        follower, held = self.catching_up.pop(run_id, (None, []))
        if follower is None or not held:
            return
        self.owner.send(follower, RunMessages(run_id, tuple(held)))
