"""A turn on a Runner's direct line whose Runner died before its partition read it (issue 59).

A Runner on the host's machine (a front door's, the host's own) sends its turns over a
Unix socket straight to the session's partition (``runtime._caller_line``). While the
partition is busy (here: stopped with SIGSTOP), a turn written on such a line waits in
the socket; the Runner's process is killed (SIGKILL), its caller told the turn failed,
and the caller's next turn comes through Thespian (another host's front door: an actor
process standing in). When the partition runs again, Thespian hands it the TCP message
before the watched sockets are looked at, and a new line is read only on the round after
its accept: the later turn is taken first. The dead Runner's turn must then never be
written, as for a turn held on a hop (tests/test_late_turns.py).

A line can outlive its Runner: a child the Runner forked holds it open. The partition
then tells the Runner gone by the process that connected the line (SO_PEERCRED), and a
Runner's own lines are closed in the children it forks.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from late_line_actors import Caller
from test_late_turns import queued_bytes, user_texts

from adk_actors import Content
from adk_actors.messages import LinePath, RunRequest
from adk_actors.runtime import Host
from supervision import call
from supervision.protocol import Call, OsPid
from supervision.testing import wait_until

#: A Runner's end of a line in a process of its own: once told to go (a line on its
#: stdin), connects to the partition's socket (argv[1]), writes one turn (``t2``) and
#: says so, then waits to be killed.
LINE_WRITER = """
import sys, time
from adk_actors import Content
from adk_actors.messages import RunRequest
from adk_actors.runtime._caller_line import RunnerLine
from supervision.protocol import Call
print("ready", flush=True)
sys.stdin.readline()
line = RunnerLine.connect(sys.argv[1])
assert line is not None
assert line.send(Call(RunRequest("echo", "ann", "s1", new_message=Content.user("t2"), reply_accepted=False)))
print("sent", flush=True)
time.sleep(60)
"""


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    """The next line ``process`` prints within ``timeout`` seconds ('' if none)."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return process.stdout.readline().strip() if ready else ""


