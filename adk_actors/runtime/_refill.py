"""When a partition may start another pooled process pair (no clock is read here).

A partition refills its pool as background work: it asks ``RefillGate.may_start``
every ``POOL_REFILL_INTERVAL`` seconds while the pool is short, and starts one pair
each time the answer is yes. The answer is yes, in order:

1. where the machine has no ``/proc/stat`` (no CPU test);
2. when the machine's CPUs were at least ``POOL_REFILL_IDLE`` idle since the last
   question: a refill does not compete with the turns of the burst that emptied the
   pool;
3. when ``POOL_REFILL_MAX_WAIT`` seconds have passed since the last start (or since
   the pool went short) however busy the CPUs are: on a machine kept busy by
   something else the pool still fills, one pair at a time, instead of never.

Otherwise no. ``rest`` is called when the pool is full: the wait of (3) counts from
the next shortage.
"""

from __future__ import annotations

__all__ = ["POOL_REFILL_IDLE", "POOL_REFILL_INTERVAL", "POOL_REFILL_MAX_WAIT", "RefillGate", "cpu_idle_counters"]

#: One pooled process pair is started at most this often while the pool is short.
POOL_REFILL_INTERVAL = 0.05
#: The share of CPU time that must have been idle over the last interval for a refill.
POOL_REFILL_IDLE = 0.25
#: However busy the CPUs, a short pool gets a pair at least this often (seconds).
#: Longer than a burst of 100 sessions' turns (~2.5 s on 2 cores), which a start
#: would slow down.
POOL_REFILL_MAX_WAIT = 5.0


def cpu_idle_counters() -> tuple[int, int] | None:
    """(idle, total) CPU time of the whole machine since boot, from /proc/stat;
    None where there is no /proc/stat."""
    try:
        with open("/proc/stat", "rb") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return fields[3] + (fields[4] if len(fields) > 4 else 0), sum(fields)


class RefillGate:
    """The partition's refill decisions (see the module). ``now``: monotonic seconds;
    ``counters``: what :func:`cpu_idle_counters` read at that moment."""

    def __init__(self, counters: tuple[int, int] | None, *, idle_share: float = POOL_REFILL_IDLE,
                 max_wait: float = POOL_REFILL_MAX_WAIT) -> None:
        self.idle_share = idle_share
        self.max_wait = max_wait
        self._counters = counters
        self._waiting_since: float | None = None  # the last start, or the start of this shortage

    def may_start(self, now: float, counters: tuple[int, int] | None) -> bool:
        """May one pair be started now? (Yes: the caller starts one, and the wait of
        the module's (3) counts from now.)"""
        before, self._counters = self._counters, counters
        if self._waiting_since is None:
            self._waiting_since = now
        if counters is None or now - self._waiting_since >= self.max_wait:
            yes = True
        elif before is None or counters[1] <= before[1]:
            yes = False  # nothing measured yet
        else:
            yes = (counters[0] - before[0]) / (counters[1] - before[1]) >= self.idle_share
        if yes:
            self._waiting_since = now
        return yes

    def rest(self) -> None:
        """The pool is full: the next shortage starts a new wait."""
        self._waiting_since = None
