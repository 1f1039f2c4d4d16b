"""How a run worker's threads wake its main thread, and when held events go.

The worker and tool threads queue what they have for the main thread and ring its
:class:`Doorbell` (a pipe the main thread watches). The worker thread's loop selects
through a :class:`WaitWatchingSelector`, which tells it, before each select, how long
the loop is about to wait; ``release_due`` then says whether the non-partial events it
holds (:class:`HeldEvents`, by run) go now (the loop is about to wait, or
``FINAL_WINDOW`` / ``HOLD_LIMIT`` of its CPU time went by).
"""

from __future__ import annotations

import os
import selectors
from collections.abc import Callable
from typing import Any

__all__ = ["FINAL_WINDOW", "HOLD_LIMIT", "Doorbell", "HeldEvents", "WaitWatchingSelector", "release_due",
           "released"]

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


def released(held: list[tuple[str, Any]], ready: dict[str, list[Any]], run_id: str | None) -> list[tuple[str, Any]]:
    """The main thread's held ``(run id, event)`` pairs made ready: those of ``run_id``
    (all of them when None) appended to ``ready`` by run, in order; the others returned."""
    keep: list[tuple[str, Any]] = []
    for owner, event in held:
        if run_id is None or owner == run_id:
            ready.setdefault(owner, []).append(event)
        else:
            keep.append((owner, event))
    return keep


class HeldEvents:
    """The worker thread's held non-partial events, by run, in the order handed, with
    its CPU clock at the first and the last of them (``release_due``). Worker thread only."""

    def __init__(self) -> None:
        self.by_run: dict[str, list[Any]] = {}
        self.first: float | None = None  # None: nothing held
        self.last = 0.0

    def hold(self, run_id: str, event: Any, now: float) -> None:
        self.by_run.setdefault(run_id, []).append(event)
        self.last = now
        if self.first is None:
            self.first = now

    def take(self, run_id: str) -> list[Any]:
        """One run's held events (it ended: they go with its outcome)."""
        events = self.by_run.pop(run_id, [])
        if not self.by_run:
            self.first = None
        return events

    def take_all(self) -> dict[str, list[Any]]:
        """Every run's held events (they go now)."""
        held, self.by_run, self.first = self.by_run, {}, None
        return held

    def hand_all(self, items: Any, runs: set[str]) -> bool:
        """Every run's held events to the main thread's queue ``items``, then a release;
        their runs added to ``runs`` (False: none held)."""
        held = self.take_all()
        for run_id, events in held.items():
            runs.add(run_id)
            for event in events:
                items.put(("event", run_id, event))
        if held:
            items.put(("release", "", None))
        return bool(held)

    def due(self, timeout: float | None, now: float) -> bool:
        """Events are held and should go now (``release_due``)."""
        return self.first is not None and release_due(timeout, now, first=self.first, last=self.last)


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
