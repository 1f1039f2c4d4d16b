"""google-adk's ``BaseEventsSummarizer`` (``google.adk.apps.base_events_summarizer``):
what an ``EventsCompactionConfig(summarizer=...)`` is, the thing that turns a run of
events into one compaction event."""

from __future__ import annotations

import abc
from typing import Any

__all__ = ["BaseEventsSummarizer"]


class BaseEventsSummarizer(abc.ABC):
    """A summarizer of events: subclasses write :meth:`maybe_summarize_events`."""

    @abc.abstractmethod
    async def maybe_summarize_events(self, *, events: list[Any]) -> Any:
        """The events given, in session order, as one new event whose
        ``actions.compaction`` is an ``EventCompaction`` (the range's first and last
        timestamps and the summary as content); None when nothing was summarized (the
        session then keeps its full history). What it raises is logged and the
        compaction skipped, as google-adk does."""
        raise NotImplementedError
