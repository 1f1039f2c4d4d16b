"""Child specifications and supervisor flags (OTP's ``child_spec()`` and ``sup_flags()``).

Everything here is plain, frozen, picklable data: a spec travels inside messages to
supervisor processes. Invalid combinations raise :class:`SpecError` at construction,
never later inside a running supervisor.
"""

from __future__ import annotations

import enum
import importlib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ._exceptions import SpecError

__all__ = [
    "AutoShutdown",
    "Backoff",
    "ChildSpec",
    "ChildType",
    "DynamicSupervisorSpec",
    "HealthCheck",
    "PartitionSupervisorSpec",
    "Restart",
    "Shutdown",
    "Strategy",
    "SupervisorSpec",
    "import_object",
    "import_path_of",
]

_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class Restart(enum.StrEnum):
    """When a child is restarted after it exits (OTP restart types)."""

    PERMANENT = "permanent"  #: always, whatever the exit reason
    TRANSIENT = "transient"  #: only after an abnormal exit (not normal / shutdown)
    TEMPORARY = "temporary"  #: never; its spec is removed when it exits


class ChildType(enum.StrEnum):
    WORKER = "worker"
    SUPERVISOR = "supervisor"


class Strategy(enum.StrEnum):
    ONE_FOR_ONE = "one_for_one"
    ONE_FOR_ALL = "one_for_all"
    REST_FOR_ONE = "rest_for_one"


class AutoShutdown(enum.StrEnum):
    NEVER = "never"
    ANY_SIGNIFICANT = "any_significant"
    ALL_SIGNIFICANT = "all_significant"


#: ``"brutal_kill"``, ``"infinity"`` or a timeout in seconds.
Shutdown = Literal["brutal_kill", "infinity"] | float


