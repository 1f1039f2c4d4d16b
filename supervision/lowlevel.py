"""The low level, as in trio's ``lowlevel``: what the library itself is built from,
public for code that builds servers and supervisors of its own or must reach the OS.

A user of :mod:`supervision`'s core names needs none of it. Here, by use:

* processes: :func:`process_alive`, :func:`kill_pending` (its two readings,
  :func:`sigkill_pending_in` and :func:`exit_begun_in`), :func:`proc_stat`, :func:`children_of`,
  :func:`open_pidfd` (a descriptor readable when any process ends),
  :func:`pid_space` (whose pids these are), :func:`set_parent_death_signal`,
  :func:`forked_by`, :func:`read_progress` / :class:`ProcessProgress`;
* ports and actor systems: :func:`free_port`, :func:`check_port_free` (raises
  :class:`PortInUse`, an :class:`ActorSystemError`), :func:`takes_connection`,
  :func:`confine_listeners`, :func:`attach_actor_system`,
  :func:`stop_actor_system_on_port`, :func:`direct_thespian_log`,
  :func:`poll_thespian_loops`;
* speed devices: :func:`ask_delivered` (an ask that resends until the message is
  taken), :func:`call_on_fresh_chunk` (a call run on a fresh frame chunk);
* parts for servers and supervisors of your own: the ``handle_call`` / ``init``
  sentinels :data:`NO_REPLY` (answered later, with ``GenServer.reply``),
  :data:`FORWARDED` and :data:`IGNORE`; :class:`DynamicSupervisor` and
  :class:`PartitionSupervisor`, the classes :class:`~supervision.DynamicSupervisorSpec` and
  :class:`~supervision.PartitionSupervisorSpec` start, named only to subclass them; the
  rarer spec options: :class:`ChildType` (a worker or a supervisor;
  ``ChildSpec.supervisor`` sets it, and a string is taken too), :class:`AutoShutdown`
  (OTP's, a string taken too) and :class:`HealthCheck` (the opt-in liveness pings of a
  supervisor's children); :func:`whereis` (the address a registered name has now, for
  code that sends to it by itself: ``supervision.call_name`` calls by name);
  :class:`Job` (a supervisor's job, a generator of waits), :func:`partition_index`, :class:`HealthMonitor` /
  :class:`HealthVerdict`, :func:`load_scaled` (a deadline stretched by the load, read by
  :func:`read_load`, at most :data:`LOAD_SCALE_CAP` times), :class:`RestartIntensity`, :class:`BackoffState`,
  :func:`import_object`, :func:`find_global`, and the clocks :class:`MonotonicClock`
  and :class:`WallClock` (with :data:`MANUAL_CLOCK_VARIABLE`, the environment
  variable that gives servers a manual one).
"""

from ._client import ask_delivered, find_global, whereis
from ._clock import MonotonicClock, WallClock
from ._exceptions import ActorSystemError, PortInUse
from ._frame_chunk import call_on_fresh_chunk
from ._health import (
    LOAD_SCALE_CAP,
    HealthMonitor,
    HealthVerdict,
    ProcessProgress,
    load_scaled,
    read_load,
    read_progress,
)
from ._partition_supervisor import PartitionSupervisor, partition_index
from ._server_base import MANUAL_CLOCK_VARIABLE
from ._server_types import FORWARDED, IGNORE, NO_REPLY
from ._spec import AutoShutdown, ChildType, HealthCheck, import_object
from ._start import attach_actor_system, stop_actor_system_on_port
from ._supervisor import DynamicSupervisor
from ._supervisor_steps import Job
from ._system import (
    check_port_free,
    children_of,
    confine_listeners,
    direct_thespian_log,
    exit_begun_in,
    forked_by,
    free_port,
    kill_pending,
    open_pidfd,
    pid_space,
    poll_thespian_loops,
    proc_stat,
    process_alive,
    set_parent_death_signal,
    sigkill_pending_in,
    takes_connection,
)
from ._timing import BackoffState, RestartIntensity

__all__ = [
    "FORWARDED",
    "IGNORE",
    "LOAD_SCALE_CAP",
    "MANUAL_CLOCK_VARIABLE",
    "NO_REPLY",
    "ActorSystemError",
    "AutoShutdown",
    "BackoffState",
    "ChildType",
    "DynamicSupervisor",
    "HealthCheck",
    "HealthMonitor",
    "HealthVerdict",
    "Job",
    "MonotonicClock",
    "PartitionSupervisor",
    "PortInUse",
    "ProcessProgress",
    "RestartIntensity",
    "WallClock",
    "ask_delivered",
    "attach_actor_system",
    "call_on_fresh_chunk",
    "check_port_free",
    "children_of",
    "confine_listeners",
    "direct_thespian_log",
    "exit_begun_in",
    "find_global",
    "forked_by",
    "free_port",
    "import_object",
    "kill_pending",
    "load_scaled",
    "open_pidfd",
    "partition_index",
    "pid_space",
    "poll_thespian_loops",
    "proc_stat",
    "process_alive",
    "read_load",
    "read_progress",
    "set_parent_death_signal",
    "sigkill_pending_in",
    "stop_actor_system_on_port",
    "takes_connection",
    "whereis",
]
