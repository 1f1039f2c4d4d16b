"""The host's limits: a message too large, a turn with too many events, too many sessions
for a user. Over a limit: a typed error, nothing of the request stored, the session and
its actor carry on (issue 18 part 3)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_actors import LimitExceededError, RunFailedError
from adk_actors.messages import Limits
from adk_actors.runtime import Host, HostConfig

LIMITS = Limits(max_message_bytes=2000, max_events_per_turn=9, max_sessions_per_user=3)


@pytest.fixture
def limited(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    import runtime_agents

    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), limits=LIMITS),
              system=actor_system) as host:
        yield host


def test_a_message_over_the_size_limit_is_refused_and_nothing_is_stored(limited: Host) -> None:
    runner = limited.runner("echo")
    session = runner.create_session(user_id="ann")
    list(runner.run("ann", session.id, "small"))
    with pytest.raises(LimitExceededError, match="the limit is 2000"):
        list(runner.run("ann", session.id, "x" * 5000))
    events = runner.get_session("ann", session.id).events
    assert [e.content.text for e in events if e.author == "user"] == ["small"]
    assert list(runner.run("ann", session.id, "still small"))[-1].content.text.startswith("echo: still small")


def test_a_turn_over_the_events_limit_fails_typed_and_stores_no_more(limited: Host) -> None:
    runner = limited.runner("chatty")
    session = runner.create_session(user_id="ann")
    with pytest.raises(RunFailedError) as failed:
        list(runner.run("ann", session.id, "loop forever"))
    assert failed.value.reason == "error" and failed.value.error_type == "TooManyEvents"
    stored = runner.get_session("ann", session.id).events
    assert len(stored) == LIMITS.max_events_per_turn  # the user's message and 8 more, none past the limit
    answer = list(runner.run("ann", session.id, "hello again"))  # the session carries on
    assert answer[-1].content.text == "quiet: hello again"
    assert len(runner.get_session("ann", session.id).events) == LIMITS.max_events_per_turn + 2


def test_sessions_over_the_per_user_limit_are_refused(limited: Host) -> None:
    runner = limited.runner("echo")
    for number in range(LIMITS.max_sessions_per_user):
        runner.create_session(user_id="ann", session_id=f"s{number}")
    with pytest.raises(LimitExceededError, match="the limit is 3"):
        runner.create_session(user_id="ann", session_id="one-too-many")
    assert len(runner.list_sessions("ann")) == LIMITS.max_sessions_per_user
    runner.create_session(user_id="bob", session_id="s0")  # per user: another user is not held back
    runner.delete_session("ann", "s0")
    runner.create_session(user_id="ann", session_id="after-a-delete")
