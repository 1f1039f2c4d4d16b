"""A partition's pool of run workers (runtime._run_pool): a supervised process of its
own, the partition's sibling under the host's ``run_pools`` supervisor. A worker
killed is replaced at once, within the pool's restart intensity; beyond it the pool
exits and is restarted alone: the partition and the sessions it holds stay. The pool
and the partition are each killed alone, and the next turn works."""

from __future__ import annotations

import os
import pickle
import signal
import socket
from pathlib import Path
from typing import Any

import runtime_agents
from conftest import turn_in_background

from adk_actors import RunFailedError
from adk_actors.chaos import tree_rows
from adk_actors.messages import HeldKeys, LiveWorkers, WorkerRuns, session_key
from adk_actors.runtime import Host, HostConfig
from supervision import SupervisorClient, call
from supervision.protocol import OsPid
from supervision.testing import pid_alive, wait_until


def texts(events: list[Any]) -> list[str]:
    return [part.text for event in events if event.content for part in event.content.parts if part.text]


def _pool(host: Host) -> Any:
    """The address of the one partition's pool (None while it restarts)."""
    assert host.root is not None
    pools = SupervisorClient(host.system, host.root.address).child("run_pools")
    return SupervisorClient(host.system, pools.address).child("pool-0").address


def _state(host: Host) -> tuple[int, int, list[int]] | None:
    """(the partition's pid, its pool's pid, the workers connected to the partition),
    once both answer and the pool's workers are all connected."""
    try:
        partition = host.partitions(refresh=True)[0]
        partition_pid: int = call(host.system, partition, OsPid(), timeout=2)
        connected: list[int] = call(host.system, partition, LiveWorkers(), timeout=2)
        pool = _pool(host)
        pool_pid: int = call(host.system, pool, OsPid(), timeout=2)
        started: list[int] = call(host.system, pool, LiveWorkers(), timeout=2)
    except Exception:  # restarting
        return None
    if not connected or sorted(connected) != sorted(started):
        return None
    return partition_pid, pool_pid, sorted(connected)


def _wait_on_a_worker(host: Host) -> None:
    """Until a run is on one of the partition's workers."""
    wait_until(lambda: any(call(host.system, host.partitions()[0], WorkerRuns(), timeout=2).values()), timeout=10)


def _kill_worker(host: Host, killed: list[int]) -> None:
    """Kill a worker with SIGKILL once one is connected that is not among ``killed``
    (a worker killed before may still be listed); add its pid to ``killed``."""
    found = wait_until(lambda: (now := _state(host)) is not None and [w for w in now[2] if w not in killed], timeout=10)
    os.kill(found[0], signal.SIGKILL)
    killed.append(found[0])
    wait_until(lambda: not pid_alive(found[0]), timeout=5)


def test_killed_workers_are_replaced_until_the_pool_gives_up_then_the_pool_alone_restarts(
        actor_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        worker_intensity=2, worker_period=60.0)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        assert texts(list(runner.run("ann", "s1", "one")))[-1] == "echo: one (turn 1)"
        partition_pid, pool_pid, _workers = wait_until(lambda: _state(host), timeout=10)
        killed: list[int] = []
        for _ in range(2):  # within the intensity: replaced by the same pool
            _kill_worker(host, killed)
        replaced = wait_until(lambda: (now := _state(host)) is not None and not set(now[2]) & set(killed) and now,
                              timeout=10)
        assert replaced[:2] == (partition_pid, pool_pid)
        assert texts(list(runner.run("ann", "s1", "two")))[-1] == "echo: two (turn 2)"

        _kill_worker(host, killed)  # the third within the period: the pool gives up
        wait_until(lambda: not pid_alive(pool_pid), timeout=10)
        restarted = wait_until(lambda: (now := _state(host)) is not None and now[1] != pool_pid and now, timeout=15)
        assert restarted[0] == partition_pid  # the partition went on, and still holds the session
        assert call(host.system, host.partitions()[0], HeldKeys(), timeout=5) == [session_key("echo", "ann", "s1")]
        assert texts(list(runner.run("ann", "s1", "three")))[-1] == "echo: three (turn 3)"
        rows = {row["path"]: row for row in tree_rows(host)}
        assert rows["run_pools/pool-0"]["restarts"] == 1 and "crash" in rows["run_pools/pool-0"]["last_exit"]
        assert rows["sessions/sessions-0"]["restarts"] == 0
        session = runner.get_session("ann", "s1")
        assert texts(session.events) == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)",
                                         "three", "echo: three (turn 3)"]


