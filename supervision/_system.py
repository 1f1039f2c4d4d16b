"""Starting and stopping a Thespian actor system safely.

Thespian facts this module works around (see DESIGN.md):

* a system left running on a port is silently reused, with its OLD code, by the
  next ``ActorSystem()`` on that port; a port held by another program makes
  Thespian fail only after ~14 s. :func:`start_actor_system` checks the port first
  and fails at once with :class:`PortInUse`;
* children outlive a parent killed with SIGKILL; :func:`set_parent_death_signal`
  (called by every GenServer) makes the kernel kill them with it;
* actors log through Thespian's logger process, configured by ``logDefs``; Thespian's
  own log (``thesplog``) goes to one machine-wide ``$TMPDIR/thespian.log`` unless
  ``THESPLOG_FILE`` names another: :func:`direct_thespian_log` gives it a file of the
  caller's;
* every Thespian socket listens on all interfaces (it binds ``''`` for an address
  it advertises) and speaks unauthenticated pickle. :func:`confine_listeners`
  makes each one bind the address it advertises instead, so a system started
  here (or attached to) on ``127.0.0.1`` is reachable from this machine only.
  Several hosts need a private network between them: advertise an address on it.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import multiprocessing
import os
import random
import selectors
import signal
import socket
import sys
import types
from typing import Any

from ._exceptions import PortInUse

__all__ = [
    "check_port_free",
    "children_of",
    "confine_listeners",
    "direct_thespian_log",
    "exit_begun_in",
    "forked_by",
    "free_port",
    "open_pidfd",
    "proc_stat",
    "process_alive",
    "set_parent_death_signal",
    "sigkill_pending_in",
    "takes_connection",
    "thespian_log_config",
]

_PR_SET_PDEATHSIG = 1


def set_parent_death_signal(sig: int = signal.SIGKILL, *, started_by: int | None = None) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent dies.

    Returns False where the platform has no ``prctl``. If the parent already died
    before the call, the signal is sent at once: we were re-parented to init, or our
    parent is no longer ``started_by``, the pid of the process that started us (we
    were re-parented to a subreaper: an actor whose parent died while it was still
    starting was left running before; see ``forked_by``).
    Set ``SUPERVISION_NO_PDEATHSIG=1`` to disable (for in-process test bases).
    """
    if not sys.platform.startswith("linux") or os.environ.get("SUPERVISION_NO_PDEATHSIG") == "1":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() == 1 or (started_by is not None and os.getppid() != started_by):
        os.kill(os.getpid(), sig)
    return True


def forked_by() -> int | None:
    """The pid of the process that forked this one with ``multiprocessing`` (as Thespian
    starts every actor), or None. Ask it in that process only: a process forked from it
    in another way (``subprocess``'s ``preexec_fn``) inherits the answer, which is not
    its parent's."""
    forker = multiprocessing.parent_process()
    return forker.pid if forker is not None else None


@functools.cache
def node_id() -> str:
    """This machine's identity for this boot (pids mean something only on one node)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            return f"{socket.gethostname()}/{boot.read().strip()}"
    except OSError:
        return socket.gethostname()


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of ``pid`` from ``/proc/PID/stat``; None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b") ", 1)[1].split()
        return fields[0].decode(), int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def children_of(pid: int) -> list[int]:
    """Pids of the live (not zombie) processes whose parent is ``pid`` (Linux ``/proc``)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat is not None and stat[1] == pid and stat[0] != "Z":
                found.append(int(entry))
    return found


def open_pidfd(pid: int) -> int | None:
    """A pidfd for local process ``pid`` (readable once it has ended); None where
    pidfds are missing or the process is already gone."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None or pid <= 0:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone; one
    killed but not yet exited counts as running: it still holds its sockets, see
    :func:`kill_pending`)."""
    stat = proc_stat(pid)
    if stat is not None:
        return stat[0] != "Z"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not sys.platform.startswith("linux")


#: SIGKILL's bit in ``/proc/PID/status``'s pending-signal masks
_SIGKILL_BIT = 1 << (signal.SIGKILL - 1)
#: the kernel's PF_EXITING, in ``/proc/PID/stat``'s flags: set as a process begins to exit
_PF_EXITING = 0x4


