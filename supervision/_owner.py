"""The actor system dies with the process that started it.

Thespian's admin detaches itself (``setsid``, a double fork), so when the process
that started a system is killed with SIGKILL the admin, the logger and every actor
would go on serving on the port. :func:`~supervision.start_actor_system` therefore
starts an :class:`OwnerWatch` as a top-level actor: it watches the starting process
through a pidfd (a poll of ``/proc`` where there are no pidfds) and, once that
process has ended, runs ``python -m supervision stop --kill-group``: a graceful
shutdown of the system within ``grace`` seconds, then SIGKILL to the process group
the admin made, which holds every process of the system and nothing else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from ._server import GenServer
from ._system import process_alive

__all__ = ["OwnerArgs", "OwnerWatch"]

_POLL = 0.5  # seconds between two looks at the owner where pidfds are missing


@dataclass(frozen=True)
class OwnerArgs:
    owner_pid: int
    port: int
    host: str
    grace: float = 10.0


class OwnerWatch(GenServer):
    """Stops the whole actor system when its owner process has ended (see the module)."""

    def init(self, args: Any) -> Any:
        if not isinstance(args, OwnerArgs):
            raise TypeError(f"OwnerWatch needs OwnerArgs, got {type(args).__name__}")
        self.args = args
        self.stopping_system = False
        if not self.monitor_process(args.owner_pid, "owner"):
            self.send_after(0.0, "look")
        return None

    def handle_process_down(self, tag: Any) -> None:
        self._stop_system()

    def handle_timeout(self, payload: Any) -> None:
        if payload != "look" or self.stopping_system:
            return
        if process_alive(self.args.owner_pid):
            self.send_after(_POLL, "look")
        else:
            self._stop_system()

    def _stop_system(self) -> None:
        """Run the stopper in a session of its own, so that it outlives this group."""
        if self.stopping_system:
            return
        self.stopping_system = True
        self.log.warning("the process that started this actor system (pid %s) is gone: stopping the system",
                         self.args.owner_pid)
        subprocess.Popen(
            [sys.executable, "-m", "supervision", "stop", "--port", str(self.args.port), "--host", self.args.host,
             "--kill-group", str(os.getpgrp()), "--grace", str(self.args.grace)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
