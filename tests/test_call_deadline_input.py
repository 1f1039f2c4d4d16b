"""A call whose deadline is no time (issue 59): ``Call.deadline`` is epoch seconds or
None, but a Call built by hand (a plain Thespian actor's, another release's) can carry
anything. The server that receives it answers ``bad_request`` at once, before any
handler reads the deadline (a string compared with a clock would crash the server;
NaN would never be given up on; a bool would be the epoch's first second), and goes
on serving. Real processes: the servers are Thespian actors, and the host's are the
``sessions`` supervisor and a partition of a running host."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

from adk_actors import Content, InvalidRequestError
from adk_actors.messages import RunRequest
from adk_actors.runtime import Host
from adk_actors.runtime._routing import typed_error
from supervision import CallerRef, CallError, GenServer, call, start_server
from supervision.protocol import Call, ErrorReply, OsPid, Reply

BAD_DEADLINES = ["soon", True, math.nan, [1.0]]


class GivesUp(GenServer):
    """Answers ``"gave_up"`` with whether its caller gave up by this process's wall
    clock (as a partition fences a write), and ``"seen"`` with how many calls its
    handler saw before this one."""

    def init(self, args: Any) -> None:
        self.seen = 0

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        self.seen += 1
        if request == "gave_up":
            return caller.gave_up(time.time())
        if request == "seen":
            return self.seen - 1
        return super().handle_call(request, caller)


@pytest.mark.parametrize("deadline", BAD_DEADLINES, ids=["string", "bool", "nan", "list"])
def test_a_call_whose_deadline_is_no_time_is_refused_bad_request_and_the_server_serves_on(
        actor_system: Any, deadline: Any) -> None:
    server = start_server(actor_system, GivesUp)
    pid = actor_system.ask(server, Call(OsPid()), 10)

    message = Call("gave_up", deadline=deadline)
    answer = actor_system.ask(server, message, 10)

    assert isinstance(answer, ErrorReply), answer
    assert (answer.ref, answer.code) == (message.ref, "bad_request")
    assert "deadline" in answer.detail
    # The same server (not a restarted one) answers the next call, and its handler
    # never saw the refused one.
    assert call(actor_system, server, "gave_up", timeout=10) is False
    assert call(actor_system, server, "seen", timeout=10) == 1
    again = actor_system.ask(server, Call(OsPid()), 10)
    assert isinstance(pid, Reply) and isinstance(again, Reply) and again.value == pid.value


@pytest.mark.parametrize(("deadline", "gave_up"), [
    (math.inf, False),  # never
    (-math.inf, True),  # long passed
    (10**12, False),  # an int: a time far ahead
    (0, True),
])
def test_a_deadline_that_is_a_number_is_taken_as_it_is(actor_system: Any, deadline: float, gave_up: bool) -> None:
    server = start_server(actor_system, GivesUp)
    message = Call("gave_up", deadline=deadline)
    assert actor_system.ask(server, message, 10) == Reply(message.ref, gave_up)


def test_a_turn_with_a_deadline_that_is_no_time_is_refused_at_the_host_as_invalid_and_not_written(
        host: Host) -> None:
    """Sent to the host's ``sessions`` supervisor and to the session's partition: each
    refuses it (what a Runner raises for it: InvalidRequestError); the session takes
    the next turn, and the refused one was never written."""
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    sessions = host.root.child("sessions")  # type: ignore[union-attr]
    partition = host.partition_for("echo", "ann", "s1")
    for to, text in ((sessions.address, "via the supervisor"), (partition, "straight")):
        message = Call(RunRequest("echo", "ann", "s1", new_message=Content.user(text)), deadline="in a minute")  # type: ignore[arg-type]
        answer = host.system.ask(to, message, 10)
        assert isinstance(answer, ErrorReply) and answer.ref == message.ref, answer
        assert isinstance(typed_error(CallError(answer.detail, code=answer.code)), InvalidRequestError)

    assert [e.content.text for e in runner.run("ann", "s1", "t1") if e.content][-1] == "echo: t1 (turn 1)"
    events = runner.get_session("ann", "s1").events
    assert [e.content.text for e in events if e.author == "user" and e.content is not None] == ["t1"]
