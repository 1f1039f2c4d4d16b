"""Circuit breaking for model calls: a pure state machine, a wrapper model, fallbacks.

:class:`CircuitBreaker` reads no clock: every call takes ``now``. Beyond a
consecutive-failure counter (ADK Elixir's), in order of what it checks:

* **classification**: an outcome is ``success``, ``failure`` (429, 5xx, 529,
  timeouts, connection errors, malformed answers: errors whose
  ``counts_for_breaker`` is set) or ``ignored`` (bad requests, authentication,
  safety blocks say nothing about the provider's health); a success slower than
  ``slow_call_seconds`` counts as a failure;
* **tripping** (closed -> open): ``consecutive_failures`` in a row, OR a failure
  rate of at least ``failure_rate`` over the last ``window_seconds`` once at least
  ``minimum_calls`` were made;
* **open**: calls are rejected with the time left; the open period is
  ``open_seconds * 2**(trips-1)`` capped at ``max_open_seconds``, and never shorter
  than a provider's ``Retry-After``;
* **half-open**: at most ``half_open_probes`` calls are let through, each with a
  deadline; ``half_open_probes`` successes close the breaker, one failure reopens it,
  and a probe whose outcome never comes back (its run was killed) counts as a
  failure when its deadline passes, so the breaker can never wedge half-open;
* **operator states**: ``forced_open`` rejects everything, ``disabled`` lets
  everything through; ``reset`` closes.

Every state change is appended to ``transitions``, given to ``on_transition`` and
emitted as the telemetry event ``("adk", "breaker", "state_change")``.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import telemetry
from .._types import LlmRequest, LlmResponse
from ._base import ModelError, model_name

__all__ = [
    "BreakerConfig",
    "BreakerModel",
    "CircuitBreaker",
    "CircuitOpen",
    "FallbackModel",
    "LocalBreakerClient",
    "Permit",
    "Rejected",
    "Transition",
    "outcome_of",
]


class CircuitOpen(ModelError):
    """The model's circuit breaker is open: the call was not made."""

    counts_for_breaker = False

    def __init__(self, model: str, retry_after: float, state: str) -> None:
        super().__init__(f"circuit breaker for {model!r} is {state}; retry in {retry_after:.1f} s",
                         error_type="circuit_open")
        self.retry_after = retry_after
        self.state = state


@dataclass(frozen=True)
class BreakerConfig:
    consecutive_failures: int = 5
    failure_rate: float = 0.5
    window_seconds: float = 60.0
    minimum_calls: int = 10
    slow_call_seconds: float | None = None
    open_seconds: float = 30.0
    max_open_seconds: float = 300.0
    half_open_probes: int = 1
    probe_deadline: float = 120.0


@dataclass(frozen=True)
class Permit:
    id: str
    probe: bool = False


@dataclass(frozen=True)
class Rejected:
    retry_after: float
    state: str


@dataclass(frozen=True)
class Transition:
    at: float
    from_state: str
    to_state: str
    reason: str


def outcome_of(error: BaseException | None) -> str:
    """``success``, ``failure`` or ``ignored`` for a call that ended with ``error``."""
    if error is None:
        return "success"
    return "failure" if getattr(error, "counts_for_breaker", True) else "ignored"


