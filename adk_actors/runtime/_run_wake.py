"""How a run worker's threads wake its main thread, and when held events go.

The worker and tool threads queue what they have for the main thread and ring its
:class:`Doorbell` (a pipe the main thread watches). The worker thread's loop selects
through a :class:`WaitWatchingSelector`, which tells it, before each select, how long
the loop is about to wait; ``release_due`` then says whether the non-partial events it
holds go now (the loop is about to wait, or ``FINAL_WINDOW`` / ``HOLD_LIMIT`` of its
CPU time went by).
"""

from __future__ import annotations

import os
import selectors
from collections.abc import Callable

__all__ = ["FINAL_WINDOW", "HOLD_LIMIT", "Doorbell", "WaitWatchingSelector", "release_due"]

#: A non-partial event waits for the events and outcome that follow it while the worker
#: computes (a scripted or cached turn then costs one message instead of one per event):
#: held events go once the worker has used this much of its thread's CPU time since the
#: last of them, and at once when the worker's loop would wait.
FINAL_WINDOW = 0.002
#: ... and at most this much of the worker's CPU time since the first of them.
HOLD_LIMIT = 0.02


def release_due(timeout: float | None, now: float, *, first: float, last: float) -> bool:
    """Should a worker holding events release them at this turn of its loop? ``timeout``:
    what the loop is about to wait (None: until something happens); ``now``, ``first``,
    ``last``: the worker's CPU clock now and at its first and last held events.
    Yes when the loop is about to wait, or after FINAL_WINDOW since the last held event,
    or HOLD_LIMIT since the first."""
    return timeout is None or timeout > 0 or now - last >= FINAL_WINDOW or now - first >= HOLD_LIMIT


class WaitWatchingSelector(selectors.DefaultSelector):
    """The worker loop's selector: tells ``before_select`` the timeout of each select
    before making it (None or > 0: the loop is about to wait)."""

    def __init__(self, before_select: Callable[[float | None], None]) -> None:
        super().__init__()
        self._before_select = before_select

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        self._before_select(timeout)
        return super().select(timeout)


class Doorbell:
    """A pipe that threads ring to wake an actor's main thread (it watches ``read_fd``
    with ``ThespianWatch``); rings between two answers make one byte.

    The order in :meth:`answer` is what makes it safe: drain the pipe first, re-arm
    second, and only then read what the threads queued. A ring that lands while the
    pipe is drained either finds the bell not yet re-armed (its item is queued before
    it rang, so the read that follows the answer gets it) or writes a byte that stays
    (one more wakeup). Re-arming first would let a ring's byte be drained with the bell
    left rung: every later ring would be skipped and the main thread never woken (a
    turn that hangs; seen under a burst of 100 sessions)."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self._rung = False

    def ring(self) -> None:
        """Any thread, after queueing something for the main thread."""
        if not self._rung:
            self._rung = True
            try:
                os.write(self.write_fd, b"x")
            except OSError:  # closed: the actor is exiting
                pass

    def answer(self) -> None:
        """Main thread, woken: re-arm the bell, before reading what was queued."""
        try:
            while os.read(self.read_fd, 4096):
                pass
        except OSError:  # BlockingIOError included: the pipe is drained
            pass
        self._rung = False

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass
