"""A test server for tests/test_busy_or_stuck.py, importable by actor processes."""

from __future__ import annotations

import time
from typing import Any

from supervision import CallerRef
from supervision.testing import Probe

__all__ = ["Spinner"]


class Spinner(Probe):
    """A :class:`~supervision.testing.Probe` that can also be busy on CPU:
    ``("spin", s)`` burns CPU on its main thread for ``s`` seconds of wall-clock time
    (its mailbox, health pings included, waits meanwhile), then answers how many loops
    it made."""

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, tuple) and len(request) == 2 and request[0] == "spin":
            end = time.monotonic() + float(request[1])
            loops = 0
            while time.monotonic() < end:
                loops += 1
            return loops
        return super().handle_call(request, caller)
