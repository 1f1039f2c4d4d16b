"""google-adk's event compaction (``App(events_compaction_config=...)``) on our engine.

A google-adk summary is an event whose ``actions.compaction`` is an
``EventCompaction``: the raw events whose timestamps lie in its range are replaced in
later requests by its content. Our own ``Summarize`` compressor's ``Compaction``
events (``_flow_request.summarize_if_due``) are left as they are by everything here.

* :func:`request_events`: the events a request is built from, google-adk's summaries
  applied (the summary put where its range ends, as the agent's own turn);
* :func:`compact_before_request`: the token-threshold rule, before a model request;
* :func:`summary_after_invocation`: after an invocation, the token-threshold rule
  and, if it did not summarize, the sliding window; :func:`compact_after_invocation`
  (the in-process Runner) appends its summary to the session through the session
  service, a host's run worker hands it over as the run's last event.

The config is the App's ``events_compaction_config``, carried on the invocation's
context (``InvocationContext.events_compaction_config``) and read from there: nothing
here keeps state between runs. Summarizing: the config's summarizer (None: the
config's ``_default_summarizer``, an ``LlmEventSummarizer`` of the root agent's model,
kept on the config as google-adk does; a root agent with no model: ValueError, as
google-adk's); a summarizer that raises is logged and nothing is compacted, the full
history is used.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from .._prefix_scan import PrefixScan
from .._tree import inherited_model
from .._types import Content, Event, EventActions
from ..compiler import live_events
from ..events.event_actions import EventCompaction

__all__ = ["compact_after_invocation", "compact_before_request", "is_summary", "request_events",
           "summary_after_invocation"]

_log = logging.getLogger("adk_actors.compaction")

def _summary_of(event: Event) -> EventCompaction | None:
    compaction = event.actions.compaction
    return compaction if isinstance(compaction, EventCompaction) else None


def is_summary(event: Event) -> bool:
    """Whether ``event`` is a google-adk summary (its ``actions.compaction`` an
    ``EventCompaction``), not our ``Summarize`` compressor's."""
    return _summary_of(event) is not None


def _lost(event: Event) -> bool:
    compaction = event.actions.compaction
    return compaction is not None and not isinstance(compaction, EventCompaction) \
        and compaction.message_count == 0 and not compaction.summary


def _ranges(events: list[Event]) -> list[tuple[int, float, float]]:
    """The summaries no other summary's range contains, as (index, start, end), in
    session order; of two with one range, the later."""
    found = [(i, c.start_timestamp, c.end_timestamp) for i, e in enumerate(events)
             if (c := _summary_of(e)) is not None]
    kept = {i for i, start, end in found if math.isnan(start) or math.isnan(end)}
    widest: float | None = None
    for i, _, end in sorted((f for f in found if f[0] not in kept), key=lambda f: (f[1], -f[2], -f[0])):
        if widest is None or end > widest:
            kept.add(i)
            widest = end
    return [f for f in found if f[0] in kept]


#: Whether a session's events hold a compaction of either kind (its new events read only)
_has_compaction = PrefixScan(lambda event: event.actions.compaction is not None)


def request_events(events: list[Event], agent_name: str) -> list[Event]:
    """``events`` as a request reads them: each kept google-adk summary becomes an event
    of ``agent_name`` with the summary as content at its range's end; raw events in any
    kept range, and the summary events themselves, are left out; the rest in timestamp
    order. A summary a JSON store kept without its google-adk fields (a ``Compaction``
    of no messages and no summary: ours always have one) is left out, and the history
    it covered stays. ``events`` itself when it holds neither."""
    if not _has_compaction(events):
        return events
    if any(_lost(e) for e in events):
        events = [e for e in events if not _lost(e)]
    if not any(_summary_of(e) is not None for e in events):
        return events
    ranges = _ranges(events)
    spans: list[list[float]] = []
    for start, end in sorted((s, e) for _, s, e in ranges if s <= e):
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    items: list[tuple[float, int, Event]] = []
    for index, _, end in ranges:
        event = events[index]
        summary = _summary_of(event)
        assert summary is not None
        items.append((end, index, Event(timestamp=end, author=agent_name or "model", branch=event.branch,
                                        invocation_id=event.invocation_id, content=summary.compacted_content)))
    for index, event in enumerate(events):
        if _summary_of(event) is not None or any(s <= event.timestamp <= e for s, e in spans):
            continue
        items.append((event.timestamp, index, event))
    items.sort(key=lambda item: (item[0], item[1]))
    return [event for _, _, event in items]


def _request_size(events: list[Event]) -> int:
    total = 0
    for event in request_events(events, ""):
        if event.content is not None:
            total += len(event.content.model_dump_json(exclude_none=True))
    return total


