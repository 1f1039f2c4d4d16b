"""google-adk's event compaction (``App(events_compaction_config=...)``) in a host's
runs (issue 52): the run worker compacts after an invocation, the summary is kept in
the session as an event of the run, and the next turn's model request (run by a run
worker from the stored events) carries the summary in place of the compacted turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_actors.testing import StubServer, gemini_response


@pytest.fixture
def gemini_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    """A Gemini stand-in named by the environment, set before the actor system forks."""
    with StubServer() as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-a-secret")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        yield server


def _contents(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["role"], "".join(p.get("text", "") for p in c["parts"])) for c in body["contents"]]


def test_a_hosts_run_compacts_after_the_invocation_and_the_next_request_reads_the_summary(
        gemini_env: StubServer, actor_system: Any, tmp_path: Path) -> None:
    """Interval 1, overlap 0: after turn 1 its events are summarized (kept in the
    session with google-adk's range and content); turn 2's request carries the summary
    as the model's turn instead of turn 1's message and answer."""
    from adk_actors.events.event_actions import EventCompaction
    from adk_actors.runtime import Host, HostConfig

    server = gemini_env
    server.add(gemini_response("one"), gemini_response("two"))
    config = HostConfig(apps={"compacting": "compaction_host_agents:compacting_app"}, data_dir=str(tmp_path))
    with Host(config, system=actor_system) as host:
        runner = host.runner("compacting")
        runner.create_session("ann", "s1")
        first = list(runner.run("ann", "s1", "Hello"))
        second = list(runner.run("ann", "s1", "Paris?"))
        stored = runner.get_session("ann", "s1").events
    assert [_contents(r.body) for r in server.requests] == [
        [("user", "Hello")],
        [("model", "summary: Hello | one"), ("user", "Paris?")]]
    # the callers stream the turns' events, not the summary (kept in the session only, as google-adk's Runner)
    assert [e.content.text for e in first if e.content is not None] == ["Hello", "one"]
    assert [e.content.text for e in second if e.content is not None] == ["Paris?", "two"]
    assert not any(e.actions.compaction for e in first + second)
    # turn 2 alone is not worth a summary: shorter than the one there is (google-adk's rule)
    [summary] = [e.actions.compaction for e in stored if e.actions.compaction is not None]
    assert isinstance(summary, EventCompaction) and summary.compacted_content.text == "summary: Hello | one"
    assert (summary.start_timestamp, summary.end_timestamp) == (stored[0].timestamp, stored[1].timestamp)


def test_the_summary_outlives_a_host_restart(gemini_env: StubServer, actor_system: Any, tmp_path: Path) -> None:
    """The summary is stored with google-adk's fields: a host started again on the same
    data reads it from the store, and its run's request carries the summary still."""
    from adk_actors.events.event_actions import EventCompaction
    from adk_actors.runtime import Host, HostConfig

    server = gemini_env
    server.add(gemini_response("one"), gemini_response("two"))
    config = HostConfig(apps={"compacting": "compaction_host_agents:compacting_app"}, data_dir=str(tmp_path))
    with Host(config, system=actor_system) as host:
        runner = host.runner("compacting")
        runner.create_session("ann", "s1")
        list(runner.run("ann", "s1", "Hello"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("compacting")
        stored = runner.get_session("ann", "s1").events
        list(runner.run("ann", "s1", "Paris?"))
    assert [e.actions.compaction.compacted_content.text for e in stored
            if isinstance(e.actions.compaction, EventCompaction)] == ["summary: Hello | one"]
    assert _contents(server.requests[-1].body) == [("model", "summary: Hello | one"), ("user", "Paris?")]