def import_path_of(obj: Any) -> str:
    """Return ``"module:QualName"`` for a module-level class or function."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname:
        raise SpecError(f"{obj!r} is not a module-level class or function; give an import path")
    return f"{module}:{qualname}"


def import_object(path: str) -> Any:
    """The object an import path ``"package.module:Qual.name"`` names (ImportError /
    AttributeError when there is none)."""
    module_name, _, qualname = path.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


@dataclass(frozen=True)
class Backoff:
    """Restart backoff (Akka's ``restartWithBackoff``), opt-in per child.

    The n-th consecutive restart waits ``min(max_delay, min_delay * 2**(n-1))`` seconds,
    plus up to ``jitter`` (a fraction) of that at random. The count resets when the
    child has run without failing for ``reset_after`` seconds (default: the mean of
    min and max delay). With ``after_crashes=False`` a child that crashed while it ran
    is restarted at once, and only a start that failed waits (a child that cannot start
    now, its store out of reach, is tried ever less often).
    """

    min_delay: float = 0.1
    max_delay: float = 10.0
    jitter: float = 0.2
    reset_after: float | None = None
    after_crashes: bool = True

    def __post_init__(self) -> None:
        if self.min_delay < 0 or self.max_delay < self.min_delay:
            raise SpecError("Backoff needs 0 <= min_delay <= max_delay")
        if not 0 <= self.jitter <= 1:
            raise SpecError("Backoff.jitter is a fraction between 0 and 1")
        if self.reset_after is not None and self.reset_after < 0:
            raise SpecError("Backoff.reset_after must be >= 0")

    @property
    def quiet_period(self) -> float:
        if self.reset_after is not None:
            return self.reset_after
        return (self.min_delay + self.max_delay) / 2


#: A health check's ``ceiling`` when none is given: this many times its ``timeout``.
CEILING_FACTOR = 12


@dataclass(frozen=True)
class HealthCheck:
    """A parent's health checks of its children (:mod:`supervision._health`): ping each
    running child every ``interval`` seconds; one that leaves a ping unanswered
    ``timeout`` seconds while it makes no progress (stopped, or no CPU time used) is
    killed and restarted; one that is busy (uses CPU) but does not answer is killed
    once it has not answered for ``ceiling`` seconds (default: 12 x ``timeout``)."""

    interval: float = 1.0
    timeout: float = 5.0
    ceiling: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.interval, (int, float)) and self.interval > 0):
            raise SpecError(f"HealthCheck.interval must be > 0, got {self.interval!r}")
        if not (isinstance(self.timeout, (int, float)) and self.timeout >= self.interval):
            raise SpecError(f"HealthCheck.timeout must be >= its interval, got {self.timeout!r}")
        if self.ceiling is not None and not (isinstance(self.ceiling, (int, float)) and self.ceiling >= self.timeout):
            raise SpecError(f"HealthCheck.ceiling must be >= its timeout, got {self.ceiling!r}")

    @property
    def limit(self) -> float:
        """How long a busy child may leave a ping unanswered: ``ceiling``, or 12 x ``timeout``."""
        return float(self.ceiling) if self.ceiling is not None else CEILING_FACTOR * float(self.timeout)

    def describe(self) -> str:
        """What an unresponsive child is told it died of."""
        return f"unresponsive: no answer to a health check within {self.timeout:g} s"


@dataclass(frozen=True)
class ChildSpec:
    """How a supervisor starts, restarts and stops one child.

    ``start`` is the child's actor class, as a class (turned into its import path) or
    as ``"package.module:Class"``; the class must derive from
    :class:`supervision.GenServer`. ``args`` (picklable) is handed to its ``init``.
    ``name``, when set, registers the child in the tree's :class:`Registry` after
    every (re)start.
    """

    id: str
    start: str | type
    args: Any = None
    restart: Restart = Restart.PERMANENT
    shutdown: Shutdown | None = None
    type: ChildType = ChildType.WORKER
    significant: bool = False
    name: str | None = None
    backoff: Backoff | None = None
    start_timeout: float = 10.0  # seconds to answer Init, times the load per CPU (``load_scaled``)
    provides_registry: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise SpecError("ChildSpec.id must be a non-empty string")
        start = self.start if isinstance(self.start, str) else import_path_of(self.start)
        if not _IMPORT_PATH.match(start):
            raise SpecError(f"ChildSpec {self.id!r}: start must look like 'package.module:Class', got {start!r}")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "restart", Restart(self.restart))
        object.__setattr__(self, "type", ChildType(self.type))
        shutdown = self.shutdown
        if shutdown is None:
            shutdown = "infinity" if self.type is ChildType.SUPERVISOR else 5.0
        if isinstance(shutdown, bool) or not (
            shutdown in ("brutal_kill", "infinity") or (isinstance(shutdown, (int, float)) and shutdown >= 0)
        ):
            raise SpecError(
                f"ChildSpec {self.id!r}: shutdown must be 'brutal_kill', 'infinity' or seconds >= 0, got {shutdown!r}"
            )
        object.__setattr__(self, "shutdown", shutdown if isinstance(shutdown, str) else float(shutdown))
        if self.significant and self.restart is Restart.PERMANENT:
            raise SpecError(f"ChildSpec {self.id!r}: only transient or temporary children can be significant")
        if self.start_timeout <= 0:
            raise SpecError(f"ChildSpec {self.id!r}: start_timeout must be > 0")

    @property
    def start_path(self) -> str:
        assert isinstance(self.start, str)
        return self.start

    @classmethod
    def supervisor(
        cls,
        id: str,
        spec: SupervisorSpec | DynamicSupervisorSpec | PartitionSupervisorSpec,
        *,
        restart: Restart = Restart.PERMANENT,
        shutdown: Shutdown = "infinity",
        significant: bool = False,
        name: str | None = None,
    ) -> ChildSpec:
        """A child that is itself a supervisor running ``spec``."""
        return cls(
            id=id,
            start=spec.actor_class,
            args=spec,
            restart=restart,
            shutdown=shutdown,
            type=ChildType.SUPERVISOR,
            significant=significant,
            name=name,
            start_timeout=600.0,
        )


def _check_intensity(intensity: int, period: float) -> None:
    if isinstance(intensity, bool) or not isinstance(intensity, int) or intensity < 0:
        raise SpecError(f"intensity must be an int >= 0, got {intensity!r}")
    if period <= 0:
        raise SpecError(f"period must be > 0 seconds, got {period!r}")


@dataclass(frozen=True)
class SupervisorSpec:
    """Flags and static children of a :class:`Supervisor` (OTP ``init/1`` result).

    Children start in list order and stop in reverse order; with ``concurrent_start``
    they all start at once (each gets its process and ``Init``, then one wait for all
    the answers), for children that need none of the others to start: a start costs
    the slowest child's time, not the sum. Either way, if a child fails to start, the
    others started are stopped in reverse order and the supervisor's start fails.
    ``intensity`` restarts
    within ``period`` seconds (a sliding window over the whole supervisor) are
    allowed; one more and the supervisor stops all children and exits with reason
    ``shutdown``, so its own supervisor decides what happens next. With ``health``,
    every running child on this machine is health-checked (:mod:`supervision._health`):
    one that stops answering is killed, and restarted as its spec says.
    """

    children: tuple[ChildSpec, ...] = ()
    strategy: Strategy = Strategy.ONE_FOR_ONE
    intensity: int = 3
    period: float = 5.0
    auto_shutdown: AutoShutdown = AutoShutdown.NEVER
    concurrent_start: bool = False
    health: HealthCheck | None = None
    actor_class: str = field(default="supervision._supervisor:Supervisor")

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))
        object.__setattr__(self, "strategy", Strategy(self.strategy))
        object.__setattr__(self, "auto_shutdown", AutoShutdown(self.auto_shutdown))
        _check_intensity(self.intensity, self.period)
        seen: set[str] = set()
        names: set[str] = set()
        registry_seen = False
        for child in self.children:
            if not isinstance(child, ChildSpec):
                raise SpecError(f"children must be ChildSpec instances, got {child!r}")
            if child.id in seen:
                raise SpecError(f"duplicate child id {child.id!r}")
            seen.add(child.id)
            if child.name is not None:
                if child.name in names:
                    raise SpecError(f"duplicate registered name {child.name!r}")
                names.add(child.name)
            if child.provides_registry:
                if registry_seen:
                    raise SpecError("only one child may provide the registry")
                if self.strategy is Strategy.ONE_FOR_ONE:
                    raise SpecError(
                        "a supervisor holding the registry must use rest_for_one or one_for_all, "
                        "so that children registered in it are restarted (and re-registered) with it"
                    )
                registry_seen = True
        holds_registry = any(c.provides_registry for c in self.children)
        for child in self.children:
            if child.provides_registry:
                break
            if holds_registry and child.name is not None:
                raise SpecError(f"child {child.id!r} has a name but starts before the registry child")


@dataclass(frozen=True)
class DynamicSupervisorSpec:
    """A supervisor of children started at run time (Elixir's DynamicSupervisor).

    Always one_for_one; ``max_children`` bounds how many may run at once. Children
    are stopped concurrently on shutdown.
    """

    max_children: int | None = None
    intensity: int = 3
    period: float = 5.0
    actor_class: str = field(default="supervision._supervisor:DynamicSupervisor")

    def __post_init__(self) -> None:
        _check_intensity(self.intensity, self.period)
        if self.max_children is not None and self.max_children < 1:
            raise SpecError("max_children must be >= 1 or None")


@dataclass(frozen=True)
class PartitionSupervisorSpec:
    """``partitions`` dynamic supervisors behind one address (Elixir's PartitionSupervisor).

    A child is started in the partition chosen by a stable hash of its key
    (:func:`supervision.lowlevel.partition_index`), so no single Thespian parent ever holds
    thousands of children.

    The partitions are DynamicSupervisors unless ``partition_start`` names another
    class (or its import path), started with ``partition_args``: a supervisor
    subclass that also routes requests to its children, or a plain server that holds
    many keys' state itself (then ``partition_type`` is ``ChildType.WORKER`` and
    ``partition_shutdown`` its grace period in seconds). They are named
    ``<partition_prefix>-<i>`` and may take ``partition_start_timeout`` seconds to start.

    A call whose request has a ``partition_key`` (:class:`supervision.protocol.Keyed`) sent to
    the PartitionSupervisor is handed to the partition that key belongs to (the reply
    and anything else comes from there); while that partition restarts, the call
    waits up to ``route_hold`` seconds for it, then is answered ``restarting``.
    """

    partitions: int = 4
    max_children_per_partition: int | None = None
    intensity: int = 3
    period: float = 5.0
    partition_start: Any = None
    partition_args: Any = None
    partition_prefix: str = "partition"
    partition_start_timeout: float = 600.0
    partition_type: ChildType = ChildType.SUPERVISOR
    partition_shutdown: Shutdown = "infinity"
    health: HealthCheck | None = None  # the partitions' health checks (see SupervisorSpec)
    #: each partition's restart backoff (None: restarted at once); a partition whose
    #: start fails (a store it cannot reach) is then tried again later, not at once
    partition_backoff: Backoff | None = None
    route_hold: float = 10.0
    actor_class: str = field(default="supervision._partition_supervisor:PartitionSupervisor")

    def __post_init__(self) -> None:
        _check_intensity(self.intensity, self.period)
        if self.partitions < 1:
            raise SpecError("partitions must be >= 1")
        if not self.route_hold > 0:
            raise SpecError("route_hold must be > 0")
