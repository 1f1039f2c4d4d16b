"""google-adk's event compaction runs here with only its imports rewritten (issue 52,
``apps`` and ``events``).

Each case is a small google-adk program with ``App(events_compaction_config=...)``,
run as tests/test_google_adk_plugins.py runs its programs (tests/google_adk_harness.py):
as written on google-adk 2.13, and with its imports rewritten on ours, both against one
Gemini REST stand-in named by environment variables only. Compared: the events the
runner yielded, the session's stored events (who said what, and each compaction: who
wrote it, which stored events its range covers, its summary), and every request the
model received (later requests carry the summary instead of the compacted turns).

Left out: the words of the default summarizer's prompt (``LlmEventSummarizer``: ours
are our own); its request is compared by the conversation lines it quotes.
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import event_rows, request_rows, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

MAIN = '''
async def main(turns):
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="ann")
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
    stored = await runner.session_service.get_session(app_name=runner.app_name, user_id="ann",
                                                      session_id=session.id)
    await runner.close()
    return seen, list(stored.events)
'''

HEAD = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.runners import InMemoryRunner
from google.genai import types

SUMMARIZED = []

class JoinSummarizer(BaseEventsSummarizer):
    """Summarizes by joining the texts it is given (no model call)."""

    async def maybe_summarize_events(self, *, events):
        texts = ["".join(p.text or "" for p in e.content.parts) for e in events if e.content and e.content.parts]
        SUMMARIZED.append(texts)
        return Event(author="user", invocation_id=Event.new_id(), actions=EventActions(
            compaction=EventCompaction(start_timestamp=events[0].timestamp, end_timestamp=events[-1].timestamp,
                                       compacted_content=types.Content(role="model",
                                                                       parts=[types.Part(text=" | ".join(texts))]))))

def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny"}

agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Be brief.", tools=[get_weather])
'''

WINDOW = HEAD + '''
app = App(name="compacting", root_agent=agent, events_compaction_config=EventsCompactionConfig(
    summarizer=JoinSummarizer(), compaction_interval=2, overlap_size=1))
runner = InMemoryRunner(app=app)
''' + MAIN

DEFAULT_SUMMARIZER = HEAD + '''
app = App(name="compacting", root_agent=agent, events_compaction_config=EventsCompactionConfig(
    compaction_interval=2, overlap_size=0))
runner = InMemoryRunner(app=app)
''' + MAIN

TOKENS = HEAD + '''
app = App(name="compacting", root_agent=agent, events_compaction_config=EventsCompactionConfig(
    summarizer=JoinSummarizer(), token_threshold=500, event_retention_size=1))
runner = InMemoryRunner(app=app)
''' + MAIN


def _text(content: Any) -> str:
    return "".join(p.text or "" for p in (content.parts or [])) if content is not None else ""


def stored_rows(events: list[Any]) -> list[Any]:
    """The session's events: (author, text) for each raw event; for a compaction, who
    wrote it, the positions of the raw events its range covers and its summary."""
    raw = [e for e in events if not (e.actions and e.actions.compaction)]
    rows: list[Any] = []
    for event in events:
        compaction = event.actions.compaction if event.actions else None
        if compaction is None:
            rows.append((event.author, _text(event.content)))
            continue
        covered = [i for i, e in enumerate(raw) if compaction.start_timestamp <= e.timestamp
                   <= compaction.end_timestamp]
        rows.append(("compaction", event.author, covered, _text(compaction.compacted_content),
                     compaction.compacted_content.role))
    return rows


def _prompt_lines(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The summarizer's requests (no instruction, one user text) by the conversation
    lines they quote (the words before them are each side's own)."""
    out = []
    for row in rows:
        contents = row["contents"]
        if not row["instruction"] and len(contents) == 1 and "\n\n" in contents[0]["parts"][0].get("text", ""):
            row = {**row, "contents": contents[0]["parts"][0]["text"].split("\n\n", 1)[1].splitlines()}
        out.append(row)
    return out


