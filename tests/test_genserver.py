"""GenServer contract on real processes: replies, typed errors, let-it-crash."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from supervision import (
    BadRequest,
    CallerRef,
    CallError,
    CallTimeout,
    GenServer,
    ServerNotRunning,
    call,
    start_server,
)
from supervision.lowlevel import pid_space
from supervision.protocol import (
    ErrorReply,
    Init,
    OsPid,
    PidSpace,
    ServerCrashed,
    StartFailed,
    UnknownRequest,
)
from supervision.testing import Probe, pid_alive, probe_args, wait_until


class Strict(GenServer):
    """Rejects bad input with BadRequest, defers replies on request."""

    def init(self, args: Any) -> None:
        self.total = 0
        self.parked: list[CallerRef] = []

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, tuple) and request[0] == "add":
            if not isinstance(request[1], int):
                raise BadRequest(f"add needs an int, got {type(request[1]).__name__}")
            self.total += request[1]
            return self.total
        if request == "park":
            self.parked.append(caller)
            from supervision.lowlevel import NO_REPLY

            return NO_REPLY
        if request == "release":
            for parked in self.parked:
                self.reply(parked, "released")
            self.parked.clear()
            return "ok"
        if request == "boom":
            raise ZeroDivisionError("division by zero")
        if request == "pid":
            return os.getpid()
        return super().handle_call(request, caller)


def test_call_reply_and_state(actor_system: Any) -> None:
    server = start_server(actor_system, Strict)
    assert call(actor_system, server, ("add", 2)) == 2
    assert call(actor_system, server, ("add", 3)) == 5


def test_a_call_skips_messages_that_answer_nothing(actor_system: Any, tmp_path: Any) -> None:
    """A message that is no reply (a late event of something the endpoint did before)
    is not taken for the call's answer: the call returns the real reply."""
    server = start_server(actor_system, Probe, probe_args("p", tmp_path / "events.log"))
    with actor_system.private() as endpoint:
        assert call(endpoint, server, ("strays-first", 3)) == "after strays"
        assert call(endpoint, server, "ping") == "pong"


def test_bad_request_is_a_typed_error_and_does_not_crash(actor_system: Any) -> None:
    server = start_server(actor_system, Strict)
    pid = call(actor_system, server, "pid")
    with pytest.raises(BadRequest, match="needs an int"):
        call(actor_system, server, ("add", "x"))
    with pytest.raises(UnknownRequest):
        call(actor_system, server, {"what": "is this"})
    assert call(actor_system, server, "pid") == pid
    assert call(actor_system, server, ("add", 1)) == 1  # state intact


def test_any_server_says_which_process_runs_it_without_a_handler_of_its_own(actor_system: Any) -> None:
    """``OsPid`` and ``PidSpace`` are answered by GenServer itself, before the server's
    own hooks (``Strict`` handles neither: its handle_call would answer UnknownRequest)."""
    server = start_server(actor_system, Strict)
    pid = call(actor_system, server, OsPid())
    assert pid != os.getpid() and pid_alive(pid) and call(actor_system, server, "pid") == pid
    assert call(actor_system, server, PidSpace()) == pid_space()  # the same machine and namespace


class Containing(Strict):
    """Answers a failure of its own (a ZeroDivisionError) with a typed error and carries
    on, after dropping what the request touched (here: the running total)."""

    def handle_error(self, request: Any, error: Exception) -> Any:
        if isinstance(error, ZeroDivisionError):
            self.total = 0
            return BadRequest("that request failed inside the server; its state was reset", code="internal_error")
        return None

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "other-bug":
            raise KeyError("not contained")
        return super().handle_call(request, caller)