def process_state(pid: int) -> str:
    """The state letter of process ``pid`` (``T``: stopped), from /proc."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_a_turn_on_a_dead_runners_line_is_never_written_after_its_next_turn(host: Host) -> None:
    """Before, it was written after the caller's next turn: t1, t3, t2, t4."""
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    assert [e.content.text for e in runner.run("ann", "s1", "t1") if e.content][-1] == "echo: t1 (turn 1)"
    partition = host.partition_for("echo", "ann", "s1", refresh=True)
    partition_pid = call(host.system, partition, OsPid(), timeout=10)
    path = call(host.system, partition, LinePath(), timeout=10)
    assert isinstance(partition_pid, int) and path and Path(path).is_socket()
    front_door: Any = host.system.createActor(Caller)
    # Its connection to the partition is open (as a front door's that served the session).
    assert host.system.ask(front_door, ("call", partition, OsPid()), 10) == "answered"
    port = int(partition.addressDetails.sockname[1])
    later = RunRequest("echo", "ann", "s1", new_message=Content.user("t3"))
    with subprocess.Popen([sys.executable, "-c", LINE_WRITER, path], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdin is not None
        stopped = False
        try:
            assert read_line(writer, 60) == "ready"
            os.kill(partition_pid, signal.SIGSTOP)  # (its supervisor kills a child stopped 5 s: this is far less)
            stopped = True
            wait_until(lambda: process_state(partition_pid) == "T", timeout=10)
            # The Runner's turn waits in the stopped partition's socket; its Runner dies.
            writer.stdin.write("go\n")
            writer.stdin.flush()
            assert read_line(writer, 10) == "sent"
            writer.kill()
            writer.wait(10)
            # The caller's next turn, through Thespian; in the partition's socket too.
            before = queued_bytes(port)
            assert host.system.ask(front_door, ("send", partition, Call(later)), 10) == "sent"
            # (at least its pickle: a health ping from the partition's supervisor is smaller)
            wait_until(lambda: queued_bytes(port) - before >= len(pickle.dumps(Call(later))), timeout=3)
        finally:
            if stopped:
                os.kill(partition_pid, signal.SIGCONT)
            if writer.poll() is None:
                writer.kill()
    wait_until(lambda: "t3" in user_texts(host, "s1"), timeout=10)
    wait_until(lambda: getattr(runner.last_run("ann", "s1"), "status", None) != "running", timeout=10)
    assert [e.content.text for e in runner.run("ann", "s1", "t4") if e.content][-1].startswith("echo: t4")
    assert user_texts(host, "s1") == ["t1", "t3", "t4"]
    assert call(host.system, partition, OsPid(), timeout=10) == partition_pid  # the same partition throughout


#: A Runner's end of a line, as a process that forks while it holds it: a plain socket
#: (a library's own, which no at-fork hook of ours closes). ``argv[2]`` ``first``: it
#: connects at once and has a turn (``t2``) served on the line to its end. Once told to
#: go (a line on its stdin): connects (if not yet), writes a turn (``t3``), forks, says
#: so with the child's pid, and waits to be killed; the child holds the line and prints
#: the first answer that comes on it (``answer <type> <code>``), then waits to be killed.
FORKING_WRITER = """
import os, pickle, sys, time, socket
from adk_actors import Content
from adk_actors.messages import RunDone, RunFailed, RunMessages, RunRequest
from adk_actors.runtime._caller_line import HEADER, frame_of
from adk_actors.runtime._link import connect_unix
from supervision.protocol import Call

def turn(text):
    return frame_of(Call(RunRequest("echo", "ann", "s1", new_message=Content.user(text), reply_accepted=False)))

def exactly(sock, size):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError("the line ended")
        data += chunk
    return data

def read_frame(sock):
    (size,) = HEADER.unpack(exactly(sock, HEADER.size))
    return pickle.loads(exactly(sock, size))

sock = None
if sys.argv[2] == "first":
    sock = connect_unix(sys.argv[1], socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.sendall(turn("t2"))
    ended = False
    while not ended:
        message = read_frame(sock)
        batch = message.messages if isinstance(message, RunMessages) else (message,)
        ended = any(isinstance(m, (RunDone, RunFailed)) for m in batch)
print("ready", flush=True)
sys.stdin.readline()
if sock is None:
    sock = connect_unix(sys.argv[1], socket.SOCK_STREAM)
    sock.settimeout(30)
sock.sendall(turn("t3"))
child = os.fork()
if child == 0:
    sock.settimeout(60)
    answer = read_frame(sock)
    print("answer", type(answer).__name__, getattr(answer, "code", ""), flush=True)
    time.sleep(60)
    os._exit(0)
print("sent", child, flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("connected", ["first", "late"])
def test_a_turn_on_a_line_a_forked_child_holds_after_its_runner_died_is_never_written(host: Host,
                                                                                     connected: str) -> None:
    """Issue 59: a Runner's process forked while it held its line, so the line stays open
    after the Runner is killed (SIGKILL). Before, the turn it wrote while its partition
    was busy (stopped) was taken when the partition ran again, as if its caller waited.
    Now the partition knows which process connected the line (SO_PEERCRED) and refuses
    ``not_running`` a write from one that no longer runs: the line was connected and
    served a turn first (``first``), or connected while the partition was stopped
    (``late``: its Runner was gone before the line was accepted)."""
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    assert [e.content.text for e in runner.run("ann", "s1", "t1") if e.content][-1] == "echo: t1 (turn 1)"
    partition = host.partition_for("echo", "ann", "s1", refresh=True)
    partition_pid = call(host.system, partition, OsPid(), timeout=10)
    path = call(host.system, partition, LinePath(), timeout=10)
    assert isinstance(partition_pid, int) and path and Path(path).is_socket()
    served = ["t1", "t2"] if connected == "first" else ["t1"]
    child = 0
    with subprocess.Popen([sys.executable, "-c", FORKING_WRITER, path, connected], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdin is not None
        stopped = False
        try:
            assert read_line(writer, 60) == "ready"
            assert user_texts(host, "s1") == served
            os.kill(partition_pid, signal.SIGSTOP)  # (its supervisor kills a child stopped 5 s: this is far less)
            stopped = True
            wait_until(lambda: process_state(partition_pid) == "T", timeout=10)
            writer.stdin.write("go\n")
            writer.stdin.flush()
            said, _, pid = read_line(writer, 10).partition(" ")
            assert said == "sent" and pid.isdigit()
            child = int(pid)
            writer.kill()  # the Runner dies; its forked child holds the line open
            writer.wait(10)
            os.kill(partition_pid, signal.SIGCONT)
            stopped = False
            assert read_line(writer, 20) == "answer ErrorReply not_running"
        finally:
            if stopped:
                os.kill(partition_pid, signal.SIGCONT)
            if writer.poll() is None:
                writer.kill()
            if child:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
    assert user_texts(host, "s1") == served
    assert [e.content.text for e in runner.run("ann", "s1", "t4") if e.content][-1].startswith("echo: t4")
    assert user_texts(host, "s1") == [*served, "t4"]
    assert call(host.system, partition, OsPid(), timeout=10) == partition_pid  # the same partition throughout


#: A process with a Runner's line (one end of a socket pair) forks: the child reports
#: whether its copy of the line is closed; the parent then sends a frame on its own.
FORK_CLOSES = """
import os, socket, sys
from adk_actors.runtime._caller_line import RunnerLine
mine, theirs = socket.socketpair()
line = RunnerLine(mine)
child = os.fork()
if child == 0:
    print("child", line.closed, flush=True)
    os._exit(0)
os.waitpid(child, 0)
print("parent", line.closed, line.send("hello"), flush=True)
"""


def test_a_runners_line_is_closed_in_the_children_it_forks() -> None:
    """Only the Runner's own process speaks on its line: a child it forks has its copy
    closed (and would connect one of its own), the parent's stays open and usable."""
    done = subprocess.run([sys.executable, "-c", FORK_CLOSES], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["child True", "parent False True"]
