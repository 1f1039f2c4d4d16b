"""The run actor's Doorbell: a worker thread's ring is never lost.

A lost ring leaves a run actor's main thread asleep with the run's events and outcome
queued: the turn never ends (it happened to one session in a burst of 100)."""

from __future__ import annotations

import os
import queue
import select
import threading
import time

import pytest

from adk_actors.runtime._run import Doorbell


def readable(fd: int, timeout: float = 0.0) -> bool:
    return bool(select.select([fd], [], [], timeout)[0])


@pytest.fixture
def bell() -> Doorbell:
    made = Doorbell()
    yield made
    made.close()


def test_rings_between_answers_make_one_wakeup(bell: Doorbell) -> None:
    assert not readable(bell.read_fd)
    bell.ring()
    bell.ring()
    assert os.read(bell.read_fd, 16) == b"x"
    bell.answer()
    assert not readable(bell.read_fd)
    bell.ring()
    assert readable(bell.read_fd)


def test_a_ring_while_the_main_thread_drains_is_not_lost(bell: Doorbell, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race, made deterministic: the worker queues an item and rings while the
    main thread is draining the pipe. Either the main thread's read of the queue after
    answer() gets that item, or the pipe stays readable; and the next ring wakes it."""
    items: queue.SimpleQueue[int] = queue.SimpleQueue()
    items.put(1)
    bell.ring()
    real_read = os.read
    raced = []

    def read_with_a_ring_in_between(fd: int, n: int) -> bytes:
        if not raced:
            raced.append(True)
            items.put(2)
            bell.ring()
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", read_with_a_ring_in_between)
    bell.answer()
    monkeypatch.undo()
    got = []
    while not items.empty():
        got.append(items.get())
    assert got == [1, 2] or readable(bell.read_fd)

    items.put(3)  # the worker's next item: its ring must wake the main thread
    bell.ring()
    assert readable(bell.read_fd), "a ring was lost: the main thread would sleep with an item queued"


def test_no_ring_is_lost_between_two_threads(bell: Doorbell) -> None:
    """A worker rings after each of many items; the main thread sleeps until woken,
    answers, then takes what is queued. Every item arrives, and no wait times out."""
    items: queue.SimpleQueue[int] = queue.SimpleQueue()
    count = 20_000

    def worker() -> None:
        for i in range(count):
            items.put(i)
            bell.ring()
            if i % 64 == 0:
                time.sleep(0)

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    got = 0
    while got < count:
        assert readable(bell.read_fd, 2.0), f"woken for {got} of {count} items, then never again"
        bell.answer()
        while True:
            try:
                items.get_nowait()
            except queue.Empty:
                break
            got += 1
    thread.join(timeout=5)
    assert got == count