def test_handle_error_answers_a_failed_request_and_the_server_carries_on(actor_system: Any) -> None:
    server = start_server(actor_system, Containing)
    pid = call(actor_system, server, "pid")
    assert call(actor_system, server, ("add", 5)) == 5
    with pytest.raises(CallError) as failed:
        call(actor_system, server, "boom")
    assert failed.value.code == "internal_error" and "ZeroDivision" not in failed.value.detail
    assert call(actor_system, server, "pid") == pid  # alive, the same process
    assert call(actor_system, server, ("add", 1)) == 1  # what it dropped, dropped; it serves on
    with pytest.raises(ServerCrashed, match="KeyError"):  # not contained: let it crash, as before
        call(actor_system, server, "other-bug")
    wait_until(lambda: not pid_alive(pid), message="an uncontained failure still crashes the server")


def test_a_health_ping_is_answered_before_any_hook(actor_system: Any) -> None:
    from supervision.protocol import HEALTH_PING

    server = start_server(actor_system, Strict)
    assert call(actor_system, server, HEALTH_PING) == "ok"


def test_unknown_raw_message_gets_an_error_reply(actor_system: Any) -> None:
    server = start_server(actor_system, Strict)
    answer = actor_system.ask(server, "not a protocol message", 5)
    assert isinstance(answer, ErrorReply) and answer.code == "unknown_message"
    assert call(actor_system, server, ("add", 1)) == 1


def test_crash_replies_to_every_pending_caller_and_the_process_exits(actor_system: Any) -> None:
    server = start_server(actor_system, Strict)
    pid = call(actor_system, server, "pid")
    with actor_system.private() as other:
        from supervision.protocol import Call

        parked = Call("park")
        other.tell(server, parked)
        with pytest.raises(ServerCrashed, match="ZeroDivisionError"):
            call(actor_system, server, "boom")
        answer = other.listen(5)
        assert isinstance(answer, ErrorReply) and answer.ref == parked.ref and answer.code == "crashed"
    wait_until(lambda: not pid_alive(pid), message="crashed server process must exit")
    with pytest.raises((ServerNotRunning, CallTimeout)):  # a clear error, never a hang
        call(actor_system, server, "pid", timeout=0.5)


def test_deferred_reply(actor_system: Any) -> None:
    server = start_server(actor_system, Strict)
    with actor_system.private() as other:
        from supervision.protocol import Call, Reply

        parked = Call("park")
        other.tell(server, parked)
        assert call(actor_system, server, "release") == "ok"
        answer = other.listen(5)
        assert isinstance(answer, Reply) and answer.ref == parked.ref and answer.value == "released"


def test_init_failure_is_reported_and_leaves_no_process(actor_system: Any, tmp_path: Any) -> None:
    flag = tmp_path / "fail"
    flag.write_text("1")
    with pytest.raises(StartFailed, match="fail flag"):
        start_server(actor_system, Probe, probe_args("p", tmp_path / "ev", fail_flag=flag))


def test_kill_9_of_unsupervised_server_makes_calls_time_out_not_hang(actor_system: Any, tmp_path: Any) -> None:
    server = start_server(actor_system, Probe, probe_args("p", tmp_path / "ev"))
    pid = call(actor_system, server, "pid")
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(pid))
    with pytest.raises((ServerNotRunning, CallTimeout)):
        call(actor_system, server, "ping", timeout=0.5)


class Child(GenServer):
    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "pid":
            return os.getpid()
        return super().handle_call(request, caller)


class Parent(GenServer):
    """Starts children of its own (not a supervisor), each watched with monitor_child,
    and records every ChildActorExited it gets."""

    def init(self, args: Any) -> None:
        self.children: list[Any] = []
        self.exits: list[Any] = []

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "start":
            address = self.createActor(Child)
            self.send(address, Init(args=None, supervisor=self.myAddress))
            self.children.append(address)
            return address
        if isinstance(request, tuple) and request[0] == "watch":
            return self.monitor_child(self.children[request[1]], request[2])
        if request == "exits":
            return [self.children.index(a) for a in self.exits if a in self.children]
        return super().handle_call(request, caller)

    def handle_info(self, message: Any, sender: Any) -> None:
        if type(message).__name__ == "ChildActorExited":
            self.exits.append(message.childAddress)
        else:
            super().handle_info(message, sender)


