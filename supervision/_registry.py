"""A name registry whose entries follow children through their restarts.

Supervisors register a named child after every (re)start and unregister it when its
process dies, so a lookup made while the child restarts finds nothing. ``WhereIs``
with ``wait`` > 0 holds the answer until the name is registered again or the wait is
over, so callers neither hang nor spin. The registry's table is rebuilt by the
restarts of everything started after it (its supervisor must be rest_for_one or
one_for_all: :class:`SupervisorSpec` enforces it).
"""

from __future__ import annotations

from typing import Any

from ._exceptions import BadRequest
from ._messages import Lookup, Register, Registered, Unregister, WhereIs
from ._server import NO_REPLY, CallerRef, GenServer
from ._system import node_id, process_alive

__all__ = ["REGISTRY_OWNER", "Registry"]

#: The name under which the supervisor whose child provides a registry registers itself
#: there (each time that child starts): the top of its tree, found by every actor in it.
REGISTRY_OWNER = "registry-owner"


class Registry(GenServer):
    def init(self, args: Any) -> None:
        self._names: dict[str, tuple[Any, int | None]] = {}
        self._waiters: dict[str, list[tuple[CallerRef, bool]]] = {}
        self._node = node_id()

    def _live(self, name: str) -> tuple[Any, int | None] | None:
        """The entry for ``name`` unless its process is known to be dead already.

        The supervisor unregisters a dead child ~5 ms after it dies; checking the pid
        (same machine only) closes that window, so callers wait for the restart
        instead of calling a dead address.
        """
        entry = self._names.get(name)
        if entry is not None and entry[1] is not None and not process_alive(entry[1]):
            del self._names[name]
            return None
        return entry

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, (WhereIs, Lookup)):
            if not isinstance(request.name, str):
                raise BadRequest(f"{type(request).__name__}.name must be a string")
            full = isinstance(request, Lookup)
            entry = self._live(request.name)
            if entry is not None:
                return self._answer(entry, full)
            if request.wait > 0:
                self._waiters.setdefault(request.name, []).append((caller, full))
                self.send_after(request.wait, ("expire", request.name, caller.ref))
                return NO_REPLY
            return None
        if isinstance(request, Registered):
            return {name: entry[0] for name in list(self._names) if (entry := self._live(name)) is not None}
        if isinstance(request, (Register, Unregister)):
            self.handle_cast(request)
            return "ok"
        return super().handle_call(request, caller)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, Register):
            pid = request.pid if request.node == self._node else None
            self._names[request.name] = (request.address, pid)
            for caller, full in self._waiters.pop(request.name, []):
                self.reply(caller, self._answer((request.address, pid), full))
        elif isinstance(request, Unregister):
            entry = self._names.get(request.name)
            if entry is not None and entry[0] == request.address:
                del self._names[request.name]
        else:
            super().handle_cast(request)

    def _answer(self, entry: tuple[Any, int | None], full: bool) -> Any:
        return (entry[0], entry[1], self._node if entry[1] is not None else None) if full else entry[0]

    def handle_timeout(self, payload: Any) -> None:
        if isinstance(payload, tuple) and payload[0] == "expire":
            _, name, ref = payload
            waiters = self._waiters.get(name, [])
            for waiter in [w for w in waiters if w[0].ref == ref]:
                waiters.remove(waiter)
                self.reply(waiter[0], None)
            if not waiters:
                self._waiters.pop(name, None)
