"""OTP-style supervision on Thespian's ``multiprocTCPBase``.

A library another project can use alone: knows nothing of agents.

* :class:`GenServer`: a base actor with ``init`` / ``handle_call`` / ``handle_cast`` /
  ``handle_info`` / ``terminate`` where an uncaught exception crashes the actor
  (OTP's "let it crash") and its supervisor learns why.
* :class:`Supervisor` (one_for_one, one_for_all, rest_for_one; sliding-window
  intensity; escalation; significant children and auto_shutdown; opt-in backoff),
  :class:`DynamicSupervisor`, :class:`PartitionSupervisor`.
* :class:`Registry`: names that follow children through restarts.
* :func:`start_actor_system`: refuses a busy port at once, so a stale system is
  never attached to; every actor dies with its parent (``PR_SET_PDEATHSIG``).
* :mod:`supervision.testing`: the pytest fixture and test servers.
"""

from ._client import (
    SupervisorClient,
    call,
    call_name,
    cast,
    find_global,
    start_server,
    start_supervisor,
    stop_server,
    whereis,
)
from ._exceptions import (
    ActorSystemError,
    BadRequest,
    CallError,
    CallTimeout,
    ChildAlreadyPresent,
    ChildAlreadyStarted,
    ChildError,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    MaxChildren,
    NameNotFound,
    PortInUse,
    ServerCrashed,
    ServerNotRunning,
    SpecError,
    StartFailed,
    SupervisionError,
    UnknownRequest,
    error_for_code,
)
from ._messages import (
    Call,
    Cast,
    ChildCounts,
    ChildInfo,
    ErrorReply,
    ExitKind,
    ExitReason,
    Prepare,
    Prepared,
    Reply,
    Started,
)
from ._registry import Registry
from ._server import FORWARDED, IGNORE, NO_REPLY, CallerRef, GenServer
from ._spec import (
    AutoShutdown,
    Backoff,
    ChildSpec,
    ChildType,
    DynamicSupervisorSpec,
    PartitionSupervisorSpec,
    Restart,
    Strategy,
    SupervisorSpec,
)
from ._start import attach_actor_system, start_actor_system, stop_actor_system_on_port
from ._supervisor import DynamicSupervisor, PartitionSupervisor, Supervisor
from ._system import (
    check_port_free,
    children_of,
    confine_listeners,
    free_port,
    proc_stat,
    process_alive,
    set_parent_death_signal,
)
from ._timing import BackoffState, RestartIntensity

__all__ = [
    "FORWARDED",
    "IGNORE",
    "NO_REPLY",
    "ActorSystemError",
    "AutoShutdown",
    "Backoff",
    "BackoffState",
    "BadRequest",
    "Call",
    "CallError",
    "CallTimeout",
    "CallerRef",
    "Cast",
    "ChildAlreadyPresent",
    "ChildAlreadyStarted",
    "ChildCounts",
    "ChildError",
    "ChildInfo",
    "ChildNotFound",
    "ChildRestarting",
    "ChildRunning",
    "ChildSpec",
    "ChildType",
    "DynamicSupervisor",
    "DynamicSupervisorSpec",
    "ErrorReply",
    "ExitKind",
    "ExitReason",
    "GenServer",
    "MaxChildren",
    "NameNotFound",
    "PartitionSupervisor",
    "PartitionSupervisorSpec",
    "PortInUse",
    "Prepare",
    "Prepared",
    "Registry",
    "Reply",
    "Restart",
    "RestartIntensity",
    "ServerCrashed",
    "ServerNotRunning",
    "SpecError",
    "StartFailed",
    "Started",
    "Strategy",
    "SupervisionError",
    "Supervisor",
    "SupervisorClient",
    "SupervisorSpec",
    "UnknownRequest",
    "attach_actor_system",
    "call",
    "call_name",
    "cast",
    "check_port_free",
    "children_of",
    "confine_listeners",
    "error_for_code",
    "find_global",
    "free_port",
    "proc_stat",
    "process_alive",
    "set_parent_death_signal",
    "start_actor_system",
    "start_server",
    "start_supervisor",
    "stop_actor_system_on_port",
    "stop_server",
    "whereis",
]
