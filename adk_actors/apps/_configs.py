"""google-adk's app-wide configs (``google.adk.apps.app``): ``ResumabilityConfig`` and
``EventsCompactionConfig``, with google-adk's fields, defaults and checks. What they
do here: ``adk_actors.apps.app.App`` and ``engine._compaction_adk``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .base_events_summarizer import BaseEventsSummarizer
from .llm_event_summarizer import LlmEventSummarizer

__all__ = ["EventsCompactionConfig", "ResumabilityConfig"]


class ResumabilityConfig(BaseModel):
    """``is_resumable`` (default False): whether the app's invocations can be paused
    on a long-running call and resumed (see ``App`` for what it maps to here)."""

    is_resumable: bool = False


class EventsCompactionConfig(BaseModel):
    """When and how a session's older events are summarized (google-adk's fields):

    * ``compaction_interval`` with ``overlap_size``: the sliding window. Once this many
      new invocations have ended since the last summary, the events from
      ``overlap_size`` invocations before the first new one up to the last new one are
      summarized (after the invocation, by the Runner);
    * ``token_threshold`` with ``event_retention_size``: once the last prompt's token
      count reaches the threshold, all but the last ``event_retention_size`` raw events
      are summarized (before a model request, and after an invocation);
    * ``summarizer``: who summarizes (None: an ``LlmEventSummarizer`` of the root
      agent's model, made by :meth:`_default_summarizer` when first needed and kept
      here, as google-adk does).

    Each pair is set together and at least one pair is set: a ValueError otherwise,
    as google-adk's."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    summarizer: BaseEventsSummarizer | None = None
    compaction_interval: int | None = Field(default=None, gt=0)
    overlap_size: int | None = Field(default=None, ge=0)
    token_threshold: int | None = Field(default=None, gt=0)
    event_retention_size: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _pairs(self) -> EventsCompactionConfig:
        tokens = self.token_threshold is not None
        if tokens != (self.event_retention_size is not None):
            raise ValueError("token_threshold and event_retention_size must be set together.")
        window = self.compaction_interval is not None
        if window != (self.overlap_size is not None):
            raise ValueError("compaction_interval and overlap_size must be set together.")
        if not (tokens or window):
            raise ValueError("At least one compaction trigger must be configured: token_threshold with "
                             "event_retention_size, or compaction_interval with overlap_size.")
        return self

    def _default_summarizer(self, model: object) -> BaseEventsSummarizer:
        """The summarizer used when ``summarizer`` is None: an ``LlmEventSummarizer``
        of ``model`` (the engine calls it with the root agent's model)."""
        return LlmEventSummarizer(model)
