"""``engine._prefix_scan.PrefixScan``: whether a session's events hold an event a rule
matches, each event read once as the session grows (a model request on a session of
1,000 events read them all twice per request: 3.9 against 2.0 ms a turn in
bench/turns.py), and read again when the session was rewound."""

from __future__ import annotations

from adk_actors import Event
from adk_actors.engine._prefix_scan import PrefixScan
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
