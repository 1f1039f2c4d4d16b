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
from ._messages import Register, Registered, Unregister, WhereIs
from ._server import NO_REPLY, CallerRef, GenServer

__all__ = ["Registry"]


class Registry(GenServer):
    def init(self, args: Any) -> None:
        self._names: dict[str, tuple[Any, int | None]] = {}
        self._waiters: dict[str, list[CallerRef]] = {}

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, WhereIs):
            if not isinstance(request.name, str):
                raise BadRequest("WhereIs.name must be a string")
            entry = self._names.get(request.name)
            if entry is not None:
                return entry[0]
            if request.wait > 0:
                self._waiters.setdefault(request.name, []).append(caller)
                self.send_after(request.wait, ("expire", request.name, caller.ref))
                return NO_REPLY
            return None
        if isinstance(request, Registered):
            return {name: entry[0] for name, entry in self._names.items()}
        if isinstance(request, (Register, Unregister)):
            self.handle_cast(request)
            return "ok"
        return super().handle_call(request, caller)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, Register):
            self._names[request.name] = (request.address, request.pid)
            for caller in self._waiters.pop(request.name, []):
                self.reply(caller, request.address)
        elif isinstance(request, Unregister):
            entry = self._names.get(request.name)
            if entry is not None and entry[0] == request.address:
                del self._names[request.name]
        else:
            super().handle_cast(request)

    def handle_timeout(self, payload: Any) -> None:
        if isinstance(payload, tuple) and payload[0] == "expire":
            _, name, ref = payload
            waiters = self._waiters.get(name, [])
            for caller in [w for w in waiters if w.ref == ref]:
                waiters.remove(caller)
                self.reply(caller, None)
            if not waiters:
                self._waiters.pop(name, None)
