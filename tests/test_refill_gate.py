"""When a partition starts another pooled pair (``_refill.RefillGate``), with a fake
clock and fake CPU counters: at once on idle CPUs, not while the CPUs are busy, and
yet, on a machine kept busy, one pair every ``max_wait`` seconds instead of never."""

from __future__ import annotations

from adk_actors.runtime._refill import RefillGate


class Machine:
    """Fake /proc/stat counters: each tick adds 100 units of CPU time, ``idle`` of them idle."""

    def __init__(self) -> None:
        self.idle = 0
        self.total = 0

    def tick(self, idle: int) -> tuple[int, int]:
        self.idle += idle
        self.total += 100
        return self.idle, self.total


def test_idle_cpus_let_a_pair_start_at_every_question() -> None:
    machine = Machine()
    gate = RefillGate(machine.tick(90), idle_share=0.25, max_wait=5.0)
    assert [gate.may_start(0.05 * i, machine.tick(60)) for i in range(1, 5)] == [True, True, True, True]


def test_busy_cpus_hold_the_refill_back_until_max_wait_then_one_pair_at_a_time() -> None:
    machine = Machine()
    gate = RefillGate(machine.tick(0), idle_share=0.25, max_wait=5.0)
    answers = {round(0.05 * i, 2): gate.may_start(0.05 * i, machine.tick(10)) for i in range(1, 301)}
    # The shortage began at the first question (0.05 s): starts at 5.05 and 10.05 s only.
    assert [t for t, yes in answers.items() if yes] == [5.05, 10.05]


def test_the_wait_counts_from_the_last_start_even_an_idle_one() -> None:
    machine = Machine()
    gate = RefillGate(machine.tick(0), idle_share=0.25, max_wait=5.0)
    assert not gate.may_start(0.5, machine.tick(0))  # busy: the shortage's wait begins
    assert gate.may_start(1.0, machine.tick(80))  # idle: a start
    assert not gate.may_start(5.6, machine.tick(0))  # 5.1 s into the shortage, 4.6 s after the start
    assert gate.may_start(6.0, machine.tick(0))  # 5 s after that start


def test_a_full_pool_rests_the_gate_and_the_next_shortage_waits_anew() -> None:
    machine = Machine()
    gate = RefillGate(machine.tick(0), idle_share=0.25, max_wait=5.0)
    assert not gate.may_start(1.0, machine.tick(0))
    gate.rest()  # the pool filled (the last pair came up) at 1 s; a burst empties it at 100 s
    assert not gate.may_start(100.0, machine.tick(0))  # not "99 s since 1 s": the wait starts now
    assert not gate.may_start(104.9, machine.tick(0))
    assert gate.may_start(105.0, machine.tick(0))


def test_no_cpu_counters_no_cpu_test() -> None:
    gate = RefillGate(None)
    assert gate.may_start(0.0, None) and gate.may_start(0.05, None)


def test_nothing_measured_yet_is_not_idle() -> None:
    machine = Machine()
    counters = machine.tick(100)
    gate = RefillGate(counters)
    assert not gate.may_start(0.05, counters)  # the same reading: no time has passed
