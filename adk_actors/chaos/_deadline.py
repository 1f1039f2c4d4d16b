"""Deadlines of the chaos tools' calls to actors, scaled to the machine's load.

:func:`scaled_deadline` stretches a timeout by the load; ``_ask`` asks an actor and,
while its process makes progress (``_Progress``), waits for it past that deadline, up
to ``BUSY_WAIT_FACTOR`` times as long and never more than ``BUSY_WAIT_CAP`` seconds,
before it calls it busy (``_Busy``).
"""

from __future__ import annotations

import os
import time
from typing import Any

from supervision import CallTimeout, call
from supervision.lowlevel import read_progress

#: How many times its deadline a walk waits for an actor that is busy (its process
#: uses CPU or is runnable) before it shows it ``busy``; a wait never exceeds
#: ``BUSY_WAIT_CAP`` seconds, whatever the load.
BUSY_WAIT_FACTOR = 5.0


BUSY_WAIT_CAP = 30.0


class _Busy(Exception):
    """An actor that did not answer a walk in time while its process made progress."""


def scaled_deadline(timeout: float) -> float:
    """``timeout`` scaled to this machine's load: times the 1-minute load average per
    CPU when that is above 1 (a process gets its share of the CPUs only), at most ten
    times ``timeout``."""
    try:
        per_cpu = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        per_cpu = 1.0
    return timeout * min(max(per_cpu, 1.0), 10.0)


#: The shortest time a process must go without CPU time and without being runnable
#: to be taken for stuck: the kernel counts CPU time in ticks of 10 ms, and a busy
#: process at load waits its turn for the CPU or on a socket or a disk for tens of
#: milliseconds at a time (a 70 ms window called a partition writing 1 MB states dead).
PROGRESS_WINDOW_FLOOR = 1.0


class _Progress:
    """Whether a process makes progress while a call to it waits (``alive`` for
    :func:`supervision.call`): it is gone or stopped (SIGSTOP), or it has used no CPU
    time for ``window`` seconds (at least ``PROGRESS_WINDOW_FLOOR``) without being
    runnable (blocked), and the call ends at once; otherwise it is taken for busy and
    the call goes on."""

    def __init__(self, pid: int, window: float) -> None:
        self.pid, self.window = pid, max(window, PROGRESS_WINDOW_FLOOR)
        self.mark = time.monotonic()
        first = read_progress(pid)
        self.cpu = first.cpu if first is not None else None
        self.gone = False

    def alive(self) -> bool:
        now = time.monotonic()
        seen = read_progress(self.pid)
        if seen is None or seen.state in "ZXx":
            self.gone = True
            return False
        if seen.state in "Tt":  # stopped: it will not answer until continued
            return False
        if seen.state in "RD" or (self.cpu is not None and seen.cpu != self.cpu):
            self.mark = now  # runnable, or it used CPU since the last look: busy, not stuck
        self.cpu = seen.cpu
        return now - self.mark < self.window


def _ask(system: Any, address: Any, pid: int | None, request: Any, timeout: float, patient: bool = True) -> Any:
    """``request``'s answer from the actor at ``address`` whose process is ``pid``
    (None: not of this machine). In order: the answer within ``timeout`` (``patient``:
    scaled to the load, :func:`scaled_deadline`); without a pid, ``CallTimeout`` past
    it. With one, a ``patient`` wait goes on while the process makes progress
    (:class:`_Progress`), up to ``BUSY_WAIT_FACTOR`` times that deadline; then, or at
    the deadline when not ``patient``, ``_Busy`` if the process made progress within
    the last deadline, else ``CallTimeout``. ``CallError`` (its ``ServerNotRunning``) as
    soon as the process is gone or has made no progress for a deadline (stopped,
    stuck); the actor's own typed ``CallError`` as it answered."""
    deadline = scaled_deadline(timeout) if patient else timeout
    if pid is None:
        return call(system, address, request, deadline)
    progress = _Progress(pid, deadline)
    ceiling = min(max(deadline * BUSY_WAIT_FACTOR, deadline), BUSY_WAIT_CAP) if patient else deadline
    try:
        return call(system, address, request, ceiling, alive=progress.alive, poll=min(0.2, deadline / 2))
    except CallTimeout:
        if progress.alive():
            raise _Busy(f"busy: no answer to {type(request).__name__} within {ceiling:.1f} s while its process "
                        "worked") from None
        raise
