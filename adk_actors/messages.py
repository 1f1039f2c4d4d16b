"""The message-passing API of adk-actors, in one module (version ``PROTOCOL_VERSION``).

Any actor (or plain code through :class:`adk_actors.Runner`) talks to agents with
these messages. A request names its session (app, user, session id): that is the
session's address. It is sent as ``supervision.Call(request)`` to the host's session
supervisor (``Host.sessions_address()``, registered as ``sessions`` in the host's
registry), which hands it to the partition that holds the session now (its
``partition_key``), through that partition's restarts: while it restarts the request
waits there (``route_hold``, 10 s) rather than fail. A caller that wants the hop
less may send it straight to the partition (``partition_of``), as the Runner does,
and then follows restarts itself. The answer is a ``Reply`` or an ``ErrorReply``
whose ``code`` is one of ``ERROR_CODES``. A malformed message gets an
``ErrorReply``; it never crashes the receiver.

A run: ``Call(RunRequest)`` is answered at once with ``Reply(RunAccepted)``; then
the caller receives, in order, ``AdkEvent`` messages (each non-partial event is
committed to the store before it is sent; partial events are streamed in batches)
and exactly one terminal message: ``RunDone`` or ``RunFailed``. The messages that
are ready together come in one ``RunMessages`` envelope (same order, same single
terminal); one alone comes as itself: handle both.
``RunAccepted.session`` is the address of the partition holding the session. A
request sent with ``reply_accepted=False`` gets no ``RunAccepted``: its first
answer is the run's first message, or an ``ErrorReply``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from supervision.lowlevel import partition_index

from ._decisions import CallDecision
from ._types import Content, Event, LiveRequest, RunConfig
from ._validate import check_input

__all__ = [
    "ERROR_CODES",
    "PROBE",
    "PROTOCOL_VERSION",
    "AdkEvent",
    "CancelRun",
    "CrashSession",
    "CreateSession",
    "DeleteSession",
    "FollowRun",
    "GetEventTrace",
    "GetSession",
    "GetState",
    "GetTrace",
    "HeldKeys",
    "HeldSessions",
    "KillRun",
    "LastRun",
    "Limits",
    "LinePath",
    "ListSessions",
    "LiveInput",
    "LiveWorkers",
    "ResetSession",
    "ResumeRun",
    "RewindSession",
    "RunAccepted",
    "RunDone",
    "RunFailed",
    "RunInfo",
    "RunMessages",
    "RunRequest",
    "RunStatus",
    "SessionInfo",
    "SessionLifecycle",
    "SessionStatus",
    "UpdateState",
    "WatchSession",
    "WorkerRuns",
    "partition_of",
    "session_key",
]

#: 2 added ``RunRequest.batched``, ``RunMessages`` and ``RunAccepted.session`` (all optional);
#: 3 added ``RunRequest.reply_accepted`` (optional);
#: 4 added ``SessionInfo.session_actor`` (optional);
#: 5 added ``UpdateState``;
#: 6 removed ``SessionInfo.session_actor`` (sessions live in their partitions) and added ``PROBE``;
#: 7 added ``GetTrace`` and ``GetEventTrace``;
#: 8 moved ``RunRequest.state_delta`` onto the user's event;
#: 9 added live runs: ``RunRequest.live`` and ``LiveInput``;
#: 10 added sessions and runs as actors: ``HeldSessions`` (``SessionStatus``,
#: ``RunStatus``), ``CrashSession``, ``ResetSession``, ``KillRun``, ``WatchSession``
#: (``SessionLifecycle``), and the error codes ``session_failed``,
#: ``session_unreadable``, ``internal_error``;
#: 11 added ``partition_key`` to every request that names a session or a user, so
#: that a caller addresses a session through the session supervisor;
#: 12 added the error code ``session_elsewhere`` (another host's partition holds the
#: session's lease: ``store.Lease``);
#: 13 added durable runs: ``RunRequest.resume`` and ``decisions``, the failure reason
#: ``needs_decision``, ``RunFailed.resumed_as``, ``LastRun``;
#: 14 added ``FollowRun``: a caller joins a run another request started;
#: 15 added ``RunRequest.create_session`` (google-adk's ``auto_create_session``);
#: 16 added ``RewindSession`` (google-adk's ``Runner.rewind_async``) and the error code
#: ``invocation_not_found``;
#: 17 added the error code ``holder_gone``: a request handed on to the session's holder,
#: whose host stopped taking connections before it answered (it may have acted on it);
#: 18 removed ``RunRequest.batched``: every run's messages come as a batched request's
#: did (in ``RunMessages`` envelopes when several are ready together); a sender that
#: still passes ``batched=`` gets a TypeError building the request.
PROTOCOL_VERSION = 18

#: A request a partition takes as a ``Cast`` and ignores: sent to learn whether its
#: process is there (a refused delivery says it is gone) without an answer that could
#: find the asker gone.
PROBE = "probe"

#: Error codes of ``ErrorReply`` for these requests.
ERROR_CODES = ("unknown_app", "unknown_session", "session_exists", "busy", "invalid_request", "not_running",
               "limit_exceeded", "session_unreadable", "internal_error", "session_failed", "session_elsewhere",
               "invocation_not_found", "holder_gone")

#: Why a run failed (``RunFailed.reason``).
FAILURE_REASONS = ("cancelled", "timeout", "killed", "model_error", "interrupted", "error", "needs_decision")


@dataclass(frozen=True)
class Limits:
    """What one request may cost a host; over a limit, a request is answered
    ``limit_exceeded`` and nothing of it is stored.

    * ``max_message_bytes``: a user message's size (its JSON form, inline data
      base64-encoded); checked before the turn begins;
    * ``max_events_per_turn``: events a turn may commit; the event that would go over
      is not stored, and the run ends ``RunFailed(error, TooManyEvents)``; keep it
      above twice ``RunConfig.max_llm_calls``, so that the call budget ends a runaway
      turn first, with its error event;
    * ``max_sessions_per_user``: sessions one user may have of one app;
    * ``max_json_depth``: how deeply a JSON value a caller gives (state, a state
      delta, metadata, a message and its tool arguments) may nest (at most
      ``_validate.MAX_JSON_DEPTH``); deeper is ``invalid_request``, as is text that
      cannot be encoded (a lone surrogate): see ``check_input``.

    Artifacts have their own limit (``HostConfig.max_artifact_bytes``).
    """

    max_message_bytes: int = 1024 * 1024
    max_events_per_turn: int = 2500  # above 2 x RunConfig.max_llm_calls (500): a step makes ~2 events
    max_sessions_per_user: int = 1000
    max_json_depth: int = 32

    def check_input(self, request: Any) -> None:
        """Refuse (``invalid_request``) a request whose names or values break the input
        rules (``_validate.check_input``) with this limit's nesting depth."""
        check_input(request, self.max_json_depth)

    def message_too_large(self, message: Content) -> str | None:
        """Why ``message`` is over the limit, or None."""
        size = len(message.to_json().encode())
        if size > self.max_message_bytes:
            return f"the message has {size} bytes; the limit is {self.max_message_bytes}"
        return None


