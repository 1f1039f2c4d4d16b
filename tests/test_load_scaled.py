"""``load_scaled``: deadlines and health-check windows that stretch with the load.

The load is read through ``load_scaled``'s ``read`` (the machine's load average and
CPUs by default); here each test passes the load it wants, so every factor is exact
and nothing sleeps: the health monitor is judged at chosen times on its own clock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from supervision.lowlevel import (
    LOAD_SCALE_CAP,
    HealthCheck,
    HealthMonitor,
    ProcessProgress,
    load_scaled,
    read_load,
)


def load_of(average: float, cpus: int) -> Callable[[], tuple[float, int]]:
    return lambda: (average, cpus)


def unreadable() -> tuple[float, int]:
    raise OSError("no /proc/loadavg here")


@pytest.mark.parametrize(("average", "cpus", "factor"), [
    (0.0, 2, 1.0),  # idle
    (1.5, 2, 1.0),  # below one per CPU: not stretched
    (2.0, 2, 1.0),  # exactly one per CPU
    (4.0, 2, 2.0),  # twice the cores
    (8.0, 4, 2.0),
    (15.0, 2, 7.5),
    (20.0, 2, LOAD_SCALE_CAP),  # at the cap
    (80.0, 2, LOAD_SCALE_CAP),  # far past it: capped
])
def test_seconds_are_stretched_by_the_load_per_cpu_up_to_the_cap(average: float, cpus: int, factor: float) -> None:
    assert load_scaled(5.0, read=load_of(average, cpus)) == 5.0 * factor


def test_the_cap_is_ten() -> None:
    assert LOAD_SCALE_CAP == 10.0
    assert load_scaled(3.0, read=load_of(1000.0, 1)) == 30.0


def test_an_unreadable_load_leaves_the_seconds_as_they_are() -> None:
    assert load_scaled(5.0, read=unreadable) == 5.0
    assert load_scaled(0.25, read=unreadable) == 0.25


def test_no_cpu_count_counts_as_no_load() -> None:
    assert load_scaled(5.0, read=load_of(50.0, 0)) == 5.0


def test_the_default_reader_reads_this_machine() -> None:
    average, cpus = read_load()
    assert average >= 0.0 and cpus >= 1
    assert 5.0 <= load_scaled(5.0) <= 5.0 * LOAD_SCALE_CAP


# -- HealthMonitor(scale=...) ----------------------------------------------------------

PID = 4242
CHECK = HealthCheck(interval=1.0, timeout=5.0)  # no ceiling set: 12 x 5 = 60 s, stretched too


class FakeProcess:
    """What ``/proc/PID/stat`` would say of one child: its state, and CPU time that
    advances by one tick at every read while ``spinning``."""

    def __init__(self, state: str = "S", spinning: bool = False) -> None:
        self.state, self.spinning, self.cpu = state, spinning, 100

    def read(self, pid: int) -> ProcessProgress | None:
        assert pid == PID
        if self.spinning:
            self.cpu += 1
        return ProcessProgress(self.state, self.cpu)


def monitor(process: FakeProcess, average: float, cpus: int = 2) -> HealthMonitor:
    health = HealthMonitor(CHECK, read=process.read, scale=functools.partial(load_scaled, read=load_of(average, cpus)))
    assert health.ping("child", 0.0, pid=PID) is not None
    return health


def first_stuck(health: HealthMonitor, times: list[float]) -> tuple[float, str] | None:
    """The first of ``times`` at which the child is judged stuck, with the reason."""
    for now in times:
        for verdict in health.judge(now):
            if verdict.kind == "stuck":
                return now, verdict.reason
    return None


STEPS = [t / 2 for t in range(1, 2 * 400)]  # every half second for 400 s


@pytest.mark.parametrize(("average", "factor"), [(0.5, 1.0), (4.0, 2.0), (6.0, 3.0), (200.0, LOAD_SCALE_CAP)])
def test_a_child_that_uses_no_cpu_is_stuck_after_the_window_times_the_factor(average: float, factor: float) -> None:
    found = first_stuck(monitor(FakeProcess(), average), STEPS)
    assert found is not None
    assert found[0] == 5.0 * factor
    assert found[1] == f"unresponsive: no answer to a health check and no CPU time used for {5.0 * factor:g} s"


@pytest.mark.parametrize(("average", "factor"), [(0.5, 1.0), (4.0, 2.0), (200.0, LOAD_SCALE_CAP)])
def test_a_busy_child_is_left_alone_until_the_ceiling_times_the_factor(average: float, factor: float) -> None:
    health = monitor(FakeProcess(spinning=True), average)
    busy = [v for v in health.judge(5.0 * factor) if v.kind == "busy"]  # the first window's end: busy, not stuck
    assert len(busy) == 1
    found = first_stuck(health, [t for t in STEPS if t > 5.0 * factor] + [600.0, 1200.0])
    assert found is not None
    assert found[0] == 60.0 * factor
    assert found[1] == f"unresponsive: busy but no answer to a health check within {60.0 * factor:g} s"


@pytest.mark.parametrize("average", [0.5, 4.0, 200.0])
def test_a_stopped_child_is_found_at_the_timeout_whatever_the_load(average: float) -> None:
    found = first_stuck(monitor(FakeProcess(state="T"), average), STEPS)
    assert found == (5.0, "unresponsive: stopped (state T), no answer to a health check within 5 s")


def test_an_answer_inside_a_stretched_window_keeps_the_child() -> None:
    process = FakeProcess()
    health = HealthMonitor(CHECK, read=process.read, scale=functools.partial(load_scaled, read=load_of(4.0, 2)))
    ping = health.ping("child", 0.0, pid=PID)  # factor 2: a silent, idle child has until 10 s
    assert ping is not None
    assert health.judge(9.5) == []
    assert health.answered(ping.ref)
    assert health.judge(60.0) == []
    assert health.ping("child", 60.0, pid=PID) is not None  # well again: pinged afresh


def test_an_unreadable_load_leaves_the_windows_as_they_are() -> None:
    health = HealthMonitor(CHECK, read=FakeProcess().read, scale=functools.partial(load_scaled, read=unreadable))
    health.ping("child", 0.0, pid=PID)
    assert first_stuck(health, STEPS) == (5.0, "unresponsive: no answer to a health check and no CPU time used "
                                                "for 5 s")
