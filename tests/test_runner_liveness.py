"""A Runner judges a run's liveness through the actor system, never by the caller's own
process table, and reports the true reason when the process holding a session dies (issue 19 items
8 and 11)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from conftest import turn_in_background

from adk_actors._files import SOCKET_PATH_MAX
from adk_actors.messages import HeldKeys, LinePath
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._link import worker_line_path
from supervision import call
from supervision.protocol import OsPid
from supervision.testing import wait_until


def test_a_long_silent_run_succeeds_when_the_callers_process_table_knows_no_pid(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Runner on another machine sees no local process for the session's partition pid;
    the old Runner then failed any run silent for a few seconds as killed. (The host's
    pid space is not this process's: it never looks at its pids.)"""
    import supervision._system

    monkeypatch.setattr(supervision._system, "process_alive", lambda pid: False)
    monkeypatch.setattr("adk_actors.runtime._host.process_alive", lambda pid: False)
    monkeypatch.setattr("adk_actors.runtime._host.pid_space", lambda: ("another machine's boot id", 1))
    host._same_pids = None  # as a host attached from that machine
    runner = host.runner("sleepy")
    session = runner.create_session(user_id="far")
    events = list(runner.run("far", session.id, "sleep 5"))
    assert events[-1].content.text == "woke up"
    events = list(runner.run("far", session.id, "sleep 1"))  # again, on the partition it learnt
    assert events[-1].content.text == "woke up"
    assert host.partition_alive(host.partitions()[0]) is None


def test_a_runner_sharing_the_hosts_pids_tells_a_dead_partition_by_its_process(host: Host) -> None:
    """No message: the partition's process is looked at (a burst of slow first answers
    made probes that opened a connection each, and slowed the partitions further)."""
    partition = host.partitions(refresh=True)[0]
    assert host.partition_alive(partition) is True
    os.kill(call(host.system, partition, OsPid()), signal.SIGKILL)
    wait_until(lambda: host.partition_alive(partition) is False, timeout=5)
    assert host.partition_alive("not a partition's address") is None


def session_holder_pid(host: Host, session_id: str) -> Any:
    """The pid of the partition holding the session in memory, or None."""
    for partition in host.partitions(refresh=True):
        try:
            if any(key.endswith(session_id) for key in call(host.system, partition, HeldKeys(), timeout=2)):
                return call(host.system, partition, OsPid(), timeout=2)
        except Exception:  # restarting
            pass
    return None


def test_the_process_holding_a_session_killed_mid_run_is_reported_as_interrupted_every_time(
        host: Host, tmp_path: Path) -> None:
    runner = host.runner("sleepy")
    session = runner.create_session(user_id="ann")
    reasons = []
    for attempt in range(4):
        in_tool = tmp_path / f"in-tool-{attempt}"
        caller, outcome = turn_in_background(runner, "ann", session.id, f"sleep 30 {in_tool}")
        pid = wait_until(lambda: session_holder_pid(host, session.id), timeout=10)
        wait_until(in_tool.exists, timeout=30)  # inside the tool
        os.kill(pid, signal.SIGKILL)
        caller.join(30)
        assert not caller.is_alive()
        reasons.append(getattr(outcome[0], "reason", "done"))
    assert reasons == ["interrupted"] * 4
    assert list(runner.run("ann", session.id, "hello"))[-1].content.text == "awake: hello"


def unix_peers(path: Path) -> int:
    """Sockets bound to or accepted on ``path`` (the kernel's table of Unix sockets)."""
    return sum(1 for line in Path("/proc/net/unix").read_text().splitlines()[1:] if line.endswith(" " + str(path)))


def unix_peers_named(name: str) -> int:
    """Sockets bound to or accepted on a path whose last part is ``name``, whatever the
    path they were bound through."""
    return sum(1 for line in Path("/proc/net/unix").read_text().splitlines()[1:] if line.endswith("/" + name))


def test_a_local_runner_carries_its_runs_on_a_direct_line_that_is_the_hosts_users_alone(host: Host) -> None:
    """A Runner on the host's machine talks to a partition over a Unix socket in the data
    folder (0700, the socket 0600); without it (the socket gone), runs go through
    Thespian as before; a partition killed -9 leaves no socket behind once its next
    self starts."""
    import stat

    runner = host.runner("sleepy")
    session = runner.create_session(user_id="lin")
    assert list(runner.run("lin", session.id, "hello"))[-1].content.text == "awake: hello"
    partition = host.partition_for("sleepy", "lin", session.id, refresh=True)
    path = Path(call(host.system, partition, LinePath()))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert unix_peers(path) >= 2  # listening, and the Runner's line accepted
    path.unlink()  # no line to be had: another Runner goes through Thespian
    other = host.runner("sleepy")
    assert list(other.run("lin", session.id, "again"))[-1].content.text == "awake: again"
    other = next(p for p in host.partitions() if str(p) != str(partition))
    other_pid = call(host.system, other, OsPid())
    assert (path.parent / f"{other_pid}.sock").exists()
    os.kill(other_pid, signal.SIGKILL)  # its socket stays behind: its next self removes it

    def new_pid() -> int | None:
        try:
            return call(host.system, next(p for p in host.partitions(refresh=True) if str(p) != str(partition)),
                        OsPid(), timeout=2)
        except Exception:  # restarting
            return None

    started = wait_until(lambda: (pid := new_pid()) != other_pid and pid, timeout=15)
    sockets = sorted(p.name for p in path.parent.iterdir())
    assert f"{other_pid}.sock" not in sockets and f"{started}.sock" in sockets


def test_a_host_whose_data_folder_is_deeper_than_a_socket_address_still_has_its_direct_lines(
        actor_system: Any, tmp_path: Path) -> None:
    """A socket's address holds 107 bytes; a data folder deeper than that (a home
    directory's, a test runner's) still holds the partitions' sockets, and both lines
    carry turns: the workers' (without it no turn runs) and the Runners'."""
    import runtime_agents

    data = tmp_path / ("a-rather-deep-folder-" * 5) / "data"
    assert len(str(data / "lines" / "w0-00000000.sock")) > SOCKET_PATH_MAX
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(data)), system=actor_system) as host:
        runner = host.runner("sleepy")
        session = runner.create_session(user_id="lin")
        assert list(runner.run("lin", session.id, "hello"))[-1].content.text == "awake: hello"
        partition = host.partition_for("sleepy", "lin", session.id, refresh=True)
        path = Path(call(host.system, partition, LinePath()))
        assert path.parent == (data / "lines").resolve() and path.is_socket()
        assert unix_peers_named(path.name) >= 2  # listening, and the Runner's line accepted
        assert sorted(p.name for p in path.parent.glob("w*.sock")) == sorted(
            worker_line_path(str(path.parent), host.holder_name, i).rsplit("/", 1)[1] for i in range(2))