def _worth_it(events: list[Event], chosen: list[Event]) -> bool:
    """Whether summarizing ``chosen`` could shrink the request by more than the last
    summary's size (an empty summary of the range priced against the history)."""
    stamps = [e.timestamp for e in chosen]
    empty = Event(author="model", actions=EventActions(compaction=EventCompaction(
        start_timestamp=min(stamps), end_timestamp=max(stamps), compacted_content=Content(role="model", parts=[]))))
    saved = _request_size(events) - _request_size([*events, empty])
    ranges = _ranges(events)
    last = 0
    if ranges:
        summary = _summary_of(events[ranges[-1][0]])
        assert summary is not None
        last = len(summary.compacted_content.model_dump_json(exclude_none=True))
    return saved > last


def _call_ids(event: Event) -> set[str]:
    return {c.id for c in event.get_function_calls() if c.id}


def _response_ids(event: Event) -> set[str]:
    return {r.id for r in event.get_function_responses() if r.id}


def _requested(event: Event) -> set[str]:
    return set(event.actions.requested_tool_confirmations) | set(event.actions.requested_auth_configs)


def _balanced_prefix(chosen: list[Event], everything: list[Event]) -> list[Event]:
    """The longest prefix of ``chosen`` that leaves no call or request open; a call
    that can never be answered (no response anywhere, not long-running, not of the
    newest invocation) does not hold it back."""

    def length(ignored: set[str]) -> int:
        open_ids: set[str] = set()
        safe = 0
        for index, event in enumerate(chosen):
            open_ids -= _response_ids(event)
            open_ids |= (_call_ids(event) | _requested(event)) - ignored
            if not open_ids:
                safe = index + 1
        return safe

    safe = length(set())
    if safe == len(chosen) or (safe > 0 and chosen[safe - 1].invocation_id != chosen[safe].invocation_id):
        return chosen[:safe]
    newest = next((e.invocation_id for e in reversed(everything)
                   if e.invocation_id and _summary_of(e) is None), None)
    protected: set[str] = set()
    answered: set[str] = set()
    for event in everything:
        if event.long_running_tool_ids:
            protected |= set(event.long_running_tool_ids)
        if not event.invocation_id or event.invocation_id == newest:
            protected |= _requested(event)
        answered |= _response_ids(event) - _requested(event)
    dead = {i for e in chosen if e.invocation_id != newest for i in _call_ids(e)} - protected - answered
    return chosen[:max(safe, length(dead))] if dead else chosen[:safe]


def _retention_split(candidates: list[Event], keep: int) -> int:
    """Where the kept tail begins: at most ``len - keep``, and never between a call and
    its response."""
    limit = len(candidates) - keep
    if limit <= 0:
        return 0
    unmatched: set[str] = set()
    for index in range(len(candidates) - 1, -1, -1):
        unmatched |= _response_ids(candidates[index])
        unmatched -= _call_ids(candidates[index])
        if not unmatched and index <= limit:
            return index
    return 0


def _text_size(content: Content | None) -> int:
    total = 0
    for part in content.parts if content is not None else ():
        total += len(part.text or "")
        if part.function_call is not None:
            total += len(part.function_call.name) + len(str(part.function_call.args or ""))
        if part.function_response is not None:
            total += len(part.function_response.name or "") + len(str(part.function_response.response or ""))
    return total


def _prompt_tokens(events: list[Event], agent_name: str) -> int | None:
    """The last prompt token count a model reported (of ``agent_name``'s calls when
    given) since the last summary; else the history's characters / 4 (None: empty)."""
    for event in reversed(events):
        if event.actions.compaction is not None:
            break
        usage = event.usage_metadata
        if usage is not None and usage.prompt_token_count is not None and (not agent_name
                                                                           or event.author == agent_name):
            return int(usage.prompt_token_count)
    chars = sum(_text_size(e.content) for e in request_events(events, agent_name) if not e.partial)
    return chars // 4 if chars > 0 else None


def _last_end(events: list[Event]) -> float:
    ranges = _ranges(events)
    return ranges[-1][2] if ranges else 0.0


def _token_range(events: list[Event], keep: int) -> list[Event]:
    """The raw events after the last summary but the last ``keep``, balanced; led by the
    last summary's content (so the new summary takes it over) when there is one."""
    since = _last_end(events)
    candidates = [e for e in events if e.actions.compaction is None and e.timestamp > since]
    if len(candidates) <= keep:
        return []
    chosen = candidates if keep == 0 else candidates[:_retention_split(candidates, keep)]
    chosen = _balanced_prefix(chosen, events)
    if not chosen:
        return []
    ranges = _ranges(events)
    if ranges:
        last = events[ranges[-1][0]]
        summary = _summary_of(last)
        assert summary is not None
        seed = Event(timestamp=summary.start_timestamp, author="model", content=summary.compacted_content,
                     branch=last.branch, invocation_id=Event.new_id())
        return [seed, *chosen]
    return chosen


