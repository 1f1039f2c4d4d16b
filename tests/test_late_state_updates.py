"""A state update whose caller died before its session took it (issue 59).

The same path as tests/test_late_turns.py, for google-adk's PATCH of a session
(``UpdateState``): a caller (a stand-in for a front door's Runner endpoint, an actor
process) sends an update through the host's ``sessions`` supervisor while it is stopped
(SIGSTOP), the hop a request to a session at home on another host takes; the caller is
killed (SIGKILL); the caller's next update goes straight to the partition through the
host's Runner; then the supervisor runs again and hands the held update on. Its caller
was never answered, so it must land before the later update or never: otherwise the
session's state ends as the earlier update left it, after the later one was acknowledged.

A caller alive but past its deadline (its call timed out while the partition, or the hop
before it, was busy: stopped here) has its update refused the same way when the partition
gets to it; one still within its deadline has it taken.
"""

from __future__ import annotations

import os
import pickle
import signal
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from late_turn_actors import Relay
from test_late_line_turns import process_state
from test_late_turns import queued_bytes

from adk_actors.messages import GetSession, GetState, UpdateState
from adk_actors.runtime import Host
from supervision import CallTimeout, call
from supervision.protocol import Call, OsPid
from supervision.testing import pid_alive, wait_until


def hold_an_update_then_update_again(host: Host, *, caller_dies: bool) -> tuple[dict[str, Any], list[Any]]:
    """Session ann/s1 of ``echo`` given ``v=first``; a caller's update ``v=held`` held at
    the stopped ``sessions`` supervisor; the caller killed (``caller_dies``) or not; an
    update ``v=later`` straight to the partition; the supervisor let run again; once the
    held update has reached the partition (a read through the supervisor, after it), the
    session's state and the ``v`` of each state event in order."""
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    assert runner.update_state("ann", "s1", {"v": "first"}).state["v"] == "first"
    sessions = host.root.child("sessions")  # type: ignore[union-attr]
    assert sessions.pid is not None and sessions.address is not None
    relay: Any = host.system.createActor(Relay)
    relay_pid = host.system.ask(relay, "pid", 10)
    assert isinstance(relay_pid, int) and pid_alive(relay_pid)
    held = UpdateState("echo", "ann", "s1", {"v": "held"})
    port = int(sessions.address.addressDetails.sockname[1])
    os.kill(sessions.pid, signal.SIGSTOP)
    try:
        # The update reaches the stopped supervisor's socket, and its caller dies.
        assert host.system.ask(relay, ("send", sessions.address, Call(held, watch=True)), 10) == "sent"
        wait_until(lambda: queued_bytes(port) > 0, timeout=10)
        if caller_dies:
            os.kill(relay_pid, signal.SIGKILL)
            wait_until(lambda: not pid_alive(relay_pid), timeout=10)
        # The caller's next update, another way: straight to the session's partition.
        assert runner.update_state("ann", "s1", {"v": "later"}).state["v"] == "later"
    finally:
        os.kill(sessions.pid, signal.SIGCONT)
    # Through the supervisor, after the held update (one sender: in order), so its
    # partition has had the held update when this is answered.
    with host.system.private() as endpoint:
        call(endpoint, sessions.address, GetSession("echo", "ann", "s1"), timeout=10)
    session = runner.get_session("ann", "s1")
    assert session is not None
    updates = [e.actions.state_delta["v"] for e in session.events
               if e.actions is not None and "v" in e.actions.state_delta]
    return dict(session.state), updates


def test_an_update_whose_caller_died_before_its_session_took_it_is_never_written(host: Host) -> None:
    """Before, it was written after the caller's later update: the state ended ``held``."""
    state, updates = hold_an_update_then_update_again(host, caller_dies=True)
    assert state["v"] == "later"
    assert updates == ["first", "later"]


def test_a_held_update_whose_caller_lives_is_taken(host: Host) -> None:
    """The refusal is for a dead caller only: one that lives (another caller of the
    session, whose updates may come in any order with the later one) has its update
    taken, after the later one here."""
    state, updates = hold_an_update_then_update_again(host, caller_dies=False)
    assert state["v"] == "held"
    assert updates == ["first", "later", "held"]


