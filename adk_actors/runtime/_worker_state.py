"""What a partition's checkout of run workers (``_run_workers``) keeps and needs.

:class:`WorkerLimits`: how busy the workers may be (from the host's config).
:class:`WorkerHost`: what the checkout needs of its partition (the partition
implements it). :class:`Worker`: what the checkout keeps of one worker, its flags set
in the order of a worker's life: connected (its hello: address, pid, pool); given
turns (``runs``) with the history it has of each session (``known``); ``retired``
(no new turn: stopped for being idle, or killed); ``stop_asked`` of its pool; and
``killed`` here (a turn it held would not stop) or ``unresponsive`` (its pool's health
check condemned it), which name how its remaining turns end once its line ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ._link import RunLink
from ._run_protocol import RunOutput
from ._session import CANCEL_GRACE, Session, SessionRun

__all__ = ["Worker", "WorkerHost", "WorkerLimits"]


@dataclass(frozen=True)
class WorkerLimits:
    """How busy the workers may be (see the module)."""

    run_workers: int = 2
    runs_per_worker: int = 0  # 0: no limit; 1: a process per turn
    max_run_workers: int = 32
    stop_grace: float = CANCEL_GRACE  # a turn that must stop may take this long before its worker is killed


class WorkerHost(Protocol):
    """What the workers' checkout needs from its partition."""

    myAddress: Any
    slog: Any

    @property
    def stopping(self) -> bool: ...

    def clock(self) -> float: ...

    def send(self, address: Any, message: Any) -> None: ...

    def send_after(self, seconds: float, payload: Any = None) -> None: ...

    def lines_changed(self) -> None:
        """The workers' lines changed (``RunWorkers.fds``): watch them again."""

    def run_output(self, session: Session, run: SessionRun, output: RunOutput) -> None:
        """Commit and relay the output of a live run (the partition's job)."""


@dataclass
class Worker:
    address: Any
    link: RunLink
    pid: int
    pool: Any  # the pool that started it
    runs: set[str] = field(default_factory=set)  # run ids it was given and has not ended
    known: dict[str, tuple[int, str | None]] = field(default_factory=dict)  # session key -> history sent
    retired: bool = False  # no new turn (its pool was told)
    stop_asked: bool = False  # its pool was asked to end it
    idle_since: float = 0.0  # the partition's clock when its last turn ended
    unresponsive: bool = False  # condemned by its pool's health check
    killed: bool = False  # killed here: a turn it held did not stop within its grace