def run_both(source: str, answers: list[StubResponse], turns: list[str], server: StubServer
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    def once(text: str) -> dict[str, Any]:
        namespace, (seen, stored) = run_program(text, answers, server, turns)
        return {"events": event_rows(seen), "stored": stored_rows(stored), "requests": _prompt_lines(
            request_rows(server)), "summarized": namespace["SUMMARIZED"], "unused": len(server.responses)}

    theirs = once(source)
    assert theirs["unused"] == 0
    ours = once(rewritten(source))
    assert "google" not in rewritten(source)
    return theirs, ours


def _assert_same(theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    for key in ("events", "stored", "summarized", "requests", "unused"):
        assert ours[key] == theirs[key], key


def test_sliding_window_with_a_custom_summarizer(gemini: StubServer) -> None:
    """Interval 2, overlap 1: after turn 2 turns 1-2 are summarized, turn 3 alone
    nothing, after turn 4 turns 2-4; the requests of turns 3 and 4 carry the summary."""
    answers = [gemini_response("one"), harness.calls(("get_weather", {"city": "Oslo"})), gemini_response("two"),
               gemini_response("three"), gemini_response("four"), gemini_response("five")]
    theirs, ours = run_both(WINDOW, answers, ["a", "b", "c", "d", "e"], gemini)
    compactions = [row for row in theirs["stored"] if row[0] == "compaction"]
    assert len(compactions) == 2 and compactions[1][1] == "user"  # the case exercises what it says
    assert any("one | " in str(r["contents"]) for r in theirs["requests"][3:])
    _assert_same(theirs, ours)


def test_default_summarizer_asks_the_root_agents_model(gemini: StubServer) -> None:
    """No summarizer: an LlmEventSummarizer of the root agent's model is asked after
    turn 2; its answer is the summary the third request carries."""
    answers = [gemini_response("one"), gemini_response("two"), gemini_response("They said a and b."),
               gemini_response("three")]
    theirs, ours = run_both(DEFAULT_SUMMARIZER, answers, ["a", "b", "c"], gemini)
    assert [row[3] for row in theirs["stored"] if row[0] == "compaction"] == ["They said a and b."]
    _assert_same(theirs, ours)


def test_token_threshold_after_an_invocation_and_before_a_request(gemini: StubServer) -> None:
    """Threshold 500, retention 1: a model answer reporting 600 prompt tokens makes the
    next check summarize all raw events but the last: inside turn 2 before its next
    model request, and after turn 2 (its last answer reported 700) again, the new
    summary taking the first one over."""
    answers = [gemini_response("one", prompt_tokens=10),
               gemini_response(function_calls=[("get_weather", {"city": "Oslo"})], prompt_tokens=600),
               gemini_response("sunny", prompt_tokens=700), gemini_response("three", prompt_tokens=20)]
    theirs, ours = run_both(TOKENS, answers, ["a", "b", "c"], gemini)
    assert [row[0] for row in theirs["stored"]].count("compaction") == 2
    _assert_same(theirs, ours)


def test_token_summary_inside_an_invocation_is_not_yielded(gemini: StubServer) -> None:
    """google-adk appends a summary made before a model request inside an invocation to
    the session without yielding it: the caller sees the turn's events only."""
    answers = [gemini_response("one", prompt_tokens=10),
               gemini_response(function_calls=[("get_weather", {"city": "Oslo"})], prompt_tokens=600),
               gemini_response("sunny", prompt_tokens=20), gemini_response("three", prompt_tokens=20)]
    theirs, ours = run_both(TOKENS, answers, ["a", "b", "c"], gemini)
    assert [row[0] for row in theirs["stored"]].count("compaction") == 1  # the case exercises what it says
    for side in (theirs, ours):  # every stored event but the summary and the 3 messages was yielded
        assert len(side["events"]) == len([row for row in side["stored"] if row[0] != "compaction"]) - 3
    _assert_same(theirs, ours)


def test_without_a_compaction_config_nothing_is_summarized(gemini: StubServer) -> None:
    source = WINDOW.replace("events_compaction_config=EventsCompactionConfig(\n    summarizer=JoinSummarizer(), "
                            "compaction_interval=2, overlap_size=1)", "")
    theirs, ours = run_both(source, [gemini_response("one"), gemini_response("two"), gemini_response("three")],
                            ["a", "b", "c"], gemini)
    assert not any(row[0] == "compaction" for row in ours["stored"])
    _assert_same(theirs, ours)


CONFIGS = '''
from google.adk.apps.app import EventsCompactionConfig, ResumabilityConfig
from google.adk.events.ui_widget import UiWidget

async def main():
    out = []
    for kwargs in ({}, {"token_threshold": 5}, {"compaction_interval": 2}, {"compaction_interval": 0, "overlap_size": 0},
                   {"token_threshold": 1, "event_retention_size": 0}, {"compaction_interval": 1, "overlap_size": 0,
                                                                       "bogus": 1}):
        try:
            config = EventsCompactionConfig(**kwargs)
            out.append(("ok", config.model_dump()))
        except Exception as exc:
            out.append((type(exc).__name__, "must be set together" in str(exc)))
    out.append(ResumabilityConfig().model_dump())
    out.append(ResumabilityConfig(is_resumable=True).is_resumable)
    widget = UiWidget(id="w", provider="mcp")
    out.append(widget.model_dump(by_alias=True))
    out.append(UiWidget.model_validate({"id": "w", "provider": "mcp", "payload": {"resourceUri": "ui://x"}}).payload)
    try:
        UiWidget(id="w", provider="mcp", extra=1)
    except Exception as exc:
        out.append(type(exc).__name__)
    return out
'''


def test_configs_and_widget_check_as_google_adks(gemini: StubServer) -> None:
    _, theirs = run_program(CONFIGS, [], gemini)
    _, ours = run_program(rewritten(CONFIGS), [], gemini)
    assert ours == theirs


def test_resumable_app_is_accepted_and_runs(gemini: StubServer) -> None:
    source = WINDOW.replace("events_compaction_config=EventsCompactionConfig(\n    summarizer=JoinSummarizer(), "
                            "compaction_interval=2, overlap_size=1)",
                            "resumability_config=ResumabilityConfig(is_resumable=True)").replace(
        "from google.adk.apps.app import EventsCompactionConfig",
        "from google.adk.apps.app import EventsCompactionConfig\nfrom google.adk.apps import ResumabilityConfig")
    namespace, (seen, _) = run_program(rewritten(source), [gemini_response("one")], gemini, ["a"])
    assert namespace["app"].resumability_config.is_resumable is True
    assert [harness.event_rows(seen)[-1]["text"]] == ["one"]


def test_a_raising_summarizer_leaves_the_history_whole(gemini: StubServer) -> None:
    """google-adk's rule: a summarizer that fails is logged, the turn ends as usual and
    the next request carries the whole history."""
    source = WINDOW.replace("SUMMARIZED.append(texts)", "raise RuntimeError('no summary today')")
    theirs, ours = run_both(source, [gemini_response("one"), gemini_response("two"), gemini_response("three")],
                            ["a", "b", "c"], gemini)
    assert len(ours["requests"][-1]["contents"]) == 5
    _assert_same(theirs, ours)


def test_summary_replaces_compacted_events_in_a_direct_request() -> None:
    """The engine's own reading: a summary's range is left out of the request and the
    summary stands where it ends, as the agent's turn; our own Compaction is untouched."""
    from adk_actors import types
    from adk_actors._types import Compaction, Event, EventActions
    from adk_actors.engine._compaction_adk import request_events
    from adk_actors.events.event_actions import EventCompaction

    events = [Event(author="user", timestamp=1.0, content=types.Content.user("a")),
              Event(author="bot", timestamp=2.0, content=types.Content(role="model", parts=[types.Part(text="b")])),
              Event(author="user", timestamp=3.0, content=types.Content.user("c")),
              Event(author="user", timestamp=4.0, actions=EventActions(compaction=EventCompaction(
                  start_timestamp=1.0, end_timestamp=2.0,
                  compacted_content=types.Content(role="model", parts=[types.Part(text="S")]))))]
    out = request_events(events, "bot")
    assert [(e.author, e.content.text if e.content else None) for e in out] == [("bot", "S"), ("user", "c")]
    ours = [Event(author="bot", actions=EventActions(compaction=Compaction(message_count=1, summary="x")))]
    assert request_events(ours, "bot") is ours
    # read back from a store's JSON, a summary keeps google-adk's fields (in both spellings)
    for dump in (Event.model_dump_json, Event.to_json):
        stored = [Event.model_validate_json(dump(e)) for e in events]
        assert isinstance(stored[-1].actions.compaction, EventCompaction)
        assert [(e.author, e.content.text if e.content else None) for e in request_events(stored, "bot")] == [
            ("bot", "S"), ("user", "c")]
    # one a store kept without them (a Compaction of no messages and no summary) is left
    # out, and the history stays
    lost = [*events[:3], Event(author="user", timestamp=4.0, actions=EventActions(compaction=Compaction(
        message_count=0, summary="")))]
    assert [e.content.text if e.content else None for e in request_events(lost, "bot")] == ["a", "b", "c"]


TWO_APPS = HEAD + '''
compacting = App(name="compacting", root_agent=agent, events_compaction_config=EventsCompactionConfig(
    summarizer=JoinSummarizer(), token_threshold=500, event_retention_size=1))
plain = App(name="plain", root_agent=agent)
''' + MAIN.replace("async def main(turns):", "async def main(turns, app):\n    runner = InMemoryRunner(app=app)")


def test_one_root_agent_in_two_apps_keeps_each_apps_config(gemini: StubServer) -> None:
    """The config belongs to the App, not to its root agent: an app made later with the
    same agent and no config neither turns the first app's compaction off (the summary
    before the model request that follows a 600-token prompt) nor gets it."""
    source = rewritten(TWO_APPS)
    for app_name, summaries in (("compacting", 1), ("plain", 0)):
        program = source + f"\nasync def entry(turns):\n    return await main(turns, {app_name})\n"
        answers = [gemini_response(function_calls=[("get_weather", {"city": "Oslo"})], prompt_tokens=600),
                   gemini_response("sunny", prompt_tokens=20)]
        _, (_, stored) = run_program(program, answers, gemini, ["a"], entry="entry")
        assert [row[0] for row in stored_rows(stored)].count("compaction") == summaries, app_name
