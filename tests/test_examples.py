"""The shipped examples run offline through a real host."""

from __future__ import annotations

import importlib
import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SharedHost

from adk_actors.runtime import Host, HostConfig

ROOT = Path(__file__).resolve().parents[1]
APPS = {
    "weather_bot": "examples.weather_bot.agent:root_agent",
    "pipeline": "examples.pipeline.agent:root_agent",
    "fluent_pipeline": "examples.fluent_pipeline.agent:root_agent",
    "fanout": "examples.fanout.agent:root_agent",
    "refine_loop": "examples.refine_loop.agent:root_agent",
    "router": "examples.router.agent:root_agent",
    "hitl": "examples.hitl.agent:root_agent",
}
# Before any test's actor system starts: its actors are forked from this process, so they
# have the examples' code already (each session partition and run pool would otherwise
# import it in its own process: ~4 s of every host's start at load). The actors load
# the apps by path all the same.
for _app in APPS.values():
    importlib.import_module(_app.split(":")[0])


@pytest.fixture(scope="module")
def shared_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedHost]:
    hosts = SharedHost(tmp_path_factory.mktemp("examples"), lambda data: HostConfig(apps=APPS, data_dir=str(data)))
    yield hosts
    hosts.close()


@pytest.fixture
def host(shared_hosts: SharedHost) -> Host:
    """One host for the module's tests (none kills, stops or reconfigures it;
    ``SharedHost``: a fresh one after a test that broke its tree), each test's sessions
    on a user of its own (``user``)."""
    return shared_hosts.get()


_USERS = itertools.count(1)


@pytest.fixture
def user() -> str:
    """A user no other test of the module has (the shared host keeps every session)."""
    return f"ann{next(_USERS)}"


def turn(host: Host, user: str, app: str, text: str) -> list[Any]:
    runner = host.runner(app)
    runner.create_session(user, "s1")
    return list(runner.run(user, "s1", text))


@pytest.mark.parametrize("app", ["pipeline", "fluent_pipeline"])  # built by hand, and with adk_actors.fluent
def test_pipeline_passes_state_along(host: Host, user: str, app: str) -> None:
    events = turn(host, user, app, "parse dates")
    assert [e.author for e in events if e.content and e.content.text] == ["user", "writer", "reviewer", "summarizer"]
    state = host.runner(app).get_state(user, "s1")
    assert state["code"] == "def parse_dates(x): return x"
    assert state["review"].startswith("Reviewed `def parse_dates(x): return x`")
    assert state["summary"].startswith("Summary: Reviewed")


def test_fanout_runs_researchers_on_their_branches(host: Host, user: str) -> None:
    events = turn(host, user, "fanout", "solar roofs")
    branches = {e.author: e.branch for e in events if e.author.endswith("_researcher")}
    assert branches == {f"{a}_researcher": f"researchers.{a}_researcher" for a in ("market", "technical", "legal")}
    assert events[-1].content.text == "Merged 3 findings."


def test_refine_loop_ends_with_exit_loop(host: Host, user: str) -> None:
    events = turn(host, user, "refine_loop", "write a haiku")
    assert events[-1].actions.escalate
    assert host.runner("refine_loop").get_state(user, "s1") == {"draft": "A haiku!!!", "version": 3}


@pytest.mark.parametrize("script", ["examples/fault_injection.py", "examples/supervision_demo.py",
                                    "examples/message_passing/asker.py"])
