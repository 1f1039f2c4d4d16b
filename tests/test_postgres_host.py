"""Hosts on the PostgreSQL store (``[store] url``): a real server owned by the test run.

One host keeps every acknowledged event through a kill -9 of its partition; two hosts
on one database never write one session together: the second is told who holds it
(``SessionElsewhereError``, HTTP 503), takes it once the first is killed (its lease
expired: within the lease's length), and the first, back, is refused in its turn.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import runtime_agents
from conftest import serving
from test_runtime import in_thread, session_pid

from adk_actors import RunFailedError, SessionElsewhereError
from adk_actors.runtime import Host, HostConfig
from adk_actors.store import PostgresSessionStore
from supervision.lowlevel import free_port
from supervision.testing import kill_marked_processes, wait_until

LEASE = 2.0


def texts(session: Any) -> list[str]:
    return [e.content.text for e in session.events if e.content and e.content.text]


def test_a_host_on_postgres_keeps_every_acknowledged_event_through_a_partition_kill(
        actor_system: Any, tmp_path: Path, postgres: Any) -> None:
    url = postgres.new_database()
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), store_url=url)
    with Host(config, system=actor_system) as host:
        echo = host.runner("echo")
        echo.create_session("ann", "s1", state={"user:name": "Ann"})
        list(echo.run("ann", "s1", "one"))
        sleepy = host.runner("sleepy")
        sleepy.create_session("ann", "s2")
        seen: list[Any] = []
        thread, box = in_thread(lambda: [seen.append(e) for e in sleepy.run("ann", "s2", "sleep 3")])
        wait_until(lambda: len(seen) >= 2, timeout=10)  # the user's event and the tool call: committed
        pid = session_pid(host, "sleepy", "ann", "s2")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        thread.join(15)
        assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "interrupted"
        list(echo.run("ann", "s1", "two"))  # the partition is back, on the same store
        assert texts(echo.get_session("ann", "s1")) == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)"]
        assert echo.get_state("ann", "s1") == {"user:name": "Ann"}
        assert len(sleepy.get_session("ann", "s2").events) >= 2  # what was acknowledged before the kill
    assert not (tmp_path / "data" / "sessions.db").exists()  # every session is in PostgreSQL
    store = PostgresSessionStore(url)
    try:
        assert texts(store.get_session("echo", "ann", "s1"))[-1] == "echo: two (turn 2)"
        assert store.all_running_runs() == []  # the killed run ended interrupted, in the store
    finally:
        store.close()


def _or_none(call: Any) -> Any:
    """``call()``, or None while another host holds the session."""
    try:
        return call()
    except SessionElsewhereError:
        return None


def _turn(url: str, text: str) -> httpx.Response:
    return httpx.post(f"{url}/run", timeout=30, json={
        "appName": "echo", "userId": "ann", "sessionId": "s1",
        "newMessage": {"role": "user", "parts": [{"text": text}]}})


def lease_holder(url: str, app: str, session_id: str) -> str:
    """Who holds the session's lease now (read behind the hosts' backs)."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT holder FROM session_leases WHERE app_name=%s AND user_id='ann' AND session_id=%s",
                           (app, session_id)).fetchone()
    return str(row[0]) if row else ""


