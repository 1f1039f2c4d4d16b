"""OTP-style supervision on Thespian's ``multiprocTCPBase``: the names a user needs.

A library another project can use alone: knows nothing of agents. Following trio's
split, this module holds only what a user of the library writes code against; the
rest is public too, in two modules of its own:

* :mod:`supervision.protocol`: the messages servers and supervisors exchange
  (``Call``, ``Reply``, ``Init``, ``Shutdown``, ``ErrorReply``, ...) and the typed error
  each error reply becomes (``ServerCrashed``, ``ServerDiedAnswering``, ...): for code
  that speaks to a server from a plain Thespian actor, or tells one failed call from
  another.
* :mod:`supervision.lowlevel`: OS plumbing (pids, pidfds, ports, Thespian's logs and
  loops), the speed devices and the parts for building servers and supervisors of
  your own: the ``handle_call`` sentinels (``NO_REPLY``, ...), the dynamic and
  partition supervisors' classes (their specs, here, start them), the rarer spec
  options (``ChildType``, ``AutoShutdown``, ``HealthCheck``), ``whereis``, ``Job``,
  ``HealthMonitor``, ``RestartIntensity``, ...
* :mod:`supervision.testing`: the pytest fixture, test servers and ``ManualClock``.

What is here, by use:

* servers and trees: :class:`GenServer` (``init`` / ``handle_call`` / ``handle_cast`` /
  ``handle_info`` / ``terminate``; an uncaught exception crashes the actor, OTP's
  "let it crash", and its supervisor learns why) and the :class:`CallerRef` its
  ``handle_call`` is given, :class:`Supervisor` (one_for_one, one_for_all,
  rest_for_one; sliding-window intensity; escalation; subclassed for its
  ``configure`` hook), :class:`Registry` (names that follow children through
  restarts);
* specs: :class:`ChildSpec`, :class:`SupervisorSpec`, :class:`DynamicSupervisorSpec`,
  :class:`PartitionSupervisorSpec` (each starts its supervisor) and their everyday
  options (:class:`Strategy`, :class:`Restart`, :class:`Backoff`);
* starting and talking: :func:`start_actor_system` (refuses a busy port at once;
  every actor dies with its parent), :func:`start_supervisor`, :func:`start_server`,
  :func:`stop_server`, :class:`SupervisorClient`, :func:`call`, :func:`cast`,
  :func:`call_name` (the ``Call`` and ``Reply`` they exchange are in
  :mod:`supervision.protocol`);
* time: :class:`Clock` (trio's shape), passed in;
* errors: :class:`SupervisionError` (every error of the library),
  :class:`SpecError`, :class:`CallError` (every failed call; the specific ones, such
  as ``ServerCrashed`` and ``ServerDiedAnswering``, are in :mod:`supervision.protocol`),
  :class:`CallTimeout`, :class:`BadRequest` (raise it to refuse input),
  :class:`ServerNotRunning`.
"""

from ._client import (
    SupervisorClient,
    call,
    call_name,
    cast,
    start_server,
    start_supervisor,
    stop_server,
)
from ._clock import Clock
from ._exceptions import (
    BadRequest,
    CallError,
    CallTimeout,
    ServerNotRunning,
    SpecError,
    SupervisionError,
)
from ._registry import Registry
from ._server import CallerRef, GenServer
from ._spec import (
    Backoff,
    ChildSpec,
    DynamicSupervisorSpec,
    PartitionSupervisorSpec,
    Restart,
    Strategy,
    SupervisorSpec,
)
from ._start import start_actor_system
from ._supervisor import Supervisor

__all__ = [
    "Backoff",
    "BadRequest",
    "CallError",
    "CallTimeout",
    "CallerRef",
    "ChildSpec",
    "Clock",
    "DynamicSupervisorSpec",
    "GenServer",
    "PartitionSupervisorSpec",
    "Registry",
    "Restart",
    "ServerNotRunning",
    "SpecError",
    "Strategy",
    "SupervisionError",
    "Supervisor",
    "SupervisorClient",
    "SupervisorSpec",
    "call",
    "call_name",
    "cast",
    "start_actor_system",
    "start_server",
    "start_supervisor",
    "stop_server",
]