def session_key(app_name: str, user_id: str, session_id: str) -> str:
    return f"{app_name}/{user_id}/{session_id}"


def partition_of(partitions: list[Any], app_name: str, user_id: str, session_id: str) -> Any:
    """The partition (of the host's ordered list) that owns a session."""
    return partitions[partition_index(session_key(app_name, user_id, session_id), len(partitions))]


@dataclass(frozen=True)
class _SessionRef:
    app_name: str
    user_id: str
    session_id: str

    @property
    def key(self) -> str:
        return session_key(self.app_name, self.user_id, self.session_id)

    @property
    def partition_key(self) -> str:
        """Which partition holds the session (``supervision.protocol.Keyed``)."""
        return self.key


@dataclass(frozen=True)
class RunRequest(_SessionRef):
    """Run one user turn. ``reject_if_busy`` fails at once (``busy``) instead of
    waiting behind a run already in progress on the session. The messages of the run
    that are ready together (events committed in one go, and the terminal message)
    arrive in one :class:`RunMessages` envelope; one alone arrives as itself. With
    ``reply_accepted=False`` a taken request is not answered with ``RunAccepted``:
    the run's messages are the answer; a refused one still gets its ``ErrorReply``
    (``not_running`` from a partition that does not hold the session: ask the host's
    current partition). A run id is never reused: the same request again (its message
    and state delta too) for a run that ended is answered as ``FollowRun`` is, with the
    run's committed events and its end (a caller retrying after its partition died);
    another request with that id is refused ``invalid_request``.

    With ``live`` the run is a live conversation (voice, video, text): it has no
    ``new_message``; its caller sends it :class:`LiveInput` messages for as long as it
    keeps it open, and it ends with the input ``close`` (``RunDone``), a cancel, or its
    deadline (``RunConfig.timeout``, else the host's ``run_timeout``). It holds the
    session like any run: other runs of the session wait for its end. A request both
    ``live`` and a ``resume`` is refused ``invalid_request``."""

    new_message: Content = field(default_factory=lambda: Content.user(""))
    run_config: RunConfig | None = None
    #: state changes committed with the user's message (on its event, as google-adk does)
    state_delta: dict[str, Any] | None = None
    reject_if_busy: bool = False
    run_id: str = field(default_factory=lambda: f"run-{uuid.uuid4().hex}")
    version: int = PROTOCOL_VERSION
    reply_accepted: bool = True
    live: bool = False
    #: durable runs: the id of an earlier run of the session to continue from its
    #: committed events (no ``new_message``); ``decisions``: call id -> CallDecision,
    #: for the calls it stopped before (``needs_decision``)
    resume: str = ""
    decisions: dict[str, CallDecision] | None = None
    #: a session that does not exist is created for the run (empty state), as
    #: google-adk's ``auto_create_session``; without it the run is refused ``unknown_session``
    create_session: bool = False


