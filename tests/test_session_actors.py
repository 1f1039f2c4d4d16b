"""Sessions and runs as actors (issue 37), on real processes: a session crashes alone
(its runs end ``interrupted``, it comes back from the store, its partition and the
other sessions never notice), fails beyond its restart intensity until reset, and a
run is killed alone while the other runs of its worker go on. All of it is seen in the
tree, and can be done through the Runner, the CLI's ``chaos kill``, the console's
routes and the soak."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import runtime_agents
from conftest import serving, turn_in_background
from kept_host import KeptHost, kept_hosts

from adk_actors import RunFailedError, SessionFailedError
from adk_actors.chaos import kill_row, soak, tree_rows
from adk_actors.messages import LiveWorkers
from adk_actors.runtime import Host, HostConfig
from supervision import call
from supervision.protocol import OsPid
from supervision.testing import wait_until

kept = kept_hosts("session-actors")


@pytest.fixture
def host(kept: KeptHost) -> Iterator[Host]:
    """One partition, one run worker: every session and every run share them. A run
    told to stop has 10 s to say it did (``run_stop_grace``; 2 s by default): on a loaded
    machine a cancelled turn can take longer than 2 s to report, and its worker, with
    every other run on it, would be killed (tests/test_kill_is_kill.py shows that
    kill; here, what a crash or a kill of one session or run leaves alone). Kept from
    test to test (:class:`KeptHost`: handed on once its tree is whole again); each
    test's users are its own (:func:`who`)."""
    config = partial(HostConfig, apps=runtime_agents.APPS, partitions=1, run_workers=1,
                     session_intensity=2, session_period=60.0, run_stop_grace=10.0)
    with kept.host("one-worker", lambda data: config(data_dir=str(data))) as running:
        yield running


@pytest.fixture
def who(kept: KeptHost) -> str:
    """A suffix of the test's own for its users on the kept host."""
    return kept.tag("-k")


def rows_of(host: Host, kind: str) -> list[dict[str, Any]]:
    return [r for r in tree_rows(host, timeout=3.0) if r["type"] == kind]


def test_a_session_crashes_alone_and_comes_back_from_the_store(host: Host, who: str) -> None:
    echo, sleepy = host.runner("echo"), host.runner("sleepy")
    for user in (f"a{who}", f"b{who}", f"c{who}"):
        echo.create_session(user, "s")
    sleepy.create_session(f"victim{who}", "v")
    list(sleepy.run(f"victim{who}", "v", "hello"))
    partition_pid = call(host.system, host.partitions()[0], OsPid())
    stop = threading.Event()
    bystander_results: list[Any] = []

    def talk(user: str) -> None:
        turn = 0
        while not stop.is_set():
            turn += 1
            try:
                events = list(echo.run(user, "s", f"turn {turn}"))
                bystander_results.append(events[-1].content.text == f"echo: turn {turn} (turn {turn})")
            except Exception as exc:  # any failure is a disturbance
                bystander_results.append(exc)

    talkers = [threading.Thread(target=talk, args=(u,)) for u in (f"a{who}", f"b{who}", f"c{who}")]
    for thread in talkers:
        thread.start()
    try:
        caller, outcome = turn_in_background(sleepy, f"victim{who}", "v", "sleep 30")
        wait_until(lambda: any(r["type"] == "run" and r["user"] == f"victim{who}" for r in tree_rows(host)), timeout=10)
        status = sleepy.crash_session(f"victim{who}", "v", "the test crashed it")
        caller.join(20)
        assert not caller.is_alive()
    finally:
        stop.set()
        for thread in talkers:
            thread.join(30)
    failure = outcome[0]
    assert isinstance(failure, RunFailedError) and failure.reason == "interrupted"
    assert "the test crashed it" in failure.detail
    assert status.restarts == 1 and status.last_crash == "the test crashed it"
    assert bystander_results and all(r is True for r in bystander_results), [r for r in bystander_results if r is not True][:5]
    assert call(host.system, host.partitions()[0], OsPid()) == partition_pid  # the partition never noticed
    again = list(sleepy.run(f"victim{who}", "v", "hello again"))  # read from the store: its history is whole
    assert again[-1].content.text == "awake: hello again"
    stored = [e.content.text for e in sleepy.get_session(f"victim{who}", "v").events if e.content and e.content.text]
    assert stored[:2] == ["hello", "awake: hello"] and stored[-1] == "awake: hello again"
    row = next(r for r in rows_of(host, "session") if r["session"] == "v" and r["user"] == f"victim{who}")
    assert row["restarts"] == 1 and row["last_exit"] == "the test crashed it"


