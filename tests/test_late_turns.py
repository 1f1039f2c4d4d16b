"""A turn whose caller died before its session took it (issue 59).

At load, a front door's request to a session at home on another host goes through that
host's ``sessions`` supervisor, a hop; the caller's next turn, after its front door
died and its connection broke, may reach the session another way (straight to the
partition, from the home's own front door). Here the hop is held up for certain: the
``sessions`` supervisor is stopped (SIGSTOP) while a caller (a stand-in for the front
door's Runner endpoint, an actor process) sends it a turn; the caller is killed
(SIGKILL); the next turn goes straight to the partition through the host's Runner;
then the supervisor runs again and hands the held turn on. Its caller was never
answered, so the turn must be written before the caller's next turn or never: the
session refuses a turn whose caller no longer takes a connection.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from late_turn_actors import Relay

from adk_actors import Content
from adk_actors.messages import GetSession, RunRequest
from adk_actors.runtime import Host
from supervision import call
from supervision.protocol import Call
from supervision.testing import pid_alive, wait_until


def user_texts(host: Host, session: str) -> list[str]:
    events = host.runner("echo").get_session("ann", session).events
    return [e.content.text for e in events if e.author == "user" and e.content is not None and e.content.text]


def queued_bytes(port: int) -> int:
    """Bytes received and not yet read by the sockets listening on ``port`` (their
    connections waiting to be accepted included), from /proc/net/tcp."""
    total = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, queues = fields[1], fields[4]
        if int(local.split(":")[1], 16) == port:
            total += int(queues.split(":")[1], 16)
    return total


def hold_a_turn_then_turn_again(host: Host, *, caller_dies: bool) -> list[str]:
    """Session ann/s1 of ``echo`` turned (``t1``); then a caller's turn (``t2``) held at
    the stopped ``sessions`` supervisor; the caller killed (``caller_dies``) or not; a
    turn (``t3``) straight to the partition; the supervisor let run again; once the
    held turn has reached the partition, a last turn (``t4``). The session's user texts."""
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    assert [e.content.text for e in runner.run("ann", "s1", "t1") if e.content][-1] == "echo: t1 (turn 1)"
    sessions = host.root.child("sessions")  # type: ignore[union-attr]
    assert sessions.pid is not None and sessions.address is not None
    relay: Any = host.system.createActor(Relay)
    relay_pid = host.system.ask(relay, "pid", 10)
    assert isinstance(relay_pid, int) and pid_alive(relay_pid)
    held = RunRequest("echo", "ann", "s1", new_message=Content.user("t2"))
    port = int(sessions.address.addressDetails.sockname[1])
    os.kill(sessions.pid, signal.SIGSTOP)
    try:
        # The turn reaches the stopped supervisor's socket, and its caller dies.
        assert host.system.ask(relay, ("send", sessions.address, Call(held, watch=True)), 10) == "sent"
        wait_until(lambda: queued_bytes(port) > 0, timeout=10)
        if caller_dies:
            os.kill(relay_pid, signal.SIGKILL)
            wait_until(lambda: not pid_alive(relay_pid), timeout=10)
        # The caller's next turn, another way: straight to the session's partition.
        answer = [e.content.text for e in runner.run("ann", "s1", "t3") if e.content]
        assert answer[-1] == "echo: t3 (turn 2)", answer
    finally:
        os.kill(sessions.pid, signal.SIGCONT)
    # Through the supervisor, after the held turn (one sender: in order), so its
    # partition has had the held turn when this is answered.
    with host.system.private() as endpoint:
        call(endpoint, sessions.address, GetSession("echo", "ann", "s1"), timeout=10)
    wait_until(lambda: runner.last_run("ann", "s1").status != "running", timeout=10)  # type: ignore[union-attr]
    assert [e.content.text for e in runner.run("ann", "s1", "t4") if e.content][-1].startswith("echo: t4")
    return user_texts(host, "s1")


def test_a_turn_whose_caller_died_before_its_session_took_it_is_never_written(host: Host) -> None:
    """Before, it was written after the caller's next turn: t1, t3, t2, t4."""
    assert hold_a_turn_then_turn_again(host, caller_dies=True) == ["t1", "t3", "t4"]


def test_a_held_turn_whose_caller_lives_is_taken(host: Host) -> None:
    """The refusal is for a dead caller only: one that lives (another caller of the
    session, whose turns may come in any order with t3) has its turn taken."""
    assert hold_a_turn_then_turn_again(host, caller_dies=False) == ["t1", "t3", "t2", "t4"]
