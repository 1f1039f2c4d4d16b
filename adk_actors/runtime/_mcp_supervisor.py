"""The ``mcp`` supervisor of the host's services: the parent of the MCP toolset actors
(:mod:`adk_actors.runtime._mcp`), started on first use.

A supervisor imports a child's module, and unpickles the child's start arguments, on
its message loop, when it starts that child. Neither the toolset actor's module nor
its start arguments (:class:`~adk_actors.runtime._service_calls.McpToolsetStart`,
plain strings) import the mcp SDK (~0.5 s of CPU on an idle machine, many seconds
under load): each toolset actor imports it in its own process, on a thread of its
own. Neither the services process nor this supervisor ever holds the SDK: only the
toolset actors do.

Toolsets start at the same time (issue 53). A supervisor runs its jobs one at a
time, and a start job waits for the child's ``init``; the toolset actor's ``init``
only starts its connection's opening and returns, so each start job is over in
milliseconds, and the next toolset's start begins while the first one's server still
starts. The ``StartChild`` caller is answered when the opening ends, not when the
job does:

1. ``StartChild`` for a toolset that has no child: the caller waits (so does every
   later ``StartChild`` for that toolset while it opens: one start for them all), and
   a job starts the child. Its ``init`` failing (its process could not be made, its
   module not imported): the callers get ``start_failed`` with the reason;
2. the child casts :class:`~adk_actors.runtime._mcp.ToolsetOpened`: the callers get
   ``Started``. It casts :class:`~adk_actors.runtime._mcp.ToolsetOpenFailed`: the
   callers get ``start_failed`` with the reason once a job stopped the child and
   forgot it (as a failed start is forgotten); its process ends first: the same,
   with that reason. No ``ToolsetOpened`` within the child's ``start_timeout``
   (stretched with the load): the same, the child is killed;
3. a child that opens during a restart (no caller waits for it) and fails is cast
   :class:`~adk_actors.runtime._mcp.OpenGiveUp`, and crashes with the reason: the
   restart is tried again with backoff, counted against the intensity, as a restart
   whose start failed (one that does not open in time is killed, the same way);
4. until it opened, ``which_children`` shows such a child ``starting`` (``restarting``
   during a restart), with no address, as any child whose start is not over.

Meanwhile this supervisor answers its health checks and its callers
(``which_children``): nothing it does waits.

If the mcp SDK is not installed (it is the ``mcp`` extra), the supervisor starts all
the same, and a toolset's start fails with the import's error, which the run's tool
call is told.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import Any

from supervision import CallerRef, ChildSpec, Supervisor
from supervision.lowlevel import NO_REPLY, load_scaled
from supervision.protocol import Cast, ChildInfo, StartChild, Started, StartFailed

from ._mcp import OpenGiveUp, ToolsetOpened, ToolsetOpenFailed

__all__ = ["MCP_SUPERVISOR", "McpSupervisor"]

#: The supervisor's import path (``SupervisorSpec.actor_class``).
MCP_SUPERVISOR = "adk_actors.runtime._mcp_supervisor:McpSupervisor"


@dataclass(frozen=True)
class _OpenDue:
    """The time toolset ``child_id`` (process ``pid``) had to open is over."""

    child_id: str
    pid: int | None


class McpSupervisor(Supervisor):
    """A :class:`~supervision.Supervisor` of MCP toolset actors, each started by import
    path with arguments that hold no SDK object, each answered when its connection is
    open (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: dict[str, list[CallerRef]] = {}  # child id -> StartChild callers of its first start
        self._opening: dict[str, int | None] = {}  # child id -> pid: started, not opened yet

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        """``StartChild`` of a toolset with no child: started (see the module), answered
        when it opened; ``which_children``: opening children shown starting; the rest
        as any supervisor."""
        if isinstance(request, StartChild) and isinstance(request.spec, ChildSpec) and not self.leaving:
            child_id = request.spec.id
            if child_id in self._waiting:
                self._waiting[child_id].append(caller)  # the start under way is this caller's too
                return NO_REPLY
            if self.child(child_id) is None:
                self._waiting[child_id] = [caller]
                self.enqueue(self._start_job(request.spec))
                return NO_REPLY
        answer = super().handle_call(request, caller)
        if isinstance(answer, list) and all(isinstance(row, ChildInfo) for row in answer):
            return [self._shown(row) for row in answer]
        return answer

    def _shown(self, row: ChildInfo) -> ChildInfo:
        if row.id not in self._opening or row.status != "running":
            return row
        return replace(row, status="restarting" if row.id not in self._waiting else "starting", address=None)

    def _start_job(self, spec: ChildSpec) -> Generator[Any, Any, None]:
        """Start the child (its ``init`` only begins the opening); its failure answers
        the callers."""
        failures = yield from self.start_children([spec])
        failure = failures.get(spec.id)
        if failure is not None or self.child(spec.id) is None:
            self._answer_failed(spec.id, failure or "it ignored its start")

    def on_child_started(self, child_id: str, address: Any, pid: int | None) -> None:
        """A (re)started toolset actor: it opens now, within its spec's ``start_timeout``."""
        self._opening[child_id] = pid
        record = next((r for r in self.child_records if r.spec.id == child_id), None)
        limit = record.spec.start_timeout if record is not None else 60.0
        self.send_after(load_scaled(limit), _OpenDue(child_id, pid))

    def on_child_gone(self, child_id: str) -> None:
        """A toolset actor's process ended before it opened: on its first start, its
        callers are answered and it is forgotten (not restarted)."""
        if self._opening.pop(child_id, None) is not None and child_id in self._waiting:
            self.enqueue(self._forget_job(child_id, "exited during start"))

    def handle_cast(self, request: Any) -> None:
        """A toolset actor opened, or failed to (see the module)."""
        if isinstance(request, ToolsetOpened) and self._opens_now(request.child_id, request.pid):
            del self._opening[request.child_id]
            info = self.child(request.child_id)
            for caller in self._waiting.pop(request.child_id, []):
                self.reply(caller, Started(request.child_id, info.address if info else None, request.pid))
        elif isinstance(request, ToolsetOpenFailed) and self._opens_now(request.child_id, request.pid):
            self._not_opened(request.child_id, request.pid, request.reason, kill=False)
        else:
            super().handle_cast(request)

    def handle_timeout(self, payload: Any) -> None:
        """Its own timer (a toolset's time to open); the rest as any supervisor."""
        if isinstance(payload, _OpenDue):
            if self._opens_now(payload.child_id, payload.pid):
                record = next((r for r in self.child_records if r.spec.id == payload.child_id), None)
                limit = record.spec.start_timeout if record is not None else 60.0
                self._not_opened(payload.child_id, payload.pid, f"not open within {load_scaled(limit):g} s",
                                 kill=True)
            return
        super().handle_timeout(payload)

    def _opens_now(self, child_id: str, pid: int | None) -> bool:
        """Whether ``child_id`` opens now, in process ``pid`` (not an earlier one's word)."""
        return child_id in self._opening and self._opening[child_id] == pid

    def _not_opened(self, child_id: str, pid: int | None, reason: str, *, kill: bool) -> None:
        """First start: answer the callers, stop and forget the child. A restart: the
        child crashes (told to; or killed, if it may not answer)."""
        del self._opening[child_id]
        if child_id in self._waiting:
            self.enqueue(self._forget_job(child_id, reason))
            return
        self.log.error("toolset %s did not open during its restart: %s", child_id, reason)
        info = self.child(child_id)
        if kill and pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif info is not None and info.address is not None:
            self.send(info.address, Cast(OpenGiveUp(reason)))

    def _forget_job(self, child_id: str, reason: str) -> Generator[Any, Any, None]:
        """A first start that did not open: stop the child (if it still runs) and
        forget it (its restart, if one was due, is void), then answer its callers (a
        ``StartChild`` meanwhile joins them). A start of it after that is a new child:
        the supervisor's incarnation numbers never repeat, so the old process's end,
        reported late, is not taken for the new one's."""
        yield from self.stop_children([child_id])
        self._answer_failed(child_id, reason)

    def _answer_failed(self, child_id: str, reason: str) -> None:
        for caller in self._waiting.pop(child_id, []):
            self.reply_error(caller, StartFailed(f"child {child_id!r} failed to start: {reason}"))
