"""Test support shipped with the product (as httpx ships MockTransport).

* :func:`running_actor_system` / the ``actor_system`` pytest fixture: a
  ``multiprocTCPBase`` system on a random free port bound to 127.0.0.1, Thespian's
  logs in a temporary folder, always shut down (also when the test fails), and then
  every process the system started is found by a marker file it holds open and
  killed by pid. A test that leaves a process behind fails.
* :class:`Probe`: a configurable GenServer that records what happens to it
  (starts, terminations, with pids) in a file, so tests see restart order across
  processes; a "fail flag" file makes its ``init`` fail on demand (OTP's suite uses
  an ETS flag the same way).
* :func:`wait_until`: poll a condition with a deadline instead of sleeping.
* :class:`ManualClock`: a :class:`~supervision.Clock` that stands still until a test
  moves it (``advance``), for code that takes a clock: nothing waits out real time.
* :func:`kill_child`: kill -9 a supervised child and wait until it runs again.

Use it from a ``conftest.py`` with ``pytest_plugins = ["supervision.testing"]``.
"""

from __future__ import annotations

import logging
import os
import signal
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ._clock import ManualClock
from ._health import load_scaled
from ._messages import ExitKind, ExitReason
from ._server import IGNORE, CallerRef, GenServer
from ._start import start_actor_system
from ._system import children_of, process_alive

__all__ = [
    "LeftoverProcesses",
    "ManualClock",
    "Probe",
    "actor_system",
    "children_of",
    "find_marked_processes",
    "kill_child",
    "kill_marked_processes",
    "pid_alive",
    "probe_args",
    "process_marker",
    "read_events",
    "running_actor_system",
    "wait_until",
]

T = TypeVar("T")


class LeftoverProcesses(AssertionError):
    """Processes of the test's actor system were still running after shutdown."""


