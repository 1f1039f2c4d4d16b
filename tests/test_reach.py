"""Every held session within the operator's reach (issue 53, item 4), on real hosts:
a session past the first page of its partition is paged to, searched for, crashed by
``chaos kill`` and the console, and reset by ``sessions reset`` and the console; a
partition busy on legitimate work is shown ``busy``, a stopped one ``unreachable``;
a soak crashes and kills its own sessions and runs only, never a bystander's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import runtime_agents
from conftest import serving

from adk_actors.chaos import find_rows, soak, tree_rows
from adk_actors.messages import HeldSessions
from adk_actors.runtime import Host, HostConfig
from supervision import CallError, call
from supervision.lowlevel import read_progress
from supervision.protocol import OsPid
from supervision.testing import wait_until

ROOT = Path(__file__).resolve().parents[1]
#: More sessions than a page (50) of the one partition.
SESSIONS = 61


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def session_ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["session"] for r in rows if r["type"] == "session"]


def test_a_session_past_the_first_page_is_paged_to_searched_crashed_and_reset(tmp_path: Path) -> None:
    # One partition holds every session; one crash fails a session (until it is reset).
    with serving(tmp_path, "partitions = 1\nsession_intensity = 0\n") as served, \
            httpx.Client(base_url=served["url"], timeout=60) as client:
        port = str(served["port"])
        for number in range(SESSIONS):
            made = client.post("/apps/weather_bot/users/ops/sessions", json={"sessionId": f"s{number:02}"})
            assert made.status_code == 200, made.text
        first = json.loads(cli("status", "--port", port, "--json").stdout)
        partition = next(r for r in first if r["path"] == "sessions/sessions-0")
        assert partition["sessions"] == SESSIONS and len(session_ids(first)) == 50
        assert "s55" not in session_ids(first)  # past the first page (idle sessions go by key)

        paged = json.loads(cli("status", "--port", port, "--json", "--offset", "50", "--limit", "20").stdout)
        assert session_ids(paged) == [f"s{n}" for n in range(50, SESSIONS)]
        searched = json.loads(cli("status", "--port", port, "--json", "--search", "s55").stdout)
        assert session_ids(searched) == ["s55"]
        assert "sessions 1-1 of 1 matching 's55'" in cli("status", "--port", port, "--search", "s55").stdout

        crashed = cli("chaos", "kill", "weather_bot/ops/s55", "--port", port)
        assert crashed.returncode == 0 and "the session crashed" in crashed.stdout, crashed.stderr
        assert client.get("/apps/weather_bot/users/ops/sessions/s55").status_code == 409  # failed
        assert client.get("/apps/weather_bot/users/ops/sessions/s54").status_code == 200  # its neighbour serves
        reset = cli("sessions", "reset", "weather_bot", "s55", "--user", "ops", "--port", port)
        assert reset.returncode == 0 and "it serves again" in reset.stdout, reset.stderr
        assert client.get("/apps/weather_bot/users/ops/sessions/s55").status_code == 200

        unknown = cli("sessions", "reset", "weather_bot", "nobody", "--user", "ops", "--port", port)
        assert unknown.returncode == 1 and "no session 'weather_bot/ops/nobody' is held" in unknown.stderr
        missed = cli("chaos", "kill", "weather_bot/ops/nobody", "--port", port)
        assert missed.returncode == 1 and "no running actor" in missed.stderr

        # The console: the page past the first, a search, and a kill and a reset of a session not on page one.
        tree = client.get("/console/api/tree", params={"offset": 50, "limit": 20}).json()
        assert tree["sessions"] == SESSIONS and session_ids(tree["rows"]) == [f"s{n}" for n in range(50, SESSIONS)]
        found = client.get("/console/api/tree", params={"search": "ops/s57"}).json()
        assert found["sessions"] == 1 and session_ids(found["rows"]) == ["s57"]
        path = next(r["path"] for r in found["rows"] if r["type"] == "session")
        assert path not in {r["path"] for r in client.get("/console/api/tree").json()["rows"]}  # not on page one
        assert client.post("/console/api/kill", json={"path": path}).status_code == 200
        assert client.get("/apps/weather_bot/users/ops/sessions/s57").status_code == 409
        assert client.post("/console/api/reset", json={"path": path}).status_code == 200
        assert client.get("/apps/weather_bot/users/ops/sessions/s57").status_code == 200
        assert client.get("/console/api/tree", params={"limit": 5000}).status_code == 422  # over the page's limit


@pytest.fixture
def one_partition(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1)
    with Host(config, system=actor_system) as running:
        yield running


def partition_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    row = next((r for r in rows if r["path"] == "sessions/sessions-0"), None)
    assert row is not None, [r for r in rows if r["type"] != "session"]
    return row


def test_a_busy_partition_is_shown_busy_and_a_stopped_one_unreachable(one_partition: Host) -> None:
    host = one_partition
    echo = host.runner("echo")
    echo.create_session("u", "big")
    address = host.partitions()[0]
    pid = call(host.system, address, OsPid())

    # Bad paging is refused, and the partition lives on.
    with pytest.raises(CallError) as refused:
        call(host.system, address, HeldSessions("0", 10))  # type: ignore[arg-type]
    assert refused.value.code == "invalid_request"
    assert call(host.system, address, OsPid()) == pid

    # Busy: its message loop works through state updates of ~1 MB each (each a store
    # write; some 6 s of work idle), and a walk's request waits behind them. The walk's
    # short deadline (x5 while the process works, both scaled to the load) lets every
    # other actor answer, the partition not.
    started = read_progress(pid)
    assert started is not None
    updaters = [threading.Thread(target=echo.update_state, args=("u", "big", {f"k{i}": "x" * 900_000}))
                for i in range(30)]
    for updater in updaters:
        updater.start()
    try:
        wait_until(lambda: (read_progress(pid) or started).cpu > started.cpu, timeout=30)
        busy = partition_row(tree_rows(host, timeout=0.2))
        assert busy["status"] == "busy" and busy["why"].startswith("busy"), (busy["status"], busy.get("why"))
    finally:
        for updater in updaters:
            updater.join(120)
    rows = tree_rows(host)
    assert partition_row(rows)["status"] == "running" and session_ids(rows) == ["big"]

    # Stopped: it makes no progress, and is shown unreachable (not waited for as busy).
    os.kill(pid, signal.SIGSTOP)
    try:
        stopped = partition_row(tree_rows(host, timeout=0.3))
    finally:
        os.kill(pid, signal.SIGCONT)
    assert stopped["status"] == "unreachable" and "sessions" not in stopped, stopped
    wait_until(lambda: partition_row(tree_rows(host))["status"] == "running", timeout=60)


def test_a_soak_touches_its_own_sessions_only(one_partition: Host) -> None:
    host = one_partition
    dawdling = host.runner("dawdling")
    dawdling.create_session("bystander", "b1")
    list(dawdling.run("bystander", "b1", "hello"))
    events, state = len(dawdling.get_session("bystander", "b1").events), dawdling.get_state("bystander", "b1")

    report = soak(host, "dawdling", sessions=3, duration=4.0, interval=0.05, targets=("sessions", "runs"), seed=7)
    assert report.kills.get("sessions", 0) >= 5, report.render()  # it did crash sessions: its own
    assert report.passed, report.render()
    bystander = find_rows(host, "dawdling/bystander/b1")
    assert [(r["status"], r["restarts"]) for r in bystander] == [("idle", 0)]  # never crashed
    assert len(dawdling.get_session("bystander", "b1").events) == events
    assert dawdling.get_state("bystander", "b1") == state
