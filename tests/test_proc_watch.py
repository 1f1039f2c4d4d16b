"""``runtime._proc_watch.ProcessWatch``, as a partition checks a run worker before each
turn: from /proc files it opened once, a process killed with kill -9 takes no turn from
the moment the kill returns (as ``process_alive`` and ``kill_pending`` read by path), nor
once it is a zombie or reaped; a stopped process with a signal it ignores still does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from adk_actors.runtime._proc_watch import ProcessWatch

BUSY = "while True: pass"
SLEEPING = "import time; time.sleep(60)"


def _started(code: str, n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def test_processes_killed_at_once_take_no_turn_as_soon_as_each_kill_returns() -> None:
    children = _started(BUSY, 3) + _started(SLEEPING, 3)
    watches = [ProcessWatch(child.pid) for child in children]
    try:
        assert all(watch.may_take_turns() for watch in watches)
        at_once = []
        for child, watch in zip(children, watches, strict=True):
            os.kill(child.pid, signal.SIGKILL)
            at_once.append(watch.may_take_turns())  # read before it could be scheduled
        assert at_once == [False] * len(children)
        for child, watch in zip(children, watches, strict=True):
            child.wait(10)  # reaped: its held files name no process now
            assert not watch.may_take_turns()
    finally:
        for child, watch in zip(children, watches, strict=True):
            watch.close()
            child.kill()
            child.wait(10)


def test_a_zombie_takes_no_turn() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    watch = ProcessWatch(pid)
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
        assert not watch.may_take_turns()
    finally:
        watch.close()
        os.waitpid(pid, 0)


def test_a_stopped_process_with_a_signal_it_ignores_pending_takes_turns() -> None:
    # the child says when its SIGTERM is ignored: sent before that, a SIGTERM's default
    # action is fatal, and the kernel marks a SIGKILL pending at once (rightly: no turn)
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                              "signal.SIG_IGN); print('ignoring', flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"ignoring\n"
    watch = ProcessWatch(child.pid)
    try:
        os.kill(child.pid, signal.SIGSTOP)
        os.kill(child.pid, signal.SIGTERM)
        assert watch.may_take_turns()
    finally:
        watch.close()
        child.kill()
        child.wait(10)


def test_a_process_gone_before_it_was_watched_takes_no_turn() -> None:
    (child,) = _started("pass", 1)
    child.wait(10)
    watch = ProcessWatch(child.pid)
    assert not watch.may_take_turns()
    watch.close()
