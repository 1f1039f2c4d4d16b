"""PartitionSupervisor: ``partitions`` dynamic supervisors behind one address, and the
routing of a request to its key's partition (Elixir's PartitionSupervisor).

What happens to a routed call, in order: its key's partition is found
(:func:`partition_index`, stable across processes and restarts); a running partition
is handed the call and answers the caller itself; a partition that is restarting (or
whose process is seen gone before its exit is handled) has the call held, forwarded
as soon as it runs again, or answered ``restarting`` once
``PartitionSupervisorSpec.route_hold`` has passed (timer :class:`_HoldExpired`). On
shutdown a routed call is answered ``not_running``.
"""

from __future__ import annotations

import inspect
import zlib
from dataclasses import dataclass
from typing import Any, Protocol

from ._exceptions import BadRequest, ChildRestarting, ServerNotRunning, SpecError
from ._messages import Cast, StartChild, ToPartitions
from ._server_types import FORWARDED, NO_REPLY, CallerRef, describe
from ._spec import (
    ChildSpec,
    DynamicSupervisorSpec,
    PartitionSupervisorSpec,
    Strategy,
    SupervisorSpec,
)
from ._supervisor import DynamicSupervisor, Supervisor
from ._supervisor_state import ChildRecord, ChildStatus
from ._system import process_alive

__all__ = ["Keyed", "PartitionSupervisor", "partition_index"]


@dataclass(frozen=True)
class _HoldExpired:
    """The timer of a call held for partition ``partition_id``: ``route_hold`` is over."""

    partition_id: str
    ref: str


def partition_index(key: str, partitions: int) -> int:
    """The partition (0 .. partitions-1) that owns ``key``: ``crc32(key) % partitions``,
    stable across processes and restarts."""
    return zlib.crc32(key.encode(errors="surrogatepass")) % partitions


class Keyed(Protocol):
    """A request a :class:`PartitionSupervisor` routes: it names the key (e.g. a session's
    ``app/user/session``) whose partition must handle it."""

    @property
    def partition_key(self) -> str: ...


class PartitionSupervisor(Supervisor):
    """``partitions`` dynamic supervisors behind one address (one_for_one).

    ``StartChild(spec, key)`` is forwarded to partition :func:`partition_index` of the
    key, which replies to the original caller directly. The partitions are
    DynamicSupervisors, or the class ``PartitionSupervisorSpec.partition_start`` names.

    A call whose request is :class:`Keyed` is routed the same way, so that a caller
    addresses a key, not a partition (Elixir's ``{:via, PartitionSupervisor, {name,
    key}}``): it is forwarded to the key's partition, which answers the caller (and
    sends it whatever else the request asks for) directly. While that partition is
    restarting, or its process is seen gone before its exit is handled, the call is
    held and forwarded as soon as the partition runs again; after
    ``PartitionSupervisorSpec.route_hold`` seconds it is answered ``restarting``; on
    shutdown, ``not_running``. A call forwarded to a partition that dies before it
    handles it is lost: the caller's own deadline covers that (as for any call).
    """

    def __init__(self) -> None:
        super().__init__()
        self._route_hold = 10.0
        self._held: dict[str, list[tuple[Any, CallerRef]]] = {}  # partition id -> calls waiting for it
        self._settings: dict[str, Any] = {}  # ToPartitions: topic -> the latest message

    def configure(self, args: Any) -> SupervisorSpec:
        if not isinstance(args, PartitionSupervisorSpec):
            raise SpecError(f"PartitionSupervisor needs a PartitionSupervisorSpec, got {type(args).__name__}")
        self._route_hold = args.route_hold
        start: Any = args.partition_start
        partition_args = args.partition_args
        if start is None:
            start, partition_args = DynamicSupervisor, DynamicSupervisorSpec(
                max_children=args.max_children_per_partition, intensity=args.intensity, period=args.period)
        children = tuple(
            ChildSpec(id=f"{args.partition_prefix}-{i}", start=start, args=partition_args, type=args.partition_type,
                      shutdown=args.partition_shutdown, start_timeout=args.partition_start_timeout,
                      backoff=args.partition_backoff)
            for i in range(args.partitions))
        return SupervisorSpec(children=children, strategy=Strategy.ONE_FOR_ONE, intensity=args.intensity,
                              period=args.period, concurrent_start=True, health=args.health)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, StartChild):
            if not isinstance(request.spec, ChildSpec):
                raise BadRequest("start_child needs a ChildSpec")
            key = request.key if request.key is not None else request.spec.id
            partition = self.child_records[partition_index(key, len(self.child_records))]
            if partition.status is not ChildStatus.RUNNING:
                raise ChildRestarting(f"partition {partition.spec.id} is restarting")
            self._forward(partition.address, request, caller)
            return FORWARDED
        if inspect.getattr_static(request, "partition_key", None) is not None:  # Keyed (nothing evaluated yet)
            return self._route(request, caller)
        return super().handle_call(request, caller)

    def _route(self, request: Keyed, caller: CallerRef) -> Any:
        """Forward ``request`` to its key's partition, or hold it while that partition
        restarts (see the class)."""
        try:
            index = partition_index(request.partition_key, len(self.child_records))
        except Exception as exc:  # a key that is no string: the caller's error, never our crash
            raise BadRequest(f"{type(request).__name__} names no routable key ({describe(exc)})") from None
        if self.stopping or self.leaving:
            raise ServerNotRunning("the partitions are shutting down")
        partition = self.child_records[index]
        if self._reachable(partition):
            self._forward(partition.address, request, caller)
            return FORWARDED
        self._held.setdefault(partition.spec.id, []).append((request, caller))
        self.send_after(self._route_hold, _HoldExpired(partition.spec.id, caller.ref))
        return NO_REPLY

    def _forward(self, address: Any, request: Any, caller: CallerRef) -> None:
        """Hand ``caller``'s call to the partition at ``address``, which answers it directly
        (a caller that watches is told: ``hand_over``)."""
        self.hand_over(caller, request, address)

    @staticmethod
    def _reachable(partition: ChildRecord) -> bool:
        return partition.status is ChildStatus.RUNNING and not (
            partition.local and partition.pid is not None and not process_alive(partition.pid))

    def handle_cast(self, request: Any) -> None:
        """``ToPartitions``: kept, and cast to every running partition."""
        if isinstance(request, ToPartitions):
            self._settings[request.topic] = request.message
            for child in self.child_records:
                if child.status is ChildStatus.RUNNING and child.address is not None:
                    self.send(child.address, Cast(request.message))
            return
        super().handle_cast(request)

    def on_child_started(self, child_id: str, address: Any, pid: int | None) -> None:
        """A partition runs (again): it is cast the kept ``ToPartitions`` messages, then
        the calls held for it are forwarded, in order."""
        for message in self._settings.values():
            self.send(address, Cast(message))
        for request, caller in self._held.pop(child_id, []):
            self._forward(address, request, caller)  # handed over: no longer pending here

    def handle_timeout(self, payload: Any) -> None:
        """A held call's ``route_hold`` is over (if it is still held, it is answered
        ``restarting``); other timers as any supervisor's."""
        match payload:
            case _HoldExpired(partition_id=child_id, ref=ref):
                held = self._held.get(child_id, [])
                for entry in [e for e in held if e[1].ref == ref]:
                    held.remove(entry)
                    self.reply_error(entry[1], ChildRestarting(
                        f"partition {child_id} did not run again within {self._route_hold:g} s"))
            case _:
                super().handle_timeout(payload)