def update_while_stopped(host: Host, *, stop: str, timeout: float) -> tuple[str, dict[str, Any], list[Any]]:
    """Session ann/s1 of ``echo`` given ``v=first``; the session's partition (``stop``
    ``"partition"``) or the host's ``sessions`` supervisor (``"sessions"``: the hop on the
    way, which hands the call on) stopped (SIGSTOP, far less than the 5 s a supervisor
    lets a stopped child be); a caller's update ``v=late`` called there with ``timeout``,
    from an endpoint of its own; once the update waits in the stopped process's socket:
    resumed after the caller's deadline passed (``timeout`` 1 s: the call timed out) or
    at once (a long ``timeout``: it is waiting). Then, from the same endpoint (one sender,
    so in order after the update), the session is read. How the call ended (``timeout``
    or ``answered``), the state, and the ``v`` of each state event in order."""
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    assert runner.update_state("ann", "s1", {"v": "first"}).state["v"] == "first"
    if stop == "partition":
        target = host.partition_for("echo", "ann", "s1", refresh=True)
        pid = call(host.system, target, OsPid(), timeout=10)
    else:
        sessions = host.root.child("sessions")  # type: ignore[union-attr]
        target, pid = sessions.address, sessions.pid
    assert isinstance(pid, int) and target is not None
    port = int(target.addressDetails.sockname[1])
    late = UpdateState("echo", "ann", "s1", {"v": "late"})
    with host.system.private() as endpoint, ThreadPoolExecutor(1) as pool:
        os.kill(pid, signal.SIGSTOP)
        try:
            wait_until(lambda: process_state(pid) == "T", timeout=10)
            before = queued_bytes(port)
            outcome = pool.submit(call_outcome, endpoint, target, late, timeout)
            wait_until(lambda: queued_bytes(port) - before >= len(pickle.dumps(Call(late))), timeout=5)
            if timeout < 5:  # the caller gives up first
                assert outcome.result(timeout=10) == "timeout"
        finally:
            os.kill(pid, signal.SIGCONT)
        ended = outcome.result(timeout=30)
        state = call(endpoint, target, GetState("echo", "ann", "s1"), timeout=10)
    session = runner.get_session("ann", "s1")
    assert session is not None
    updates = [e.actions.state_delta["v"] for e in session.events
               if e.actions is not None and "v" in e.actions.state_delta]
    return ended, dict(state), updates


def call_outcome(endpoint: Any, to: Any, request: Any, timeout: float) -> str:
    """``answered`` when the call of ``request`` to ``to`` was answered, ``timeout`` when
    its caller stopped waiting first."""
    try:
        call(endpoint, to, request, timeout=timeout)
    except CallTimeout:
        return "timeout"
    return "answered"


@pytest.mark.parametrize("stop", ["partition", "sessions"])
def test_an_update_whose_caller_gave_up_while_the_host_was_busy_is_never_written(host: Host, stop: str) -> None:
    """Issue 59: the caller's call timed out (it told its user the update failed) while
    the update waited in a stopped process's socket. Before, the update was written when
    the process ran again: the state ended ``late``. Now the call's deadline goes with it
    (through the ``sessions`` supervisor's hand-over too) and the partition refuses it."""
    ended, state, updates = update_while_stopped(host, stop=stop, timeout=1.0)
    assert ended == "timeout"
    assert state["v"] == "first"
    assert updates == ["first"]
    # The session takes the next update as ever.
    assert host.runner("echo").update_state("ann", "s1", {"v": "next"}).state["v"] == "next"


@pytest.mark.parametrize("stop", ["partition", "sessions"])
def test_an_update_whose_caller_still_waits_is_written_when_the_host_gets_to_it(host: Host, stop: str) -> None:
    """The refusal is for a caller past its deadline only: one still waiting has its
    update taken and answered once the stopped process runs again."""
    ended, state, updates = update_while_stopped(host, stop=stop, timeout=30.0)
    assert ended == "answered"
    assert state["v"] == "late"
    assert updates == ["first", "late"]