def _pid_once_initialised(system: Any, address: Any) -> int | None:
    """The child's pid; None while its Init (sent by its parent) has not arrived."""
    try:
        pid: int = call(system, address, "pid", timeout=10)
    except ServerNotRunning:
        return None
    return pid


def test_monitor_child_reports_both_of_two_children_killed_at_once_exactly_once(actor_system: Any) -> None:
    """Thespian reports only one of two children that die together, about one try in
    two: with monitor_child the parent gets a ChildActorExited for each, once."""
    for _ in range(5):
        parent = start_server(actor_system, Parent, None)
        pids = []
        for index in range(2):
            child = call(actor_system, parent, "start", timeout=10)
            pid = wait_until(lambda c=child: _pid_once_initialised(actor_system, c), timeout=10)
            assert call(actor_system, parent, ("watch", index, pid), timeout=10) is True
            pids.append(pid)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda p=parent: sorted(call(actor_system, p, "exits", timeout=5)) == [0, 1], timeout=5)
        time.sleep(0.2)  # nothing more comes: no exit is reported twice
        assert sorted(call(actor_system, parent, "exits", timeout=5)) == [0, 1]


class Stopper(GenServer):
    """Answers whether it is stopping; records it again in ``terminate``."""

    def init(self, args: Any) -> None:
        self.record = args

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "stopping?":
            return self.stopping
        return super().handle_call(request, caller)

    def terminate(self, reason: Any) -> None:
        with open(self.record, "w") as out:
            out.write(str(self.stopping))


def test_a_server_knows_it_is_stopping_through_its_public_hook(actor_system: Any, tmp_path: Any) -> None:
    from supervision.protocol import Shutdown

    record = tmp_path / "stopping"
    server = start_server(actor_system, Stopper, record)
    assert call(actor_system, server, "stopping?") is False
    actor_system.tell(server, Shutdown())
    wait_until(lambda: record.exists() and record.read_text() == "True", timeout=10)


def _epoll_descriptors(pid: int) -> int:
    found = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[eventpoll]"
        except OSError:  # closed meanwhile
            pass
    return found


def test_an_idle_actor_waits_with_poll_and_holds_no_epoll_descriptor(actor_system: Any) -> None:
    """Thespian builds a selector at every turn of an actor's loop (poll_thespian_loops):
    with epoll each turn made and closed a descriptor, and an actor waiting for a
    message held one. Its asyncio loops (none in this server) keep the default."""
    import selectors

    from thespian.system.transport import TCPTransport

    server = start_server(actor_system, Strict)
    pid = call(actor_system, server, "pid")
    # Back in its loop, waiting: none held (with the fault, one is held for as long as it waits).
    wait_until(lambda: _epoll_descriptors(pid) == 0, timeout=10)
    assert TCPTransport.selectors.DefaultSelector is selectors.PollSelector
    assert selectors.DefaultSelector is not selectors.PollSelector  # (epoll on Linux)


class LateStarter(GenServer):
    """A start that takes more than one message, through GenServer's extension points
    only: ``begin_init`` sets a timer and answers nothing; the timer (which fires
    before the start is answered) accepts or refuses the start as ``args`` says.
    Until then a call is answered ``not_running`` ("server starting")."""

    def begin_init(self, args: Any, starter: Any) -> None:
        self.verdict, self.starter, self.timers = args, starter, 0
        self.send_after(0.05, "settle")

    def handle_timeout(self, payload: Any) -> None:
        self.timers += 1
        if self.verdict == "accept":
            self.answer_init(self.starter)
        else:
            self.refuse_init(self.starter, f"refused after {self.timers} timer")

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        return ("started", self.timers) if request == "state" else super().handle_call(request, caller)


def test_a_server_may_answer_its_start_later_and_its_timers_fire_meanwhile(actor_system: Any) -> None:
    server = start_server(actor_system, LateStarter, "accept")
    assert call(actor_system, server, "state") == ("started", 1)


def test_a_server_may_refuse_its_start_later(actor_system: Any) -> None:
    with pytest.raises(StartFailed, match="refused after 1 timer"):
        start_server(actor_system, LateStarter, "refuse")