@dataclass
class CircuitBreaker:
    name: str = "model"
    config: BreakerConfig = field(default_factory=BreakerConfig)
    on_transition: Callable[[str, Transition], None] | None = None
    state: str = "closed"
    trips: int = 0
    open_until: float = 0.0
    consecutive: int = 0
    transitions: list[Transition] = field(default_factory=list)
    _window: deque[tuple[float, bool]] = field(default_factory=deque)
    _window_failures: int = 0
    _probes: dict[str, float] = field(default_factory=dict)
    _probe_successes: int = 0

    # -- transitions ---------------------------------------------------------------------

    def _move(self, to_state: str, now: float, reason: str) -> None:
        if to_state == self.state:
            return
        transition = Transition(now, self.state, to_state, reason)
        self.state = to_state
        self.transitions.append(transition)
        telemetry.execute(("adk", "breaker", "state_change"), {"at": now},
                          {"model": self.name, "from": transition.from_state, "to": to_state, "reason": reason,
                           "trips": self.trips})
        if self.on_transition is not None:
            self.on_transition(self.name, transition)

    def _open(self, now: float, reason: str, retry_after: float | None = None) -> None:
        self.trips += 1
        duration = min(self.config.max_open_seconds, self.config.open_seconds * 2 ** (self.trips - 1))
        if retry_after is not None:
            duration = max(duration, retry_after)
        self.open_until = now + duration
        self._probes.clear()
        self._probe_successes = 0
        self._move("open", now, reason)

    def _close(self, now: float, reason: str) -> None:
        self.trips = 0
        self.consecutive = 0
        self._window.clear()
        self._window_failures = 0
        self._probes.clear()
        self._probe_successes = 0
        self._move("closed", now, reason)

    def _forget_old(self, now: float) -> None:
        threshold = now - self.config.window_seconds
        while self._window and self._window[0][0] < threshold:
            self._window_failures -= self._window.popleft()[1]

    def _expire_probes(self, now: float) -> None:
        if self.state != "half_open":
            return
        lost = [pid for pid, deadline in self._probes.items() if deadline <= now]
        if lost:
            self._open(now, f"{len(lost)} probe(s) never reported an outcome")

    # -- the API ---------------------------------------------------------------------------------

    def acquire(self, now: float) -> Permit | Rejected:
        """May a call be made now?"""
        if self.state == "disabled":
            return Permit(uuid.uuid4().hex)
        if self.state == "forced_open":
            return Rejected(float("inf"), "forced_open")
        self._expire_probes(now)
        if self.state == "open":
            if now < self.open_until:
                return Rejected(self.open_until - now, "open")
            self._move("half_open", now, "open period over")
        if self.state == "half_open":
            if len(self._probes) >= self.config.half_open_probes:
                return Rejected(min(self._probes.values()) - now if self._probes else 1.0, "half_open")
            permit = Permit(uuid.uuid4().hex, probe=True)
            self._probes[permit.id] = now + self.config.probe_deadline
            return permit
        return Permit(uuid.uuid4().hex)

    def record(self, permit: Permit | str, outcome: str, now: float, *, duration: float = 0.0,
               retry_after: float | None = None) -> None:
        """Report how a permitted call ended (``success`` / ``failure`` / ``ignored``)."""
        permit_id = permit.id if isinstance(permit, Permit) else permit
        if self.state in ("disabled", "forced_open"):
            return
        slow = self.config.slow_call_seconds
        if outcome == "success" and slow is not None and duration > slow:
            outcome = "failure"
        if self.state == "half_open":
            if permit_id not in self._probes:
                return  # a late answer from before the breaker opened
            del self._probes[permit_id]
            if outcome == "failure":
                self._open(now, "a half-open probe failed", retry_after)
            elif outcome == "success":
                self._probe_successes += 1
                if self._probe_successes >= self.config.half_open_probes:
                    self._close(now, "half-open probes succeeded")
            return
        if self.state != "closed" or outcome == "ignored":
            return
        failed = outcome == "failure"
        self.consecutive = self.consecutive + 1 if failed else 0
        self._window.append((now, failed))
        self._window_failures += failed
        self._forget_old(now)
        if self.consecutive >= self.config.consecutive_failures:
            self._open(now, f"{self.consecutive} consecutive failures", retry_after)
            return
        calls = len(self._window)
        if calls >= self.config.minimum_calls:
            rate = self._window_failures / calls
            if rate >= self.config.failure_rate:
                self._open(now, f"failure rate {rate:.0%} over {calls} calls", retry_after)

    def force_open(self, now: float) -> None:
        self._move("forced_open", now, "forced open by an operator")

    def disable(self, now: float) -> None:
        self._move("disabled", now, "disabled by an operator")

    def reset(self, now: float) -> None:
        self._close(now, "reset by an operator")

    def snapshot(self, now: float) -> dict[str, Any]:
        self._expire_probes(now)
        self._forget_old(now)
        calls = len(self._window)
        return {"name": self.name, "state": self.state, "trips": self.trips, "consecutive_failures": self.consecutive,
                "calls_in_window": calls,
                "failure_rate": (self._window_failures / calls) if calls else 0.0,
                "open_for": max(0.0, self.open_until - now) if self.state == "open" else 0.0,
                "probes_in_flight": len(self._probes)}


class LocalBreakerClient:
    """The breaker-client interface over an in-process :class:`CircuitBreaker`."""

    def __init__(self, breaker: CircuitBreaker, clock: Callable[[], float] = time.monotonic) -> None:
        self.breaker = breaker
        self.clock = clock

    async def acquire(self, model: str) -> Permit | Rejected:
        return self.breaker.acquire(self.clock())

    def record(self, model: str, permit_id: str, outcome: str, duration: float, retry_after: float | None) -> None:
        self.breaker.record(permit_id, outcome, self.clock(), duration=duration, retry_after=retry_after)


class BreakerModel:
    """A model behind a circuit breaker: consults it before every call and tells it
    every outcome, a stream that breaks mid-way included; a cancelled call is
    ``ignored`` (it says nothing about the provider, and frees a probe slot).

    ``breaker`` is an in-process :class:`CircuitBreaker`, or any client with
    ``async acquire(model)`` and ``record(model, permit_id, outcome, duration,
    retry_after)`` (the host's breaker actor, reached from a run worker).
    """

    def __init__(self, model: Any, breaker: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.model = model
        self.name = model_name(model)
        breaker = breaker if breaker is not None else CircuitBreaker(self.name)
        self.breaker = breaker
        self.client = LocalBreakerClient(breaker, clock) if isinstance(breaker, CircuitBreaker) else breaker
        self.clock = clock

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        permit = await self.client.acquire(self.name)
        if isinstance(permit, Rejected):
            raise CircuitOpen(self.name, permit.retry_after, permit.state)
        began = self.clock()
        try:
            async for response in self.model.generate(request, stream=stream):
                yield response
        except BaseException as error:
            outcome = outcome_of(error) if isinstance(error, Exception) else "ignored"
            self.client.record(self.name, permit.id, outcome, self.clock() - began, getattr(error, "retry_after", None))
            raise
        self.client.record(self.name, permit.id, "success", self.clock() - began, None)


class FallbackModel:
    """Try ``models`` in order: the next answers when one's breaker is open or its
    retries are exhausted (a retryable or breaker error). Other errors (a bad request)
    are not retried elsewhere. The answer's ``model_version`` says which model answered."""

    def __init__(self, models: Sequence[Any]) -> None:
        self.models = list(models)
        self.name = model_name(self.models[0])

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        last: BaseException | None = None
        for model in self.models:
            yielded = False
            try:
                async for response in model.generate(request, stream=stream):
                    yielded = True
                    if not response.partial and not response.model_version:
                        response = response.model_copy(update={"model_version": model_name(model)})
                    yield response
                return
            except ModelError as error:
                if yielded or not (isinstance(error, CircuitOpen) or getattr(error, "retryable", False)):
                    raise
                last = error
        assert last is not None
        raise last