def _window_range(events: list[Event], interval: int, overlap: int) -> list[Event]:
    """The sliding window's events (see ``EventsCompactionConfig``), balanced; none when
    fewer than ``interval`` invocations ended after the last summary."""
    since = next((c.end_timestamp for e in reversed(events) if (c := _summary_of(e)) is not None
                  and c.end_timestamp), 0.0)
    latest: dict[str, float] = {}
    for event in events:
        if event.invocation_id and event.actions.compaction is None:
            latest[event.invocation_id] = max(latest.get(event.invocation_id, 0.0), event.timestamp)
    order = list(latest)
    new = [i for i in order if latest[i] > since]
    if len(new) < interval:
        return []
    first = order[max(0, order.index(new[0]) - overlap)]
    begin = next(i for i, e in enumerate(events) if e.invocation_id == first)
    end = max(i for i, e in enumerate(events) if e.invocation_id == new[-1])
    chosen = [e for e in events[begin:end + 1] if e.actions.compaction is None]
    return _balanced_prefix(chosen, events)


def _summarizer(config: Any, root_agent: Any) -> Any:
    """The config's summarizer; None there: the config's default
    (``_default_summarizer``: an ``LlmEventSummarizer``) of the root agent's model,
    kept on the config. A root agent with no model, or a config with no default:
    ValueError."""
    if config.summarizer is None:
        model = inherited_model(root_agent, root_agent) if hasattr(root_agent, "model") else None
        default = getattr(config, "_default_summarizer", None)
        if not model or default is None:
            raise ValueError("No LlmAgent model available for event compaction summarizer.")
        config.summarizer = default(model)
    return config.summarizer


async def _summarize(config: Any, root_agent: Any, chosen: list[Event]) -> Event | None:
    summarizer = _summarizer(config, root_agent)
    try:
        event: Event | None = await summarizer.maybe_summarize_events(events=chosen)
    except Exception:
        _log.warning("event compaction failed; the full history is used", exc_info=True)
        return None
    return event


async def _token_compaction(config: Any, events: list[Event], root_agent: Any, agent_name: str) -> Event | None:
    if config is None or config.token_threshold is None or config.event_retention_size is None:
        return None
    events = list(live_events(events))
    tokens = _prompt_tokens(events, agent_name)
    if tokens is None or tokens < config.token_threshold:
        return None
    chosen = _token_range(events, config.event_retention_size)
    if not chosen or not _worth_it(events, chosen):
        return None
    return await _summarize(config, root_agent, chosen)


async def compact_before_request(agent: Any, config: Any, root_agent: Any, events: Sequence[Event]) -> Event | None:
    """The token-threshold rule of ``config`` (the invocation's
    ``events_compaction_config``) before ``agent``'s model request (counts of its own
    calls only): the summary event, or None (no config, under the threshold, nothing
    worth summarizing, or the summarizer gave none)."""
    if config is None:
        return None
    return await _token_compaction(config, list(events), root_agent, agent.name)


async def summary_after_invocation(config: Any, root_agent: Any, events: Sequence[Event]) -> Event | None:
    """After an invocation of ``root_agent`` ended, with ``config`` (an
    ``events_compaction_config``; None: nothing): the token-threshold rule, then (when
    it summarized nothing) the sliding window, over the live ones of the session's
    ``events``. The summary event to append, or None: nothing summarized (a summarizer
    that raised is logged). No summarizer and a root agent with no model: ValueError."""
    if config is None:
        return None
    summary = await _token_compaction(config, list(events), root_agent, "")
    if summary is None and config.compaction_interval is not None and config.overlap_size is not None:
        live = list(live_events(list(events)))
        chosen = _window_range(live, config.compaction_interval, config.overlap_size)
        if chosen and _worth_it(live, chosen):
            summary = await _summarize(config, root_agent, chosen)
    return summary


async def compact_after_invocation(app: Any, session_service: Any, session: Any) -> Event | None:
    """After an invocation of ``app`` ended (the in-process Runner): its
    ``events_compaction_config``'s :func:`summary_after_invocation` over ``session``'s
    events; a summary is appended to ``session`` through ``session_service`` and
    returned. None: nothing summarized."""
    summary = await summary_after_invocation(getattr(app, "events_compaction_config", None), app.root_agent,
                                             session.events)
    if summary is not None:
        await session_service.append_event(session, summary)
    return summary
