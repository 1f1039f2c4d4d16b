"""A session crashed while its graph run is inside a node that does not stop at once
(issue 55): until that run has stopped on its worker, the host does not begin a run
that resumes it, whatever activates the session meanwhile.

Before, a request that read the session again in that window (here ``get_state``;
in a soak, any caller's) took the crashed run, still stopping on its worker, for one
a dead host left: it ended it ``interrupted`` and resumed it at once, so the same node
ran in the crashed run and in its resume together, two workers on one invocation (a
soak saw a node begin again after its output was committed). And a caller that
follows the crashed run in that window (a Runner that lost its partition follows the
run the restarted one resumed) gets its end once it stopped, naming its resume."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from crash_window_agents import gate_path, ledger_lines

from adk_actors.runtime import Host, HostConfig
from supervision.testing import running_actor_system, wait_until

APP = "crash_window"
USER = "u"


def _runs(store: Path) -> list[tuple[str, str, str | None]]:
    """The session's runs as stored, oldest first: (run id, status, the run it resumes)."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return db.execute("SELECT run_id, status, resumes FROM runs WHERE app_name=? ORDER BY started",
                          (APP,)).fetchall()
    finally:
        db.close()


@pytest.mark.timeout(180)
def test_a_crashed_run_still_stopping_is_not_resumed_when_its_session_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run is in ``gate`` (it waits for the test) when its session is crashed; the
    host waits a long grace for it to stop (``run_stop_grace``). The session is read
    again (``get_state``) at once: the store still has the crashed run as the latest,
    ``running`` (no resume began). Then the gate opens: the crashed run stops, the host
    resumes it, and the caller's one call ends with the graph's output; ``gate``'s
    second run began only after its first had ended (never two at once); the store has
    the crashed run ``resumed`` and its resume ``done``."""
    monkeypatch.setenv("ADK_CRASH_WINDOW_DIR", str(tmp_path))
    config = HostConfig(apps={APP: "crash_window_agents:app"}, data_dir=str(tmp_path / "data"), partitions=1,
                        run_stop_grace=60.0)
    box: dict[str, Any] = {}
    with running_actor_system(tmp_path / "logs") as system, Host(config, system=system) as host:
        runner = host.runner(APP)
        runner.create_session(USER, "s")

        def run() -> None:
            try:
                box["events"] = list(runner.run(USER, "s", "go"))
            except Exception as exc:
                box["error"] = exc

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            wait_until(lambda: any(what == "gate-start" for what, _, _ in ledger_lines()), timeout=60,
                       message="gate never began")
            crashed = runner.last_run(USER, "s")
            assert crashed is not None and crashed.status == "running"
            runner.crash_session(USER, "s", "crashed by the test")
            runner.get_state(USER, "s")  # reads the session again while the crashed run still runs
            latest = runner.last_run(USER, "s")
            assert latest is not None and (latest.run_id, latest.status) == (crashed.run_id, "running"), (
                f"a resume began while the crashed run was still stopping: {latest}")
        finally:
            gate_path().touch()
        thread.join(90)
        assert not thread.is_alive(), "the caller's run never ended"
        assert "error" not in box, box.get("error")
        outputs = [e.output for e in box["events"] if e.output is not None]
    assert outputs and outputs[-1] == "after through", outputs
    gates = [(what, when) for what, _, when in ledger_lines() if what.startswith("gate-")]
    assert [what for what, _ in gates[:2]] == ["gate-start", "gate-end"], f"gate ran twice at once: {gates}"
    assert [status for _, status, _ in _runs(Path(config.store_path))] == ["resumed", "done"]


@pytest.mark.timeout(180)
def test_a_follower_of_a_crashed_run_still_stopping_follows_its_resume_to_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, but the session is read again by a second caller that follows the
    crashed run (``Runner.follow``) while it still stops: once the gate opens, the
    follower (now the run's one caller: its first one hears no more, and gives up at
    its Runner's timeout) ends with the graph's output, no error (before, it was told
    the run ended ``interrupted``, naming no run to follow)."""
    monkeypatch.setenv("ADK_CRASH_WINDOW_DIR", str(tmp_path))
    config = HostConfig(apps={APP: "crash_window_agents:app"}, data_dir=str(tmp_path / "data"), partitions=1,
                        run_stop_grace=60.0)
    box: dict[str, Any] = {}
    with running_actor_system(tmp_path / "logs") as system, Host(config, system=system) as host:
        runner = host.runner(APP)
        runner.create_session(USER, "s")

        def call(name: str, make: Any) -> threading.Thread:
            def body() -> None:
                try:
                    box[name] = list(make())
                except Exception as exc:
                    box[f"{name} error"] = exc
            thread = threading.Thread(target=body, daemon=True)
            thread.start()
            return thread

        first = host.runner(APP, timeout=20.0)
        caller = call("caller", lambda: first.run(USER, "s", "go"))
        follower: threading.Thread | None = None
        try:
            wait_until(lambda: any(what == "gate-start" for what, _, _ in ledger_lines()), timeout=60,
                       message="gate never began")
            crashed = runner.last_run(USER, "s")
            assert crashed is not None and crashed.status == "running"
            runner.crash_session(USER, "s", "crashed by the test")
            watch = runner.watch_session(USER, "s")
            try:
                follower = call("follower", lambda: runner.follow(USER, "s", crashed.run_id))
                # the follow read the session again (its restart) before the gate opens
                events = [e.event for e in watch.events(60, until=lambda e: e.event == "restarted")]
                assert events[-1:] == ["restarted"], f"the follow never read the session again: {events}"
            finally:
                watch.close()
        finally:
            gate_path().touch()
        for thread in (follower, caller):
            assert thread is not None
            thread.join(90)
            assert not thread.is_alive(), "a call never ended"
    assert "follower error" not in box, box["follower error"]
    outputs = [e.output for e in box["follower"] if e.output is not None]
    assert outputs and outputs[-1] == "after through", outputs
    assert [status for _, status, _ in _runs(Path(config.store_path))] == ["resumed", "done"]