def test_one_run_is_killed_alone_and_the_other_runs_of_its_worker_go_on(host: Host, tmp_path: Path, who: str) -> None:
    sleepy = host.runner("sleepy")
    users = (f"x{who}", f"y{who}", f"z{who}")
    for user in users:
        sleepy.create_session(user, "s")
    in_tool = {user: tmp_path / f"in-tool-{user}" for user in users}
    running = {user: turn_in_background(sleepy, user, "s", f"sleep 6 {in_tool[user]}") for user in users}
    wait_until(lambda: all(marker.exists() for marker in in_tool.values()), timeout=30)  # all three in their tool
    runs = wait_until(lambda: len(r := rows_of(host, "run")) == 3 and r, timeout=10)
    assert len(call(host.system, host.partitions()[0], LiveWorkers())) == 1  # one worker holds all three
    victim = next(r for r in runs if r["user"] == f"y{who}")
    assert victim["status"] == "running" and victim["agent"] in (None, "user", "sleepy")  # None: nothing sent yet
    kill_row(host, victim)
    for thread, _ in running.values():
        thread.join(30)
    killed = running[f"y{who}"][1][0]
    assert isinstance(killed, RunFailedError) and killed.reason == "killed" and killed.error_type == "RunKilled"
    for user in (f"x{who}", f"z{who}"):
        events = running[user][1][0]
        assert not isinstance(events, Exception) and events[-1].content.text == "woke up"
    assert list(sleepy.run(f"y{who}", "s", "hello"))[-1].content.text == "awake: hello"


def test_a_session_crashing_beyond_its_intensity_fails_until_it_is_reset(host: Host, who: str) -> None:
    echo = host.runner("echo")
    echo.create_session(f"ann{who}", "s1")
    echo.create_session(f"bob{who}", "s2")
    list(echo.run(f"ann{who}", "s1", "before"))
    for _ in range(2):  # session_intensity = 2: two crashes are restarts
        echo.crash_session(f"ann{who}", "s1")
        assert echo.get_session(f"ann{who}", "s1").events
    echo.crash_session(f"ann{who}", "s1")  # the third within the period: failed
    with pytest.raises(SessionFailedError, match="reset"):
        echo.get_session(f"ann{who}", "s1")
    with pytest.raises(SessionFailedError):
        list(echo.run(f"ann{who}", "s1", "anyone there?"))
    row = next(r for r in rows_of(host, "session") if r["session"] == "s1" and r["user"] == f"ann{who}")
    assert row["status"] == "failed" and row["restarts"] == 3
    assert list(echo.run(f"bob{who}", "s2", "unharmed"))[-1].content.text.startswith("echo: unharmed")
    echo.reset_session(f"ann{who}", "s1")
    assert list(echo.run(f"ann{who}", "s1", "after"))[-1].content.text.startswith("echo: after")
    assert echo.get_session(f"ann{who}", "s1").events[0].content.text == "before"  # its history survived


