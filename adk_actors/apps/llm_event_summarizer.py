"""google-adk's ``LlmEventSummarizer`` (``google.adk.apps.llm_event_summarizer``): the
summarizer compaction uses unless one is given, a model asked for the summary."""

from __future__ import annotations

from typing import Any

from .._types import Content, Event, EventActions, LlmRequest, LlmResponse, Part
from ..events.event_actions import EventCompaction
from .base_events_summarizer import BaseEventsSummarizer

__all__ = ["LlmEventSummarizer"]

_PROMPT = (
    "Below is a conversation between a user and an AI agent; it may begin with a summary of "
    "earlier turns. Write a summary the agent can continue from: first the language the user "
    "writes in (as 'Conversation Language: ...'), then what the user asked for, the decisions "
    "made and facts found so far, every tool the agent called (by its exact name), and what is "
    "still open. Be brief.\n\n{conversation_history}"
)

_MAX_TOOL_CHARS = 2000


def _capped(text: str) -> str:
    extra = len(text) - _MAX_TOOL_CHARS
    return text if extra <= 0 else f"{text[:_MAX_TOOL_CHARS]}... [{extra} more characters]"


async def _responses(llm: Any, request: LlmRequest) -> Any:
    """What ``llm`` answers to ``request``: a google-adk model
    (``generate_content_async``), ours (``generate``), or a model name resolved by
    ``adk_actors.models.resolve_model``; google-adk's model classes through their
    connector."""
    if isinstance(llm, str):
        from ..models import resolve_model

        llm = resolve_model(llm)
    if hasattr(llm, "connector"):
        llm = llm.connector()
    if hasattr(llm, "generate"):
        async for response in llm.generate(request, stream=False):
            yield response
        return
    async for response in llm.generate_content_async(request, stream=False):
        yield response


class LlmEventSummarizer(BaseEventsSummarizer):
    """Summarizes events with ``llm`` (a model object or name). ``prompt_template``
    (None: ours) has a ``{conversation_history}`` placeholder: the events' texts,
    thoughts (not a summary's), tool calls and tool responses (each capped at 2,000
    characters), one a line, as ``author: text``; credential requests are left out."""

    def __init__(self, llm: Any, prompt_template: str | None = None) -> None:
        self._llm = llm
        self._prompt_template = prompt_template or _PROMPT

    def _format_events_for_prompt(self, events: list[Event]) -> str:
        lines: list[str] = []
        for event in events:
            content = event.content
            if content is None or not content.parts or event.actions.requested_auth_configs:
                continue
            summary = event.actions.compaction is not None
            for part in content.parts:
                if part.text and part.thought:
                    if not summary:
                        lines.append(f"{event.author} (thought): {part.text}")
                elif part.text:
                    lines.append(f"{event.author}: {part.text}")
                if part.function_call is not None:
                    lines.append(f"{event.author} called tool: {part.function_call.name}"
                                 f"({_capped(str(part.function_call.args))})")
                if part.function_response is not None:
                    lines.append(f"Tool response from {part.function_response.name}: "
                                 f"{_capped(str(part.function_response.response))}")
        return "\n".join(lines)

    async def maybe_summarize_events(self, *, events: list[Any]) -> Event | None:
        """In order: no events give None; the prompt made from them is sent to the model
        (no streaming); its first answer with content is the summary (its role set to
        ``model``), none gives None; the summary event is authored ``user``, has a new
        invocation id, the answer's usage and an ``EventCompaction`` from the first
        event's timestamp to the last's. What the model raises propagates."""
        if not events:
            return None
        prompt = self._prompt_template.format(conversation_history=self._format_events_for_prompt(events))
        model = self._llm if isinstance(self._llm, str) else getattr(self._llm, "model", "")
        request = LlmRequest(model=model if isinstance(model, str) else "",
                             contents=[Content(role="user", parts=[Part(text=prompt)])])
        answer: LlmResponse | None = None
        async for response in _responses(self._llm, request):
            if response.content is not None and not response.partial:
                answer = response
                break
        if answer is None or answer.content is None:
            return None
        summary = answer.content.model_copy(update={"role": "model"})
        compaction = EventCompaction(start_timestamp=events[0].timestamp, end_timestamp=events[-1].timestamp,
                                     compacted_content=summary)
        return Event(author="user", actions=EventActions(compaction=compaction), invocation_id=Event.new_id(),
                     usage_metadata=answer.usage_metadata)
