"""The wire protocol: the messages servers and supervisors exchange, and the typed
error each error reply becomes.

Public so that code which speaks to a server from a plain Thespian actor (rather
than through :func:`supervision.call`) can build and read these messages; a user of
:class:`supervision.GenServer` and :class:`supervision.SupervisorClient` needs none of
them.

* calls and answers: :class:`Call` (its ``ref`` is what the :class:`Reply` or
  :class:`ErrorReply` answering it carries), :class:`Cast`, :class:`ErrorReply` (its
  ``code`` names one of the errors below; :func:`error_for_code` makes it),
  :class:`Handed` (a call was handed to another server, which will answer);
* a server's life: :class:`Init`, :class:`InitOk`, :class:`InitFailed`,
  :class:`OsPid`, :class:`PidSpace`, :class:`Shutdown`, :class:`Exiting` with its
  :class:`ExitReason` (:class:`ExitKind`), :class:`AdvanceClock` (a manual clock's
  tick), :data:`HEALTH_PING`;
* supervisors: :class:`StartChild`, :class:`Started`, :class:`WhichChildren` (its
  answer a list of :class:`ChildInfo`), :class:`ChildCounts`, :class:`ToPartitions`, and :class:`Keyed` (a request that
  names its partition);
* the registry: :class:`WhereIs`, :class:`Lookup`, :data:`REGISTRY_OWNER`;
* the errors a call can end with beyond :mod:`supervision`'s own:
  :class:`ServerCrashed` (the server crashed while the call was pending: every
  pending caller gets it), :class:`UnknownRequest`, :class:`NameNotFound`,
  :class:`ServerDiedAnswering` (a
  :class:`~supervision.ServerNotRunning`: the server a call was handed to died before
  answering, so it may have acted on it), and :class:`ChildError` with the
  OTP supervisor's refusals (:class:`ChildRunning`, :class:`ChildRestarting`,
  :class:`ChildNotFound`, :class:`ChildAlreadyPresent`, :class:`ChildAlreadyStarted`,
  :class:`MaxChildren`, :class:`StartFailed`).
"""

from ._exceptions import (
    ChildAlreadyPresent,
    ChildAlreadyStarted,
    ChildError,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    MaxChildren,
    NameNotFound,
    ServerCrashed,
    ServerDiedAnswering,
    StartFailed,
    UnknownRequest,
    error_for_code,
)
from ._health import HEALTH_PING
from ._messages import (
    AdvanceClock,
    Call,
    Cast,
    ChildCounts,
    ChildInfo,
    ErrorReply,
    Exiting,
    ExitKind,
    ExitReason,
    Handed,
    Init,
    InitFailed,
    InitOk,
    Lookup,
    OsPid,
    PidSpace,
    Reply,
    Shutdown,
    StartChild,
    Started,
    ToPartitions,
    WhereIs,
    WhichChildren,
)
from ._partition_supervisor import Keyed
from ._registry import REGISTRY_OWNER

__all__ = [
    "HEALTH_PING",
    "REGISTRY_OWNER",
    "AdvanceClock",
    "Call",
    "Cast",
    "ChildAlreadyPresent",
    "ChildAlreadyStarted",
    "ChildCounts",
    "ChildError",
    "ChildInfo",
    "ChildNotFound",
    "ChildRestarting",
    "ChildRunning",
    "ErrorReply",
    "ExitKind",
    "ExitReason",
    "Exiting",
    "Handed",
    "Init",
    "InitFailed",
    "InitOk",
    "Keyed",
    "Lookup",
    "MaxChildren",
    "NameNotFound",
    "OsPid",
    "PidSpace",
    "Reply",
    "ServerCrashed",
    "ServerDiedAnswering",
    "Shutdown",
    "StartChild",
    "StartFailed",
    "Started",
    "ToPartitions",
    "UnknownRequest",
    "WhereIs",
    "WhichChildren",
    "error_for_code",
]