@dataclass(frozen=True)
class ResumeRun(RunRequest):
    """A :class:`RunRequest` that resumes a run, by its own name:
    ``ResumeRun(app, user, session, resume="run-...", decisions={...})``. It is answered
    as any run request; a run that cannot be resumed (unknown, of another session, done,
    cancelled, resumed already) is refused ``invalid_request``."""

    def __post_init__(self) -> None:
        if not self.resume:
            raise ValueError("ResumeRun needs resume: the id of the run to resume")


@dataclass(frozen=True)
class FollowRun(RunRequest):
    """Join run ``run_id`` of the session, which another request started (the host,
    resuming a crashed run on its own: ``RunFailed.resumed_as``), as its caller:
    answered as any run request, with first the committed events of the run's
    invocation that come after event ``after`` (all of them when it is empty or
    unknown), then the run's messages as they come, and its end. A run that ended
    already sends its events and its end at once; the end of one that ended long ago
    (or before a restart) is rebuilt from its recorded status. A run the session never
    had is refused ``invalid_request``. Its caller from then on is the follower: the
    caller it had before hears nothing more."""

    after: str = ""


@dataclass(frozen=True)
class LiveInput(_SessionRef):
    """One input of a live run (``RunRequest(live=True)``), sent as a ``Call`` to the
    session's partition: answered ``"sent"`` (or ``"queued"``, while the run waits for
    its turn), in the order sent; ``invalid_request`` when the session has no such live
    run (it ended), ``limit_exceeded`` over ``Limits.max_message_bytes``."""

    run_id: str = ""
    request: LiveRequest = field(default_factory=lambda: LiveRequest(close=True))

    def __str__(self) -> str:
        return f"LiveInput({self.run_id})"


@dataclass(frozen=True)
class RunAccepted:
    """``session`` is the address of the partition holding the session, and
    ``session_pid`` its process (0 when not known); a partition that is gone refuses
    the next request sent there, and the caller asks the host for its partitions again."""

    run_id: str
    position: int  # 0: started now; n: n runs ahead of it
    session_pid: int
    session: Any = None


@dataclass(frozen=True)
class AdkEvent:
    """One event of a run (Elixir's ``{:adk_event, event}``); ``seq`` counts from 0."""

    run_id: str
    event: Event
    seq: int

    def __str__(self) -> str:  # Thespian describes every message it sends with str()
        return f"AdkEvent({self.run_id}, seq={self.seq})"


@dataclass(frozen=True)
class RunDone:
    run_id: str
    final_event_id: str | None
    event_count: int


@dataclass(frozen=True)
class RunFailed:
    """A run's failure. ``needs_decision``: a resumed run stopped before calls that may
    have run (``detail``: JSON ``{"pending_calls": [...]}``); resume it again with a
    ``CallDecision`` for each. ``resumed_as``: the host resumes this run on its own
    (the app's ``resume_interrupted``) as that run."""

    run_id: str
    reason: str  # one of FAILURE_REASONS
    error_type: str = ""
    detail: str = ""
    event_count: int = 0
    resumed_as: str = ""


