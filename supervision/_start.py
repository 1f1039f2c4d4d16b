"""Starting, attaching to and stopping a Thespian actor system safely.

:func:`start_actor_system` starts a ``multiprocTCPBase`` system that listens on one
address only (loopback by default, :func:`~supervision._system.confine_listeners`),
never attaches to a stale one (:func:`~supervision._system.check_port_free`), and
dies with the process that started it (:class:`~supervision._owner.OwnerWatch`).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ._client import start_server
from ._exceptions import ActorSystemError
from ._owner import OwnerArgs, OwnerWatch
from ._system import (
    check_port_free,
    confine_listeners,
    free_port,
    poll_thespian_loops,
    thespian_log_config,
)

__all__ = ["attach_actor_system", "set_convention_checkin", "start_actor_system", "stop_actor_system_on_port"]


def start_actor_system(
    port: int | None = None,
    *,
    host: str = "127.0.0.1",
    log_file: str | None = None,
    log_level: int = logging.INFO,
    log_format: str | None = None,
    log_formatter: str | None = None,
    capabilities: dict[str, Any] | None = None,
    die_with_owner: bool = True,
    owner_grace: float = 10.0,
    convention: tuple[str, int] | None = None,
    convention_checkin: float | None = None,
) -> Any:
    """Start a new ``multiprocTCPBase`` actor system and return it.

    In order: advertise ``host`` (``THESPIAN_BASE_IPADDR``) and listen on it only
    (:func:`confine_listeners`); pick a free port, or
    check that the given one is free (else :class:`PortInUse` at once); start the
    admin with logging routed to ``log_file``; with ``die_with_owner``, start the
    :class:`OwnerWatch` that stops the system (within ``owner_grace`` seconds, then
    SIGKILL) once this process has ended, however it ended. The caller owns the
    system and must call ``shutdown()``; if the watch does not start, the system is
    shut down and :class:`ActorSystemError` raised. The system's ``admin_address`` is
    the (host, port) its admin listens on.

    ``convention`` (the leader's admin address) makes the system a member of Thespian's
    multi-system convention (``Convention Address.IPv4``; the system whose own address it
    is, is the leader). ``convention_checkin`` sets how often members check in with the
    leader, in seconds (Thespian's ``CONVENTION_REREGISTRATION_PERIOD``: a member that
    misses three is taken for dead); Thespian reads it once per process, at its first
    start of a system: later values raise :class:`ActorSystemError`.
    """
    from thespian.actors import ActorSystem, ActorSystemException

    if convention_checkin is not None:
        set_convention_checkin(convention_checkin)
    os.environ["THESPIAN_BASE_IPADDR"] = host
    confine_listeners()
    poll_thespian_loops()
    if port is None:
        port = free_port(host)
    else:
        check_port_free(port, host)
    caps: dict[str, Any] = {"Admin Port": port, "Process Startup Method": "fork"}
    if convention is not None:
        caps["Convention Address.IPv4"] = (convention[0], int(convention[1]))
    caps.update(capabilities or {})
    try:
        system = ActorSystem(
            "multiprocTCPBase", caps, logDefs=thespian_log_config(log_file, log_level, log_format, log_formatter),
            transientUnique=True
        )
    except ActorSystemException as exc:
        raise ActorSystemError(f"could not start the actor system on port {port}: {exc}") from exc
    system.admin_address = (host, port)  # where its admin listens (a system's name among others)
    if die_with_owner:
        try:
            start_server(system, OwnerWatch, OwnerArgs(os.getpid(), port, host, owner_grace))
        except Exception as exc:
            system.shutdown()
            raise ActorSystemError(f"could not start the owner watch of the actor system: {exc}") from exc
    return system


def set_convention_checkin(seconds: float) -> None:
    """Members of a convention check in every ``seconds`` (whole seconds, at least 1),
    and a member that has lost its leader tries it again just as often.

    Thespian has two periods, read from its environment once per process when its
    convention code is first imported: ``CONVENTION_REREGISTRATION_PERIOD`` (how often
    a member checks in; three missed and the leader drops it) and
    ``CONVENTION_RESTART_PERIOD`` (how long the admin of a member that is not in the
    convention, its leader gone, sleeps between attempts to register again: 3 min 22 s
    by default, so a leader down for more than three check-ins got its members back
    only minutes after it listened again). Both are set to ``seconds``. Asked for
    another period once the code is loaded: :class:`ActorSystemError`."""
    import sys

    whole = max(1, round(seconds))
    value = f"{whole // 60}:{whole % 60}"
    loaded = sys.modules.get("thespian.system.admin.convention")
    if loaded is not None:
        current = {loaded.CONVENTION_REREGISTRATION_PERIOD.total_seconds(),
                   loaded.CONVENTION_RESTART_PERIOD.total_seconds()}
        if current != {whole}:
            raise ActorSystemError(f"this process's convention periods are {sorted(current)} s already; "
                                   f"{whole} s needs a new process")
        return
    os.environ["CONVENTION_REREGISTRATION_PERIOD"] = value
    os.environ["CONVENTION_RESTART_PERIOD"] = value


def attach_actor_system(port: int, host: str = "127.0.0.1") -> Any:
    """An external handle on the actor system whose admin listens on ``host:port``
    (never starts one: check first that something listens there). Its own reply
    socket listens on ``host`` only."""
    from thespian.actors import ActorSystem

    os.environ["THESPIAN_BASE_IPADDR"] = host
    confine_listeners()
    poll_thespian_loops()
    system = ActorSystem("multiprocTCPBase", {"Admin Port": port}, transientUnique=True)
    system.admin_address = (host, port)
    return system


def stop_actor_system_on_port(port: int, host: str = "127.0.0.1") -> None:
    """Stop an actor system (for example a stale one) whose admin listens on ``port``."""
    attach_actor_system(port, host).shutdown()
