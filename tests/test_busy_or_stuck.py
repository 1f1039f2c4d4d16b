"""Liveness that tells stuck from busy (issue 53, 2): a health check kills a child only
when it makes no progress (its ping unanswered AND its process's CPU time standing
still, or the process stopped), never for being slow on CPU; a busy child that never
answers is still killed, at the check's ceiling.

The decision is tested first on a clock and a CPU reader passed in (exact, no
sleeping); then on real processes: a handler spinning on CPU three times the timeout
is left alone, one blocked without CPU for as long is killed, a ``kill -STOP`` is
found, and a spin past the ceiling is killed. Run them with CPU burners beside them
too: a busy child is judged by the CPU it gets, however little.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from liveness_actors import Spinner

from supervision import ChildSpec, SpecError, SupervisionError, SupervisorClient, call
from supervision.lowlevel import (
    HealthCheck,
    HealthMonitor,
    ProcessProgress,
    load_scaled,
    read_progress,
)
from supervision.testing import pid_alive, probe_args, wait_until

# -- the decision, on a fake clock and a fake /proc ---------------------------------------


class FakeProc:
    """Stands in for /proc: each pid's state and CPU ticks, set by the test."""

    def __init__(self) -> None:
        self.procs: dict[int, ProcessProgress] = {}

    def set(self, pid: int, state: str = "S", cpu: int = 0) -> None:
        self.procs[pid] = ProcessProgress(state, cpu)

    def burn(self, pid: int, ticks: int) -> None:
        old = self.procs[pid]
        self.procs[pid] = ProcessProgress(old.state, old.cpu + ticks)

    def read(self, pid: int) -> ProcessProgress | None:
        return self.procs.get(pid)


def monitor(fake: FakeProc, **check: float) -> HealthMonitor:
    return HealthMonitor(HealthCheck(**{"interval": 1.0, "timeout": 5.0, **check}), read=fake.read)


def kinds(found: list[Any]) -> list[tuple[Any, str]]:
    return [(verdict.key, verdict.kind) for verdict in found]


def test_a_silent_child_that_uses_no_cpu_is_stuck_after_the_timeout() -> None:
    fake = FakeProc()
    fake.set(10, "S", cpu=100)
    health = monitor(fake)
    assert health.ping("a", now=0.0, pid=10) is not None
    assert health.judge(4.9) == []  # not late yet
    found = health.judge(5.0)
    assert kinds(found) == [("a", "stuck")]
    assert found[0].reason.startswith("unresponsive:") and "no CPU time" in found[0].reason
    assert health.judge(100.0) == []  # forgotten: its next incarnation is pinged afresh
    assert health.ping("a", now=100.0, pid=11) is not None


def test_under_load_the_no_cpu_window_and_the_ceiling_stretch_but_a_stopped_child_is_found_at_the_timeout() -> None:
    """A parent on a loaded machine (its ``scale``, here x4): a child idle because its
    ping has not reached it yet is not taken for stuck at the timeout, only once the
    stretched window passes without CPU; a busy one is given the stretched ceiling; a
    stopped one is found at the plain timeout."""
    fake = FakeProc()
    for pid in (10, 20, 30):
        fake.set(pid, "S", cpu=100)
    health = HealthMonitor(HealthCheck(interval=1.0, timeout=5.0), read=fake.read, scale=lambda s: 4 * s)
    for key, pid in (("idle", 10), ("busy", 20), ("stopped", 30)):
        health.ping(key, now=0.0, pid=pid)
    fake.set(30, "T", cpu=100)
    found = health.judge(5.0)
    assert kinds(found) == [("stopped", "stuck")]  # not stretched
    for now in (10.0, 19.9):
        fake.burn(20, 10)
        assert health.judge(now) == []  # inside the stretched window: neither judged
    fake.burn(20, 10)
    assert sorted(kinds(health.judge(20.0))) == [("busy", "busy"), ("idle", "stuck")]  # 4 x 5 s
    limit = 4 * HealthCheck(interval=1.0, timeout=5.0).limit
    fake.burn(20, 10)
    assert [k for k in kinds(health.judge(limit - 0.1)) if k[1] == "stuck"] == []
    fake.burn(20, 10)
    found = health.judge(limit)
    assert kinds(found) == [("busy", "stuck")] and f"within {limit:g} s" in found[0].reason


