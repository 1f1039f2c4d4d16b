"""``chaos kill`` says an actor is back only once the host serves again: the killed
actor in a new process, and everything restarted with it (the registry: every later
child of the root, rest_for_one; a partition or a pool: the partition's run workers,
connected again). Checked the way a user reads it: ``status`` right after says every
actor serves, and a turn succeeds at once (no retry, no wait in between). A job
executor, never restarted by itself, is done once gone; a wait that runs out is a
typed error naming what is not back."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import serving

from adk_actors.chaos import NotBackError, serving_problems, tree_rows, wait_back
from adk_actors.cli import main
from adk_actors.jobs import JobSpec
from adk_actors.messages import session_key
from adk_actors.runtime import Host
from supervision.lowlevel import partition_index, process_alive
from supervision.testing import wait_until


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving(tmp_path_factory.mktemp("chaos-back")) as running:
        yield running


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """An ``adk-actors`` command run in this process (no interpreter to start between
    two commands): its exit code, standard output and standard error."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def process_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["type"] not in ("session", "run")]


def healthy_at_once(capsys: pytest.CaptureFixture[str], port: str, before: list[dict[str, Any]]) -> None:
    """``status`` (its JSON, then its text) says every actor of the tree runs: each in a
    live process, none missing, each pool with its workers of ``before``, every one of
    them connected to its partition."""
    code, listed, err = cli(capsys, "status", "--port", port, "--json")
    assert code == 0, err
    rows = process_rows(json.loads(listed))
    assert [(r["path"], r["status"]) for r in rows if r["status"] != "running"] == []
    assert all(process_alive(r["pid"]) for r in rows)
    assert {r["path"] for r in rows if not r.get("pooled")} >= {r["path"] for r in before if not r.get("pooled")}
    for pool in {r["path"] for r in before if r["path"].startswith("run_pools/pool-") and r["depth"] == 1}:
        workers = {r["pid"] for r in rows if r["path"].startswith(pool + "/worker-")}
        assert len(workers) == sum(r["path"].startswith(pool + "/worker-") for r in before)
        partition = next(r for r in rows if r["path"] == f"sessions/sessions-{pool.rsplit('-', 1)[1]}")
        assert set(partition["connected"]) == workers
    code, said, err = cli(capsys, "status", "--port", port)
    assert "every actor serves" in said and "not serving" not in said, said


# registry, services, jobs: rest_for_one restarts every later child of the root with
# them, the HTTP server (seconds of imports) last: "back" used to come before it did.
# A partition and a pool: the partition's run workers end, start again and connect.
@pytest.mark.timeout(180)
@pytest.mark.parametrize(("target", "with_it"), [
    pytest.param("registry", "http, jobs, run_pools, services, sessions", id="registry"),
    pytest.param("services", "http, jobs", id="services"), pytest.param("jobs", "http", id="jobs"),
    pytest.param("sessions/sessions-0", "", id="partition"), pytest.param("run_pools/pool-0", "", id="pool")])