def wait_until(condition: Callable[[], T], timeout: float = 5.0, interval: float = 0.01, message: str = "") -> T:
    """Return the first truthy value of ``condition()``; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            value = condition()
        except Exception as exc:
            last = exc
        else:
            last = value
            if value:
                return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout} s: {message or condition} (last: {last!r})")
        time.sleep(interval)


def kill_child(supervisor: Any, child_id: str, timeout: float = 10.0) -> Any:
    """SIGKILL the process of child ``child_id`` of ``supervisor`` (a SupervisorClient),
    then wait until the supervisor runs it again in a new process; return its new
    ``ChildInfo``. AssertionError if it is not back within ``timeout`` seconds;
    ValueError if the child has no process to kill."""
    before = supervisor.child(child_id)
    if before.pid is None:
        raise ValueError(f"child {child_id!r} has no running process")
    os.kill(before.pid, signal.SIGKILL)

    def back() -> Any:
        info = supervisor.child(child_id)
        return info if info.status == "running" and info.pid not in (None, before.pid) else None

    return wait_until(back, timeout=timeout, message=f"{child_id} restarted after kill -9")


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    return process_alive(pid)


def find_marked_processes(marker: str | Path) -> list[int]:
    """Pids of live processes holding the marker file ``marker`` open.

    Thespian forks every process of a system (the admin from the starting script,
    actors from their parents), and forked processes inherit open descriptors; so a
    marker file opened before the system starts is held by all of them. (An
    environment variable would not do: ``/proc/PID/environ`` shows only the
    environment a process was exec'd with.)
    """
    target = str(marker)
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry}/fd/{fd}") == target:
                    if pid_alive(int(entry)):
                        found.append(int(entry))
                    break
            except OSError:
                continue
    return found


@contextmanager
def process_marker(directory: str | Path) -> Iterator[tuple[Path, int]]:
    """Open a fresh marker file, inheritable, for the processes started inside the block.

    Yields ``(path, fd)``; pass the fd to subprocesses with ``pass_fds`` to mark them.
    The descriptor is closed in this process when the block ends.
    """
    path = Path(directory) / f"marker-{uuid.uuid4().hex}"
    fd = os.open(path, os.O_CREAT | os.O_RDONLY, 0o600)
    os.set_inheritable(fd, True)
    try:
        yield path, fd
    finally:
        os.close(fd)


def kill_marked_processes(marker: str | Path, grace: float = 3.0) -> list[int]:
    """Wait up to ``grace`` s, stretched by the machine's load (:func:`load_scaled`: a
    process ending at load 14 on 2 cores gets a seventh of a CPU to do it), for marked
    processes to end, then SIGKILL the rest and return their pids."""
    deadline = time.monotonic() + load_scaled(grace)
    pids = find_marked_processes(marker)
    while pids and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = find_marked_processes(marker)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


@contextmanager
def running_actor_system(log_dir: str | Path | None = None, *, strict: bool = True) -> Iterator[Any]:
    """Start an actor system for one test; always shut it down and reap its processes.

    In order: open an inheritable marker file so every process of this system can
    be found (``system.test_marker``);
    route Thespian's internal log and the actors' logging into ``log_dir``; start
    on a free port on 127.0.0.1; yield; ``shutdown()``; kill what is left by pid.
    With ``strict``, leftovers raise :class:`LeftoverProcesses` after being killed.
    """
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="supervision-test-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    saved = os.environ.get("THESPLOG_FILE")
    os.environ["THESPLOG_FILE"] = str(log_dir / "thespian-internal.log")
    try:
        with process_marker(log_dir) as (marker, _fd):
            system = start_actor_system(log_file=str(log_dir / "actors.log"), log_level=logging.INFO)
    finally:
        if saved is None:
            os.environ.pop("THESPLOG_FILE", None)
        else:
            os.environ["THESPLOG_FILE"] = saved
    system.test_marker = marker  # where to find every process of this system
    try:
        yield system
    finally:
        try:
            system.shutdown()
        finally:
            leftovers = kill_marked_processes(marker)
            if leftovers and strict:
                raise LeftoverProcesses(f"processes left running after shutdown (killed): {leftovers}")


def actor_system_fixture(tmp_path: Path) -> Iterator[Any]:
    with running_actor_system(tmp_path / "logs") as system:
        yield system


try:  # the fixture is offered when pytest is installed
    import pytest
except ImportError:  # pragma: no cover
    pass
else:
    actor_system = pytest.fixture(name="actor_system")(actor_system_fixture)


# -- a test server ----------------------------------------------------------------------


def probe_args(
    id: str,
    events: str | Path,
    *,
    fail_flag: str | Path | None = None,
    ignore_shutdown: bool = False,
    ignore_init: bool = False,
    init_delay: float = 0.0,
) -> dict[str, Any]:
    """Arguments for a :class:`Probe` child."""
    return {
        "id": id,
        "events": str(events),
        "fail_flag": str(fail_flag) if fail_flag else None,
        "ignore_shutdown": ignore_shutdown,
        "ignore_init": ignore_init,
        "init_delay": init_delay,
    }


def read_events(path: str | Path) -> list[tuple[str, ...]]:
    """The lines a Probe wrote, split into words.

    ``("start", id, pid, t)``, ``("init_failed", id, pid, t)``, ``("ignored", id, pid, t)``,
    ``("terminate", id, pid, reason, t)``; ``t`` is ``time.monotonic()`` (system-wide).
    """
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return []
    return [tuple(line.split(" ")) for line in text.splitlines() if line]


class Probe(GenServer):
    """A server for tests. Calls: ``"ping"`` -> ``"pong"``; ``("crash", text)`` raises;
    ``("stop", kind)`` stops with that reason; ``("sleep", s)`` blocks its mailbox;
    ``("get", k)`` / ``("put", k, v)`` use in-memory state; ``"pid"``."""

    def init(self, args: Any) -> Any:
        self.args = dict(args or {})
        self.state: dict[str, Any] = {}
        if self.args.get("init_delay"):
            time.sleep(float(self.args["init_delay"]))
        flag = self.args.get("fail_flag")
        if flag and os.path.exists(flag):
            self._record("init_failed")
            raise RuntimeError(f"fail flag {flag} is set")
        if self.args.get("ignore_init"):
            self._record("ignored")
            return IGNORE
        self._record("start")
        return None

    def _record(self, what: str, extra: str = "") -> None:
        path = self.args.get("events")
        if not path:
            return
        fields = [what, str(self.args.get("id", "?")), str(os.getpid())] + ([extra] if extra else [])
        line = " ".join([*fields, f"{time.monotonic():.6f}"]) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "ping":
            return "pong"
        if request == "pid":
            return os.getpid()
        if isinstance(request, tuple) and request:
            if request[0] == "crash":
                raise RuntimeError(str(request[1]) if len(request) > 1 else "asked to crash")
            if request[0] == "stop":
                self.stop(ExitReason(ExitKind(request[1]), request[2] if len(request) > 2 else ""))
                return "stopping"
            if request[0] == "sleep":
                time.sleep(float(request[1]))
                return "slept"
            if request[0] == "strays-first":  # messages that answer nothing reach the caller first
                for number in range(int(request[1])):
                    self.send(caller.address, ("stray", number))
                return "after strays"
            if request[0] == "get":
                return self.state.get(request[1])
            if request[0] == "put":
                self.state[request[1]] = request[2]
                return "ok"
        return super().handle_call(request, caller)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, tuple) and request and request[0] == "crash":
            raise RuntimeError("asked to crash (cast)")
        super().handle_cast(request)

    def terminate(self, reason: ExitReason) -> None:
        self._record("terminate", reason.kind.value)
        if self.args.get("ignore_shutdown") and reason.kind is ExitKind.SHUTDOWN:
            time.sleep(3600)
