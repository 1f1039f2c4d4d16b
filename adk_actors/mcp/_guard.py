"""``python -m adk_actors.mcp._guard PARENT_PID -- COMMAND [ARGS...]``: run COMMAND,
and kill everything it starts when we end.

A stdio MCP server is started through this guardian. A server command is often a
launcher that forks (``sh -c``, ``npx``, ``uv run``): a parent-death signal on the
launcher alone would leave the real server, its child, running. So, in order:

1. the guardian leaves its parent's process group (``setsid``, unless it leads a
   session already: the mcp SDK starts it in one), so a kill of the host's group
   cannot kill it before it cleans up;
2. it asks Linux for SIGTERM when the thread that started it ends
   (``PR_SET_PDEATHSIG``: the toolset actor's event loop thread, so also any death
   of the actor, kill -9 included), and checks that its parent is still
   ``PARENT_PID`` (else that parent died before the request took effect: exit 1);
3. it starts COMMAND in a new session (so in a process group of its own) with the
   guardian's own stdin, stdout and stderr (no relay: the server reads and writes
   the client's pipes), its environment and working directory; COMMAND itself gets
   SIGKILL if the guardian dies (its own parent-death signal);
4. it closes its copies of stdin and stdout and waits: when COMMAND exits, or at
   SIGTERM, SIGINT or SIGHUP (its parent's death, or the client stopping it), it
   SIGKILLs COMMAND's whole process group, reaps COMMAND, and exits with COMMAND's
   status (128 + N for a death by signal N; 128 + the signal that ended the guardian).

A COMMAND that cannot be started is said on stderr, exit 127. What is not covered: a
kill -9 of the guardian alone (then only COMMAND's first process dies), and a
process that leaves COMMAND's process group on its own (a daemon).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from types import FrameType

from supervision.lowlevel import set_parent_death_signal

__all__ = ["main"]

_ENDING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_USAGE = "usage: python -m adk_actors.mcp._guard PARENT_PID -- COMMAND [ARGS...]"


class _Guardian:
    """COMMAND's process and the signal that ended us, if one did."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.ended_by: int | None = None

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        """Our death signal (or the client's): COMMAND's group dies now; ``run`` reaps."""
        self.ended_by = signum
        self.kill_group()

    def kill_group(self) -> None:
        """SIGKILL every process in COMMAND's group (while COMMAND is not reaped, its pid
        is still the group's id and cannot name another group)."""
        if self.child is not None:
            try:
                os.killpg(self.child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def run(self, parent: int, command: list[str]) -> int:
        """Start COMMAND, wait for it or for a signal, kill its group; its status."""
        if os.getsid(0) != os.getpid():
            try:
                os.setsid()
            except PermissionError:  # we lead a process group already: stay in it
                pass
        for signum in _ENDING:
            signal.signal(signum, self.on_signal)
        set_parent_death_signal(signal.SIGTERM)
        if os.getppid() != parent:
            return 1  # the parent is gone already
        me = os.getpid()
        try:
            child = subprocess.Popen(command, start_new_session=True, close_fds=True,
                                     preexec_fn=lambda: _die_with(me))
        except OSError as exc:
            print(f"adk_actors.mcp._guard: cannot start {command[0]!r}: {exc}", file=sys.stderr, flush=True)
            return 127
        self.child = child
        if self.ended_by is not None:  # the signal came while COMMAND was starting
            self.kill_group()
        _let_go_of_stdio()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
        self.kill_group()  # whatever COMMAND left behind in its group
        status = child.wait()
        if self.ended_by is not None:
            return 128 + self.ended_by
        return status if status >= 0 else 128 - status


def _die_with(guardian: int) -> None:
    """(In COMMAND's process, before it starts.) SIGKILL when the guardian dies; the
    guardian's signal handlers are not COMMAND's."""
    for signum in _ENDING:
        signal.signal(signum, signal.SIG_DFL)
    set_parent_death_signal(signal.SIGKILL, started_by=guardian)


def _let_go_of_stdio() -> None:
    """Point our stdin and stdout at /dev/null, so that only COMMAND holds the client's
    pipes (the client sees end of file when COMMAND's side closes)."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def main(argv: list[str]) -> None:
    """Parse ``PARENT_PID -- COMMAND [ARGS...]`` (a usage error exits 2) and guard."""
    if len(argv) < 3 or not argv[0].isdigit() or argv[1] != "--":
        print(_USAGE, file=sys.stderr)
        sys.exit(2)
    sys.exit(_Guardian().run(int(argv[0]), argv[2:]))


if __name__ == "__main__":
    main(sys.argv[1:])
