"""An App with google-adk's event compaction, for tests/test_compaction_host.py."""

from __future__ import annotations

from typing import Any

from adk_actors.agents import LlmAgent
from adk_actors.apps import App
from adk_actors.apps.app import EventsCompactionConfig
from adk_actors.apps.base_events_summarizer import BaseEventsSummarizer
from adk_actors.events.event import Event
from adk_actors.events.event_actions import EventActions, EventCompaction
from adk_actors.models import Gemini
from adk_actors.types import Content, Part


class JoinSummarizer(BaseEventsSummarizer):
    """Summarizes by joining the texts it is given, as ``summary: a | b`` (no model call)."""

    async def maybe_summarize_events(self, *, events: list[Any]) -> Event | None:
        texts = [e.content.text for e in events if e.content is not None and e.content.text]
        return Event(author="user", invocation_id=Event.new_id(), actions=EventActions(compaction=EventCompaction(
            start_timestamp=events[0].timestamp, end_timestamp=events[-1].timestamp,
            compacted_content=Content(role="model", parts=[Part(text="summary: " + " | ".join(texts))]))))


compacting_app = App(root_agent=LlmAgent(name="helper", instruction="Be brief.",
                                         model=Gemini(model="gemini-2.5-flash")),
                     events_compaction_config=EventsCompactionConfig(summarizer=JoinSummarizer(),
                                                                     compaction_interval=1, overlap_size=0))