def test_after_chaos_kill_says_back_the_host_serves_at_once(served: dict[str, Any], target: str, with_it: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    port = str(served["port"])
    host = Host.connect(served["port"])
    try:
        runner = host.runner("weather_bot")
        # a session of partition 0 (crc32 of its key): the turn goes through what the kills restart
        name = next(f"{target.replace('/', '-')}-{i}" for i in range(100)
                    if partition_index(session_key("weather_bot", "back", f"{target.replace('/', '-')}-{i}"), 2) == 0)
        session = runner.create_session("back", name).id
        before = process_rows(tree_rows(host, 2.0))

        code, out, err = cli(capsys, "chaos", "kill", target, "--port", port)
        assert code == 0 and "is back as pid" in out and "every actor of the host serves again" in out, (out, err)
        assert (f"; restarted with it: {with_it};" in out) if with_it else "restarted with it" not in out, out
        healthy_at_once(capsys, port, before)
        events = list(runner.run("back", session, "What's the weather in Oslo?"))  # at once: no retry, no sleep
        assert any("-3 °C and snow in Oslo" in (e.content.text or "") for e in events if e.content is not None)
    finally:
        host.disconnect()


@pytest.mark.timeout(120)
def test_a_killed_job_executor_is_gone_not_awaited_for_ever(served: dict[str, Any],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An executor of the jobs actor is started as jobs wait, never restarted by itself:
    its kill is done once it is gone and the host serves (it used to wait for a row of
    its own pid to come back, and fail after 10 s). The next job gets a new one."""
    port = str(served["port"])
    host = Host.connect(served["port"])
    try:
        done = host.jobs.enqueue(JobSpec(kind="function", function="job_functions:noop", user_id="back"))
        wait_until(lambda: host.jobs.get(done.id).state == "completed", timeout=60, message="the first job ran")
        before = process_rows(tree_rows(host, 2.0))
        executor = next(r for r in before if r["path"].startswith("jobs/executor-"))

        code, out, err = cli(capsys, "chaos", "kill", executor["path"], "--port", port)
        assert code == 0 and f"{executor['path']} is gone" in out, (out, err)
        healthy_at_once(capsys, port, before)
        assert executor["pid"] not in {r["pid"] for r in process_rows(tree_rows(host, 2.0))}
        after = host.jobs.enqueue(JobSpec(kind="function", function="job_functions:noop", user_id="back"))
        wait_until(lambda: host.jobs.get(after.id).state == "completed", timeout=60, message="the next job ran")
    finally:
        host.disconnect()


def test_a_kill_whose_actors_do_not_come_back_in_time_is_a_typed_error_naming_them(served: dict[str, Any]) -> None:
    """A wait that runs out says what is still not back, and never hangs: here nothing
    was killed, so the registry (the target) never shows a pid other than its own."""
    host = Host.connect(served["port"])
    try:
        rows = tree_rows(host, 2.0)
        registry = next(r for r in rows if r["path"] == "registry")
        with pytest.raises(NotBackError) as failure:
            wait_back(host, registry, rows, timeout=0.05)
        assert isinstance(failure.value, TimeoutError) and failure.value.target == "registry"
        assert any(line.startswith("registry: not restarted yet") for line in failure.value.missing)
        assert "registry was killed" in str(failure.value) and "is not back" in str(failure.value)
    finally:
        host.disconnect()


def test_what_does_not_serve_is_named_row_by_row() -> None:
    """``serving_problems`` on rows as ``tree_rows`` makes them: an actor restarting; a
    partition missing a worker of its pool; a pool with fewer workers than before."""
    me = os.getpid()
    rows = [
        {"path": "registry", "id": "registry", "type": "worker", "status": "running", "pid": me, "depth": 0},
        {"path": "http", "id": "http", "type": "worker", "status": "restarting", "pid": None, "depth": 0},
        {"path": "run_pools/pool-0", "id": "pool-0", "type": "worker", "status": "running", "pid": me, "depth": 1},
        {"path": f"run_pools/pool-0/worker-{me}", "id": f"worker-{me}", "type": "worker", "status": "running",
         "pid": me, "depth": 2, "pooled": True},
        {"path": "sessions/sessions-0", "id": "sessions-0", "type": "worker", "status": "running", "pid": me,
         "depth": 1, "connected": []},
    ]
    before = [*rows, {**rows[3], "path": "run_pools/pool-0/worker-1", "pid": 1}]
    assert serving_problems(rows, before) == [
        "http: restarting",
        "sessions/sessions-0: 0 of the 1 run workers of run_pools/pool-0 connected",
        "run_pools/pool-0: 1 of its 2 run workers"]
    rows[1], rows[4] = {**rows[1], "status": "running", "pid": me}, {**rows[4], "connected": [me]}
    assert serving_problems(rows) == []
    # a pool that had grown past the number it starts with is back at that number
    assert serving_problems(rows, before, run_workers=1) == []
    assert serving_problems(rows, before, run_workers=2) == ["run_pools/pool-0: 1 of its 2 run workers"]