def kill_pending(pid: int) -> bool:
    """Whether ``pid`` is killed but not yet gone: a SIGKILL pending (not yet scheduled
    to act on it; under load that lasts milliseconds, and work given to it then dies
    with it), or its exit begun (the kernel takes the pending SIGKILL off as it starts
    the exit, which tears down its memory before it is a zombie). Read in that order,
    so a process between the two is not missed (:func:`sigkill_pending_in`, then
    :func:`exit_begun_in`). False where ``/proc`` does not tell, or for no such process."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            if sigkill_pending_in(status.read()):
                return True
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return exit_begun_in(stat.read())
    except (OSError, KeyError, ValueError, IndexError):
        return False


def sigkill_pending_in(status: bytes) -> bool:
    """Whether the text of a ``/proc/PID/status`` shows a SIGKILL pending on its process
    (KeyError or ValueError when it does not say)."""
    fields = dict(line.split(b":", 1) for line in status.splitlines() if b":" in line)
    return bool((int(fields[b"SigPnd"], 16) | int(fields[b"ShdPnd"], 16)) & _SIGKILL_BIT)


def exit_begun_in(stat: bytes) -> bool:
    """Whether the text of a ``/proc/PID/stat`` shows its process's exit begun
    (``PF_EXITING`` in its flags; IndexError or ValueError when it cannot be read)."""
    return bool(int(stat.rsplit(b") ", 1)[1].split()[6]) & _PF_EXITING)


def pid_space() -> tuple[str, int] | None:
    """Which pids this process sees: (the kernel's boot id, its pid namespace). Two
    processes whose pid spaces are equal see the same process under the same pid;
    otherwise (another machine, another container) a pid of one means nothing to the
    other. None where this cannot be told (not Linux)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            return boot.read().strip(), os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


_LOWEST_FREE_PORT = 10_000
_GIVEN_PORTS: set[int] = set()  # given by free_port in this process: not given twice


def takes_connection(address: Any, wait: float = 0.25) -> bool | None:
    """Does the actor at ``address`` take a TCP connection now? (Each actor of a
    ``multiprocTCPBase`` system listens on a port of its own; a dead one's refuses.)
    ``address`` is an actor's address, or a ``"<host>:<port>"`` string (an actor
    system's, as a lease names its holder). None when it is neither (a string with no
    ``:``). A wait longer than ``wait`` is a no (a host cut off), as is a port that is
    no number."""
    if isinstance(address, str):
        host, colon, port = address.rpartition(":")
        where: Any = (host, port) if colon else None
    else:
        where = getattr(getattr(address, "addressDetails", None), "sockname", None)
    if not where or len(where) < 2:
        return None
    try:
        socket.create_connection((where[0], int(where[1])), timeout=wait).close()
    except (OSError, ValueError):
        return False
    return True


def _ephemeral_ports() -> tuple[int, int]:
    """The kernel's range of ports for outgoing connections (Linux's default elsewhere)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
            low, high = (int(part) for part in ports.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``, picked at random below the
    kernel's ephemeral range where there is room: a port from that range (what binding
    port 0 gives) can be handed to an outgoing connection before the caller binds it,
    and a host's many connections made that happen (a test's server could not bind).
    Such a port is free on every address (it is tried on the wildcard address), as
    :func:`check_port_free` demands: a port free on 127.0.0.2 but bound on 127.0.0.1
    by another process failed a host's start (CI, a cluster's member)."""
    low, _ = _ephemeral_ports()
    for _ in range(64 if low > _LOWEST_FREE_PORT + 1000 else 0):
        port = random.randrange(_LOWEST_FREE_PORT, low)
        if port in _GIVEN_PORTS:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("", port))
            except OSError:
                continue
            _GIVEN_PORTS.add(port)
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        chosen: int = sock.getsockname()[1]
        return chosen


def check_port_free(port: int, host: str = "127.0.0.1") -> None:
    """Raise :class:`PortInUse` at once if anything listens on ``port``.

    Thespian listens on all interfaces, so the port is tried on the wildcard
    address as well as on ``host``.
    """
    for addr in ("", host):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((addr, port))
            except OSError as exc:
                if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                    raise PortInUse(
                        f"port {port} is already in use: a stale actor system left by an earlier run "
                        f"or another program. An actor system is never attached to a running one here, "
                        f"so that old code is never served; stop a stale system with "
                        f"`python -m supervision stop --port {port}` or pick another port."
                    ) from exc
                raise


