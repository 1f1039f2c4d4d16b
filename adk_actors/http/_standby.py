"""The HTTP server's first process, forked by ``serve`` ahead of need.

Why: the server process imports the kit, FastAPI and uvicorn before it can answer.
Started by its actor after the rest of the tree (the root is rest_for_one, the
``http`` child last), that import came after everything else and was most of
``serve``'s start-up (bench/startup.py). ``serve`` has already imported the kit when
it reads its config, so it forks one server process at that moment, before the
actor system starts (so the fork carries no actor-system state and no thread): the
fork imports only the web stack and builds its app, on the other core, while the
tree starts, and serves at once what needs no host (``/list-apps``: ``_gate``); the
rest waits at its gate for its owner.

How a :class:`Standby` is used, in order:

1. ``serve`` calls :func:`fork_standby` with the server's settings while it is
   single-threaded. The child dies with ``serve`` (``PR_SET_PDEATHSIG``).
2. The ``http`` actor (a fork of ``serve``, so it holds the same descriptors) calls
   :meth:`Standby.claim`. The claim reads the one byte of a pipe whose writing end
   is closed: exactly one reader ever gets it, so a restarted actor, or a second
   one, starts its own process as before (``python -m adk_actors.http``).
3. The claimer writes its own pid as the owner (the server kills itself when its
   owner dies, as a spawned server does through its parent death signal) and reads
   ``READY <port>`` as from a spawned one (written already: the process serves from
   the moment its app is built). On the owner's line the process attaches to the
   host and opens its gate (``_process``).
4. ``serve`` reaps the process (:meth:`Standby.reap`) when it ends, and kills it
   if it was never claimed (:meth:`Standby.discard`).

A standby that failed (its import raised) has exited: the claim still succeeds, and
the actor's start fails as a spawned server's would, so its supervisor restarts it
with a spawned process.

The front door (``_front_door``): ``serve`` also binds the HTTP listening
socket itself, before the standby and the actor system, and keeps it until it exits.
Every process forked from ``serve`` holds that descriptor (the standby, the ``http``
actor), and the actor hands it to each server process it spawns (``pass_fds``). A
server that dies, or is stopped by a restart of the tree, only closes its own copy:
the socket keeps listening, and connections wait in its backlog for the next server
instead of being refused.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from supervision.lowlevel import set_parent_death_signal

from .._files import private_file

__all__ = ["Standby", "fork_standby"]

@dataclass(frozen=True)
class Standby:
    """A forked server process waiting for its owner's line, and the descriptors that
    reach it (valid in ``serve`` and in every process forked from it)."""

    pid: int
    claim_fd: int  # reading end of a pipe holding one byte: its reader owns the process
    launch_fd: int  # writing end of the process's stdin
    ready_fd: int  # reading end of its stdout

    def claim(self) -> bool:
        """True for the one caller, in any process, that takes the process; False for
        every other call (the byte is gone: the pipe reads as ended) and on any error."""
        try:
            os.set_blocking(self.claim_fd, False)
            return os.read(self.claim_fd, 1) == b"1"
        except OSError:
            return False

    def reap(self) -> bool:
        """In ``serve``: True once the process has ended (its status collected)."""
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return True
        return pid == self.pid

    def discard(self, wait: float = 5.0) -> None:
        """In ``serve``, as it exits, after the tree has stopped: kill the process at
        once if nobody claimed it, else give it ``wait`` seconds to end (its actor
        has stopped it) before killing it; then reap it."""
        deadline = time.monotonic() + (0.0 if self.claim() else wait)
        while not self.reap():
            if time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(self.pid, 0)
                return
            time.sleep(0.01)


def fork_standby(launch: dict[str, Any], log_file: str) -> Standby | None:
    """Fork a server process for the settings ``launch`` (``HttpArgs.launch``): it
    imports the web stack and builds its app, then waits for its owner's line; its
    stderr goes to ``log_file`` (made private here). None, and no process, where the
    caller runs threads (a fork would copy their locks) or cannot fork."""
    if threading.active_count() != 1 or not hasattr(os, "fork"):
        return None
    private_file(log_file)
    launch_read, launch_write = os.pipe()
    ready_read, ready_write = os.pipe()
    claim_read, claim_write = os.pipe()
    os.write(claim_write, b"1")
    os.close(claim_write)
    sys.stdout.flush()
    sys.stderr.flush()
    log = os.open(log_file, os.O_WRONLY | os.O_APPEND)
    pid = os.fork()
    if pid == 0:  # the standby: never returns
        code = 1
        try:
            set_parent_death_signal()
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_DFL)
            os.dup2(launch_read, 0)
            os.dup2(ready_write, 1)
            os.dup2(log, 2)
            for fd in (launch_read, launch_write, ready_read, ready_write, claim_read, log):
                os.close(fd)
            # Imported here, in the fork only: the web stack never enters serve's own
            # process, nor the actors forked from it.
            from ._process import serve_standby

            code = serve_standby(launch)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    for fd in (launch_read, ready_write, log):
        os.close(fd)
    return Standby(pid=pid, claim_fd=claim_read, launch_fd=launch_write, ready_fd=ready_read)
