"""What a supervisor knows, as types: its record of each child and that child's
status, what a job waits for, and the timers it sets itself.

A child's life, as OTP's supervisor sees it (:class:`ChildStatus`): UNDEFINED until
it is started; STARTING once forked and sent ``Init`` (a child being restarted stays
RESTARTING until it is up); RUNNING on its ``InitOk``, UNDEFINED again if its start
fails or it ignores it; STOPPING once asked to stop, UNDEFINED when gone; DEAD when its
process ends unasked, after which the exit job makes it RESTARTING (one pending
restart will start it) or UNDEFINED (or forgets it).

A job (see :mod:`supervision._supervisor`) yields a :class:`Wait`: for one child's
answer to ``Init`` (:attr:`WaitFor.START`), for several at once (``STARTS``), for one
child's exit (``EXIT``) or several (``EXITS``). The supervisor's timers are small frozen
dataclasses, one type per timer, matched by type in ``handle_timeout``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ._messages import ChildInfo, ExitReason
from ._spec import ChildSpec
from ._timing import BackoffState

__all__ = [
    "LIVE_STATUSES",
    "STARTED",
    "TIMEOUT",
    "ChildRecord",
    "ChildStatus",
    "HealthCheckDue",
    "ProcessEnded",
    "RestartDue",
    "Wait",
    "WaitFor",
    "WaitTimedOut",
]


class ChildStatus(enum.Enum):
    """Where a child is in its life; the value is what ``which_children`` shows."""

    UNDEFINED = "undefined"  # no process, none wanted now (never started, stopped, ignored)
    STARTING = "starting"  # forked and sent Init, no answer yet
    RUNNING = "running"
    STOPPING = "stopping"  # asked to stop (or killed), not gone yet
    DEAD = "dead"  # its process ended; the exit job will decide what happens
    RESTARTING = "restarting"  # one pending restart (``ChildRecord.restart_ticket``) will start it


#: The statuses in which a child has a process the supervisor speaks to: its address is
#: shown, and the health check pings it.
LIVE_STATUSES = frozenset({ChildStatus.RUNNING, ChildStatus.STOPPING})


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: A wait's answer when its timeout came first.
TIMEOUT = _Marker("TIMEOUT")
#: A ``STARTS`` wait's answer for a child settled as running when its InitOk came.
STARTED = _Marker("STARTED")


class WaitFor(enum.Enum):
    """What a :class:`Wait` waits for."""

    START = "start"  # one child's answer to Init
    STARTS = "starts"  # several children's answers (``Wait.answers``)
    EXIT = "exit"  # one child's exit
    EXITS = "exits"  # several children's exits


@dataclass
class Wait:
    """What a job waits for, until ``timeout`` seconds (None: no limit); ``seq`` tells
    its timer from an earlier wait's."""

    kind: WaitFor
    children: tuple[ChildRecord, ...]
    timeout: float | None
    seq: int = 0
    answers: dict[str, Any] = field(default_factory=dict)  # STARTS: child id -> InitOk | InitFailed | STARTED


class ChildRecord:
    """The supervisor's record of one child spec and its current process."""

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.address: Any = None
        self.pid: int | None = None
        self.status = ChildStatus.UNDEFINED
        self.incarnation = 0
        self.restarts = 0
        self.reported: ExitReason | None = None  # the reason its last words (Exiting) gave
        self.stop_requested = False
        self.killed = False
        self.exit_reason: ExitReason | None = None
        self.local = False  # its process runs on this machine (it can be watched, checked, killed)
        self.backoff = BackoffState(spec.backoff) if spec.backoff else None
        #: The pending restart that will start this child (while RESTARTING): each new
        #: one a child joins replaces the one it was in (see ``Supervisor._schedule_restart``).
        self.restart_ticket = 0

    @property
    def alive(self) -> bool:
        """Whether it has a process (starting, running or on its way out)."""
        return self.address is not None

    @property
    def process_tag(self) -> ProcessEnded:
        """The tag its current process is monitored under (and the timer it becomes)."""
        return ProcessEnded(self.spec.id, self.incarnation)

    def info(self) -> ChildInfo:
        return ChildInfo(
            id=self.spec.id,
            status=self.status.value,
            type=self.spec.type.value,
            address=self.address if self.status in LIVE_STATUSES else None,
            pid=self.pid,
            restarts=self.restarts,
            name=self.spec.name,
            start=self.spec.start_path,
            last_exit=str(self.exit_reason) if self.exit_reason is not None and self.restarts else None,
        )


# -- the supervisor's timers -------------------------------------------------------------


@dataclass(frozen=True)
class WaitTimedOut:
    """The timeout of wait number ``seq`` (void if that wait is over)."""

    seq: int


@dataclass(frozen=True)
class ProcessEnded:
    """Incarnation ``incarnation`` of child ``child_id`` ended (its pidfd fired): the
    monitor's tag, and the timer that gives Thespian's own report a grace period."""

    child_id: str
    incarnation: int


@dataclass(frozen=True)
class HealthCheckDue:
    """Time for the next health check (``SupervisorSpec.health``)."""


@dataclass(frozen=True)
class RestartDue:
    """Pending restart ``ticket``'s backoff is over: start it."""

    ticket: int