@dataclass(frozen=True)
class RunMessages:
    """Several messages of one run (``AdkEvent``s, perhaps ending with its ``RunDone``
    or ``RunFailed``), in order, in one envelope: what was ready together for a run's
    caller (its follower's catch-up, too). Handle each as if it had come alone."""

    run_id: str
    messages: tuple[AdkEvent | RunDone | RunFailed, ...]

    def __str__(self) -> str:
        return f"RunMessages({self.run_id}, {len(self.messages)} messages)"


@dataclass(frozen=True)
class CancelRun(_SessionRef):
    run_id: str = ""


@dataclass(frozen=True)
class CreateSession(_SessionRef):
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GetSession(_SessionRef):
    pass


@dataclass(frozen=True)
class GetState(_SessionRef):
    pass


@dataclass(frozen=True)
class DeleteSession(_SessionRef):
    pass


@dataclass(frozen=True)
class UpdateState(_SessionRef):
    """Change a session's state outside a run (google-adk's PATCH of a session): the
    session's partition commits an event of author ``user`` carrying ``state_delta`` (a key
    set to None is deleted) and answers the session as ``GetSession`` would."""

    state_delta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RewindSession(_SessionRef):
    """Take a session back to before invocation ``rewind_before_invocation_id``
    (google-adk's ``Runner.rewind_async``): the session's partition builds the rewind
    event from its own view (``_rewind.rewind_event``: the state changes since undone)
    and commits it as any event, answering the session as ``GetSession`` would.
    ``artifact_delta`` holds the artifact versions the caller already saved back (the
    partition holds no artifacts), computed from the session's first
    ``expected_events`` events: a session that has more by then, or a run in progress,
    is refused ``busy``; an invocation the session never had ``invocation_not_found``."""

    rewind_before_invocation_id: str = ""
    artifact_delta: dict[str, int] = field(default_factory=dict)
    expected_events: int = 0


@dataclass(frozen=True)
class ListSessions:
    """A user's sessions of an app. Any partition answers it (from the store)."""

    app_name: str
    user_id: str

    @property
    def partition_key(self) -> str:
        return f"{self.app_name}/{self.user_id}"


@dataclass(frozen=True)
class RunInfo:
    """A run as the store records it: its session, status, invocation (a resumed run
    continues its original's), the run it resumes and how many resumes lie behind it."""

    run_id: str
    app_name: str
    user_id: str
    session_id: str
    status: str
    invocation_id: str
    resumes: str | None = None
    attempt: int = 0
    #: the user's message and state delta (``store.request_text``): a run killed before it
    #: committed its user event is resumed from them
    request: str | None = None


@dataclass(frozen=True)
class LastRun(_SessionRef):
    """The session's latest run as the store recorded it (``store.RunInfo``: its status,
    whether it resumed another, its attempt), or None. Any partition answers it."""


@dataclass(frozen=True)
class GetTrace:
    """The trace of a session's last turns (``list[tracing.TraceSpan]``, empty when none
    is kept). Any partition answers it; ``user_id`` None: whichever user's session
    has that id (google-adk's trace route names no user)."""

    app_name: str
    session_id: str
    user_id: str | None = None

    @property
    def partition_key(self) -> str:
        return f"{self.app_name}/{self.session_id}"


@dataclass(frozen=True)
class GetEventTrace:
    """The span of the model call that made event ``event_id`` (``tracing.TraceSpan``),
    or None. Any partition answers it; ``user_id`` as in ``GetTrace``."""

    app_name: str
    event_id: str
    user_id: str | None = None

    @property
    def partition_key(self) -> str:
        return f"{self.app_name}/{self.event_id}"


@dataclass(frozen=True)
class SessionInfo:
    app_name: str
    user_id: str
    id: str
    state: dict[str, Any]
    events: list[Event]
    last_update_time: float


# -- sessions and runs as actors: seen, crashed, reset, killed one at a time ---------------------


@dataclass(frozen=True)
class RunStatus:
    """A run of a session, as its partition sees it: ``running`` (on a worker) or
    ``waiting`` (queued behind another); ``agent`` made its last event; ``events`` it
    has sent; ``started`` (wall clock) when it began, or was queued."""

    run_id: str
    state: str
    agent: str | None
    events: int
    started: float


