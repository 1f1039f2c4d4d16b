"""The circuit-breaker actor: one breaker per model name, shared by every caller.

Calls: ``Acquire(model)`` -> ``Permit`` or ``Rejected(retry_after, state)``;
``Record(model, permit_id, outcome, duration, retry_after)`` (a cast);
``BreakerStatus(model=None)`` -> snapshots; ``ForceOpen`` / ``Disable`` / ``Reset``.
A probe's deadline is armed as a timer, so a probe whose caller died (its run was
killed) reopens the breaker when the deadline passes instead of wedging it.
Every state change is logged. After a crash or kill -9 the actor restarts with all
breakers closed (they are in memory): an outage that goes on re-trips within
``consecutive_failures`` calls, and meanwhile callers get a fast error from the
supervision layer (the address is dead, or the name is not registered), never a hang.

Not wired yet: run workers still use in-process breakers (``run_invocation(breakers=)``)
rather than asking this actor before each model call.
"""

from __future__ import annotations

import time
from typing import Any

from supervision import BadRequest, CallerRef, GenServer

from .._validate import check_message
from ..models._breaker import BreakerConfig, CircuitBreaker, Transition
from ._service_calls import Acquire, BreakerStatus, Disable, ForceOpen, Record, Reset

__all__ = ["CircuitBreakerActor"]


class CircuitBreakerActor(GenServer):
    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: Any) -> None:
        self.config = args if isinstance(args, BreakerConfig) else BreakerConfig()
        self.breakers: dict[str, CircuitBreaker] = {}
        self.clock = time.monotonic

    def _breaker(self, model: Any) -> CircuitBreaker:
        if not isinstance(model, str) or not model:
            raise BadRequest("a model name is needed")
        breaker = self.breakers.get(model)
        if breaker is None:
            breaker = self.breakers[model] = CircuitBreaker(model, self.config, on_transition=self._log)
        return breaker

    def _log(self, model: str, transition: Transition) -> None:
        self.log.warning("breaker %s: %s -> %s (%s)", model, transition.from_state, transition.to_state,
                         transition.reason)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        now = self.clock()
        if isinstance(request, Acquire):
            breaker = self._breaker(request.model)
            permit = breaker.acquire(now)
            if getattr(permit, "probe", False):
                self.send_after(self.config.probe_deadline + 0.01, ("expire", request.model))
            return permit
        if isinstance(request, Record):
            self.handle_cast(request)
            return "ok"
        if isinstance(request, BreakerStatus):
            if request.model is not None:
                return self._breaker(request.model).snapshot(now)
            return {name: breaker.snapshot(now) for name, breaker in self.breakers.items()}
        if isinstance(request, ForceOpen):
            self._breaker(request.model).force_open(now)
            return "forced_open"
        if isinstance(request, Disable):
            self._breaker(request.model).disable(now)
            return "disabled"
        if isinstance(request, Reset):
            self._breaker(request.model).reset(now)
            return "closed"
        return super().handle_call(request, caller)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, Record):
            self._breaker(request.model).record(request.permit_id, request.outcome, self.clock(),
                                                duration=request.duration, retry_after=request.retry_after)
        else:
            super().handle_cast(request)

    def handle_timeout(self, payload: Any) -> None:
        if isinstance(payload, tuple) and payload[0] == "expire" and payload[1] in self.breakers:
            self.breakers[payload[1]].snapshot(self.clock())  # expires lost probes