@pytest.mark.parametrize(("load", "expected"), [(0.5, 2.0), (2.0, 2.0), (8.0, 8.0), (1000.0, 20.0), (None, 2.0)])
def test_load_scaled_stretches_by_the_load_per_cpu_never_shrinks_and_is_capped(
        monkeypatch: pytest.MonkeyPatch, load: float | None, expected: float) -> None:
    """2 s on a 2-CPU machine: as it is up to load 2, x load/2 above, at most x10; as it
    is when the load cannot be read."""
    def getloadavg() -> tuple[float, float, float]:
        if load is None:
            raise OSError("no load average here")
        return (load, load, load)

    monkeypatch.setattr(os, "getloadavg", getloadavg)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert load_scaled(2.0) == pytest.approx(expected)


def test_a_stopped_child_is_stuck_at_the_timeout_whatever_its_cpu_did() -> None:
    fake = FakeProc()
    fake.set(10, "S", cpu=100)
    health = monitor(fake)
    health.ping("a", now=0.0, pid=10)
    fake.burn(10, 50)  # it worked, then was stopped (kill -STOP)
    fake.set(10, "T", cpu=150)
    found = health.judge(5.0)
    assert kinds(found) == [("a", "stuck")] and "stopped" in found[0].reason


def test_a_busy_child_gets_window_after_window_and_is_killed_once_its_cpu_stands_still() -> None:
    fake = FakeProc()
    fake.set(10, "R", cpu=0)
    health = monitor(fake)
    health.ping("a", now=0.0, pid=10)
    fake.burn(10, 3)  # three ticks in 5 s: what a busy process gets at load 40 on 2 cores, and more
    found = health.judge(5.0)
    assert kinds(found) == [("a", "busy")]  # reported once...
    assert "using CPU" in found[0].reason
    assert health.ping("a", now=5.0, pid=10) is None  # still one ping out at a time
    fake.burn(10, 1)
    assert health.judge(7.0) == []  # inside its new window (5 -> 10): not judged
    assert health.judge(10.0) == []  # it used CPU in that window: busy still, not reported again
    fake.set(10, "S", cpu=4)  # now it blocks: no CPU from 10 on
    assert health.judge(14.9) == []
    found = health.judge(15.0)
    assert kinds(found) == [("a", "stuck")] and "no CPU time used for 5 s" in found[0].reason


def test_a_child_that_answers_late_is_well_and_its_busy_wait_ends() -> None:
    fake = FakeProc()
    fake.set(10, "R", cpu=0)
    health = monitor(fake)
    ping = health.ping("a", now=0.0, pid=10)
    assert ping is not None
    fake.burn(10, 10)
    assert kinds(health.judge(5.0)) == [("a", "busy")]
    assert health.answered(ping.ref)  # it answered at last
    assert health.judge(1000.0) == []
    assert health.ping("a", now=1000.0, pid=10) is not None


def test_a_busy_child_that_never_answers_is_killed_at_the_ceiling() -> None:
    fake = FakeProc()
    fake.set(10, "R", cpu=0)
    health = monitor(fake, ceiling=20.0)
    health.ping("a", now=0.0, pid=10)
    now, found = 0.0, []
    while not found or found[0].kind == "busy":
        now += 1.0
        fake.burn(10, 5)  # it spins for ever
        found = [v for v in health.judge(now) if v.kind == "stuck"]
        assert now <= 20.0
    assert now == 20.0 and "busy but no answer" in found[0].reason and "20 s" in found[0].reason


def test_the_default_ceiling_is_twelve_timeouts_and_must_not_be_below_the_timeout() -> None:
    assert HealthCheck().limit == 60.0
    assert HealthCheck(interval=0.5, timeout=2.0).limit == 24.0
    assert HealthCheck(timeout=5.0, ceiling=5.0).limit == 5.0
    with pytest.raises(SpecError, match="ceiling"):
        HealthCheck(timeout=5.0, ceiling=4.0)


