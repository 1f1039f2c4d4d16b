"""Clocks passed in (trio's ``Clock`` shape): what code that measures time reads it from.

A :class:`Clock` answers one question, :meth:`Clock.current_time` (seconds, as a
float). Code that computes deadlines, windows or expiries takes a clock instead of
calling ``time`` itself, so a test hands it a :class:`ManualClock` and moves time on
with :meth:`ManualClock.advance` instead of sleeping.

Two real clocks, for two kinds of time:

* :data:`MONOTONIC` (``time.monotonic``): deadlines inside one process; it never
  jumps back. Every :class:`~supervision.GenServer`'s ``clock`` is this one (or a
  :class:`ManualClock`, see ``MANUAL_CLOCK_VARIABLE``).
* :class:`WallClock` (``time.time``, epoch seconds): times written down for other
  processes and hosts to compare (the stores' lease expiries and timestamps).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Final, Protocol, runtime_checkable

__all__ = ["MONOTONIC", "Clock", "ManualClock", "MonotonicClock", "WallClock"]


@runtime_checkable
class Clock(Protocol):
    """Where time is read from: ``current_time()``, in seconds (trio's ``Clock``, with
    only the method the code here needs)."""

    def current_time(self) -> float:
        """Now, in seconds of this clock."""
        ...


class MonotonicClock:
    """The real clock for deadlines in one process: ``time.monotonic()``."""

    def current_time(self) -> float:
        return time.monotonic()

    def __repr__(self) -> str:
        return "MonotonicClock()"


class WallClock:
    """The real clock for times other processes and hosts compare: ``time.time()``
    (epoch seconds)."""

    def current_time(self) -> float:
        return time.time()

    def __repr__(self) -> str:
        return "WallClock()"


MONOTONIC: Final = MonotonicClock()


class ManualClock:
    """A clock that stands still until it is moved (trio's ``MockClock`` without its
    auto-jump): the test double for any code that takes a :class:`Clock`.

    It starts at ``start`` seconds (default 0; give ``time.time()`` to stand in for
    a :class:`WallClock`, so that times it writes look like real ones). :meth:`advance` moves
    it on; it never goes back. Safe to read and move from several threads.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = _checked(start, "start")
        self._lock = threading.Lock()

    def current_time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock ``seconds`` on (0 or more) and return the new time; a
        negative, infinite or non-number ``seconds`` is a ValueError (TypeError for a
        non-number) and leaves the clock where it was."""
        step = _checked(seconds, "seconds")
        if step < 0:
            raise ValueError(f"a ManualClock only moves forward: seconds={seconds!r}")
        with self._lock:
            self._now += step
            return self._now

    def advance_to(self, when: float) -> float:
        """Move the clock on to ``when``, or leave it if it is there or later (it never
        goes back); the new time."""
        target = _checked(when, "when")
        with self._lock:
            self._now = max(self._now, target)
            return self._now

    def __repr__(self) -> str:
        return f"ManualClock(now={self._now!r})"


def _checked(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, not {value!r}")
    return float(value)
