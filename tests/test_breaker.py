"""Circuit breaking: the pure state machine on a fake clock, the wrapper model, fallbacks, the actor."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest
from engine_helpers import run, summary

from adk_actors import Content, LlmAgent, LlmRequest
from adk_actors.models import (
    BadRequestError,
    BreakerConfig,
    BreakerModel,
    CircuitBreaker,
    CircuitOpen,
    ContentBlocked,
    FallbackModel,
    Permit,
    Rejected,
    ScriptedModel,
    ServerError,
    outcome_of,
)
from adk_actors.runtime._breakers import CircuitBreakerActor
from adk_actors.runtime._service_calls import (
    Acquire,
    BreakerStatus,
    Disable,
    ForceOpen,
    Record,
    Reset,
)
from supervision import (
    CallTimeout,
    ChildSpec,
    ServerNotRunning,
    SupervisorSpec,
    call,
    start_supervisor,
)
from supervision.protocol import Cast
from supervision.testing import wait_until

FAST = BreakerConfig(consecutive_failures=3, failure_rate=0.5, window_seconds=10, minimum_calls=6, open_seconds=5,
                     max_open_seconds=12, half_open_probes=2, probe_deadline=20)


def fail(breaker: CircuitBreaker, now: float, n: int = 1, **kw: Any) -> None:
    for _ in range(n):
        permit = breaker.acquire(now)
        assert isinstance(permit, Permit)
        breaker.record(permit, "failure", now, **kw)


def succeed(breaker: CircuitBreaker, now: float, n: int = 1) -> None:
    for _ in range(n):
        permit = breaker.acquire(now)
        assert isinstance(permit, Permit)
        breaker.record(permit, "success", now)


def test_trips_on_consecutive_failures_and_fails_fast_while_open() -> None:
    breaker = CircuitBreaker("m", FAST)
    fail(breaker, 0.0, 2)
    succeed(breaker, 0.1)  # a success resets the streak
    fail(breaker, 0.2, 2)
    assert breaker.state == "closed"
    fail(breaker, 0.3)
    assert breaker.state == "open" and breaker.transitions[-1].reason == "3 consecutive failures"
    rejected = breaker.acquire(2.3)
    assert isinstance(rejected, Rejected) and rejected.retry_after == pytest.approx(3.0)


def test_trips_on_failure_rate_only_with_enough_calls() -> None:
    breaker = CircuitBreaker("m", FAST)
    for t in range(5):  # alternate: never 3 in a row, rate 60 % but only 5 calls
        (fail if t % 2 == 0 else succeed)(breaker, float(t))
    assert breaker.state == "closed"
    succeed(breaker, 5.0)  # 6 calls, 3 failures: 50 %
    assert breaker.state == "open" and "failure rate 50%" in breaker.transitions[-1].reason
    slow = CircuitBreaker("m", BreakerConfig(consecutive_failures=2, slow_call_seconds=1.0))
    for _ in range(2):
        permit = slow.acquire(0.0)
        assert isinstance(permit, Permit)
        slow.record(permit, "success", 0.0, duration=1.5)  # slow calls count as failures
    assert slow.state == "open"


def test_window_forgets_old_calls() -> None:
    breaker = CircuitBreaker("m", FAST)
    for t in range(5):
        (fail if t % 2 == 0 else succeed)(breaker, float(t))
    succeed(breaker, 20.0)  # the old five are out of the 10 s window
    assert breaker.state == "closed"


def test_half_open_probes_are_bounded_and_close_after_successes() -> None:
    breaker = CircuitBreaker("m", FAST)
    fail(breaker, 0.0, 3)
    first, second, third = breaker.acquire(5.0), breaker.acquire(5.0), breaker.acquire(5.0)
    assert breaker.state == "half_open"
    assert isinstance(first, Permit) and first.probe and isinstance(second, Permit)
    assert isinstance(third, Rejected) and third.state == "half_open"
    breaker.record(first, "success", 5.5)
    assert breaker.state == "half_open"
    breaker.record(second, "success", 5.6)
    assert breaker.state == "closed" and breaker.trips == 0


def test_a_lost_probe_cannot_wedge_the_breaker() -> None:
    breaker = CircuitBreaker("m", FAST)
    fail(breaker, 0.0, 3)
    probes = [breaker.acquire(5.0), breaker.acquire(5.0)]
    assert all(isinstance(p, Permit) for p in probes)
    assert isinstance(breaker.acquire(10.0), Rejected)  # both probes still out
    # their runs were killed: no outcome ever comes; at the deadline they count as failures
    assert breaker.snapshot(25.0)["state"] == "open"
    assert breaker.transitions[-1].reason == "2 probe(s) never reported an outcome"
    assert breaker.open_until == pytest.approx(35.0)  # second trip: 5 s * 2


def test_open_duration_grows_is_capped_and_honours_retry_after() -> None:
    breaker = CircuitBreaker("m", FAST)
    fail(breaker, 0.0, 3)
    assert breaker.open_until == 5.0
    for expected_open, now in ((10.0, 5.0), (12.0, 15.0), (12.0, 27.0)):
        probe = breaker.acquire(now)
        assert isinstance(probe, Permit)
        breaker.record(probe, "failure", now)
        assert breaker.open_until == pytest.approx(now + expected_open)
    probe = breaker.acquire(39.0)
    assert isinstance(probe, Permit)
    breaker.record(probe, "failure", 39.0, retry_after=60.0)  # the provider asked for a minute
    assert breaker.open_until == pytest.approx(99.0)


def test_classification_and_operator_states() -> None:
    assert outcome_of(None) == "success"
    assert outcome_of(ServerError("x")) == "failure" and outcome_of(TimeoutError()) == "failure"
    assert outcome_of(BadRequestError("x")) == "ignored" and outcome_of(ContentBlocked("x")) == "ignored"
    breaker = CircuitBreaker("m", FAST)
    for _ in range(10):
        permit = breaker.acquire(0.0)
        assert isinstance(permit, Permit)
        breaker.record(permit, outcome_of(BadRequestError("bad")), 0.0)
    assert breaker.state == "closed"
    breaker.force_open(1.0)
    assert isinstance(breaker.acquire(1.0), Rejected)
    breaker.disable(2.0)
    fail(breaker, 2.0, 10)
    assert breaker.state == "disabled"
    breaker.reset(3.0)
    assert breaker.state == "closed"
    assert [t.to_state for t in breaker.transitions] == ["forced_open", "disabled", "closed"]


def test_breaker_model_and_fallback_in_an_agent() -> None:
    outage = ScriptedModel([ServerError("503")] * 10, name="primary")
    backup = ScriptedModel(fallback="backup answer", name="backup")
    breakers: dict[str, CircuitBreaker] = {"primary": CircuitBreaker("primary", FAST)}
    agent = LlmAgent(name="bot", model=outage, fallback_models=[backup])
    for _ in range(3):
        events = run(agent, "hi", breakers=breakers)
        assert summary(events)[-1] == ("bot", "backup answer") and events[-1].model_version == "backup"
    assert breakers["primary"].state == "open"
    calls_before = len(outage.requests)
    run(agent, "hi", breakers=breakers)
    assert len(outage.requests) == calls_before  # open: the primary was not even called
    lonely = LlmAgent(name="bot", model=outage)
    assert run(lonely, "hi", breakers=breakers)[-1].error_code == "circuit_open"


def test_fallback_does_not_retry_bad_requests_elsewhere() -> None:
    model = FallbackModel([ScriptedModel([BadRequestError("bad schema")], name="a"), ScriptedModel(name="b")])

    async def go() -> None:
        async for _ in model.generate(LlmRequest(contents=(Content.user("x"),))):
            pass

    with pytest.raises(BadRequestError):
        asyncio.run(go())


def test_breaker_model_records_cancellation_as_ignored() -> None:
    breaker = CircuitBreaker("slow", BreakerConfig(consecutive_failures=1))
    model = BreakerModel(ScriptedModel(name="slow"), breaker)

    async def go() -> None:
        async for _ in model.generate(LlmRequest(contents=(Content.user("x"),))):
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    assert breaker.state == "closed"
    with pytest.raises(CircuitOpen):
        breaker.force_open(0)

        async def again() -> None:
            async for _ in model.generate(LlmRequest(contents=(Content.user("x"),))):
                pass

        asyncio.run(again())


def test_breaker_actor_isolates_models_and_restarts_closed(actor_system: Any) -> None:
    config = BreakerConfig(consecutive_failures=2, open_seconds=60)
    sup = start_supervisor(actor_system, SupervisorSpec(children=(
        ChildSpec(id="breakers", start=CircuitBreakerActor, args=config),)))
    breakers = sup.child("breakers").address
    for _ in range(2):
        permit = call(actor_system, breakers, Acquire("gemini-a"))
        actor_system.tell(breakers, Cast(Record("gemini-a", permit.id, "failure")))
    wait_until(lambda: call(actor_system, breakers, BreakerStatus("gemini-a"))["state"] == "open")
    assert isinstance(call(actor_system, breakers, Acquire("gemini-a")), Rejected)
    assert isinstance(call(actor_system, breakers, Acquire("claude-b")), Permit)  # another model: unaffected
    assert call(actor_system, breakers, ForceOpen("claude-b")) == "forced_open"
    assert call(actor_system, breakers, Disable("claude-b")) == "disabled"
    assert call(actor_system, breakers, Reset("gemini-a")) == "closed"
    call(actor_system, breakers, ForceOpen("gemini-a"))
    pid = sup.child("breakers").pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    with pytest.raises((ServerNotRunning, CallTimeout)):
        call(actor_system, breakers, Acquire("gemini-a"), timeout=1.0)  # fails fast, never hangs
    wait_until(lambda: sup.child("breakers").status == "running" and sup.child("breakers").pid != pid)
    fresh = sup.child("breakers").address
    assert call(actor_system, fresh, BreakerStatus()) == {}  # documented: restarts closed
    assert isinstance(call(actor_system, fresh, Acquire("gemini-a")), Permit)


def test_state_changes_are_telemetry_events() -> None:
    from adk_actors import telemetry

    seen: list[dict[str, Any]] = []
    telemetry.attach("breaker-test", ("adk", "breaker", "state_change"), lambda e, m, meta: seen.append(meta))
    try:
        breaker = CircuitBreaker("gemini-x", FAST)
        fail(breaker, 0.0, 3)
        breaker.reset(1.0)
    finally:
        telemetry.detach("breaker-test")
    assert [(s["model"], s["from"], s["to"]) for s in seen] == [("gemini-x", "closed", "open"),
                                                               ("gemini-x", "open", "closed")]
