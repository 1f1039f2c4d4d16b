"""The Runner's direct line to a partition (``_caller_line``), its two ends on their own:
framing, a partition end that never blocks, a message larger than the socket holds,
the peer's death, and the socket's permissions; and a run's transport on it."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from adk_actors.runtime._caller_line import CallerLine, LineClosed, LineServer, RunnerLine
from adk_actors.runtime._run_transport import LineTransport, NotTaken
from supervision.protocol import Call


def connected(tmp_path: Path) -> tuple[LineServer, CallerLine, RunnerLine]:
    server = LineServer(tmp_path / "lines")
    runner = RunnerLine.connect(str(server.path))
    assert runner is not None
    accepted: list[CallerLine] = []
    while not accepted:
        accepted = server.accept()
    return server, accepted[0], runner


def test_messages_go_both_ways_whole_and_in_order(tmp_path: Path) -> None:
    server, partition_end, runner = connected(tmp_path)
    try:
        for n in range(3):
            assert runner.send({"request": n})
        received: list[object] = []
        while len(received) < 3:
            received += partition_end.receive()
        assert received == [{"request": 0}, {"request": 1}, {"request": 2}]
        for n in range(5):
            partition_end.send(("event", n))
        assert [runner.receive(1.0) for _ in range(5)] == [("event", n) for n in range(5)]
        assert runner.receive(0.05) is None  # nothing more: a timeout, not an error
    finally:
        server.close()


def test_a_message_larger_than_the_socket_holds_waits_and_arrives_whole(tmp_path: Path) -> None:
    """The partition's end never blocks: what the socket does not take is kept and sent
    by ``flush`` while the Runner reads."""
    server, partition_end, runner = connected(tmp_path)
    try:
        big = "x" * (8 * 1024 * 1024)
        partition_end.send(big)
        partition_end.send("after")
        assert partition_end.pending  # the kernel took only part of it
        got = None
        while got is None:
            partition_end.flush()
            got = runner.receive(0.01)
        assert got == big
        partition_end.flush()
        assert runner.receive(1.0) == "after" and not partition_end.pending
    finally:
        server.close()


def test_the_partitions_death_is_an_end_of_file_and_a_broken_frame_closes_the_line(tmp_path: Path) -> None:
    server, partition_end, runner = connected(tmp_path)
    partition_end.close()
    with pytest.raises(LineClosed):
        runner.receive(1.0)
    assert not runner.send("too late")
    server.close()
    assert not Path(server.path).exists()

    server, partition_end, runner = connected(tmp_path)
    try:
        raw = socket.socket(fileno=os.dup(runner._sock.fileno()))  # type: ignore[union-attr]
        raw.sendall(b"\xff\xff\xff\xffgarbage")  # a frame longer than any may be
        raw.close()
        while not partition_end.closed:
            partition_end.receive()
        assert partition_end.receive() == []
    finally:
        server.close()


def test_the_socket_is_the_hosts_users_alone_and_stale_ones_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "lines"
    folder.mkdir()
    (folder / "999999999.sock").write_text("")  # a dead partition's
    server = LineServer(folder)
    try:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE(server.path.stat().st_mode) == 0o600
        assert sorted(p.name for p in folder.iterdir()) == [f"{os.getpid()}.sock"]
        assert RunnerLine.connect(str(folder / "nobody.sock")) is None
    finally:
        server.close()


def test_a_run_on_a_line_transport_gets_its_answer_then_not_taken_once_the_partition_is_gone(
        tmp_path: Path) -> None:
    """The Runner's one interface to a partition (``_run_transport``), on a line: the
    first answer, the run's next messages, and NotTaken when the line ends."""

    server, partition_end, runner = connected(tmp_path)
    try:
        transport = LineTransport(runner)
        assert transport.first(Call("run it"), 0.05) is None  # sent; nothing answered yet
        received: list[object] = []
        while not received:
            received = partition_end.receive()
        assert isinstance(received[0], Call) and received[0].request == "run it"
        partition_end.send(("event", 1))
        assert transport.receive(1.0) == ("event", 1)
        partition_end.close()  # the partition died
        with pytest.raises(NotTaken):
            transport.receive(1.0)
        with pytest.raises(NotTaken):
            transport.first(Call("again"), 0.05)
    finally:
        server.close()
