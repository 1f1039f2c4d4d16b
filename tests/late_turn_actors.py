"""A stand-in for a front door's Runner endpoint, for tests/test_late_turns.py,
importable by actor processes."""

from __future__ import annotations

import os
from typing import Any

from thespian.actors import Actor

__all__ = ["Relay"]


class Relay(Actor):  # type: ignore[misc]
    """``"pid"``: answers its process id. ``("send", to, message)``: sends ``message`` to
    ``to`` as its own (its address is the one the answer goes to), and answers ``"sent"``."""

    def receiveMessage(self, message: Any, sender: Any) -> None:
        if message == "pid":
            self.send(sender, os.getpid())
        elif isinstance(message, tuple) and len(message) == 3 and message[0] == "send":
            self.send(message[1], message[2])
            self.send(sender, "sent")