def test_an_ended_process_is_left_to_its_exit_and_no_pid_means_the_timeout_alone() -> None:
    fake = FakeProc()
    fake.set(10, "Z", cpu=5)
    health = monitor(fake)
    health.ping("zombie", now=0.0, pid=10)
    health.ping("gone", now=0.0, pid=11)  # no /proc entry at all
    health.ping("remote", now=0.0)  # no pid: only the timeout counts (as before this issue)
    assert kinds(health.judge(5.0)) == [("remote", "stuck")]
    assert health.judge(50.0) == []  # the ended ones are neither killed nor pinged again
    assert health.ping("zombie", now=50.0, pid=10) is None
    health.forget("zombie")  # its exit came
    assert health.ping("zombie", now=51.0, pid=12) is not None


def test_a_pid_unreadable_when_pinged_gets_its_first_window_when_it_is_read() -> None:
    fake = FakeProc()
    health = monitor(fake)
    health.ping("a", now=0.0, pid=10)  # /proc had nothing yet
    fake.set(10, "S", cpu=7)
    assert health.judge(5.0) == []  # first reading: the window starts now
    assert kinds(health.judge(10.0)) == [("a", "stuck")]


def test_read_progress_sees_cpu_time_and_a_stopped_process() -> None:
    mine = read_progress(os.getpid())
    assert mine is not None and mine.state == "R"
    spin_until = mine.cpu + 3
    while (now := read_progress(os.getpid())) is not None and now.cpu < spin_until:
        pass  # ends: this process's CPU time advances as it spins
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        os.kill(sleeper.pid, signal.SIGSTOP)
        wait_until(lambda: (p := read_progress(sleeper.pid)) is not None and p.state == "T", timeout=10)
    finally:
        sleeper.kill()
        sleeper.wait(10)
    assert read_progress(sleeper.pid) is None  # reaped: gone


# -- real processes -----------------------------------------------------------------------

#: Checks every 0.25 s with a 1 s timeout: a child that makes no progress is found in
#: 1-1.25 s. The busy child below spins 3 s: three timeouts.
TIGHT = HealthCheck(interval=0.25, timeout=1.0)


def spinner(id: str, tmp_path: Path) -> ChildSpec:
    return ChildSpec(id=id, start=Spinner, args=probe_args(id, tmp_path / "events.log"))


def test_a_child_busy_on_cpu_for_three_timeouts_is_not_killed(
        actor_system: Any, start_sup: Callable[..., SupervisorClient], tmp_path: Path) -> None:
    sup = start_sup([spinner("busy", tmp_path)], health=TIGHT)
    before = sup.child("busy")
    assert before.pid is not None
    loops = call(actor_system, before.address, ("spin", 3 * TIGHT.timeout), timeout=60)
    assert isinstance(loops, int) and loops > 0  # it finished its work and answered
    after = sup.child("busy")
    assert (after.pid, after.restarts, after.status) == (before.pid, 0, "running")
    assert call(actor_system, after.address, "ping") == "pong"


def test_a_child_blocked_without_cpu_for_three_timeouts_is_killed_and_restarted(
        actor_system: Any, start_sup: Callable[..., SupervisorClient], tmp_path: Path) -> None:
    """The same wait as above, but asleep in a blocking call: no progress, so killed
    (the call it was serving fails) and restarted with the reason."""
    sup = start_sup([spinner("blocked", tmp_path)], health=TIGHT)
    before = sup.child("blocked")
    assert before.pid is not None
    old_pid = before.pid
    with pytest.raises(SupervisionError):
        call(actor_system, before.address, ("sleep", 30 * TIGHT.timeout), timeout=60,
             alive=lambda: pid_alive(old_pid))
    after = wait_until(lambda: (c := sup.child("blocked")).status == "running" and c.pid != old_pid and c,
                       timeout=30)
    assert not pid_alive(old_pid)
    assert after.restarts == 1 and "no CPU time used" in (after.last_exit or "")
    assert call(actor_system, after.address, "ping") == "pong"


