"""A stand-in for another host's front door, for tests/test_late_line_turns.py,
importable by actor processes."""

from __future__ import annotations

from typing import Any

from thespian.actors import Actor

from supervision.protocol import Call, ErrorReply, Reply

__all__ = ["Caller"]


class Caller(Actor):  # type: ignore[misc]
    """``("call", to, request)``: calls ``to`` with ``request`` as its own caller, and
    answers the asker ``"answered"`` when ``to``'s answer came (its connection to ``to``
    then open). ``("send", to, message)``: sends ``message`` to ``to`` and answers
    ``"sent"``. Anything else (a run's messages) is dropped."""

    def receiveMessage(self, message: Any, sender: Any) -> None:
        waiting: dict[str, Any] = self.__dict__.setdefault("waiting", {})
        if isinstance(message, tuple) and len(message) == 3 and message[0] == "call":
            request = Call(message[2])
            waiting[request.ref] = sender
            self.send(message[1], request)
        elif isinstance(message, tuple) and len(message) == 3 and message[0] == "send":
            self.send(message[1], message[2])
            self.send(sender, "sent")
        elif isinstance(message, (Reply, ErrorReply)) and message.ref in waiting:
            self.send(waiting.pop(message.ref), "answered")
