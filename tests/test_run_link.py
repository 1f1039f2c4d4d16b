"""The direct line between a session partition and its run worker (``_link.RunLink``): it
never blocks, never splits or reorders a message, refuses what it cannot take (the
sender then uses Thespian), and shows its peer's death as end-of-file, also when the
peer's end was inherited by a forked child that let it go."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterator

import pytest

from adk_actors.runtime._link import MAX_MESSAGE, RunLink


@pytest.fixture
def pair() -> Iterator[tuple[RunLink, RunLink]]:
    ours, theirs = RunLink.pair()
    yield ours, theirs
    ours.close()
    theirs.close()


def readable(link: RunLink, timeout: float) -> bool:
    return bool(select.select([link.fd], [], [], timeout)[0])


def test_messages_arrive_whole_and_in_order(pair: tuple[RunLink, RunLink]) -> None:
    ours, theirs = pair
    sent = [{"n": n, "text": "x" * (n * 300)} for n in range(20)]
    assert all(ours.send(message) for message in sent)
    assert readable(theirs, 1.0)
    assert theirs.receive() == sent
    assert theirs.receive() == []  # nothing more, and no wait
    assert not theirs.closed


def test_a_message_larger_than_the_line_takes_is_refused_and_nothing_is_sent(pair: tuple[RunLink, RunLink]) -> None:
    ours, theirs = pair
    assert not ours.send("x" * (MAX_MESSAGE + 1))
    assert ours.send("small")
    assert theirs.receive() == ["small"]


def test_a_full_line_refuses_at_once_instead_of_blocking(pair: tuple[RunLink, RunLink]) -> None:
    ours, theirs = pair
    began = time.monotonic()
    sent = 0
    while ours.send("y" * (MAX_MESSAGE // 2)):
        sent += 1
        assert sent < 10_000, "the line never filled up"
    assert time.monotonic() - began < 5.0
    assert len(theirs.receive()) == sent  # every message that was taken arrives
    assert ours.send("after")  # room again
    assert theirs.receive() == ["after"]


def test_the_peer_closing_shows_as_end_of_file_and_closes_the_line(pair: tuple[RunLink, RunLink]) -> None:
    ours, theirs = pair
    ours.send("last words")
    ours.close()
    assert theirs.receive() == ["last words"]  # what came before the end is still read
    assert theirs.closed
    assert not theirs.send("anyone?")


@pytest.mark.parametrize("forget", [True, False])
def test_a_forked_child_holding_an_inherited_end_hides_the_peers_death_unless_it_lets_it_go(forget: bool) -> None:
    """A worker forked while its partition holds another worker's line inherits that
    line's partition end. It closes it (``inherited_fds``): else the other worker would
    not see its partition die until this child exits too."""
    ours, theirs = RunLink.pair()
    child = os.fork()
    if child == 0:  # the child: let the inherited end go, or hold it, for 1.5 s
        if forget:
            os.close(ours.fd)
        time.sleep(1.5)
        os._exit(0)
    try:
        time.sleep(0.1)
        ours.close()  # the partition dies
        assert readable(theirs, 0.8) is forget
    finally:
        os.waitpid(child, 0)
    assert readable(theirs, 1.0)  # with the child gone, it shows either way
    assert theirs.receive() == []
    assert theirs.closed
