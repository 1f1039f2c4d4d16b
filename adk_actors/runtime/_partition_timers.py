"""A session partition's timers and its pool's, one type each: what it asks the
partition (``SessionPartition.handle_timeout``) or the pool (``RunPool.handle_timeout``)
to do when it fires. Sessions arm three of them through their owner
(``SessionOwner.send_after``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CancelGraceOver", "CatchUp", "CheckWorkers", "FlushLines", "ForwardRecheck", "KillCondemned", "MoveHome",
           "PassivateIdle", "RenewLeases", "ResumeInterrupted", "RunDeadline", "SendLater", "ShrinkWorkers", "SlowToStop", "StalledRun",
           "WorkerInitOverdue"]


@dataclass(frozen=True)
class PassivateIdle:
    """Drop the sessions idle for ``idle_timeout``."""


@dataclass(frozen=True)
class ResumeInterrupted:
    """Activate these sessions (app, user, session): their runs that died with this
    partition's earlier self are resumed (their app's ``resume_interrupted``)."""

    sessions: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class RenewLeases:
    """Renew the held sessions' leases; drop those another holder took."""


@dataclass(frozen=True)
class ForwardRecheck:
    """Look at the host of a request's holder again, ``FORWARD_RECHECK`` after forwarding it."""

    holder: str
    caller: Any
    ref: str
    held: str  # what SessionLeased said


@dataclass(frozen=True)
class MoveHome:
    """Let go of the held sessions whose home is another live member of the cluster,
    once idle (see SessionPartition._move_home)."""


@dataclass(frozen=True)
class ShrinkWorkers:
    """Stop the run workers idle beyond the ones kept (``runs_per_worker``)."""


@dataclass(frozen=True)
class FlushLines:
    """Offer again what the Runners' direct lines did not take at once."""


@dataclass(frozen=True)
class SendLater:
    """Send ``message`` to ``to`` (a run's end for a caller that asked for it again)."""

    message: Any
    to: Any


@dataclass(frozen=True)
class RunDeadline:
    """Run ``run_id`` of session ``key`` reached its deadline."""

    key: str
    run_id: str


@dataclass(frozen=True)
class CancelGraceOver:
    """Run ``run_id`` of session ``key`` did not stop within the host's ``run_stop_grace``
    of its cancel."""

    key: str
    run_id: str


@dataclass(frozen=True)
class CatchUp:
    """Send the new follower of run ``run_id`` of session ``key`` what was held for it."""

    key: str
    run_id: str


@dataclass(frozen=True)
class StalledRun:
    """Run ``run_id``, which must stop, may still run on the worker at ``worker`` once its
    grace is over: that worker is then killed (``RunWorkers``)."""

    run_id: str
    worker: Any


@dataclass(frozen=True)
class SlowToStop:
    """Run ``run_id``, told to stop a moment ago, may still run on the worker at
    ``worker``: that worker then takes no new turn (``RunWorkers``)."""

    run_id: str
    worker: Any


@dataclass(frozen=True)
class CheckWorkers:
    """(The pool's) the run workers' health check is due."""


@dataclass(frozen=True)
class WorkerInitOverdue:
    """(The pool's) the worker at ``address`` should have answered its Init by now."""

    address: Any


@dataclass(frozen=True)
class KillCondemned:
    """(The pool's) the worker at ``address``, condemned, is killed now if it is still there."""

    address: Any
