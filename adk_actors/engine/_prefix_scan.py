"""Whether any event of a session's growing list matches a rule, each event read once.

A session's events only grow between steps and turns (a run worker's next turn gets a
new list of the same event objects, the new ones appended); each model request asks
again whether they hold a credential event (``_credential_request``) or a compaction
(``_compaction_adk``). A :class:`PrefixScan` keeps, per first event (by identity: it
keeps that object, so its id is not reused), how many events it read, the last of them
and whether one matched: the next question on a list with the same first event reads
only the events after those, when the last one read is still in its place; otherwise
(rewound, other objects) the list is read from its start. The memory is bounded (the
lists asked of most recently).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from .._types import Event

__all__ = ["PrefixScan"]

#: Lists remembered per rule.
KEPT = 1024


class PrefixScan:
    """``scan(events)``: whether any of ``events`` matches ``rule`` (see the module)."""

    def __init__(self, rule: Callable[[Event], bool]) -> None:
        self._rule = rule
        #: id(first event) -> (the first and the last events read, how many were read, one matched)
        self._seen: OrderedDict[int, tuple[Event, Event, int, bool]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, events: Sequence[Event]) -> bool:
        """In order: an empty list matches nothing; what was read of a list with the
        same first event is taken when its last read event is still in its place; the
        rest is read (from the start otherwise); the answer is remembered."""
        if not events:
            return False
        key = id(events[0])
        with self._lock:
            known = self._seen.get(key)
        start, found = 0, False
        if known is not None and known[2] <= len(events) and events[0] is known[0] \
                and events[known[2] - 1] is known[1]:
            start, found = known[2], known[3]
        rule = self._rule
        found = found or any(rule(events[i]) for i in range(start, len(events)))
        with self._lock:
            self._seen[key] = (events[0], events[-1], len(events), found)
            self._seen.move_to_end(key)
            while len(self._seen) > KEPT:
                self._seen.popitem(last=False)
        return found