def test_any_host_reaches_a_session_another_holds_and_a_survivor_takes_it_over(
        actor_system: Any, tmp_path: Path, postgres: Any) -> None:
    """Two hosts on one store: the second reaches the first's session through it (reads
    and a run whose events stream from the holder), never writing it itself; kill -9 of
    the first: the second is told so at once, serves the session within the lease with
    every acknowledged event (and the artifacts, from a shared folder); the first,
    back, reaches it through the second, which stays its only writer."""
    url = postgres.new_database()
    shared = tmp_path / "shared-artifacts"  # a shared filesystem, in life
    store_toml = (f'[store]\nurl = "{url}"\nlease_seconds = {LEASE}\n'
                  f'[artifacts]\ndir = "{shared}"\n')
    apps = 'echo = "runtime_agents:echo_agent"\nnotes = "runtime_agents:notes_agent"\n'
    (tmp_path / "a").mkdir()
    with serving(tmp_path / "a", more_toml=store_toml, apps=apps) as first:
        httpx.post(f"{first['url']}/apps/echo/users/ann/sessions", json={"sessionId": "s1"}, timeout=30)
        assert _turn(first["url"], "one").status_code == 200
        httpx.post(f"{first['url']}/apps/notes/users/ann/sessions", json={"sessionId": "n1"}, timeout=30)
        assert httpx.post(f"{first['url']}/run", timeout=30, json={
            "appName": "notes", "userId": "ann", "sessionId": "n1",
            "newMessage": {"role": "user", "parts": [{"text": "save buy milk"}]}}).status_code == 200
        config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "b"), store_url=url,
                            lease_seconds=LEASE, artifacts_dir=str(shared))
        with Host(config, system=actor_system) as second:
            runner = second.runner("echo")
            first_name = f"127.0.0.1:{first['port']}"
            assert texts(runner.get_session("ann", "s1")) == ["one", "echo: one (turn 1)"]  # through its holder
            streamed = list(runner.run("ann", "s1", "two"))  # run by the holder, streamed to this host's caller
            assert [e.content.text for e in streamed if e.content] == ["two", "echo: two (turn 2)"]
            assert lease_holder(url, "echo", "s1").startswith(first_name)  # the first host is still its writer
            kill_marked_processes(first["marker"], grace=0)  # kill -9 of the whole first host
            killed = time.monotonic()
            with pytest.raises(SessionElsewhereError, match="its host"):  # told at once (dead, or dying), no hang
                runner.get_session("ann", "s1")
            assert time.monotonic() - killed < 2.0

            session = wait_until(lambda: _or_none(lambda: runner.get_session("ann", "s1")), timeout=LEASE + 10,
                                 interval=0.05)
            took = time.monotonic() - killed
            assert took <= LEASE + 2, f"the survivor took {took:.1f} s"
            assert texts(session) == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)"]  # nothing acknowledged lost
            list(runner.run("ann", "s1", "three"))
            notes = second.runner("notes")  # the killed host's artifacts, from the shared folder
            read = wait_until(lambda: _or_none(lambda: list(notes.run("ann", "n1", "read it"))), timeout=LEASE + 10)
            response = next(e for e in read if e.content and e.content.function_responses).content.function_responses[0]
            assert response.response == {"text": "buy milk", "names": ["note.txt"]}
            (tmp_path / "a2").mkdir()
            with serving(tmp_path / "a2", more_toml=store_toml, apps=apps) as back:
                assert _turn(back["url"], "four").status_code == 200  # through the second host, its writer
                assert not lease_holder(url, "echo", "s1").startswith(first_name)
            assert texts(runner.get_session("ann", "s1"))[-4:] == ["three", "echo: three (turn 3)", "four",
                                                                   "echo: four (turn 4)"]
    password = postgres.password
    for written in [*(tmp_path / "a").rglob("*"), *(tmp_path / "a2").rglob("*")]:  # logs, config aside
        if written.is_file() and written.name != "host.toml":
            assert password.encode() not in written.read_bytes(), written


def test_a_store_url_s_password_is_never_shown_by_serve(tmp_path: Path, postgres: Any) -> None:
    """A malformed URL is refused at start without echoing it; an unreachable server
    stops the start with the URL shown without its password (exit code 1)."""
    import subprocess
    import sys

    from conftest import ROOT

    config = tmp_path / "host.toml"
    config.write_text(f'[host]\ndata_dir = "{tmp_path / "data"}"\n[http]\nenabled = false\n[apps]\n'
                      'echo = "runtime_agents:echo_agent"\n')
    secret = "s3cret-Pa55word"
    for url, code in ((f"postgresq://adk:{secret}@127.0.0.1:1/adk", 2), (f"postgresql://adk:{secret}@127.0.0.1:1/adk", 1)):
        done = subprocess.run([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(config)],
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "tests"), "ADK_ACTORS_STORE__URL": url,
                                   "ADK_ACTORS_HOST__PORT": str(free_port())})
        assert done.returncode == code, done.stderr
        assert secret not in done.stdout + done.stderr and "store" in done.stderr
        logs = list((tmp_path / "data").rglob("*.log")) if (tmp_path / "data").exists() else []
        assert all(secret not in log.read_text() for log in logs)


