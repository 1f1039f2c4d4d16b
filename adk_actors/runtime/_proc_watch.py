"""Whether a run worker may be given a turn, read from ``/proc`` files held open.

A partition asks, for each turn, whether the worker it chose still runs and was not
killed (``process_alive`` and not ``kill_pending``, ``supervision.lowlevel``). Those
open ``/proc/PID/stat`` and ``/proc/PID/status`` by path, three opens a turn; opening a
``/proc`` file is most of what such a read costs (~50 us an open on the project's
machine, ~5-14 us for a read of a file held open). :class:`ProcessWatch` opens the two
files once, when the worker says hello, and reads them again for each turn
(``pread``), in the order ``kill_pending`` reads them and by its two readings
(``sigkill_pending_in``, ``exit_begun_in``): ``status`` first (the process's
state, a SIGKILL pending on it), then ``stat`` (its state, its exit begun): a
process between the two (its SIGKILL taken, its exit begun) is not missed. A file held
open names that very process: once it is reaped, the read fails (ESRCH), even if its
pid is reused. Where the files cannot be opened (no ``/proc``, or the process gone
already), each check falls back to ``process_alive`` and ``kill_pending`` by pid.
"""

from __future__ import annotations

import os

from supervision.lowlevel import exit_begun_in, kill_pending, process_alive, sigkill_pending_in

__all__ = ["ProcessWatch"]

#: a process that is a zombie or dead (``State`` in status, the third field of stat)
_ENDED = (b"Z", b"X", b"x")


class ProcessWatch:
    """One local process, as a partition checks a run worker before each turn (see the module)."""

    def __init__(self, pid: int) -> None:
        """Open the process's ``status`` and ``stat`` files (none where they cannot be)."""
        self.pid = pid
        self._status: int | None = None
        self._stat: int | None = None
        try:
            self._status = os.open(f"/proc/{pid}/status", os.O_RDONLY | os.O_CLOEXEC)
            self._stat = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        except (OSError, ValueError):
            self.close()

    def may_take_turns(self) -> bool:
        """True while the process runs and no SIGKILL is pending on it or acting on it
        (a zombie, a reaped process, one killed but not yet exited: False)."""
        if self._status is None or self._stat is None:
            return process_alive(self.pid) and not kill_pending(self.pid)
        try:
            status = os.pread(self._status, 8192, 0)
            stat = os.pread(self._stat, 4096, 0)
        except OSError:  # ESRCH: reaped
            return False
        try:
            if _field(status, b"State")[:1] in _ENDED or sigkill_pending_in(status):
                return False
            return stat.rsplit(b") ", 1)[1].split()[0] not in _ENDED and not exit_begun_in(stat)
        except (KeyError, ValueError, IndexError):  # unreadable: asked by pid instead
            return process_alive(self.pid) and not kill_pending(self.pid)

    def close(self) -> None:
        """Close the files (the worker is gone); later checks ask by pid."""
        for fd in (self._status, self._stat):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._status = self._stat = None


def _field(status: bytes, name: bytes) -> bytes:
    """The value of line ``name`` of a ``/proc/PID/status`` (KeyError when it has none)."""
    start = status.find(b"\n" + name + b":")
    if start < 0:
        if not status.startswith(name + b":"):
            raise KeyError(name)
        start = -1
    start += len(name) + 2
    end = status.find(b"\n", start)
    return status[start:end if end >= 0 else len(status)].strip()
