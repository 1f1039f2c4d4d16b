"""Ending a code run's process and everything it started."""

from __future__ import annotations

import os
import signal
import subprocess

__all__ = ["end_group"]


def _signal_group(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except OSError:
        pass  # the group is empty already


def end_group(process: subprocess.Popen[bytes], grace: float) -> None:
    """End ``process`` (the leader of its own session) and what it started: SIGTERM to
    the group, up to ``grace`` seconds for it to go, then SIGKILL to the group whether
    or not the leader went (a child that ignores SIGTERM would stay), and reap the
    leader."""
    if grace > 0:
        _signal_group(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(process.pid, signal.SIGKILL)
    try:
        process.kill()
    except OSError:
        pass
    process.wait()