def test_a_stopped_child_is_found_killed_and_restarted(
        actor_system: Any, start_sup: Callable[..., SupervisorClient], tmp_path: Path) -> None:
    sup = start_sup([spinner("stopped", tmp_path)], health=TIGHT)
    old_pid = sup.child("stopped").pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGSTOP)
    try:
        after = wait_until(lambda: (c := sup.child("stopped")).status == "running" and c.pid != old_pid and c,
                           timeout=30)
    finally:
        if pid_alive(old_pid):
            os.kill(old_pid, signal.SIGCONT)
    assert not pid_alive(old_pid)
    assert "unresponsive: stopped" in (after.last_exit or "")
    assert call(actor_system, after.address, "ping") == "pong"


def test_a_child_that_spins_past_the_ceiling_is_killed(
        actor_system: Any, start_sup: Callable[..., SupervisorClient], tmp_path: Path) -> None:
    sup = start_sup([spinner("spins", tmp_path)], health=HealthCheck(interval=0.25, timeout=1.0, ceiling=3.0))
    before = sup.child("spins")
    assert before.pid is not None
    old_pid = before.pid
    with pytest.raises(SupervisionError):
        call(actor_system, before.address, ("spin", 120.0), timeout=60, alive=lambda: pid_alive(old_pid))
    after = wait_until(lambda: (c := sup.child("spins")).status == "running" and c.pid != old_pid and c,
                       timeout=30)
    assert "busy but no answer to a health check within 3 s" in (after.last_exit or "")


# -- slow work off the message loop: the mcp SDK ---------------------------------------

#: A host in a fresh Python, which has not imported the mcp SDK (a test process has: its
#: actors would be forked with it). It answers one MCP turn, then prints which of its
#: processes have the SDK's native code (cryptography's, which only the SDK brings in
#: among the tree's imports) mapped: the toolset actor imports it in its own ``init``,
#: never the mcp supervisor (tests/test_mcp_start_off_loop.py shows it answering
#: meanwhile). Its app is named by import path: only the run workers and the toolset
#: actor import it (and the SDK with it), as under ``serve``.
FRESH_HOST = r"""
import json, sys, time
from pathlib import Path
from supervision import SupervisorClient
from supervision.lowlevel import HealthCheck, free_port
from adk_actors.runtime import Host, HostConfig

def has_sdk(pid):
    return any("cryptography" in line for line in Path(f"/proc/{pid}/maps").read_text().splitlines())

config = HostConfig(apps={"mcp_stdio": "mcp_agents:stdio_agent"}, data_dir=sys.argv[1], port=free_port(),
                    health=HealthCheck(interval=0.25, timeout=1.0))
with Host(config) as host:
    services = host.services()
    mcp = next(c for c in services.which_children() if c.id == "mcp")
    runner = host.runner("mcp_stdio", timeout=60.0)
    runner.create_session("ann", "s1")
    events = list(runner.run("ann", "s1", "call whoami"))
    after = next(c for c in services.which_children() if c.id == "mcp")
    [toolset] = SupervisorClient(host.system, after.address).which_children()
    seen = {"host": "mcp" in sys.modules, "services": has_sdk(host.root.child("services").pid),
            "mcp": has_sdk(mcp.pid), "toolset": has_sdk(toolset.pid)}
    seen.update(answered=any(" said: " in (e.content.text or "") for e in events if e.content is not None),
                same_pid=after.pid == mcp.pid, restarts=after.restarts)
    print(json.dumps(seen))
"""


def test_the_mcp_sdk_is_imported_by_the_toolset_actor_only_and_the_supervisor_is_not_restarted(
        tmp_path: Path) -> None:
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]),
           "THESPIAN_BASE_IPADDR": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-c", FRESH_HOST, str(tmp_path / "data")], env=env, cwd=tests,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["host"] is False and seen["services"] is False  # neither the host nor the services import it,
    assert seen["mcp"] is False  # nor the mcp supervisor, even once a toolset has served a turn...
    assert seen["toolset"] is True  # ...only its toolset actor
    assert seen["answered"] and seen["same_pid"] and seen["restarts"] == 0
