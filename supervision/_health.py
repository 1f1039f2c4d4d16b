"""Health checks: a parent finds a child that is alive but no longer answers.

A process that is stopped (``kill -STOP``), deadlocked, or stuck in one handler (a
blocking call that never returns) keeps its pid: no exit is ever reported, and its
callers wait. So a parent asks each running child, every ``interval`` seconds, the
:data:`HEALTH_PING` call; every :class:`~supervision.GenServer` answers it at once,
between two messages, whatever it is doing (before its ``init`` has run, or while
it stops, it answers with an error, which is an answer too). That answer is the
child's message loop's heartbeat.

A child that leaves a ping unanswered is not yet dead: under CPU load a handler doing
legitimate work (an import, an SDK's start, a store migration) may take longer than
the timeout. So, with the child's pid known, its parent also reads the process's CPU
time (``utime + stime`` of ``/proc/PID/stat``) when it pings, and decides, once the
ping has gone unanswered ``timeout`` seconds:

1. the process is stopped (state ``T``/``t``, as after ``kill -STOP``): *stuck*;
2. its CPU time did not advance during the last ``timeout`` seconds (blocked in a
   call, deadlocked, starved of nothing but its own progress): *stuck*. Until it is
   first found busy, its CPU time is read at every check, and this window runs from
   the last check that saw it advance: the work a child does after its ping was sent
   (the rest of the message it was handling, the one it then blocks in) does not make
   a blocked child busy, and costs no second window;
3. its CPU time advanced since the last check, its ping unanswered a whole window:
   *busy*. From then on it gets windows end to end (its CPU time read when each ends:
   used in it, it is busy still, and gets another), and is judged by 1-3 at each end;
4. whatever it does, a ping unanswered ``HealthCheck.limit`` seconds (its
   ``ceiling``, 12 x ``timeout`` unless set: a minute with the defaults) is the end:
   a handler that spins for ever is *stuck* too.

Under load a parent's ``scale`` (:func:`load_scaled` in supervisors and run pools)
stretches the windows of rules 2-3 and the default ceiling of rule 4 by the load per
CPU (at most ten times): at load 80 on 2 cores a process gets 1/40 of a CPU, a 3 s
import takes two minutes, and a parent starved as long may judge an idle child
before its ping has even reached it. Rule 1 is not stretched: a stopped child is
found at ``timeout`` whatever the load.

A stuck child is *unresponsive*: its parent logs it, records the reason (each reason
starts ``unresponsive:``), and kills it (SIGKILL), and its ordinary restart follows.
A process that has already ended (gone, or a zombie) is left to the exit its parent
is told of. Without a pid (a remote child, or a caller that gives none) only the
timeout counts, as before. CPU time counts every thread of the process: a child whose
main thread is stuck while another thread spins is taken for busy until the ceiling.

Cost, per child: one small message each way per ``interval``, and one read of
``/proc/PID/stat`` (with the defaults, 1 s: measured at ~0.25 ms of its parent's CPU
per child per second for the messages: bench/supervision_bench.py). A stuck child is found
``timeout`` to ``timeout + interval`` seconds after it stopped answering (5-6 s with
the defaults), or after the last check that saw its CPU time advance; a busy one
that gets stuck, within two windows of its last CPU tick. While a ping is
unanswered, and until the child is found busy, ``/proc/PID/stat`` is read at every
check (only for such children: a well one has answered by the next check). Only one
ping per child is out at a time, so a slow child is never flooded.
A handler should still not block the actor's main thread (the Thespian rule: run long
work on a thread): its callers, and the pings, wait for it.

:class:`HealthMonitor` is the bookkeeping, with no actor in it and no clock of its own
(every method takes ``now``; the CPU reader is passed in, :func:`read_progress` by
default): a supervisor uses it for its children (``SupervisorSpec.health``), and any
parent that runs children of its own (as adk-actors' session partitions do their run
workers) can use it the same way: ``ping`` from a timer, ``answered`` with every
reply, ``judge`` (or ``overdue``) to learn whom to kill, ``forget`` when a child is
gone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Final, Literal

from ._messages import Call
from ._spec import HealthCheck

__all__ = ["HEALTH_PING", "HealthCheck", "HealthMonitor", "HealthVerdict", "ProcessProgress", "load_scaled",
           "read_load", "read_progress"]

#: The request of a health check's call. Every GenServer answers it with ``"ok"``
#: before its own ``check_request`` and ``handle_call`` see anything.
HEALTH_PING: Final = "health-ping"

#: A deadline :func:`load_scaled` stretches at most this many times.
LOAD_SCALE_CAP: Final = 10.0

#: ``/proc/PID/stat`` states of a process that will not run until it is continued.
_STOPPED: Final = frozenset("Tt")
#: ... and of one that has ended (its parent has not reaped it yet).
_ENDED: Final = frozenset("ZXx")


@dataclass(frozen=True)
class ProcessProgress:
    """What ``/proc/PID/stat`` says of a process: its one-letter ``state`` and its
    ``cpu`` time so far (user + system, in clock ticks, every thread counted)."""

    state: str
    cpu: int


def read_progress(pid: int) -> ProcessProgress | None:
    """Process ``pid``'s :class:`ProcessProgress` from ``/proc/PID/stat``; None if it is gone
    (or the file cannot be read or parsed)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b") ", 1)[1].split()
        return ProcessProgress(fields[0].decode(), int(fields[11]) + int(fields[12]))
    except (OSError, IndexError, ValueError):
        return None


