"""One run's stream as a Runner sees it: a pure state machine and its two drivers.

:class:`RunStream` does no I/O and reads no clock: it is fed what arrived and the time.
In order, for each message of the run (:meth:`RunStream.take`): the direct call's
error reply (its ``ref``) ends the stream (``not_running`` as :class:`NotTaken`: ask
the host's current partition; ``holder_gone`` as :class:`HolderGone`: ask it the same
way, the run maybe taken; any other code as its typed error); a message of
another run (a late one of an earlier run on the same endpoint or line) and a
``RunAccepted`` say nothing; the run's events are given, and ``RunDone`` ends it,
``RunFailed`` ends it with :class:`RunFailedError`. For each silence
(:meth:`RunStream.silent`): past the run's deadline it fails ``timeout``; every
``probe_every`` seconds it says the partition should be looked at, and once the
partition is known gone (:meth:`RunStream.gone`) the run fails ``killed`` if no end
came within ``orphan_grace`` seconds (a restarted partition reports its interrupted
runs first).

The drivers read a transport and a clock and feed the machine: :func:`drive` for a
blocking :class:`RunTransport` (a line or a Thespian endpoint), :func:`drive_async` for
an asyncio queue (``_async_line``; its line's end is the partition's death, so it is
never probed). Either raises :class:`NotTaken` when its way to the partition ends
before the run does, and the run's own error after its last events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from supervision.protocol import ErrorReply, Reply, error_for_code

from .._exceptions import RunFailedError
from .._types import Event
from ..messages import AdkEvent, RunDone, RunFailed, RunMessages
from ._async_line import CLOSED
from ._routing import typed_error
from ._run_transport import HolderGone, NotTaken, RunTransport

__all__ = ["PROBE_EVERY", "RECEIVE_WAIT", "RunStream", "Seen", "drive", "drive_async", "step"]

#: While a run is silent, how often the session's partition is looked at.
PROBE_EVERY = 1.0
#: How long a blocking transport is asked for the next message before the silence is looked at.
RECEIVE_WAIT = 0.2


def step(message: Any, run_id: str, ref: str | None) -> tuple[list[Event], bool, Exception | None]:
    """What one message of a run's stream says: its events, whether the run is over,
    and the error it ended with (see the module)."""
    if ref is not None and isinstance(message, (ErrorReply, Reply)) and message.ref == ref:
        if isinstance(message, Reply):
            return [], False, None
        if message.code == "not_running":
            return [], True, NotTaken()
        if message.code == "holder_gone":
            return [], True, HolderGone()
        return [], True, typed_error(error_for_code(message.code, message.detail))
    if getattr(message, "run_id", None) != run_id:
        return [], False, None
    events: list[Event] = []
    for item in message.messages if isinstance(message, RunMessages) else (message,):
        if isinstance(item, AdkEvent):
            events.append(item.event)
        elif isinstance(item, RunDone):
            return events, True, None
        elif isinstance(item, RunFailed):
            return events, True, RunFailedError(item.run_id, item.reason, item.error_type, item.detail, item.resumed_as)
    return events, False, None


class RunStream:
    """One run's stream (see the module), begun at time ``now``; ``limit``: seconds to
    its end; ``ref``: the direct call's ref, when it was sent as one; ``deadline``: the
    time of that end when the wait began earlier than ``now`` (a run sent again after
    its first partition died waits what is left of its ``limit``, not a new one)."""

    def __init__(self, run_id: str, ref: str | None, limit: float, now: float, *,
                 probe_every: float = PROBE_EVERY, orphan_grace: float = 3.0,
                 deadline: float | None = None) -> None:
        self.run_id = run_id
        self.ref = ref
        self.limit = limit
        self.deadline = now + limit if deadline is None else deadline
        self.probe_every = probe_every
        self.orphan_grace = orphan_grace
        self.next_probe = now + probe_every
        self.give_up_at: float | None = None  # set once the partition is known to be gone
        self.ended = False  # its terminal message came
        self.error: Exception | None = None  # the error it ended with

    def take(self, message: Any) -> list[Event]:
        """The events ``message`` brings; sets ``ended`` (and ``error``) at the run's end."""
        events, ended, error = step(message, self.run_id, self.ref)
        if ended:
            self.ended, self.error = True, error
        return events

    def silent(self, now: float) -> bool:
        """Nothing came until ``now``: raises the run's failure past its deadline, or
        ``orphan_grace`` after its partition was found gone; True when the partition
        should be looked at now."""
        if now >= self.deadline:
            raise RunFailedError(self.run_id, "timeout", "RunnerTimeout", f"no end of run within {self.limit} s")
        if self.give_up_at is not None:
            if now >= self.give_up_at:
                raise RunFailedError(self.run_id, "killed", "HostGone",
                                     "the session's partition died and its restarted self did not report the run")
            return False
        if now >= self.next_probe:
            self.next_probe = now + self.probe_every
            return True
        return False

    def gone(self, now: float) -> None:
        """The partition was found gone at ``now`` (and its restarted self asked for the session)."""
        self.give_up_at = now + self.orphan_grace

    def wait_left(self, now: float) -> float:
        """Seconds from ``now`` to the run's deadline (none below zero)."""
        return max(0.0, self.deadline - now)


def drive(stream: RunStream, transport: RunTransport, first: Any, clock: Callable[[], float],
          lost: Callable[[], bool]) -> Iterator[Event]:
    """Yield the run's events as ``transport`` brings them (``first``: a message that
    came already) until its end; at each look the silence asks for, ``lost()`` says
    whether the partition is gone (and asks its restarted self for the session)."""
    message = first
    while not stream.ended:
        if message is None:
            message = transport.receive(RECEIVE_WAIT)
        if message is None:
            if stream.silent(clock()) and lost():
                stream.gone(clock())
            continue
        yield from stream.take(message)
        message = None
    if stream.error is not None:
        raise stream.error


async def drive_async(stream: RunStream, queue: asyncio.Queue[Any],
                      clock: Callable[[], float]) -> AsyncIterator[Event]:
    """:func:`drive` for a line's queue: waits up to the run's deadline for each message;
    :data:`CLOSED` (the line ended) raises :class:`NotTaken`. Nothing is probed (the
    line's end says the partition died): give ``stream`` a ``probe_every`` of ``inf``."""
    while not stream.ended:
        try:
            received = await asyncio.wait_for(queue.get(), stream.wait_left(clock()))
        except TimeoutError:
            stream.silent(clock())
            continue
        if received is CLOSED:
            raise NotTaken()
        for event in stream.take(received):
            yield event
    if stream.error is not None:
        raise stream.error


class Seen:
    """The committed events a run's caller was given: a followed run's catch-up
    (``FollowRun``) may repeat some, and each is given once; ``last``: the latest one's id."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.last = ""

    def first_time(self, event: Event) -> bool:
        if event.partial:
            return True
        if event.id in self.ids:
            return False
        self.ids.add(event.id)
        self.last = event.id
        return True
