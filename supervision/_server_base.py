"""What every server is built on, below its OTP contract (:class:`GenServer`): its
clock and timers, and the descriptors and processes it watches.

When a server starts, in order: its process asks the kernel to kill it when its
parent dies (``PR_SET_PDEATHSIG``); its clock is chosen (a :class:`ManualClock` when
:data:`MANUAL_CLOCK_VARIABLE` names its class, else the monotonic one).

Timers (:meth:`ServerBase.send_after`): each goes on a heap ordered by due time, then
by the order set; on the real clock ONE Thespian wakeup is armed for the earliest.
When it fires, every timer due goes to ``handle_timeout`` in order, then the next one
is armed; an armed wakeup overdue by ``_LOST_WAKEUP`` is taken for lost. On a manual
clock nothing is armed: ``AdvanceClock`` moves the clock and fires the timers due, each
at its own time, through the server's whole dispatch.

Watches: descriptors (:meth:`ServerBase.watch_fds`, to ``handle_watch``) and processes
(:meth:`ServerBase.monitor_process`: a pidfd, to ``handle_process_down`` once, unless
the server is stopping). A child actor watched with :meth:`ServerBase.monitor_child`
whose pidfd fires with no ``ChildActorExited`` within :data:`CHILD_DOWN_GRACE` gets that
report made here, so it arrives exactly once.
"""

from __future__ import annotations

import heapq
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from thespian.actors import Actor, ChildActorExited, WakeupMessage, WatchMessage

from ._clock import MONOTONIC, ManualClock
from ._exceptions import BadRequest
from ._frame_chunk import call_on_fresh_chunk
from ._system import forked_by, open_pidfd, set_parent_death_signal

__all__ = ["CHILD_DOWN_GRACE", "MANUAL_CLOCK_VARIABLE", "ServerBase"]


@dataclass(frozen=True)
class _ChildDown:
    """A monitored child's pidfd fired (see ``GenServer.monitor_child``)."""

    pid: int


#: After a monitored child's pidfd fired: how long Thespian's own ChildActorExited may
#: take before the server makes it.
CHILD_DOWN_GRACE = 0.05


#: The clock seam. Unset, every server's ``clock`` is ``time.monotonic`` and its timers
#: are Thespian's. Set in an actor system's environment before it starts (its actors
#: inherit it) to a comma-separated list of server class names, or ``*`` for all: those
#: servers get a manual clock, which stands still until they are sent ``AdvanceClock``;
#: then the timers due fire at once, in order. Restart windows, backoff, passivation
#: and grace periods are tested exactly that way, without waiting for them.
MANUAL_CLOCK_VARIABLE: Final = "SUPERVISION_MANUAL_CLOCK"


class _TimersDue:
    """The payload of the one Thespian wakeup a server keeps armed for its timers."""


_TIMERS_DUE: Final = _TimersDue()
_LOST_WAKEUP: Final = 1.0  # seconds


def _manual_clock_for(name: str) -> bool:
    wanted = {part.strip() for part in os.environ.get(MANUAL_CLOCK_VARIABLE, "").split(",")}
    return "*" in wanted or name in wanted