def test_a_pool_killed_mid_run_fails_that_run_and_the_partition_keeps_its_sessions(
        actor_system: Any, tmp_path: Path) -> None:
    """kill -9 of the pool: its workers die with it, the run in flight ends ``killed``
    at once, the partition (same pid) still holds the session, and once the restarted
    pool's workers connect the next turn works."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy")
        runner.create_session("ann", "s1")
        partition_pid, pool_pid, workers = wait_until(lambda: _state(host), timeout=10)
        thread, outcome = turn_in_background(runner, "ann", "s1", "sleep 30")
        _wait_on_a_worker(host)
        os.kill(pool_pid, signal.SIGKILL)
        thread.join(5)
        assert not thread.is_alive() and isinstance(outcome[0], RunFailedError) and outcome[0].reason == "killed"
        wait_until(lambda: not any(pid_alive(w) for w in workers), timeout=5)  # they died with their pool
        now = wait_until(lambda: (s := _state(host)) is not None and s[1] != pool_pid and s, timeout=15)
        assert now[0] == partition_pid
        assert texts(list(runner.run("ann", "s1", "hello")))[-1] == "awake: hello"


def test_a_partition_killed_alone_gets_its_pools_new_workers(actor_system: Any, tmp_path: Path) -> None:
    """kill -9 of the partition: its workers' lines end and they exit (not counted
    against the pool's intensity); the same pool starts others, which connect to the
    partition's next self, and the session's next turn works there."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1,
                        worker_intensity=1, worker_period=60.0)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        assert texts(list(runner.run("ann", "s1", "one")))[-1] == "echo: one (turn 1)"
        for _ in range(2):  # twice: over the intensity of 1, were the workers' exits counted
            partition_pid, pool_pid, workers = wait_until(lambda: _state(host), timeout=10)
            os.kill(partition_pid, signal.SIGKILL)
            now = wait_until(lambda: (s := _state(host)) is not None and s[0] != partition_pid and s, timeout=15)
            assert now[1] == pool_pid and not set(now[2]) & set(workers)
            wait_until(lambda w=workers: not any(pid_alive(p) for p in w), timeout=5)  # they exited (reaped)
        assert texts(list(runner.run("ann", "s1", "two")))[-1] == "echo: two (turn 2)"


def test_the_workers_socket_takes_only_a_worker_and_survives_anything_else(actor_system: Any,
                                                                          tmp_path: Path) -> None:
    """A process that connects to the partition's workers' socket and says anything but
    a worker's hello (garbage, a pickle of something else, nothing) is disconnected;
    the partition serves on, with the same workers."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        before = wait_until(lambda: _state(host), timeout=10)
        [path] = [p for p in (tmp_path / "data" / "lines").iterdir() if p.name.startswith("w0-")]
        assert path.stat().st_mode & 0o777 == 0o600
        for said in (b"garbage", pickle.dumps({"not": "a hello"}), None):
            intruder = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            intruder.settimeout(5)
            intruder.connect(str(path))
            if said is not None:
                intruder.send(said)
            else:
                intruder.shutdown(socket.SHUT_WR)
            assert intruder.recv(1024) == b""  # disconnected, told nothing
            intruder.close()
        assert texts(list(runner.run("ann", "s1", "one")))[-1] == "echo: one (turn 1)"
        assert _state(host) == before


def test_a_pool_and_its_partition_killed_at_once_mid_run_serve_the_next_turn(actor_system: Any,
                                                                            tmp_path: Path) -> None:
    """kill -9 of the pool and the partition together while a run is in flight: the run
    ends with a typed failure at once, both are restarted, the new pool's workers
    connect to the new partition, and the session's next turn works with its history."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy")
        runner.create_session("ann", "s1")
        assert texts(list(runner.run("ann", "s1", "hello")))[-1] == "awake: hello"
        partition_pid, pool_pid, workers = wait_until(lambda: _state(host), timeout=10)
        thread, outcome = turn_in_background(runner, "ann", "s1", "sleep 30")
        _wait_on_a_worker(host)
        for pid in (pool_pid, partition_pid):
            os.kill(pid, signal.SIGKILL)
        thread.join(10)
        assert not thread.is_alive() and isinstance(outcome[0], RunFailedError)
        assert outcome[0].reason in ("killed", "interrupted")
        now = wait_until(lambda: (s := _state(host)) is not None and s[0] != partition_pid and s[1] != pool_pid and s,
                         timeout=20)
        assert not set(now[2]) & set(workers)
        assert texts(list(runner.run("ann", "s1", "again")))[-1] == "awake: again"
        assert texts(runner.get_session("ann", "s1").events)[:2] == ["hello", "awake: hello"]
