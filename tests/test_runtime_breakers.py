"""Circuit breakers shared by every run of a host, against a real HTTP stub provider."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_actors import RunFailedError
from adk_actors.models import BreakerConfig, RetryPolicy
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._service_calls import BreakerStatus
from adk_actors.testing import StubResponse, StubServer, openai_chat
from supervision import call
from supervision.testing import wait_until


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture
def host(actor_system: Any, tmp_path: Path, stub: StubServer) -> Iterator[Host]:
    config = HostConfig(apps={"provider": "runtime_agents:provider_agent"}, data_dir=str(tmp_path),
                        models={"stubbed": stub.url + "/v1"},
                        breaker=BreakerConfig(consecutive_failures=2, open_seconds=60),
                        model_options={"retry": RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)})
    with Host(config, system=actor_system) as running:
        yield running


def last(events: list[Any]) -> Any:
    return events[-1]


def one_turn(host: Host, session: str, text: str = "hi") -> Any:
    """The turn's last event; a model error is that event, and the run then ends
    ``model_error`` (as google-adk's run raises) with the same error type."""
    runner = host.runner("provider")
    runner.create_session("ann", session)
    events: list[Any] = []
    try:
        for event in runner.run("ann", session, text):
            events.append(event)
    except RunFailedError as failure:
        assert failure.reason == "model_error" and failure.error_type == events[-1].error_code, failure
    return last(events)


def test_an_outage_trips_the_shared_breaker_and_later_runs_fail_fast(host: Host, stub: StubServer) -> None:
    stub.add(openai_chat("fine"))
    assert one_turn(host, "s0").content.text == "fine"
    stub.add(StubResponse(body=b"{broken"), StubResponse(body=b"{broken"))  # counted, not retried
    assert one_turn(host, "s1").error_code == "malformed_response"
    assert one_turn(host, "s2").error_code == "malformed_response"  # another session: same breaker
    requests_before = len(stub.requests)
    began = time.monotonic()
    failed = one_turn(host, "s3")
    assert failed.error_code == "circuit_open" and "stubbed" in failed.error_message
    assert len(stub.requests) == requests_before  # the provider was not called
    assert time.monotonic() - began < 2
    breakers = host.services().child("breakers").address
    assert call(host.system, breakers, BreakerStatus("stubbed"))["state"] == "open"


def test_a_killed_breaker_actor_never_hangs_a_run(host: Host, stub: StubServer) -> None:
    stub.add(*(openai_chat("ok") for _ in range(3)))
    assert one_turn(host, "s0").content.text == "ok"
    services = host.services()
    pid = services.child("breakers").pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    began = time.monotonic()
    outcome = one_turn(host, "s1")  # during the restart: an answer, or a fast, clear error
    assert time.monotonic() - began < 4
    assert outcome.error_code in (None, "breaker_unavailable")
    wait_until(lambda: services.child("breakers").status == "running" and services.child("breakers").pid != pid)
    assert one_turn(host, "s2").content.text == "ok"  # restarted closed (in memory, as documented)


def test_a_503_outage_is_retried_then_trips_the_breaker_for_every_session(host: Host, stub: StubServer) -> None:
    from adk_actors.testing import openai_error

    stub.add(*(openai_error(503, "overloaded upstream") for _ in range(4)))
    first = one_turn(host, "s1")
    assert first.error_code == "server_error" and "503" in first.error_message
    assert len(stub.requests) == 2  # retried once (max_attempts 2), then gave up
    assert one_turn(host, "s2").error_code == "server_error"  # second failure: the breaker opens
    assert len(stub.requests) == 4
    stub.add(openai_chat("back"))
    blocked = one_turn(host, "s3")
    assert blocked.error_code == "circuit_open" and len(stub.requests) == 4  # the provider was spared
