"""``chaos soak --resume`` says why a turn a kill ended was not completed by its
resumes: the last resume's failure, the session's latest run as the store holds it,
and the turn's last committed event (a CI soak once found 18 of 19 completed and said
no more). Real hosts, real kills."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_durable_runs import APPS, _kill_paused, _start_paused

from adk_actors._exceptions import RunFailedError
from adk_actors.chaos import UnfinishedResume, describe_unfinished, soak
from adk_actors.runtime import Host, HostConfig


@pytest.fixture
def host(actor_system: Any, tmp_path: Path) -> Any:
    with Host(HostConfig(apps=APPS, data_dir=str(tmp_path / "data")), system=actor_system) as running:
        yield running


def test_an_unfinished_resume_is_described_by_its_failure_its_stored_run_and_its_last_event(
        host: Host, tmp_path: Path) -> None:
    """A run killed after a tool that is not idempotent ran: its resume stops with
    needs_decision; the description names that failure, the resume as the store's latest
    run (needs_decision, resuming the killed run, attempt 1) and the call left without
    a result as the invocation's last event."""
    runner = host.runner("durable")
    thread, box = _start_paused(runner, tmp_path / "counts.txt", "right", user="ann")  # right's send ran, no result committed
    _kill_paused(host, runner, thread, box, "ann")
    with pytest.raises(RunFailedError) as stopped:
        list(runner.resume("ann", "s1", "run-first-ann", new_run_id="run-second"))
    assert stopped.value.reason == "needs_decision"

    said = describe_unfinished(runner, "ann", UnfinishedResume("s1", "run-first-ann", "run-first-ann", "run-second",
                                                              f"RunFailedError: {stopped.value}"))
    assert said.startswith("the turn run-first-ann of session s1, killed, was not completed by its resumes: the last "
                           "resume (run-second, of run-first-ann) ended RunFailedError: run run-second failed "
                           "(needs_decision)"), said
    assert ("the store's latest run of it: run-second (the last resume), needs_decision, resuming run-first-ann, "
            "attempt 1") in said
    assert "its invocation e-first-ann has " in said and said.endswith("; calls without a result: send (right)")


def test_a_soak_whose_resumes_cannot_complete_says_why_for_each_turn(actor_system: Any, tmp_path: Path) -> None:
    """Run workers killed while a slow tool that is not idempotent runs: each resume
    stops with needs_decision (on the talk threads as well as at the soak's end). The
    soak fails, and every turn a kill ended that its resumes did not complete has its
    problem, naming the failure, the store's status of the resume when it ended, and the
    call left without a result."""
    config = HostConfig(apps={"poster": "resume_soak_agents:root_agent"}, data_dir=str(tmp_path / "data"),
                        partitions=2, run_workers=1, root_intensity=40, root_period=10)
    with Host(config, system=actor_system) as host:
        report = soak(host, "poster", sessions=4, duration=2.0, interval=0.3, targets=("workers",), seed=7,
                      min_faults=6, resume=True)
    print(report.render())
    assert report.resumed is not None and report.resumed >= 1 and not report.passed
    unfinished = [p for p in report.problems if p.startswith("the turn run-")]
    assert len(unfinished) == report.resumed - report.resumed_completed >= 1, report.problems
    for problem in unfinished:
        assert "(needs_decision)" in problem, problem
        assert "(the last resume), needs_decision, resuming run-" in problem, problem
        assert problem.endswith("calls without a result: post_letter (poster)"), problem
    assert not [p for p in report.problems if "neither completed" in p]
    assert f"  problem: {unfinished[0]}" in report.render().splitlines()
