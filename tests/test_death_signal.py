"""Every actor dies with its parent (``supervision.lowlevel.set_parent_death_signal``), also one
whose parent died while it was still starting, before it asked for the signal."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import time
from pathlib import Path

from supervision.lowlevel import forked_by, set_parent_death_signal
from supervision.testing import wait_until

_PR_SET_CHILD_SUBREAPER = 36


def _late_asker(record: str) -> None:
    """Forked by a parent that exits at once: once it is gone, ask for the death signal
    as every actor does (GenServer), naming the process that forked it."""
    forker = os.getppid()
    Path(record).write_text(str(os.getpid()))
    deadline = time.monotonic() + 5
    while os.getppid() == forker and time.monotonic() < deadline:
        time.sleep(0.01)
    set_parent_death_signal(started_by=forked_by())
    time.sleep(30)  # killed before this ends (the test would wait for it in vain)


def _fork_and_exit(record: str) -> None:
    multiprocessing.get_context("fork").Process(target=_late_asker, args=(record,)).start()
    os._exit(0)  # at once, not joining the child


def _reaped(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def test_a_child_whose_parent_died_before_it_asked_for_the_death_signal_dies_at_once(tmp_path: Path) -> None:
    """Adopted by a subreaper (this test process), its parent is not init, so only the
    check against the process that forked it finds its parent gone."""
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    record = tmp_path / "orphan.pid"
    try:
        parent = multiprocessing.get_context("fork").Process(target=_fork_and_exit, args=(str(record),))
        parent.start()
        parent.join(10)
        orphan = wait_until(lambda: record.exists() and record.read_text() and int(record.read_text()), timeout=10)
        wait_until(lambda: _reaped(orphan), timeout=5, message="the orphan killed itself")
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        if record.exists() and record.read_text() and not _reaped(int(record.read_text())):
            os.kill(int(record.read_text()), signal.SIGKILL)