def test_a_run_waiting_for_a_human_on_one_host_is_approved_through_another(
        actor_system: Any, tmp_path: Path, postgres: Any) -> None:
    """Approvals are in the shared database: the second host lists the first host's
    pending approval, a human approves it through the second host's HTTP API, and the
    run waiting on the first host goes on with it."""
    import threading

    url = postgres.new_database()
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "a"), store_url=url, port=free_port())
    with Host(config, system=actor_system) as first:
        runner = first.runner("careful")
        runner.create_session("ann", "s1")
        box: dict[str, Any] = {}
        turn = threading.Thread(target=lambda: box.setdefault("events", list(runner.run("ann", "s1", "/tmp/x"))),
                                daemon=True)
        turn.start()
        (tmp_path / "b").mkdir()
        with serving(tmp_path / "b", more_toml=f'[store]\nurl = "{url}"\n',
                     apps='careful = "runtime_agents:careful_agent"\n') as second:
            listed = wait_until(lambda: httpx.get(f"{second['url']}/apps/careful/users/ann/approvals",
                                                  timeout=10).json(), timeout=15)
            assert [(a["tool"], a["args"]) for a in listed] == [("delete_file", {"path": "/tmp/x"})]
            decided = httpx.post(f"{second['url']}/apps/careful/users/ann/approvals/{listed[0]['id']}",
                                 json={"approve": True}, timeout=10)
            assert decided.status_code == 200 and decided.json()["status"] == "approved"
            turn.join(15)
        assert box["events"][-1].content.text == "result: {'deleted': '/tmp/x'}"


def test_a_run_in_flight_on_a_killed_host_ends_interrupted_and_the_survivor_serves_the_next_turn(
        actor_system: Any, tmp_path: Path, postgres: Any) -> None:
    import threading

    url = postgres.new_database()
    store_toml = f'[store]\nurl = "{url}"\nlease_seconds = {LEASE}\n'
    (tmp_path / "a").mkdir()
    with serving(tmp_path / "a", more_toml=store_toml, apps='sleepy = "runtime_agents:sleepy_agent"\n') as first:
        httpx.post(f"{first['url']}/apps/sleepy/users/ann/sessions", json={"sessionId": "s1"}, timeout=30)
        def turn() -> None:  # its HTTP connection is cut by the kill below
            try:
                httpx.post(f"{first['url']}/run", timeout=30, json={
                    "appName": "sleepy", "userId": "ann", "sessionId": "s1",
                    "newMessage": {"role": "user", "parts": [{"text": "sleep 20"}]}})
            except httpx.HTTPError:
                pass

        threading.Thread(target=turn, daemon=True).start()
        store = PostgresSessionStore(url)
        try:
            [(*_, in_flight)] = wait_until(store.all_running_runs, timeout=15)
            wait_until(lambda: len(store.get_session("sleepy", "ann", "s1").events) >= 2, timeout=15)  # tool called
            kill_marked_processes(first["marker"], grace=0)
            config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "b"), store_url=url,
                                lease_seconds=LEASE, port=free_port())
            with Host(config, system=actor_system) as second:
                runner = second.runner("sleepy")
                wait_until(lambda: _or_none(lambda: runner.get_session("ann", "s1")), timeout=LEASE + 10)
                assert store.run_status(in_flight.run_id) == "interrupted"  # ended by the survivor, once
                events = list(runner.run("ann", "s1", "sleep 0"))
                assert events[-1].content is not None and events[-1].content.text
        finally:
            store.close()


def test_a_run_forwarded_to_a_host_that_dies_mid_run_ends_with_a_typed_failure(
        actor_system: Any, tmp_path: Path, postgres: Any) -> None:
    """A caller on one host whose run streams from another host's partition: that host
    is killed mid-run; the caller's stream ends with RunFailedError, not at its deadline."""
    import threading

    url = postgres.new_database()
    (tmp_path / "a").mkdir()
    with serving(tmp_path / "a", more_toml=f'[store]\nurl = "{url}"\nlease_seconds = {LEASE}\n',
                 apps='sleepy = "runtime_agents:sleepy_agent"\n') as first:
        httpx.post(f"{first['url']}/apps/sleepy/users/ann/sessions", json={"sessionId": "s1"}, timeout=30)
        config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "b"), store_url=url,
                            lease_seconds=LEASE)
        with Host(config, system=actor_system) as second:
            runner = second.runner("sleepy")
            assert runner.get_session("ann", "s1").id == "s1"  # reached through the first host
            seen: list[Any] = []
            box: dict[str, Any] = {}

            def turn() -> None:
                try:
                    for event in runner.run("ann", "s1", "sleep 30"):
                        seen.append(event)
                except Exception as exc:
                    box["error"] = exc
                box["at"] = time.monotonic()

            caller = threading.Thread(target=turn, daemon=True)
            caller.start()
            wait_until(lambda: len(seen) >= 2, timeout=15)  # the tool call streamed from the first host
            kill_marked_processes(first["marker"], grace=0)
            killed = time.monotonic()
            caller.join(30)
            assert isinstance(box.get("error"), RunFailedError), box
            assert box["at"] - killed < 10, f"the caller learned it after {box['at'] - killed:.1f} s"
