"""The wire protocol between servers, supervisors and callers.

All messages are small frozen dataclasses, picklable across Thespian processes.
``PROTOCOL_VERSION`` is carried in :class:`Init` so a supervisor and a child built
from different releases notice it.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from typing import Any

from ._spec import ChildSpec

PROTOCOL_VERSION = 1


class ExitKind(enum.StrEnum):
    NORMAL = "normal"
    SHUTDOWN = "shutdown"
    CRASH = "crash"
    KILLED = "killed"


@dataclass(frozen=True)
class ExitReason:
    """Why a process ended. ``normal`` and ``shutdown`` are the non-abnormal reasons."""

    kind: ExitKind
    detail: str = ""

    @property
    def abnormal(self) -> bool:
        return self.kind not in (ExitKind.NORMAL, ExitKind.SHUTDOWN)

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.detail}" if self.detail else self.kind.value


NORMAL = ExitReason(ExitKind.NORMAL)
SHUTDOWN = ExitReason(ExitKind.SHUTDOWN)
KILLED = ExitReason(ExitKind.KILLED)


def new_ref() -> str:
    return uuid.uuid4().hex


# -- lifecycle: supervisor <-> child --------------------------------------------------


@dataclass(frozen=True)
class Init:
    """First message to a server: who supervises it and what ``init`` receives."""

    args: Any = None
    supervisor: Any = None  # ActorAddress | None
    child_id: str | None = None
    registry: Any = None  # ActorAddress | None
    version: int = PROTOCOL_VERSION

    def __str__(self) -> str:
        return f"Init({type(self.args).__name__}, child_id={self.child_id!r})"


@dataclass(frozen=True)
class InitOk:
    pid: int
    ignored: bool = False
    child_id: str | None = None  # the id its Init gave it: lets a supervisor starting many find it at once
    node: str | None = None  # the machine (``node_id()``) the pid belongs to: a pid means something only there


@dataclass(frozen=True)
class InitFailed:
    reason: str


@dataclass(frozen=True)
class AdvanceClock:
    """Move a server's manual clock ``seconds`` ahead (see ``GenServer.clock``): every
    timer due by then fires, in order, before the answer (how many fired)."""

    seconds: float


@dataclass(frozen=True)
class OsPid:
    """Asks any GenServer which OS process runs it: answered with its pid, at once, by
    the server itself (before ``check_request`` and ``handle_call``)."""


@dataclass(frozen=True)
class PidSpace:
    """Asks any GenServer whose pids it sees: answered with its ``pid_space()`` (boot id,
    pid namespace; None off Linux), at once, as :class:`OsPid` is. A caller whose pid
    space is the same may look at, or signal, the pids it is told."""


@dataclass(frozen=True)
class Shutdown:
    """A supervisor asks its child to stop (reason ``shutdown``)."""


@dataclass(frozen=True)
class Exiting:
    """A child tells its supervisor why it is about to exit."""

    reason: ExitReason


# -- calls ----------------------------------------------------------------------------
#
# Thespian builds a debug description of every message it sends and receives with
# ``str(message)``, whatever the log level; the envelopes below keep that to a type
# name (a ``repr`` of the payload, events and all, would cost more than the send).


@dataclass(frozen=True)
class Call:
    """A request that expects exactly one :class:`Reply` or :class:`ErrorReply`.

    ``reply_to`` lets a server forward a call; by default the reply goes to the sender.
    ``watch``: the caller watches whoever has its call; a server that forwards it tells
    the caller so (:class:`Handed`), and passes ``watch`` on. ``deadline``: when the
    caller stops waiting for the answer, in epoch seconds of its wall clock
    (``time.time()``), or None; passed on with the call (``CallerRef.deadline``). A
    server answers a call whose deadline is anything else (a string, a bool, NaN)
    ``bad_request`` at once, before any handler sees it.
    Absolute, not a budget: the time a call waits in a busy server's socket is the
    time that matters, and the server cannot see it (see ``CallerRef.gave_up``).
    """

    request: Any
    ref: str = field(default_factory=new_ref)
    reply_to: Any = None
    watch: bool = False
    deadline: float | None = None

    def __str__(self) -> str:
        return f"Call({type(self.request).__name__}, ref={self.ref})"


@dataclass(frozen=True)
class Handed:
    """To the caller of a :class:`Call` with ``watch``: the server forwarded the call to
    ``to``, which answers it now (OTP's monitor, moved along): a caller that watches
    its server for death watches ``to`` from now on (:func:`~supervision.call`)."""

    ref: str
    to: Any


@dataclass(frozen=True)
class Cast:
    request: Any

    def __str__(self) -> str:
        return f"Cast({type(self.request).__name__})"


@dataclass(frozen=True)
class Reply:
    ref: str
    value: Any

    def __str__(self) -> str:
        return f"Reply({type(self.value).__name__}, ref={self.ref})"


@dataclass(frozen=True)
class ErrorReply:
    ref: str | None
    code: str
    detail: str = ""


# -- supervisor requests (carried in Call.request) -----------------------------------


@dataclass(frozen=True)
class WhichChildren:
    pass


@dataclass(frozen=True)
class CountChildren:
    pass


@dataclass(frozen=True)
class StartChild:
    spec: ChildSpec
    key: str | None = None  # partition key for a PartitionSupervisor


@dataclass(frozen=True)
class TerminateChild:
    id: str


@dataclass(frozen=True)
class RestartChild:
    id: str


@dataclass(frozen=True)
class DeleteChild:
    id: str


@dataclass(frozen=True)
class GetChildSpec:
    id: str


@dataclass(frozen=True)
class GetRegistry:
    pass


@dataclass(frozen=True)
class ChildInfo:
    """One row of ``which_children``: OTP's ``{Id, Child, Type, Modules}`` and more."""

    id: str
    status: str  # running | restarting | starting | stopping | undefined
    type: str
    address: Any = None
    pid: int | None = None
    restarts: int = 0
    name: str | None = None
    start: str = ""
    last_exit: str | None = None  # why its last process ended (once it was restarted)


@dataclass(frozen=True)
class ChildCounts:
    specs: int
    active: int
    supervisors: int
    workers: int


@dataclass(frozen=True)
class Started:
    id: str
    address: Any
    pid: int | None


# -- registry requests ----------------------------------------------------------------


@dataclass(frozen=True)
class Register:
    name: str
    address: Any
    pid: int | None = None
    node: str | None = None  # machine identity; pids are only checked on the same node


@dataclass(frozen=True)
class Unregister:
    name: str
    address: Any


@dataclass(frozen=True)
class WhereIs:
    """Look a name up; ``wait`` > 0 holds the reply until it is registered or time is up."""

    name: str
    wait: float = 0.0


@dataclass(frozen=True)
class Lookup:
    """Like :class:`WhereIs`, answered with ``(address, pid, node)`` or None."""

    name: str
    wait: float = 0.0


@dataclass(frozen=True)
class ToPartitions:
    """Cast to a :class:`~supervision.lowlevel.PartitionSupervisor`: ``message`` is cast to every
    running partition now, and again to each partition that (re)starts later, before
    the calls held for it (the latest message of each ``topic`` is kept): a setting
    every partition must have, such as a cluster's membership."""

    topic: str
    message: Any


@dataclass(frozen=True)
class Registered:
    """Ask for the whole name table."""
