"""Health checks: a parent finds a child that is alive but no longer answers.

A process that is stopped (``kill -STOP``), deadlocked, or stuck in one handler (a
blocking call that never returns) keeps its pid: no exit is ever reported, and its
callers wait. So a parent asks each running child, every ``interval`` seconds, the
:data:`HEALTH_PING` call; every :class:`~supervision.GenServer` answers it at once,
between two messages, whatever it is doing (before its ``init`` has run, or while
it stops, it answers with an error, which is an answer too). A child with a ping
unanswered for ``timeout`` seconds is *unresponsive*: its parent logs it, records
the reason, and kills it (SIGKILL), and its ordinary restart follows.

Cost, per child: one small message each way per ``interval`` (with the defaults, 1 s:
measured at ~0.25 ms of its parent's CPU per child per second: bench/supervision.py). A child is found
``timeout`` to ``timeout + interval`` seconds after it stopped answering (5-6 s with
the defaults). Only one ping per child is out at a time, so a slow child is never
flooded. A handler that legitimately runs longer than ``timeout`` must not block
the actor's main thread (the Thespian rule: run long work on a thread).

:class:`HealthMonitor` is the bookkeeping, with no actor in it: a supervisor uses it
for its children (``SupervisorSpec.health``), and any parent that runs children of
its own (as adk-actors' session partitions do their run workers) can use it the
same way: ``ping`` from a timer, ``answered`` with every reply, ``overdue`` to
learn whom to kill, ``forget`` when a child is gone.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Final

from ._messages import Call
from ._spec import HealthCheck

__all__ = ["HEALTH_PING", "HealthCheck", "HealthMonitor"]

#: The request of a health check's call. Every GenServer answers it with ``"ok"``
#: before its own ``check_request`` and ``handle_call`` see anything.
HEALTH_PING: Final = "health-ping"


@dataclass
class _Pending:
    ref: str
    since: float


@dataclass
class HealthMonitor:
    """Which children were pinged when, and which answered (see the module). Keys are
    the parent's own handles of its children (hashable); times are the parent's clock."""

    check: HealthCheck
    _pending: dict[Hashable, _Pending] = field(default_factory=dict)
    _refs: dict[str, Hashable] = field(default_factory=dict)

    def ping(self, key: Hashable, now: float) -> Call | None:
        """The call to send child ``key`` now, or None while its last ping is
        unanswered (one at a time)."""
        if key in self._pending:
            return None
        message = Call(HEALTH_PING)
        self._pending[key] = _Pending(message.ref, now)
        self._refs[message.ref] = key
        return message

    def answered(self, ref: str | None) -> bool:
        """A reply with ``ref`` came: True if it answers a ping (the child is well)."""
        if ref is None:
            return False
        key = self._refs.pop(ref, None)
        if key is None:
            return False
        pending = self._pending.get(key)
        if pending is not None and pending.ref == ref:
            del self._pending[key]
        return True

    def overdue(self, now: float) -> list[Hashable]:
        """The children whose ping has gone unanswered ``timeout`` seconds (each is
        forgotten: whoever kills it pings its next incarnation afresh)."""
        late = [key for key, pending in self._pending.items() if now - pending.since >= self.check.timeout]
        for key in late:
            self.forget(key)
        return late

    def forget(self, key: Hashable) -> None:
        """Child ``key`` is gone (or restarted): its unanswered ping no longer counts."""
        pending = self._pending.pop(key, None)
        if pending is not None:
            self._refs.pop(pending.ref, None)