def test_a_soak_that_crashes_sessions_and_kills_runs_loses_nothing(actor_system: Any, tmp_path: Path) -> None:
    """Runs of the dawdling agent last 50 ms or more, so runs in flight are there to kill."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "d"))
    with Host(config, system=actor_system) as running:
        report = soak(running, "dawdling", sessions=4, duration=4.0, interval=0.1, targets=("sessions", "runs"),
                      seed=3, min_faults=6)  # on a loaded machine it goes on until six faults were dealt
    print(report.render())
    assert report.kills.get("sessions", 0) >= 1 and report.kills.get("runs", 0) >= 1
    assert report.kills["sessions"] + report.kills["runs"] >= 6
    assert report.lost == 0 and report.hung == 0 and report.untyped_failures == {}
    assert report.next_turn_valid == 4 and report.passed


def test_the_console_and_http_kill_reset_and_answer_a_failed_session(tmp_path: Path) -> None:
    with serving(tmp_path, "session_intensity = 0\n") as served, httpx.Client(base_url=served["url"],
                                                                             timeout=30) as client:
        client.post("/apps/weather_bot/users/ann/sessions", json={"sessionId": "s1"})
        rows = client.get("/console/api/tree").json()["rows"]
        session = next(r for r in rows if r["type"] == "session" and r["session"] == "s1")
        assert session["path"].endswith("/weather_bot/ann/s1") and session["status"] == "idle"
        assert client.post("/console/api/kill", json={"path": session["path"]}).status_code == 200
        failed = client.get("/apps/weather_bot/users/ann/sessions/s1")  # intensity 0: one crash fails it
        assert failed.status_code == 409 and "reset" in failed.json()["detail"]
        rows = client.get("/console/api/tree").json()["rows"]
        assert next(r for r in rows if r["path"] == session["path"])["status"] == "failed"
        assert client.post("/console/api/reset", json={"path": session["path"]}).status_code == 200
        assert client.get("/apps/weather_bot/users/ann/sessions/s1").status_code == 200


def test_a_runner_watches_a_sessions_life(actor_system: Any, tmp_path: Path) -> None:
    """activating and activated, crashed and restarted, failed, reset, its partition
    killed (reported by the watch, which follows the restarted partition), passivated,
    deleted: in the order they happen."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1,
                        session_intensity=1, idle_timeout=1.0)
    with Host(config, system=actor_system) as host:
        echo = host.runner("echo")
        echo.create_session("ann", "s1")
        host.partitions()  # listed: the watch can tell its partition's death from its process
        with echo.watch_session("ann", "s1") as watch:
            assert watch.status.state == "idle"
            seen: list[tuple[str, str | None]] = []

            def expect(*events: str) -> None:
                for wanted in events:
                    got = watch.next(15.0)
                    assert got is not None, f"no {wanted!r} after {seen}"
                    seen.append((got.event, got.reason))
                    assert got.event == wanted, seen

            echo.crash_session("ann", "s1", "first")
            expect("crashed")
            list(echo.run("ann", "s1", "hello"))
            expect("activating", "restarted")
            assert seen[-1][1] == "first"
            echo.crash_session("ann", "s1", "second")  # session_intensity = 1: the second fails it
            expect("crashed", "failed")
            echo.reset_session("ann", "s1")
            expect("reset")
            list(echo.run("ann", "s1", "again"))
            expect("activating", "activated")
            os_kill_partition(host)
            expect("crashed")
            assert seen[-1][1] == "its partition stopped"
            list(echo.run("ann", "s1", "after the restart"))  # the restarted partition: watched too
            expect("activating", "activated", "passivated")  # idle_timeout 1 s
            echo.delete_session("ann", "s1")
            expect("deleted")
            assert [reason for event, reason in seen if event == "crashed"][:2] == ["first", "second"]


def os_kill_partition(host: Host) -> None:
    pid = call(host.system, host.partitions()[0], OsPid())
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: call(host.system, host.partitions(refresh=True)[0], OsPid(), timeout=2) != pid, timeout=30)


def test_an_actor_addresses_a_session_and_its_requests_outlive_a_partition_restart(host: Host, who: str) -> None:
    """The message API's address is the session (app, user, id) sent to the session
    supervisor: requests sent while the session's partition is dead wait for its next
    self instead of failing, and a request the input rules refuse is answered there."""
    from examples.message_passing.asker import Asker
    from supervision import start_server
    from supervision.lowlevel import process_alive
    from supervision.protocol import Cast

    runner = host.runner("echo")
    for session in ("s1", "s2", "s3"):
        runner.create_session(f"ann{who}", session)
    sessions = host.sessions_address()
    asker = start_server(host.system, Asker, {"app": "echo", "sessions": sessions})
    host.system.tell(asker, Cast(("ask", f"ann{who}", "s1", "before")))
    wait_until(lambda: call(host.system, asker, "answers"), timeout=10)

    partition_pid = call(host.system, host.partitions()[0], OsPid())
    os.kill(partition_pid, signal.SIGKILL)
    wait_until(lambda: not process_alive(partition_pid), interval=0.0005)
    for session in ("s1", "s2", "s3"):  # sent while nothing holds the sessions
        host.system.tell(asker, Cast(("ask", f"ann{who}", session, f"during {session}")))
    host.system.tell(asker, Cast(("ask", f"ann{who}\ud800", "s1", "poisoned")))
    answers = wait_until(lambda: (a := call(host.system, asker, "answers")) and len(a) == 5 and a, timeout=20)
    assert sorted(answers.values()) == ["echo: before (turn 1)", "echo: during s1 (turn 2)", "echo: during s2 (turn 1)",
                                        "echo: during s3 (turn 1)", "refused: invalid_request"]
    assert call(host.system, host.partitions(refresh=True)[0], OsPid()) != partition_pid
    assert host.sessions_address() == sessions  # the session supervisor was not restarted