def confine_listeners() -> None:
    """Make every Thespian listen socket of this process, and of the processes it
    forks from now on, bind the address it advertises instead of all interfaces.

    Thespian's ``IPActorAddress`` binds ``('', port)`` for an address it advertises
    (``THESPIAN_BASE_IPADDR``); this is its one binding rule (``bindArgs``), and
    here it returns the advertised ``(address, port)`` itself. Idempotent. The one
    adaptation of Thespian in this library; ``tests/test_security.py`` checks every
    listening socket of a running host with ``ss``.
    """
    from thespian.system.transport.IPBase import IPActorAddress

    if getattr(IPActorAddress, "_bound_to_advertised", False):
        return

    def bind_args(address: Any) -> tuple[Any, ...]:
        return (address.sockname,)

    IPActorAddress.bindArgs = property(bind_args)
    IPActorAddress._bound_to_advertised = True


def poll_thespian_loops() -> None:
    """Make Thespian's TCP transport, in this process and the processes it forks from
    now on, wait with ``poll`` instead of the platform's default selector (``epoll``).

    Its loop builds a new selector at every turn, registers every socket of the actor
    and closes it after one wait: with ``epoll`` that is a descriptor made, one
    ``epoll_ctl`` per socket and a close each turn (15 us for six sockets on this
    machine, against 5 us with ``poll``), several turns per message. Only Thespian's
    module sees the change; ``selectors.DefaultSelector`` stays what it is for the
    rest of the process (asyncio's loops). Idempotent. The second adaptation of Thespian
    in this library, besides :func:`confine_listeners`.
    """
    from thespian.system.transport import TCPTransport

    if getattr(TCPTransport.selectors, "polls_thespian_loops", False) or not hasattr(selectors, "PollSelector"):
        return
    polling = types.ModuleType("selectors_for_thespian", "selectors, with poll as the default selector")
    polling.__dict__.update({name: value for name, value in vars(selectors).items() if not name.startswith("__")})
    polling.DefaultSelector = selectors.PollSelector  # type: ignore[attr-defined]
    polling.polls_thespian_loops = True  # type: ignore[attr-defined]
    TCPTransport.selectors = polling


def thespian_log_config(log_file: str | None, level: int = logging.INFO, fmt: str | None = None,
                        formatter: str | None = None) -> dict[str, Any]:
    """A ``logDefs`` dictConfig for Thespian's logger process (a file, or stderr):
    lines formatted by ``fmt``, or by the ``logging.Formatter`` class ``formatter``
    names (a dotted path, which the logger process imports)."""
    handler: dict[str, Any]
    if log_file:
        handler = {"class": "logging.FileHandler", "filename": log_file, "formatter": "plain", "level": level}
    else:
        handler = {"class": "logging.StreamHandler", "formatter": "plain", "level": level}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"()": formatter} if formatter else
                       {"format": fmt or "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"}},
        "handlers": {"main": handler},
        "root": {"handlers": ["main"], "level": level},
    }


#: Where :func:`direct_thespian_log` notes the value it put in ``THESPLOG_FILE``, for
#: this process and the processes it starts: any other value there is the operator's.
DIRECTED_MARK = "SUPERVISION_THESPLOG_DIRECTED"


def direct_thespian_log(path: str) -> str:
    """Send Thespian's own log (``thesplog``: its transport's and admin's warnings) of
    this process and of every process it forks from now on to ``path``, unless the
    environment's ``THESPLOG_FILE`` names a file already (the operator's choice, which
    wins); return the file used. Call it before the actor system starts: its admin and
    logger are forked from this process and inherit the setting.

    In order: keep an operator's ``THESPLOG_FILE`` (a value this function did not set
    here or in an ancestor process, as ``SUPERVISION_THESPLOG_DIRECTED`` tells);
    otherwise set it (and the mark) to ``path``; create the file if missing, 0600, and
    make it 0600; make Thespian forget the file it chose at its first log line in this
    process (``thespian.system.utilis`` reads ``THESPLOG_FILE`` then, once, and forked
    processes inherit its choice), so the next line reads the variable again. The size
    is Thespian's to cap: once the file is over ``THESPLOG_FILE_MAXSIZE`` bytes (50 KiB
    by default; read when Thespian is first imported, so set it in the environment of
    the process) it becomes ``<file>.old`` and a new file starts (with the umask's
    mode: keep it in a private folder), so at most twice that is kept. The third
    adaptation of
    Thespian in this library, besides :func:`confine_listeners` and
    :func:`poll_thespian_loops`. An ``OSError`` making the file is raised.
    """
    from thespian.system import utilis

    given = os.environ.get("THESPLOG_FILE")
    if given and given != os.environ.get(DIRECTED_MARK):
        return given
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600))
    os.chmod(path, 0o600)
    os.environ["THESPLOG_FILE"] = os.environ[DIRECTED_MARK] = path
    utilis._thesplog_file = None
    utilis._thesplog_old_file = None
    return path