def read_load() -> tuple[float, int]:
    """This machine's 1-minute load average and its number of CPUs (at least 1);
    OSError when the load average cannot be read."""
    return os.getloadavg()[0], os.cpu_count() or 1


def load_scaled(seconds: float, read: Callable[[], tuple[float, int]] = read_load) -> float:
    """``seconds`` times this machine's 1-minute load average per CPU when that is above
    1 (a process gets only its share of the CPUs: a start that takes 1 s idle takes
    20 s at load 40 on 2 cores), at most ``LOAD_SCALE_CAP`` times; ``seconds`` as it
    is when the load cannot be read. For deadlines of work that must be done whatever
    the load (a child's start), and the no-progress windows of health checks
    (``HealthMonitor.scale``).

    In order: ``read()`` (:func:`read_load` unless given: a test passes its own) gives
    the load average and the CPUs; an OSError from it, or a count of CPUs below 1,
    counts as no load (factor 1); the factor is the load per CPU, at least 1 and at
    most ``LOAD_SCALE_CAP``."""
    try:
        load, cpus = read()
    except OSError:
        return float(seconds)
    per_cpu = load / cpus if cpus >= 1 else 1.0
    return seconds * min(max(per_cpu, 1.0), LOAD_SCALE_CAP)


@dataclass(frozen=True)
class HealthVerdict:
    """One child the check found late: ``stuck`` (kill it, for ``reason``) or ``busy``
    (it uses CPU; reported once each time it is first found so, and left alone)."""

    key: Hashable
    kind: Literal["stuck", "busy"]
    reason: str


@dataclass
class _Pending:
    ref: str
    since: float
    pid: int | None = None
    mark: float = 0.0  # the start of the window the CPU time is compared over
    cpu: int | None = None  # the CPU time at ``mark`` (None: unknown)
    busy: bool = False  # found busy already (in this ping's wait): windows end to end from then


