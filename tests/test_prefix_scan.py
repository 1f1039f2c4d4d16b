"""``engine._prefix_scan.PrefixScan``: whether a session's events hold an event a rule
matches, each event read once as the session grows (a model request on a session of
1,000 events read them all twice per request: 3.9 against 2.0 ms a turn in
bench/turns.py), and read again when the session was rewound."""

from __future__ import annotations

import pickle

from adk_actors import Event
from adk_actors._prefix_scan import PrefixScan
from adk_actors.types import Content, Part


def _events(n: int, start: int = 0) -> list[Event]:
    return [Event(author="user", content=Content(role="user", parts=[Part(text=f"m{i}")])) for i in range(start, n)]


def test_each_event_is_read_once_as_the_list_grows_even_in_new_lists() -> None:
    read: list[str] = []
    scan = PrefixScan(lambda e: read.append(e.id) is not None or e.content.parts[0].text == "match")
    history = _events(100)
    assert not scan(history)
    assert len(read) == 100
    grown = list(history) + _events(103, 100)  # the next turn: a new list, the same events, 3 more
    assert not scan(grown)
    assert len(read) == 103 and read[100:] == [e.id for e in grown[100:]]
    grown.append(Event(author="model", content=Content(role="model", parts=[Part(text="match")])))
    assert scan(grown) and scan(list(grown)) and len(read) == 104


def test_a_rewound_list_is_read_again_and_an_empty_one_matches_nothing() -> None:
    scan = PrefixScan(lambda e: e.author == "model")
    history = [*_events(10), Event(author="model")]
    assert scan(history)
    rewound = history[:10] + _events(12, 10)  # the model's event rewound away, two new ones
    assert not scan(rewound)
    assert not scan([])


def test_a_run_workers_next_turn_with_stored_copies_reads_only_the_new_events() -> None:
    """The next turn on a run worker: the events the last scan read come back as the
    stored copies the partition sends (new objects, unpickled), the new ones after them."""
    read: list[str] = []
    scan = PrefixScan(lambda e: read.append(e.id) is not None and False)
    history = _events(1_000)
    assert not scan(history)
    copies = pickle.loads(pickle.dumps(history[-2:]))  # the previous turn's events, as stored
    next_turn = history[:-2] + copies + _events(1_002, 1_000)
    read.clear()
    assert not scan(next_turn)
    assert read == [e.id for e in next_turn[1_000:]]


def test_lists_with_the_same_ids_but_other_events_are_told_apart() -> None:
    """Events are told by id and timestamp: a list whose events reuse another's ids
    (built by hand) is read from its start."""
    scan = PrefixScan(lambda e: e.author == "model")
    first = [Event(id=f"e{i}", author="user", timestamp=1.0 + i) for i in range(5)]
    assert not scan(first)
    other = [Event(id=f"e{i}", author="model" if i == 2 else "user", timestamp=10.0 + i) for i in range(6)]
    assert scan(other)