def test_demo_scripts_run(script: str) -> None:
    result = subprocess.run([sys.executable, script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_router_routes_and_sticks_with_the_specialist(host: Host, user: str) -> None:
    runner = host.runner("router")
    runner.create_session(user, "s1")
    first = list(runner.run(user, "s1", "will it rain in Paris?"))
    assert [e.author for e in first if e.content][1:] == ["router", "router", "weather", "weather", "weather"]
    assert first[-1].content.text == "city: Paris, forecast: sunny, 22 °C"
    second = list(runner.run(user, "s1", "and in Rome?"))
    assert second[1].author == "weather"  # sticky: the router is not asked again
    assert second[-1].content.text == "city: Rome, forecast: sunny, 22 °C"


def test_hitl_payment_waits_for_a_human(host: Host, user: str) -> None:
    import threading

    from supervision.testing import wait_until

    runner = host.runner("hitl")
    runner.create_session(user, "s1")
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(events=list(runner.run(user, "s1", "pay 100 to bob"))))
    thread.start()
    pending = wait_until(lambda: runner.approvals(user), timeout=10)[0]
    assert pending.hint == "a payment needs your approval" and pending.args == {"amount": 100, "to": "bob"}
    runner.approve(pending.id)
    thread.join(15)
    assert box["events"][-1].content.text == "Sent 100 to bob (ref TX-100-BOB)."


def test_weather_bot_comes_back_from_alert_agent_over_a_conversation(host: Host, user: str) -> None:
    """Issue 19 item 7: after a hand-off to alert_agent, a weather question is answered
    again (alert_agent hands it back), turn after turn."""
    runner = host.runner("weather_bot")
    runner.create_session(user, "talk")

    def say(text: str) -> tuple[str, str]:
        answers = [e for e in runner.run(user, "talk", text) if e.content and e.content.text and e.author != "user"]
        return answers[-1].author, answers[-1].content.text

    assert say("What's the weather in Paris?") == ("weather_bot", "It is 21 °C and clear in Paris.")
    assert say("Any storm alerts?") == ("alert_agent", "No severe weather alerts right now.")
    assert say("And the weather in London?") == ("weather_bot", "It is 15 °C and drizzle in London.")
    assert say("Any alerts now?") == ("alert_agent", "No severe weather alerts right now.")
    assert say("Oslo weather please") == ("weather_bot", "It is -3 °C and snow in Oslo.")


def test_router_ping_pong_ends_with_a_typed_error_event(host: Host, user: str) -> None:
    """Issue 19 item 2: the shipped router asked for weather and news at once hands the
    turn back and forth; the run ends with the max_llm_calls error event, not a crash."""
    events = turn(host, user, "router", "hello there, weather and news please")
    assert events[-1].error_code == "max_llm_calls"


def conversation(host: Host, user: str, app: str, texts: list[str]) -> list[tuple[str, str]]:
    """(author, text) of the last answer of each turn, one session of ``user``."""
    runner = host.runner(app)
    runner.create_session(user, "talk")
    answers = []
    for text in texts:
        said = [e for e in runner.run(user, "talk", text) if e.content and e.content.text and e.author != "user"]
        answers.append((said[-1].author, said[-1].content.text))
    return answers


def test_every_example_holds_a_conversation(host: Host, user: str) -> None:
    """Issue 19 item 7: the examples answer turn after turn as an agent would."""
    assert conversation(host, user, "router", ["will it rain in Paris?", "and tomorrow?", "any news about football?",
                                         "thanks", "what's the weather in Oslo?"]) == [
        ("weather", "city: Paris, forecast: sunny, 22 °C"),
        ("weather", "city: Paris, forecast: sunny, 22 °C"),  # a follow-up keeps the city
        ("news", "topic: football, headlines: ['Football makes the news again']"),
        ("news", "You're welcome! Ask me anything else."),
        ("weather", "city: Oslo, forecast: sunny, 22 °C"),  # news hands weather back to the router
    ]
    assert [a for _, a in conversation(host, user, "pipeline", ["parse dates", "parse times"])] == [
        "Summary: Reviewed `def parse_dates(x) -- 1 suggestion.", "Summary: Reviewed `def parse_times(x) -- 1 suggestion."]
    fanout = conversation(host, user, "fanout", ["solar power", "wind power"])
    assert fanout == [("merger", "Merged 3 findings."), ("merger", "Merged 3 findings.")]
    refine = conversation(host, user, "refine_loop", ["a haiku about rain", "one about snow"])
    assert [author for author, _ in refine] == ["drafter", "drafter"]
    assert refine[0][1].startswith("draft v") and refine[1][1].startswith("draft v") and refine[0] != refine[1]
