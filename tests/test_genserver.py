"""GenServer contract on real processes: replies, typed errors, let-it-crash."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from supervision import (
    NO_REPLY,
    BadRequest,
    CallerRef,
    CallTimeout,
    ChildSpec,
    ErrorReply,
    GenServer,
    Prepare,
    Prepared,
    ServerCrashed,
    ServerNotRunning,
    StartFailed,
    Supervisor,
    SupervisorClient,
    SupervisorSpec,
    UnknownRequest,
    call,
    start_server,
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
            from supervision import NO_REPLY

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


def test_unknown_raw_message_gets_an_error_reply(actor_system: Any) -> None:
    server = start_server(actor_system, Strict)
    answer = actor_system.ask(server, "not a protocol message", 5)
    assert isinstance(answer, ErrorReply) and answer.code == "unknown_message"
    assert call(actor_system, server, ("add", 1)) == 1


def test_crash_replies_to_every_pending_caller_and_the_process_exits(actor_system: Any) -> None:
    server = start_server(actor_system, Strict)
    pid = call(actor_system, server, "pid")
    with actor_system.private() as other:
        from supervision import Call

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
        from supervision import Call, Reply

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


class Warm(GenServer):
    """Records whether it was prepared (before Init) and with which args it was started."""

    def prepare(self) -> None:
        self.prepared_pid = os.getpid()

    def init(self, args: Any) -> None:
        self.args = args

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "state":
            return getattr(self, "prepared_pid", None), self.args, os.getpid()
        return super().handle_call(request, caller)


class LateWarm(Warm):
    """Prepared only when told so by a message that comes before Init."""

    def prepare(self) -> bool:
        self.prepared_pid = os.getpid()
        return False

    def handle_before_init(self, message: Any, sender: Any) -> None:
        if message == "release":
            self.answer_prepared()


class PoolingSupervisor(Supervisor):
    """A dynamic supervisor that starts Warm processes ahead of need ("fill") and hands
    one out when a Warm child is started."""

    dynamic = True

    def configure(self, args: Any) -> SupervisorSpec:
        self.pool: list[Any] = []
        self.filling: list[CallerRef] = []
        return SupervisorSpec(children=())

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "fill-late":
            address = self.createActor(LateWarm)
            self.send(address, Prepare())
            self.late: tuple[Any, int | None] = (address, None)
            return address
        if request == "late-prepared":
            return self.late[1]
        if request == "fill":
            address = self.createActor(Warm)
            self.send(address, Prepare())
            self.pool.append(address)
            self.filling.append(caller)
            return NO_REPLY
        return super().handle_call(request, caller)

    def handle_info(self, message: Any, sender: Any) -> None:
        if isinstance(message, Prepared) and getattr(self, "late", (None,))[0] == sender:
            self.late = (sender, message.pid)
            return
        if isinstance(message, Prepared) and self.filling:
            self.reply(self.filling.pop(0), message.pid)
            return
        super().handle_info(message, sender)

    def spawn(self, child_class: type[GenServer], spec: ChildSpec) -> Any:
        if child_class is Warm and self.pool:
            return self.pool.pop(0)
        return super().spawn(child_class, spec)


def test_a_supervisor_can_start_a_child_on_a_process_prepared_ahead_of_need(actor_system: Any) -> None:
    address = start_server(actor_system, PoolingSupervisor, SupervisorSpec(children=()))
    supervisor = SupervisorClient(actor_system, address)
    prepared = call(actor_system, address, "fill", timeout=10)
    child = supervisor.start_child(ChildSpec(id="w1", start=Warm, args=7))
    assert call(actor_system, child.address, "state") == (prepared, 7, prepared)  # prepare ran there, then init
    another = supervisor.start_child(ChildSpec(id="w2", start=Warm, args=8))  # pool empty: a new process
    prepared_pid, args, pid = call(actor_system, another.address, "state")
    assert prepared_pid is None and args == 8 and pid != prepared
    infos = {i.id: i for i in supervisor.which_children()}
    assert infos[child.id].pid == prepared and infos[child.id].status == "running"
    os.kill(prepared, signal.SIGKILL)  # the pooled process is an ordinary child from then on: restarted
    wait_until(lambda: (info := next(i for i in supervisor.which_children() if i.id == child.id)).status == "running"
               and info.pid not in (None, prepared), timeout=10)


def test_a_process_may_answer_prepared_later_when_a_message_before_init_says_so(actor_system: Any) -> None:
    address = start_server(actor_system, PoolingSupervisor, SupervisorSpec(children=()))
    late = call(actor_system, address, "fill-late", timeout=10)
    time.sleep(0.3)
    assert call(actor_system, address, "late-prepared") is None  # prepare() returned False: no answer yet
    actor_system.tell(late, "release")  # goes to handle_before_init, which answers
    pid = wait_until(lambda: call(actor_system, address, "late-prepared"), timeout=10)
    assert pid_alive(pid)
