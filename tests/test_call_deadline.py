"""A call's deadline travels with it (issue 59): ``supervision.call`` stamps when its
caller stops waiting (``Call.deadline``, epoch seconds of the caller's wall clock), a
server sees it as ``CallerRef.deadline``, and a hand-over passes it on, so the server
that finally gets the call can refuse one its caller gave up on
(``CallerRef.gave_up``). Real processes: the servers are Thespian actors."""

from __future__ import annotations

import time
from typing import Any

import pytest

from supervision import CallerRef, GenServer, call, start_server
from supervision.lowlevel import FORWARDED
from supervision.protocol import Call, Reply


class Deadlines(GenServer):
    """Answers ``"deadline"`` with its caller's deadline, and ``("gave_up", margin)``
    with whether its caller gave up by this process's wall clock."""

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "deadline":
            return caller.deadline
        if isinstance(request, tuple) and request[0] == "gave_up":
            return caller.gave_up(time.time(), request[1])
        return super().handle_call(request, caller)


class HandsOn(GenServer):
    """Hands every call over to the server its ``init`` was given, which answers it."""

    def init(self, args: Any) -> None:
        self.to = args

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        self.hand_over(caller, request, self.to)
        return FORWARDED


def test_a_call_carries_when_its_caller_stops_waiting(actor_system: Any) -> None:
    server = start_server(actor_system, Deadlines)
    before = time.time()
    deadline = call(actor_system, server, "deadline", timeout=7.0)
    assert isinstance(deadline, float)
    assert before + 7.0 <= deadline <= time.time() + 7.0


def test_a_hand_over_passes_the_deadline_on(actor_system: Any) -> None:
    """The server that answers sees the first caller's deadline, not one of the hop's."""
    server = start_server(actor_system, Deadlines)
    hop = start_server(actor_system, HandsOn, server)
    before = time.time()
    deadline = call(actor_system, hop, "deadline", timeout=9.0)
    assert isinstance(deadline, float)
    assert before + 9.0 <= deadline <= time.time() + 9.0
    # Within its deadline, by the margin asked: not given up; with a margin wider than
    # what is left: given up.
    assert call(actor_system, hop, ("gave_up", 0.1), timeout=9.0) is False
    assert call(actor_system, hop, ("gave_up", 60.0), timeout=9.0) is True


def test_a_call_with_no_deadline_has_none(actor_system: Any) -> None:
    """A Call built by hand (a plain Thespian actor's) names no deadline: never given up."""
    server = start_server(actor_system, Deadlines)
    message = Call("deadline")
    answer = actor_system.ask(server, message, 10)
    assert answer == Reply(message.ref, None)
    message = Call(("gave_up", 1e9))
    assert actor_system.ask(server, message, 10) == Reply(message.ref, False)


@pytest.mark.parametrize(("deadline", "now", "margin", "gave_up"), [
    (None, 1e12, 0.0, False),
    (100.0, 99.0, 0.0, False),
    (100.0, 100.0, 0.0, True),
    (100.0, 99.95, 0.1, True),
    (100.0, 99.85, 0.1, False),
])
def test_gave_up_reads_the_deadline_against_the_clock_given(deadline: float | None, now: float, margin: float,
                                                            gave_up: bool) -> None:
    assert CallerRef("somewhere", "ref", deadline=deadline).gave_up(now, margin) is gave_up