class ServerBase(Actor):  # type: ignore[misc]
    """A Thespian actor with a clock, timers on it, and watched descriptors and
    processes; :class:`GenServer` is built on it (and never used without it)."""

    def __init__(self) -> None:
        super().__init__()
        set_parent_death_signal(started_by=forked_by())  # in the actor's own process, just forked
        # The clock seam (see _clock): a ManualClock when MANUAL_CLOCK_VARIABLE names this server.
        self._manual_clock: ManualClock | None = (ManualClock(time.monotonic())
                                                  if _manual_clock_for(type(self).__name__) else None)
        # Timers (send_after): a heap of (due on self.clock, order, payload). On the real
        # clock ONE Thespian wakeup is armed, for the earliest (``_arms``: the due times
        # of those armed and not fired yet). Thespian keeps its wakeups in a list it
        # sorts on every add (Python comparisons), so one per timer made every
        # send_after cost O(pending timers): a partition arming a 600 s deadline per
        # run slowed down with every turn it had served (bench/turns.py bursts).
        self._timers: list[tuple[float, int, Any]] = []
        self._timer_order = 0
        self._arms: list[float] = []
        self.clock: Callable[[], float] = (self._manual_clock or MONOTONIC).current_time
        self.log = logging.getLogger(f"supervision.{type(self).__name__}")
        self._stopping = False  # on its way out: timers and process downs no longer fire
        self._watch_fds: list[int] = []
        self._monitors: dict[int, Any] = {}  # pidfd -> tag
        self._child_monitors: dict[int, Any] = {}  # pid -> address (see monitor_child)

    def createActor(self, actorClass: Any, *args: Any, **kwargs: Any) -> Any:
        """Thespian's ``createActor``, called from the start of a fresh frame chunk: the
        child is forked inside it, so its loop never runs on a chunk's edge
        (``_frame_chunk``: a partition spent a third of a millisecond per turn there)."""
        return call_on_fresh_chunk(super().createActor, actorClass, *args, **kwargs)

    # -- hooks (see GenServer) -------------------------------------------------------------

    def handle_timeout(self, payload: Any) -> None:
        """A timer set with :meth:`send_after` fired."""

    def handle_watch(self, ready: list[int]) -> None:
        """File descriptors registered with :meth:`watch_fds` are readable."""

    def handle_process_down(self, tag: Any) -> None:
        """A process watched with :meth:`monitor_process` ended (called once per monitor)."""

    def _dispatch(self, message: Any, sender: Any) -> None:
        """One message through the whole server (:class:`GenServer`'s); a manual clock's
        timers fire through it."""
        raise NotImplementedError

    # -- timers ------------------------------------------------------------------------

    def send_after(self, seconds: float, payload: Any = None) -> None:
        """Deliver ``payload`` to ``handle_timeout`` after ``seconds`` of :attr:`clock`
        (not cancellable). Timers due at the same time fire in the order they were set."""
        self._timer_order += 1
        heapq.heappush(self._timers, (self.clock() + max(seconds, 0.001), self._timer_order, payload))
        if not self._manual_clock:
            self._arm_timers()

    def _arm_timers(self) -> None:
        """Arm a Thespian wakeup for the earliest timer, unless one is armed no later.
        An armed wakeup overdue by ``_LOST_WAKEUP`` is taken for lost (a server drops
        wakeups while it stops or before its init), so that it cannot hold the timers
        back for ever; if it comes after all, it only fires what is due."""
        now = time.monotonic()
        while self._arms and self._arms[0] < now - _LOST_WAKEUP:
            heapq.heappop(self._arms)
        if self._timers and (not self._arms or self._timers[0][0] < self._arms[0]):
            due = self._timers[0][0]
            heapq.heappush(self._arms, due)
            self.wakeupAfter(timedelta(seconds=max(due - now, 0.001)), payload=_TIMERS_DUE)

    def _on_wakeup(self, message: WakeupMessage) -> None:
        if isinstance(message.payload, _TimersDue):
            self._fire_due_timers()
        else:  # a wakeupAfter of a subclass's own
            self.handle_timeout(message.payload)

    def _fire_due_timers(self) -> None:
        """The armed wakeup fired (Thespian fires them in order: the earliest): each
        timer due by now goes to ``handle_timeout``, in order; then the next is armed."""
        if self._arms:
            heapq.heappop(self._arms)
        try:
            while self._timers and self._timers[0][0] <= time.monotonic() and not self._stopping:
                _, _, payload = heapq.heappop(self._timers)
                self.handle_timeout(payload)
        finally:
            self._arm_timers()

    def _advance_clock(self, seconds: float) -> int:
        """Move the manual clock ``seconds`` ahead, firing every timer due by then in
        order (each at its own due time); how many fired."""
        clock = self._manual_clock
        if clock is None:
            raise BadRequest(f"{type(self).__name__} runs on the real clock (see {MANUAL_CLOCK_VARIABLE})")
        if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
            raise BadRequest("AdvanceClock needs a finite number of seconds >= 0")
        target = clock.current_time() + seconds
        fired = 0
        while self._timers and self._timers[0][0] <= target and not self._stopping:
            due, _, payload = heapq.heappop(self._timers)
            clock.advance_to(due)
            self._dispatch(WakeupMessage(timedelta(0), payload), self.myAddress)
            fired += 1
        clock.advance_to(target)
        return fired

    # -- watched descriptors and processes ----------------------------------------------

    def watch_fds(self, fds: list[int]) -> None:
        """Have ``handle_watch`` called when any of these descriptors becomes readable."""
        self._watch_fds = list(fds)

    def monitor_process(self, pid: int, tag: Any) -> bool:
        """Call ``handle_process_down(tag)`` once when local process ``pid`` ends.

        In order: a pidfd is opened for ``pid`` and watched with the actor's other
        descriptors. Returns False, and watches nothing, where pidfds are missing
        (not Linux, kernel < 5.3) or ``pid`` is already gone. ``tag`` must be hashable
        and unique among this actor's monitors; a second monitor with it replaces the first.
        """
        self.demonitor_process(tag)
        fd = open_pidfd(pid)
        if fd is None:
            return False
        self._monitors[fd] = tag
        return True

    def monitor_child(self, address: Any, pid: int) -> bool:
        """Make sure the death of child actor ``address`` (process ``pid``) is reported.

        Thespian reports a child's death with ``ChildActorExited``, but when two
        children die at once it may report only one (and then waits for the other
        for ever when this actor exits). In order: the child's pidfd is watched; when
        it fires and no ``ChildActorExited`` for ``address`` came within
        ``CHILD_DOWN_GRACE`` seconds, the server sends itself the one Thespian did not
        make (Thespian's handling of it, after ours, forgets the child there too). So
        ``ChildActorExited`` arrives exactly once per monitored child either way.
        Returns False (nothing watched) where pidfds are missing or ``pid`` is gone."""
        self._child_monitors[pid] = address
        if self.monitor_process(pid, _ChildDown(pid)):
            return True
        del self._child_monitors[pid]
        return False

    def demonitor_process(self, tag: Any) -> None:
        """Stop watching the process monitored under ``tag`` (nothing if there is none)."""
        for fd, known in list(self._monitors.items()):
            if known == tag:
                del self._monitors[fd]
                os.close(fd)

    def _take_downs(self, message: Any) -> Any:
        """Act on the monitors among ``message.ready``; the rest goes on as a WatchMessage
        (None when nothing is left). Each ended process's pidfd is closed, then
        ``handle_process_down`` runs."""
        rest = [fd for fd in message.ready if fd not in self._monitors]
        downs = [fd for fd in message.ready if fd in self._monitors]
        for fd in downs:
            tag = self._monitors.pop(fd)
            os.close(fd)
            if isinstance(tag, _ChildDown):
                self.wakeupAfter(timedelta(seconds=CHILD_DOWN_GRACE), payload=tag)
            elif not self._stopping:
                self.handle_process_down(tag)
        return WatchMessage(rest) if rest else None

    def _track_child_monitors(self, message: Any) -> bool:
        """Keep :meth:`monitor_child`'s books: a reported child is watched no more; a
        watched child's grace over with no report gets the report made here. True when
        ``message`` was the monitors' own (a grace timer)."""
        if isinstance(message, ChildActorExited) and self._child_monitors:
            for pid, address in list(self._child_monitors.items()):
                if address == message.childAddress:
                    del self._child_monitors[pid]
                    self.demonitor_process(_ChildDown(pid))
        elif isinstance(message, WakeupMessage) and isinstance(message.payload, _ChildDown):
            address = self._child_monitors.pop(message.payload.pid, None)
            if address is not None:  # Thespian lost it (see monitor_child)
                self.log.warning("child pid %s ended with no ChildActorExited; handled as dead", message.payload.pid)
                self.send(self.myAddress, ChildActorExited(address))
            return True
        return False
