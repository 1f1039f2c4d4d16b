"""Pure time arithmetic of supervision: the restart-intensity window and backoff.

No clocks are read here: every method takes ``now`` (seconds, monotonic), so tests
drive these with a fake clock and check windows and delays exactly.
"""

from __future__ import annotations

import random
from collections import deque

from ._spec import Backoff

__all__ = ["BackoffState", "RestartIntensity"]


class RestartIntensity:
    """OTP's ``add_restart``: a sliding window over the whole supervisor.

    Each restart records ``now``; records older than ``now - period`` are dropped
    (one exactly ``period`` old is kept, as in OTP). If more than ``intensity``
    records remain, the restart is refused and the supervisor must give up. So
    intensity 0 means the first restart already gives up.
    """

    def __init__(self, intensity: int, period: float) -> None:
        self.intensity = intensity
        self.period = period
        self._restarts: deque[float] = deque()

    def add_restart(self, now: float) -> bool:
        """Record a restart at ``now``; False means the intensity is exceeded."""
        threshold = now - self.period
        while self._restarts and self._restarts[0] < threshold:
            self._restarts.popleft()
        self._restarts.append(now)
        return len(self._restarts) <= self.intensity

    def recent(self, now: float) -> int:
        threshold = now - self.period
        return sum(1 for t in self._restarts if t >= threshold)


class BackoffState:
    """Consecutive-failure delay for one child (Akka's restartWithBackoff).

    ``next_delay(now)`` is asked when the child must be restarted: if the child ran
    quietly for ``reset_after`` seconds since it was last started, the count starts
    over. The n-th consecutive restart waits ``min(max, min * 2**(n-1))`` seconds
    plus a random extra of up to ``jitter`` times that. A restart whose start fails
    asks again without a start in between: that never counts as running quietly, so a
    child that cannot start (its store out of reach) waits ever longer.
    """

    def __init__(self, policy: Backoff, rng: random.Random | None = None) -> None:
        self.policy = policy
        self.failures = 0
        self._last_start: float | None = None
        self._rng = rng or random.Random()

    def started(self, now: float) -> None:
        self._last_start = now

    def next_delay(self, now: float) -> float:
        if self._last_start is not None and now - self._last_start >= self.policy.quiet_period:
            self.failures = 0
        self._last_start = None  # not running until it is started again
        self.failures += 1
        base: float = min(self.policy.max_delay, self.policy.min_delay * 2.0 ** (self.failures - 1))
        return base + base * self.policy.jitter * self._rng.random()
