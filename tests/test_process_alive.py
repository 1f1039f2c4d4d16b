"""``kill_pending`` and ``process_alive`` (supervision.lowlevel), as a partition uses
them before it gives a turn to a run worker: a process killed with kill -9 has the kill
pending from the moment the kill returns, although the kernel ends it only once it is
scheduled again (milliseconds under load: a turn given to it then died with it,
``RunActorDied``, a CI failure of ``test_queued_after_crash``). Until it exits it is
still alive (it holds its sockets: a caller's liveness fence must not take it for gone)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from supervision.lowlevel import kill_pending, process_alive

BUSY = "while True: pass"
SLEEPING = "import time; time.sleep(60)"
IGNORES_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ignoring', flush=True); time.sleep(60)"
)


def _started(code: str, n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def test_processes_killed_at_once_have_the_kill_pending_as_soon_as_each_kill_returns() -> None:
    children = _started(BUSY, 4) + _started(SLEEPING, 4)
    try:
        assert all(process_alive(child.pid) and not kill_pending(child.pid) for child in children)
        doomed = []
        for child in children:
            os.kill(child.pid, signal.SIGKILL)
            # read before it could be scheduled: pending, or already exited (a zombie)
            doomed.append(kill_pending(child.pid) or not process_alive(child.pid))
        assert doomed == [True] * len(children)
    finally:
        for child in children:
            child.kill()
            child.wait(10)
    assert not any(process_alive(child.pid) or kill_pending(child.pid) for child in children)  # reaped


def test_a_stopped_process_is_alive_and_a_signal_it_handles_is_no_kill() -> None:
    # The child says when it ignores SIGTERM: sent before that (its start takes
    # long at load), SIGTERM's default action would end it even while stopped.
    child = subprocess.Popen([sys.executable, "-c", IGNORES_TERM], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ignoring\n"
        os.kill(child.pid, signal.SIGSTOP)
        os.kill(child.pid, signal.SIGTERM)  # pending while it is stopped, ignored once it runs
        assert process_alive(child.pid) and not kill_pending(child.pid)
        os.kill(child.pid, signal.SIGCONT)
        assert process_alive(child.pid) and not kill_pending(child.pid)
    finally:
        child.kill()
        child.wait(10)


def test_a_pid_no_process_has_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(10)
    assert not process_alive(child.pid) and not kill_pending(child.pid)
    assert process_alive(os.getpid()) and not kill_pending(os.getpid())  # this one is
