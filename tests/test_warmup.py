"""Warming a pooled pair (adk_actors.runtime._warmup): it must work, since a failure
is only logged, and a failure must leave the process usable."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from adk_actors.runtime import _warmup


def test_warming_a_session_process_and_a_run_process_succeeds(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="adk_actors.warmup"):
        _warmup.warm_session_process()
        _warmup.warm_run_process()
    assert [r.getMessage() for r in caplog.records if r.name == "adk_actors.warmup"] == []


def test_a_warm_up_that_fails_is_logged_and_raises_nothing(caplog: pytest.LogCaptureFixture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no room left")

    monkeypatch.setattr(_warmup, "SQLiteSessionStore", broken)
    monkeypatch.setattr(_warmup, "run_invocation", broken)
    with caplog.at_level(logging.WARNING, logger="adk_actors.warmup"):
        _warmup.warm_session_process()
        _warmup.warm_run_process()
    warnings = [r for r in caplog.records if r.name == "adk_actors.warmup"]
    assert [r.getMessage() for r in warnings] == [
        "warming a pooled session actor failed (it serves all the same)",
        "warming a pooled run actor failed (it serves all the same)"]
    assert all(r.exc_info is not None and "no room left" in str(r.exc_info[1]) for r in warnings)


def test_the_warm_up_invocation_reaches_no_telemetry_handler() -> None:
    from adk_actors import LlmAgent, telemetry
    from adk_actors.engine import SessionView, run_invocation
    from adk_actors.models import ScriptedModel

    seen: list[tuple[str, ...]] = []
    telemetry.attach("warm-up-test", [("adk", "agent", "start"), ("adk", "llm", "stop")],
                     lambda event, measurements, metadata: seen.append(event))
    try:
        _warmup.warm_run_process()
        assert seen == []

        async def invoke() -> None:  # the same kind of invocation, not muted: seen
            agent = LlmAgent(name="bot", model=ScriptedModel(["hi"]))
            async for _ in run_invocation(agent, SessionView(), _warmup.Content.user("hello")):
                pass

        import asyncio

        asyncio.run(invoke())
        assert seen == [("adk", "agent", "start"), ("adk", "llm", "stop")]
    finally:
        telemetry.detach("warm-up-test")
