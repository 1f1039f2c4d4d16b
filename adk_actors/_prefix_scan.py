"""Whether any event of a session's growing list matches a rule, each event read once.

A session's events only grow between steps and turns; each model request asks again
whether they hold a credential event, a compaction, a rewind, a single-turn
sub-agent's event or a confirmation request. A run worker's next turn gets a new list
whose events are partly new objects (the stored copies the partition sends back,
unpickled), so an event is known by its ``id`` and ``timestamp``, not by identity. A
:class:`PrefixScan` keeps, per first event, how many events it read, the last of them
and whether one matched: the next question on a list with the same first event reads
only the events after those, when the last one read is still in its place; otherwise
(rewound, other events) the list is read from its start. The memory is bounded (the
lists asked of most recently).

A stored copy differs from the event the run made only by its ``temp:`` state keys
(left out when stored): no rule asked here reads them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from ._types import Event

__all__ = ["PrefixScan"]

#: Lists remembered per rule.
KEPT = 1024


def _mark(event: Event) -> tuple[str, float]:
    """What tells an event from another, whichever copy of it this is."""
    return event.id, event.timestamp


class PrefixScan:
    """``scan(events)``: whether any of ``events`` matches ``rule`` (see the module)."""

    def __init__(self, rule: Callable[[Event], bool]) -> None:
        self._rule = rule
        #: first event's mark -> (the last read event's mark, how many were read, one matched)
        self._seen: OrderedDict[tuple[str, float], tuple[tuple[str, float], int, bool]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, events: Sequence[Event]) -> bool:
        """In order: an empty list matches nothing; what was read of a list with the
        same first event is taken when its last read event is still in its place; the
        rest is read (from the start otherwise); the answer is remembered."""
        if not events:
            return False
        key = _mark(events[0])
        with self._lock:
            known = self._seen.get(key)
        start, found = 0, False
        if known is not None and known[1] <= len(events) and _mark(events[known[1] - 1]) == known[0]:
            start, found = known[1], known[2]
        rule = self._rule
        found = found or any(rule(events[i]) for i in range(start, len(events)))
        with self._lock:
            self._seen[key] = (_mark(events[-1]), len(events), found)
            self._seen.move_to_end(key)
            while len(self._seen) > KEPT:
                self._seen.popitem(last=False)
        return found
