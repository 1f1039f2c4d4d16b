"""How one run's messages travel between a Runner and a session's partition: one
interface, :class:`RunTransport`, whatever carries them.

A run sent straight to its partition asks for no ``RunAccepted``: the run's own
messages are the answer. So a transport does two things, in order: :meth:`first`
sends the request and waits a moment for a first answer (a refusal comes at once;
the run's first events may too), then :meth:`receive` gives the run's messages one by
one until its terminal one. Either raises :class:`NotTaken` when the partition is gone
before the run's end (nothing more can come this way: the Runner asks the host's
current partition, and a restarted one answers with the run's recorded end).

Carriers today:

* :class:`LineTransport`: the Runner endpoint's direct line to a partition on this
  machine (``_caller_line``): the partition's death is the line's end, seen at once.
* :class:`ThespianTransport`: a Thespian endpoint. A refused delivery says the
  partition is gone; a first answer that does not come is checked with
  ``partition_there`` (an endpoint whose connection to a dead process is still open
  is not refused).

A remote host's carrier would be a third class with the same two methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from supervision import ServerNotRunning
from supervision.lowlevel import ask_delivered
from supervision.protocol import Call

from ._caller_line import LineClosed, RunnerLine

__all__ = ["HolderGone", "LineTransport", "NotTaken", "RunTransport", "ThespianTransport"]


class NotTaken(Exception):
    """The partition a run was sent to did not take it, or is gone before its end."""


class HolderGone(NotTaken):
    """The partition handed the run on to the session's holder on another host, which
    stopped taking connections before it answered: the holder may have taken it."""


class RunTransport(Protocol):
    def first(self, message: Call, wait: float) -> Any:
        """Send ``message`` (a run's request); the first answer within ``wait`` seconds,
        or None. :class:`NotTaken` when it could not be sent, or the partition is gone."""

    def receive(self, timeout: float) -> Any:
        """The run's next message within ``timeout`` seconds, or None;
        :class:`NotTaken` once the way to the partition has ended."""


class LineTransport:
    def __init__(self, line: RunnerLine) -> None:
        self.line = line

    def first(self, message: Call, wait: float) -> Any:
        if not self.line.send(message):
            raise NotTaken()
        return self.receive(wait)

    def receive(self, timeout: float) -> Any:
        try:
            return self.line.receive(timeout)
        except LineClosed:
            raise NotTaken() from None


class ThespianTransport:
    """``endpoint``: a private Thespian endpoint (its ``listen`` and ``ask``);
    ``address``: the partition's; ``partition_there(address)``: whether it is there."""

    def __init__(self, endpoint: Any, address: Any = None,
                 partition_there: Callable[[Any], bool] = lambda address: True) -> None:
        self.endpoint = endpoint
        self.address = address
        self.partition_there = partition_there

    def first(self, message: Call, wait: float) -> Any:
        try:
            answer = ask_delivered(self.endpoint, self.address, message, wait)
        except ServerNotRunning:  # the connection was refused: that partition is gone
            raise NotTaken() from None
        if answer is None and not self.partition_there(self.address):
            # Silent because it is gone: an endpoint with a connection still open to a dead
            # process is not refused, so it is asked from a fresh one (~1 ms) before trusting it.
            raise NotTaken()
        return answer

    def receive(self, timeout: float) -> Any:
        return self.endpoint.listen(timeout)