@dataclass(frozen=True)
class SessionStatus:
    """A session as an actor: ``state`` is ``idle`` or ``running`` while its partition
    holds it, ``passivated`` while it does not (its next request reads it from the
    store), ``failed`` once it crashed more often than its restart intensity allows
    (it answers ``session_failed`` until it is reset); ``restarts`` counts its crashes
    since it was last reset, ``last_crash`` says why the last one happened."""

    app_name: str
    user_id: str
    session_id: str
    state: str
    restarts: int = 0
    last_crash: str | None = None
    runs: tuple[RunStatus, ...] = ()

    @property
    def key(self) -> str:
        return session_key(self.app_name, self.user_id, self.session_id)


@dataclass(frozen=True)
class LinePath:
    """Sent to one partition: where a Runner on its machine may connect a direct line
    (a Unix socket's path), or None when it has none."""


@dataclass(frozen=True)
class LiveWorkers:
    """Sent to one partition (tests and tools): the pids of its run workers that answered ``Init``."""


@dataclass(frozen=True)
class WorkerRuns:
    """Sent to one partition (tests and tools): each live run worker's pid -> the runs it holds."""


@dataclass(frozen=True)
class HeldKeys:
    """Sent to one partition (tests and tools): the keys of the sessions it holds in
    memory, sorted (:class:`HeldSessions` pages them with their status)."""


@dataclass(frozen=True)
class HeldSessions:
    """Sent to one partition: ``(total, [SessionStatus])``, the sessions it holds in
    memory and those that crashed lately (failed or not), running ones first, then by
    key, ``limit`` of them from ``offset`` (a partition may hold thousands). With
    ``search``, only those whose key (``app/user/session``) or one of whose runs' ids
    contains it, and ``total`` counts those. A bad field is ``invalid_request``."""

    offset: int = 0
    limit: int = 100
    search: str = ""


@dataclass(frozen=True)
class CrashSession(_SessionRef):
    """Crash the session as a failing handler would (fault injection: ``adk-actors chaos
    kill``): its view is dropped and read from the store on its next request, its runs
    end ``interrupted`` with ``reason``, and the crash counts toward its restart
    intensity. Answered with the session's ``SessionStatus`` after the crash."""

    reason: str = "crashed on request"


@dataclass(frozen=True)
class ResetSession(_SessionRef):
    """A failed session serves again (its crash count starts from nothing); answered
    ``"reset"`` (also when it was not failed)."""


@dataclass(frozen=True)
class KillRun(_SessionRef):
    """End run ``run_id`` of the session at once, ``RunFailed(killed, RunKilled)``, as a
    kill -9 of a process of its own would; the other runs of its worker go on. A waiting
    run is taken off the queue. Answered ``"killed"``; ``invalid_request`` if the session
    has no such run."""

    run_id: str = ""


@dataclass(frozen=True)
class WatchSession(_SessionRef):
    """Sent as a ``Call`` to the session's partition: from now on its sender gets a
    :class:`SessionLifecycle` at each change in the session's life, until it sends this
    again with ``stop=True`` (or the partition stops: a watcher that sees its partition
    gone watches the restarted one, as ``Runner.watch_session`` does). Answered with
    the session's :class:`SessionStatus` (``passivated``: not held in memory now)."""

    stop: bool = False


#: What a :class:`SessionLifecycle` says happened.
LIFECYCLE_EVENTS = ("activating", "activated", "activation_failed", "crashed", "restarted", "failed", "reset",
                    "passivated", "deleted")


@dataclass(frozen=True)
class SessionLifecycle:
    """A change in a watched session's life (``event``, one of ``LIFECYCLE_EVENTS``):
    ``activating`` (a request came for it while its partition does not hold it: it is
    read from the store, within that request's handling, so no other request sees it
    half-read), then ``activated`` (held in its partition's memory; also when created),
    ``restarted`` (the same, for its first activation after a crash: ``reason`` is the
    crash's) or ``activation_failed`` (``reason``: ``unknown_session``, or
    ``session_unreadable`` and why); ``crashed`` (``reason``: it is read from the store
    again on its next request), ``failed`` (crashed beyond its restart intensity),
    ``reset``, ``passivated`` (let go after ``idle_timeout``), ``deleted``; ``at`` is
    the wall clock."""

    app_name: str
    user_id: str
    session_id: str
    event: str
    reason: str | None = None
    at: float = 0.0
