"""Dynamic and partitioned supervisors, the name registry, the actor system guard, the fixture."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import probe

from supervision import (
    BadRequest,
    CallerRef,
    ChildSpec,
    DynamicSupervisorSpec,
    GenServer,
    PartitionSupervisorSpec,
    Registry,
    Restart,
    Strategy,
    SupervisorClient,
    SupervisorSpec,
    call,
    call_name,
    start_actor_system,
    start_supervisor,
)
from supervision.lowlevel import (
    NO_REPLY,
    ChildType,
    DynamicSupervisor,
    Job,
    PortInUse,
    check_port_free,
    free_port,
    partition_index,
    process_alive,
    stop_actor_system_on_port,
    whereis,
)
from supervision.protocol import (
    REGISTRY_OWNER,
    ChildRestarting,
    MaxChildren,
    NameNotFound,
    StartFailed,
)
from supervision.testing import (
    find_marked_processes,
    kill_marked_processes,
    pid_alive,
    process_marker,
    read_events,
    wait_until,
)

# -- DynamicSupervisor ------------------------------------------------------------------


def test_dynamic_children_temporary_by_default_and_max_children(actor_system: Any, events: Path) -> None:
    sup = start_supervisor(actor_system, DynamicSupervisorSpec(max_children=2))
    first = sup.start_child(probe("worker", events, restart=Restart.TEMPORARY))
    second = sup.start_child(probe("worker", events, restart=Restart.TEMPORARY))
    assert first.id != second.id and first.id.startswith("worker#")
    assert call(actor_system, first.address, "ping") == "pong"
    with pytest.raises(MaxChildren):
        sup.start_child(probe("worker", events, restart=Restart.TEMPORARY))
    assert first.pid is not None
    os.kill(first.pid, signal.SIGKILL)  # temporary: gone for good, and a slot frees up
    wait_until(lambda: sup.count_children().specs == 1)
    third = sup.start_child(probe("worker", events, restart=Restart.TEMPORARY))
    sup.terminate_child(third.id)
    assert [i.id for i in sup.which_children()] == [second.id]


def test_dynamic_permanent_child_is_restarted(actor_system: Any, events: Path) -> None:
    sup = start_supervisor(actor_system, DynamicSupervisorSpec())
    started = sup.start_child(probe("p", events))
    assert started.pid is not None
    os.kill(started.pid, signal.SIGKILL)
    wait_until(lambda: sup.child(started.id).pid not in (None, started.pid) and sup.child(started.id).status == "running")


def test_dynamic_start_failure_is_reported_and_not_kept(actor_system: Any, events: Path, tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    flag.write_text("on")
    sup = start_supervisor(actor_system, DynamicSupervisorSpec())
    with pytest.raises(StartFailed, match="fail flag"):
        sup.start_child(probe("bad", events, fail_flag=flag))
    assert sup.which_children() == []


def test_dynamic_shutdown_stops_all_children(actor_system: Any, events: Path) -> None:
    sup = start_supervisor(actor_system, DynamicSupervisorSpec())
    pids = [sup.start_child(probe(f"c{i}", events)).pid for i in range(5)]
    sup.stop()
    wait_until(lambda: not any(pid_alive(p) for p in pids if p))
    assert sorted(e[1] for e in read_events(events) if e[0] == "terminate") == [f"c{i}" for i in range(5)]


def test_partition_supervisor_spreads_children_by_key(actor_system: Any, events: Path) -> None:
    sup = start_supervisor(actor_system, PartitionSupervisorSpec(partitions=3))
    partitions = sup.which_children()
    assert [p.id for p in partitions] == ["partition-0", "partition-1", "partition-2"]
    started = [sup.start_child(probe(f"s{i}", events), key=f"session-{i}") for i in range(12)]
    assert all(call(actor_system, s.address, "ping") == "pong" for s in started)
    again = sup.start_child(probe("s0b", events), key="session-0")
    counts = [SupervisorClient(actor_system, p.address).count_children().active for p in partitions]
    assert sum(counts) == 13
    assert sum(1 for c in counts if c > 0) >= 2  # really spread
    holder = next(
        p for p in partitions if any(i.pid == again.pid for i in SupervisorClient(actor_system, p.address).which_children())
    )
    assert any(
        i.pid == started[0].pid for i in SupervisorClient(actor_system, holder.address).which_children()
    ), "the same key goes to the same partition"


class KeyedPartition(DynamicSupervisor):
    """A partition that decides itself which children run, through supervision's public
    hooks only: ``("ensure", key, events)`` starts child ``key`` unless it runs, and
    answers its pid; ``("drop", key)`` stops it."""

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, tuple) and request[0] == "ensure":
            info = self.child(request[1])
            if info is not None and info.status == "running":
                return info.pid
            self.enqueue(self._ensure_job(request[1], request[2], caller))
            return NO_REPLY
        if isinstance(request, tuple) and request[0] == "drop":
            self.enqueue(self._drop_job(request[1], caller))
            return NO_REPLY
        return super().handle_call(request, caller)

    def _ensure_job(self, key: str, events: str, caller: CallerRef) -> Job:
        failures = yield from self.start_children([probe(key, Path(events), restart=Restart.TRANSIENT)])
        info = self.child(key)
        self.reply(caller, info.pid if info is not None and failures[key] is None else failures[key])

    def _drop_job(self, key: str, caller: CallerRef) -> Job:
        yield from self.stop_children([key])
        self.reply(caller, self.child(key))


def test_partitions_of_any_supervisor_class_run_children_through_public_hooks(actor_system: Any, events: Path) -> None:
    sup = start_supervisor(actor_system, PartitionSupervisorSpec(
        partitions=2, partition_start=KeyedPartition, partition_args=DynamicSupervisorSpec(), partition_prefix="shard"))
    shards = sup.which_children()
    assert [s.id for s in shards] == ["shard-0", "shard-1"]
    key = "app/ann/s1"
    owner = shards[partition_index(key, 2)].address
    pid = call(actor_system, owner, ("ensure", key, str(events)))
    assert isinstance(pid, int) and pid_alive(pid)
    assert call(actor_system, owner, ("ensure", key, str(events))) == pid  # running: not started twice
    os.kill(pid, signal.SIGKILL)  # a transient child killed: the partition restarts it as any child
    wait_until(lambda: (c := SupervisorClient(actor_system, owner).which_children()) != []
               and c[0].status == "running" and c[0].pid not in (None, pid))
    assert call(actor_system, owner, ("drop", key)) is None  # stopped and forgotten
    assert SupervisorClient(actor_system, owner).which_children() == []
    assert [e[1] for e in read_events(events) if e[0] == "start"] == [key, key]


@dataclass(frozen=True)
class Keyed:
    """A request a PartitionSupervisor routes by its key."""

    name: str

    @property
    def partition_key(self) -> str:
        return self.name


class Unroutable:
    @property
    def partition_key(self) -> str:
        raise RuntimeError("no key here")


class KeyedWorker(GenServer):
    """A partition that answers a keyed request with its pid and the key; it starts
    slowly (3 s) while the file ``args`` names exists."""

    def init(self, args: str) -> None:
        if Path(args).exists():
            time.sleep(3)

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, Keyed):
            return (os.getpid(), request.partition_key)
        return super().handle_call(request, caller)


def test_a_caller_addresses_a_key_through_restarts_of_its_partition(actor_system: Any, tmp_path: Path) -> None:
    slow = tmp_path / "slow"
    sup = start_supervisor(actor_system, PartitionSupervisorSpec(
        partitions=3, partition_start=KeyedWorker, partition_args=str(slow), partition_type=ChildType.WORKER,
        partition_shutdown=5.0, intensity=10, route_hold=0.5))
    shards = sup.which_children()
    keys = [f"app/u/s{i}" for i in range(12)]
    answers = [call(actor_system, sup.address, Keyed(key)) for key in keys]
    assert [a[1] for a in answers] == keys
    assert [a[0] for a in answers] == [shards[partition_index(k, 3)].pid for k in keys]  # each by its key's partition

    victim = shards[partition_index(keys[0], 3)]
    assert victim.pid is not None
    os.kill(victim.pid, signal.SIGKILL)  # asked as soon as it is dead: the call waits for the restarted partition
    wait_until(lambda: not process_alive(victim.pid), interval=0.0005)
    pid, key = call(actor_system, sup.address, Keyed(keys[0]), timeout=10)
    assert key == keys[0] and pid != victim.pid and pid == sup.child(victim.id).pid

    slow.touch()  # the next restart takes 3 s, longer than route_hold
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not process_alive(pid), interval=0.0005)  # (a call sent to it before then is lost with it)
    began = time.monotonic()
    with pytest.raises(ChildRestarting):
        call(actor_system, sup.address, Keyed(keys[0]), timeout=10)
    assert time.monotonic() - began < 2.5
    other = next(k for k in keys if partition_index(k, 3) != partition_index(keys[0], 3))
    assert call(actor_system, sup.address, Keyed(other))[1] == other  # the other partitions answer meanwhile
    with pytest.raises(BadRequest):
        call(actor_system, sup.address, Unroutable())  # a key that cannot be read: the caller's error
    slow.unlink()
    wait_until(lambda: sup.child(victim.id).status == "running", timeout=10)
    assert call(actor_system, sup.address, Keyed(keys[0]))[1] == keys[0]


# -- Registry -------------------------------------------------------------------------------


def _registry_tree(events: Path) -> SupervisorSpec:
    return SupervisorSpec(
        children=(
            ChildSpec(id="registry", start=Registry, provides_registry=True),
            probe("store", events, name="store"),
            ChildSpec.supervisor("services", SupervisorSpec(children=(probe("cache", events, name="cache"),))),
        ),
        strategy=Strategy.REST_FOR_ONE,
    )


def test_names_follow_children_through_restarts(actor_system: Any, events: Path) -> None:
    root = start_supervisor(actor_system, _registry_tree(events))
    registry = root.registry()
    assert registry is not None
    wait_until(lambda: set(root.registered()) == {"store", "cache", REGISTRY_OWNER})  # nested supervisors register too; the root as its owner
    assert whereis(actor_system, registry, REGISTRY_OWNER) == root.address  # the tree's top, found by its actors
    assert call_name(actor_system, registry, "store", ("put", "k", 1)) == "ok"
    pid = call_name(actor_system, registry, "store", "pid")
    os.kill(pid, signal.SIGKILL)
    # a call made while it restarts waits for the new process instead of failing
    assert call_name(actor_system, registry, "store", "pid", timeout=5) != pid
    assert call_name(actor_system, registry, "store", ("get", "k")) is None  # memory-only state is gone


def test_unknown_name_is_a_clear_error_within_the_timeout(actor_system: Any, events: Path) -> None:
    root = start_supervisor(actor_system, _registry_tree(events))
    registry = root.registry()
    began = time.monotonic()
    with pytest.raises(NameNotFound, match="nobody"):
        call_name(actor_system, registry, "nobody", "ping", timeout=0.5)
    assert time.monotonic() - began < 3
    assert whereis(actor_system, registry, "nobody") is None


def test_registry_crash_restarts_the_rest_and_names_come_back(actor_system: Any, events: Path) -> None:
    root = start_supervisor(actor_system, _registry_tree(events))
    wait_until(lambda: set(root.registered()) == {"store", "cache", REGISTRY_OWNER})
    registry_pid = root.child("registry").pid
    assert registry_pid is not None
    os.kill(registry_pid, signal.SIGKILL)
    wait_until(lambda: root.child("registry").pid not in (None, registry_pid) and root.child("services").status == "running")
    wait_until(lambda: set(root.registered()) == {"store", "cache", REGISTRY_OWNER})
    assert call_name(actor_system, root.registry(), "cache", "ping") == "pong"


# -- the actor system guard -------------------------------------------------------------------


def test_busy_port_fails_at_once() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        began = time.monotonic()
        with pytest.raises(PortInUse, match=f"port {port}"):
            start_actor_system(port)
        assert time.monotonic() - began < 1.0  # Thespian alone waits ~14 s


def test_stale_system_is_never_attached_to(tmp_path: Path) -> None:
    """A system left running by a dead script must not serve our (new) code."""
    port = free_port()
    script = textwrap.dedent(
        f"""
        import os
        os.environ["THESPIAN_BASE_IPADDR"] = "127.0.0.1"
        from thespian.actors import ActorSystem
        ActorSystem("multiprocTCPBase", {{"Admin Port": {port}}}, transientUnique=True)
        os._exit(0)  # leave without shutdown: the admin stays behind
        """
    )
    env = dict(os.environ, THESPLOG_FILE=str(tmp_path / "t.log"))
    with process_marker(tmp_path) as (marker, fd):
        subprocess.run([sys.executable, "-c", script], env=env, timeout=30, check=True, pass_fds=(fd,),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: find_marked_processes(marker), message="the stale admin is running")
        began = time.monotonic()
        with pytest.raises(PortInUse, match="stale actor system"):
            start_actor_system(port)
        assert time.monotonic() - began < 1.0
        stop_actor_system_on_port(port)
        wait_until(lambda: not find_marked_processes(marker), timeout=10)
        check_port_free(port)
    finally:
        kill_marked_processes(marker, grace=0)


# -- the fixture itself --------------------------------------------------------------------------


def test_fixture_kills_actor_processes_left_behind(tmp_path: Path) -> None:
    from supervision.testing import LeftoverProcesses, running_actor_system

    with pytest.raises(LeftoverProcesses), running_actor_system(tmp_path) as system:
        marker = system.test_marker
        actors = find_marked_processes(marker)
        assert actors, "the admin and logger hold the marker"
        # a process of this system that shutdown() will not reach (it escaped the tree)
        with open(marker) as held:
            leftover = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(60)"],
                start_new_session=True,
                pass_fds=(held.fileno(),),
            )
    leftover.wait(timeout=5)
    assert leftover.returncode == -signal.SIGKILL
    assert not find_marked_processes(marker)


def test_fixture_sees_every_actor_process(actor_system: Any, events: Path) -> None:
    sup = start_supervisor(actor_system, SupervisorSpec(children=(probe("a", events), probe("b", events))))
    marked = set(find_marked_processes(actor_system.test_marker))
    assert {p for p in sup.pids().values() if p} <= marked


def test_a_server_killed_mid_call_fails_the_call_at_once(actor_system: Any, events: Path) -> None:
    """Like an OTP monitor: the caller learns of the death, not at its timeout."""
    import threading

    from supervision import ServerNotRunning

    sup = start_supervisor(actor_system, SupervisorSpec(children=(probe("slow", events),)))
    info = sup.child("slow")
    assert info.pid is not None
    pid = info.pid
    threading.Timer(0.3, lambda: os.kill(pid, signal.SIGKILL)).start()
    began = time.monotonic()
    with pytest.raises(ServerNotRunning, match="died before answering"):
        call(actor_system, info.address, ("sleep", 30), timeout=20, alive=lambda: process_alive(pid))
    assert time.monotonic() - began < 2.0
    wait_until(lambda: sup.child("slow").status == "running" and sup.child("slow").pid != pid)
