"""``Runner.run_async`` on the event loop's direct line to the partition
(``_async_line``): no thread per run, one connection shared by the loop's runs, and
what happens when the partition dies under them."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from test_runtime_fast_path import partition_pid, texts

from adk_actors import RunFailedError
from adk_actors.runtime import Host
from adk_actors.runtime._async_line import CLOSED, AsyncLines
from adk_actors.runtime._caller_line import HEADER, LineServer


def answer_of(events: list[Any]) -> str:
    return texts([e for e in events if e.author != "user"])[-1]


def test_many_async_runs_share_one_line_and_take_no_thread_each(host: Host) -> None:
    runner = host.runner("sleepy", timeout=20.0)
    for i in range(40):
        runner.create_session("ann", f"s{i}")
    most_threads = 0

    async def conversation(i: int) -> tuple[str, str]:
        events = [e async for e in runner.run_async("ann", f"s{i}", f"sleep 0.4 #{i}")]
        return texts(events)[0], answer_of(events)  # the user's own event first: each run got its own

    async def everyone() -> list[tuple[str, str]]:
        nonlocal most_threads
        before = threading.active_count()
        runs = asyncio.gather(*(conversation(i) for i in range(40)))
        while not runs.done():
            most_threads = max(most_threads, threading.active_count() - before)
            await asyncio.sleep(0.02)
        return await runs

    answers = asyncio.run(everyone())
    assert answers == [(f"sleep 0.4 #{i}", "woke up") for i in range(40)]
    # At most one per partition, once: it asks the partition where its line's socket is.
    assert most_threads <= len(host.partitions()), f"{most_threads} threads were started for 40 runs"


def test_a_partition_killed_under_async_runs_ends_each_and_the_next_run_works(host: Host) -> None:
    runner = host.runner("sleepy", timeout=20.0, orphan_grace=2.0)
    runner.create_session("ann", "s1")
    list(runner.run("ann", "s1", "hi"))  # the partitions are listed
    pid = partition_pid(host, "sleepy", "ann", "s1")

    async def run(text: str) -> str:
        try:
            return answer_of([e async for e in runner.run_async("ann", "s1", text)])
        except RunFailedError as failure:
            return f"failed: {failure.reason}"

    async def killed_then_again() -> tuple[str, str]:
        doomed = asyncio.create_task(run("sleep 5"))
        await asyncio.sleep(0.5)
        os.kill(pid, signal.SIGKILL)
        first = await asyncio.wait_for(doomed, 15)
        return first, await asyncio.wait_for(run("again"), 15)

    first, second = asyncio.run(killed_then_again())
    assert first == "failed: interrupted"
    assert second == "awake: again"


def test_a_run_given_up_by_its_consumer_never_leaks_into_the_next_one_on_the_line(host: Host) -> None:
    runner = host.runner("sleepy", timeout=20.0)
    runner.create_session("ann", "s1")
    runner.create_session("ann", "s2")

    async def both() -> str:
        abandoned = runner.run_async("ann", "s1", "sleep 0.3")
        await anext(abandoned)  # the user's event; the run goes on without a reader
        await abandoned.aclose()
        return answer_of([e async for e in runner.run_async("ann", "s2", "hello")])

    assert asyncio.run(both()) == "awake: hello"


def test_a_broken_frame_or_the_peers_end_hands_every_waiting_run_closed(tmp_path: Path) -> None:
    server = LineServer(tmp_path / "lines")

    async def scenario(ending: bytes | None) -> list[Any]:
        line = await AsyncLines().line("p", lambda: str(server.path))
        assert line is not None
        partition_end = None
        while partition_end is None:
            accepted = server.accept()
            partition_end = accepted[0] if accepted else None
            await asyncio.sleep(0.01)
        queues = [line.open(f"run-{n}", f"ref-{n}") for n in range(3)]
        if ending is None:
            partition_end.close()
        else:
            os.write(partition_end.fd, ending)  # the partition's end stays open
        got = [await asyncio.wait_for(queue.get(), 5) for queue in queues]
        partition_end.close()
        assert not line.send("too late") and line.closed
        return got

    try:
        assert asyncio.run(scenario(None)) == [CLOSED] * 3
        assert asyncio.run(scenario(b"\xff\xff\xff\xffgarbage")) == [CLOSED] * 3  # longer than any frame may be
        undecodable = b"not a pickle"
        assert asyncio.run(scenario(HEADER.pack(len(undecodable)) + undecodable)) == [CLOSED] * 3
    finally:
        server.close()


class Named:
    def __init__(self, **names: str) -> None:
        self.__dict__.update(names)


@pytest.mark.parametrize("key", ["run_id", "ref"])
def test_each_message_goes_to_the_run_or_call_it_names(tmp_path: Path, key: str) -> None:
    server = LineServer(tmp_path / "lines")

    async def scenario() -> tuple[Any, bool]:
        line = await AsyncLines().line("p", lambda: str(server.path))
        assert line is not None
        accepted: list[Any] = []
        while not accepted:
            accepted = server.accept()
            await asyncio.sleep(0.01)
        mine, other = line.open("run-1", "ref-1"), line.open("run-2", "ref-2")
        accepted[0].send({"stray": True})  # nobody's: dropped
        accepted[0].send(Named(**{key: "run-1" if key == "run_id" else "ref-1"}))
        got = await asyncio.wait_for(mine.get(), 5)
        line.close()
        return got, other.empty() or other.get_nowait() is CLOSED

    try:
        got, others_untouched = asyncio.run(scenario())
        assert getattr(got, key) in ("run-1", "ref-1") and others_untouched
    finally:
        server.close()


def test_frames_are_the_caller_lines(tmp_path: Path) -> None:
    """The partition reads the async line's frames with its usual reader."""
    server = LineServer(tmp_path / "lines")

    async def send() -> None:
        line = await AsyncLines().line("p", lambda: str(server.path))
        assert line is not None and line.send({"request": 1}) and line.send(("two", 2))
        await asyncio.sleep(0.05)
        line.close()

    try:
        asyncio.run(send())
        ends = server.accept()
        received: list[Any] = []
        for _ in range(100):
            if len(received) == 2:
                break
            received += ends[0].receive()
        assert received == [{"request": 1}, ("two", 2)]
    finally:
        server.close()
