"""A partition's pool of run workers (runtime._run_pool): a worker killed is replaced at
once, within the pool's restart intensity; beyond it the partition exits and its
supervisor restarts it, and the sessions go on."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import runtime_agents

from adk_actors.messages import LiveWorkers
from adk_actors.runtime import Host, HostConfig
from supervision import OsPid, call
from supervision.testing import pid_alive, wait_until


def texts(events: list[Any]) -> list[str]:
    return [part.text for event in events if event.content for part in event.content.parts if part.text]


def _partition_and_worker(host: Host) -> tuple[int, int] | None:
    """The one partition's pid and its one live worker's, once both answer."""
    try:
        partition = host.partitions(refresh=True)[0]
        pid: int = call(host.system, partition, OsPid(), timeout=2)
        workers: list[int] = call(host.system, partition, LiveWorkers(), timeout=2)
    except Exception:  # restarting
        return None
    return (pid, workers[0]) if len(workers) == 1 else None


def _kill_worker(host: Host, partition_pid: int, killed: list[int]) -> None:
    """Kill the partition's worker with SIGKILL, once it has one that is not among
    ``killed`` (a worker killed before may still be listed, its death not yet seen by
    the partition); add its pid to ``killed``."""
    found = wait_until(lambda: (now := _partition_and_worker(host)) is not None and now[0] == partition_pid
                       and now[1] not in killed and now, timeout=10)
    os.kill(found[1], signal.SIGKILL)
    killed.append(found[1])
    wait_until(lambda: not pid_alive(found[1]), timeout=5)


def test_killed_workers_are_replaced_until_the_pool_gives_up_then_the_partition_restarts(
        actor_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        worker_intensity=2, worker_period=60.0)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        runner.create_session("ann", "s1")
        assert texts(list(runner.run("ann", "s1", "one")))[-1] == "echo: one (turn 1)"
        first = wait_until(lambda: _partition_and_worker(host), timeout=10)
        partition_pid = first[0]
        killed: list[int] = []
        for _ in range(2):  # within the intensity: replaced
            _kill_worker(host, partition_pid, killed)
        replaced = wait_until(lambda: (now := _partition_and_worker(host)) is not None and now[1] not in killed
                              and now, timeout=10)
        assert replaced[0] == partition_pid  # the partition went on
        assert texts(list(runner.run("ann", "s1", "two")))[-1] == "echo: two (turn 2)"

        _kill_worker(host, partition_pid, killed)  # the third within the period: the pool gives up
        wait_until(lambda: not pid_alive(partition_pid), timeout=10)
        restarted = wait_until(lambda: (now := _partition_and_worker(host)) is not None
                               and now[0] != partition_pid and now, timeout=15)
        assert restarted[0] != partition_pid  # restarted by its supervisor, with a new pool
        assert texts(list(runner.run("ann", "s1", "three")))[-1] == "echo: three (turn 3)"
        session = runner.get_session("ann", "s1")
        assert texts(session.events) == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)",
                                         "three", "echo: three (turn 3)"]