@dataclass
class HealthMonitor:
    """Which children were pinged when, which answered, and whether the silent ones
    still use CPU (see the module). Keys are the parent's own handles of its children
    (hashable); times are the parent's clock; ``read`` gives a pid's progress."""

    check: HealthCheck
    read: Callable[[int], ProcessProgress | None] = read_progress
    #: Stretches the no-CPU window and the default ceiling (rules 2-4), not the first
    #: judgement (a stopped child is found at ``timeout``): ``load_scaled`` in a parent
    #: on a machine whose CPUs are shared (a child idle because its ping has not
    #: reached it yet, its parent starved, is not stuck), the identity by default.
    scale: Callable[[float], float] = float
    _pending: dict[Hashable, _Pending] = field(default_factory=dict)
    _refs: dict[str, Hashable] = field(default_factory=dict)

    def ping(self, key: Hashable, now: float, pid: int | None = None) -> Call | None:
        """The call to send child ``key`` now, or None while its last ping is
        unanswered (one at a time). With ``pid``, the process's CPU time is read now:
        the start of the first window it is judged over."""
        if key in self._pending:
            return None
        message = Call(HEALTH_PING)
        progress = self.read(pid) if pid is not None else None
        self._pending[key] = _Pending(message.ref, now, pid, now, progress.cpu if progress is not None else None)
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

    def judge(self, now: float) -> list[HealthVerdict]:
        """Judge every child whose ping is unanswered (the rules of the module, in
        order). Until a child is found busy, its CPU time is read at every call, and a
        reading that moved starts its window afresh (rule 2); it is judged once its
        ping has gone unanswered ``timeout`` seconds. A ``stuck`` one is forgotten
        (whoever kills it pings its next incarnation afresh); a ``busy`` one is in the
        list only the first time it is found busy in this wait, and from then on is
        read and judged at each window's end."""
        verdicts: list[HealthVerdict] = []
        timeout, window = float(self.check.timeout), self.scale(self.check.timeout)
        limit = self.check.limit if self.check.ceiling is not None else max(self.scale(self.check.limit), window)
        for key, pending in list(self._pending.items()):
            waited = now - pending.since
            verdict = self._judge_one(key, pending, now, waited, (timeout, window, limit))
            if verdict is not None:
                verdicts.append(verdict)
        for verdict in verdicts:
            if verdict.kind == "stuck":
                self.forget(verdict.key)
        return verdicts

    def _judge_one(self, key: Hashable, pending: _Pending, now: float, waited: float,
                   limits: tuple[float, float, float]) -> HealthVerdict | None:
        """One child's verdict now (None: none yet), by the rules of the module; moves
        its window as :meth:`judge` says."""
        timeout, window, limit = limits
        if pending.pid is None:
            return HealthVerdict(key, "stuck", self.check.describe()) if waited >= timeout else None
        if waited < timeout and pending.cpu is None:
            return None  # unreadable when pinged: its first reading is taken once it is late
        progress = self.read(pending.pid)
        if progress is None or progress.state in _ENDED:
            return None  # it has ended (or is not readable yet): its parent hears of that as of any exit
        if pending.cpu is None:  # unreadable when pinged: this is the first window's start
            pending.mark, pending.cpu = now, progress.cpu
            return None
        advanced = progress.cpu != pending.cpu
        if advanced and not pending.busy:  # not found busy yet: its window runs from this reading
            pending.mark, pending.cpu = now, progress.cpu
        if waited < timeout:
            return None
        if progress.state in _STOPPED:
            return HealthVerdict(key, "stuck", f"unresponsive: stopped (state {progress.state}), "
                                               f"no answer to a health check within {timeout:g} s")
        if waited >= limit:
            return HealthVerdict(key, "stuck", f"unresponsive: busy but no answer to a health check "
                                               f"within {limit:g} s")
        if pending.busy and now - pending.mark < window:
            return None  # found busy before: inside its window
        if not advanced:
            if now - pending.mark < window:
                return None  # inside its window
            return HealthVerdict(key, "stuck", f"unresponsive: no answer to a health check and no CPU "
                                               f"time used for {now - pending.mark:g} s")
        if waited < window:
            return None  # using CPU, but not yet unanswered a whole window
        pending.mark, pending.cpu = now, progress.cpu  # busy: a new window from now
        if pending.busy:
            return None
        pending.busy = True
        return HealthVerdict(key, "busy", f"busy: no answer to a health check for {waited:g} s, "
                                          f"but using CPU; waiting up to {limit:g} s")

    def overdue(self, now: float) -> list[Hashable]:
        """The keys of the ``stuck`` children of :meth:`judge` (each is forgotten)."""
        return [verdict.key for verdict in self.judge(now) if verdict.kind == "stuck"]

    def forget(self, key: Hashable) -> None:
        """Child ``key`` is gone (or restarted): its unanswered ping no longer counts."""
        pending = self._pending.pop(key, None)
        if pending is not None:
            self._refs.pop(pending.ref, None)
