"""The executor's session as the advisor reads it
(:class:`ModelConsultContextConfig`, :func:`build_advisor_contents`).

Each event kept becomes text lines any model can read: ``[user] ...`` and
``[agent:<name>] ...`` for what was said, ``[thought] ...`` (only with
``include_thoughts``), ``[tool_call] name({json args})``, ``[tool_result] name -> {json}``,
``[code]`` and ``[code_result]`` for code; inline media and files pass as they are
(or as a ``[media omitted: <type>]`` / ``[file omitted: <uri>]`` line without
``include_media``). A tool payload is cut at ``max_part_chars`` characters, text at
eight times that, each cut saying how many characters went. Over ``max_chars``, whole
turns go from the middle (the first turns, up to a quarter of the budget, and the
newest stay), a line saying how many went takes their place, and the newest turn is
cut down if it alone does not fit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..._types import Content, Event, Part
from ...compiler._contents import live_events

__all__ = ["ModelConsultContextConfig", "build_advisor_contents"]

_TEXT_FACTOR = 8
_DROPPED = "[... {n} earlier turn(s) omitted to fit the context budget ...]"


class ModelConsultContextConfig(BaseModel):
    """How much of the executor's session the advisor gets (google-adk's fields and
    defaults; an unknown field or a bound broken is pydantic's ValidationError)."""

    model_config = ConfigDict(extra="forbid")

    #: send the session's events (False: only the instruction, the tool list, the question)
    include_session: bool = True
    #: only the newest this many events (counted before anything is filtered out); None: all
    max_events: int | None = Field(default=None, ge=1)
    #: the handover's character budget (None: no budget)
    max_chars: int | None = Field(default=200_000, ge=1)
    #: the cap on one tool call, tool result or code part; text gets eight times this
    max_part_chars: int = Field(default=4_000, ge=1)
    #: pass inline images and audio on (False: a line naming each instead)
    include_media: bool = True
    #: include the executor's thought parts
    include_thoughts: bool = False


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, a note of how many went included."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    room = limit - len(f"\n[... {len(text)} characters truncated ...]")
    if room <= 0:
        return text[:limit]
    return f"{text[:room]}\n[... {len(text) - room} characters truncated ...]"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _media_line(part: Part, why: str) -> str:
    if part.file_data is not None:
        return f"[file {why}: {part.file_data.file_uri}]"
    mime = (part.inline_data.mime_type if part.inline_data is not None else None) or "unknown"
    return f"[media {why}: {mime}]"


def _as_text(part: Part, config: ModelConsultContextConfig, skipped: frozenset[str], author: str | None
             ) -> Part | None:
    """One part as the advisor reads it, or None when it carries nothing for it."""
    if part.thought and not config.include_thoughts:
        return None
    cap = config.max_part_chars
    if part.function_call is not None:
        call = part.function_call
        if call.id and call.id in skipped:
            return None
        rendered = _cut(_json(call.args), cap) if call.args else ""
        return Part(text=f"[tool_call] {call.name}({rendered})")
    if part.function_response is not None:
        answer = part.function_response
        if answer.id and answer.id in skipped:
            return None
        body = answer.response
        rendered = "" if body is None else _cut(body if isinstance(body, str) else _json(body), cap)
        return Part(text=f"[tool_result] {answer.name} -> {rendered}")
    if part.text is not None:
        text = _cut(part.text, cap * _TEXT_FACTOR)
        if not text.strip():
            return None
        if part.thought:
            return Part(text=f"[thought] {text}")
        who = "user" if author == "user" else (f"agent:{author}" if author else "agent")
        return Part(text=f"[{who}] {text}")
    if part.inline_data is not None or part.file_data is not None:
        return part if config.include_media else Part(text=_media_line(part, "omitted"))
    if part.executable_code is not None:
        return Part(text=f"[code]\n{_cut(part.executable_code.code or '', cap)}")
    if part.code_execution_result is not None:
        return Part(text=f"[code_result] {_cut(part.code_execution_result.output or '', cap)}")
    return None


def _size(part: Part) -> int:
    if part.text:
        return len(part.text)
    if part.inline_data is not None and part.inline_data.data:
        return len(part.inline_data.data) // 4
    return 0


def _turn_size(turn: list[Part]) -> int:
    return sum(_size(p) for p in turn)


def _trim_turn(turn: list[Part], limit: int) -> list[Part]:
    """``turn`` cut down to ``limit``: texts cut, media that does not fit named instead."""
    kept: list[Part] = []
    used = 0
    for part in turn:
        if used >= limit:
            break
        if part.text is not None:
            kept.append(Part(text=_cut(part.text, limit - used)))
            used += len(part.text)
        elif _size(part) <= limit - used:
            kept.append(part)
            used += _size(part)
        else:
            line = _cut(_media_line(part, "omitted to fit the context budget"), limit - used)
            if line:
                kept.append(Part(text=line))
                used += len(line)
    return kept


def _within_budget(turns: list[list[Part]], budget: int | None) -> list[list[Part]]:
    """The turns within ``budget`` characters (see the module)."""
    if budget is None or not turns:
        return turns
    sizes = [_turn_size(t) for t in turns]
    if sum(sizes) <= budget:
        return turns
    head: list[list[Part]] = []
    head_used = 0
    for turn, size in zip(turns, sizes, strict=True):
        if head_used + size > budget // 4:
            break
        head.append(turn)
        head_used += size
    room = max(budget - head_used - len(_DROPPED), 0)
    tail: list[list[Part]] = []
    tail_used = 0
    for turn, size in zip(reversed(turns[len(head):]), reversed(sizes[len(head):]), strict=True):
        if tail and tail_used + size > room:
            break
        tail.append(turn)
        tail_used += size
    tail.reverse()
    dropped = len(turns) - len(head) - len(tail)
    marker = [Part(text=_DROPPED.format(n=dropped))] if dropped else None
    newest = tail[-1]
    fixed = head_used + tail_used - _turn_size(newest)
    if marker is not None:
        if budget - fixed - _turn_size(marker) <= 0:
            marker = None  # no room for both: the newest turn is what the advisor is asked about
        else:
            fixed += _turn_size(marker)
    kept = head + ([marker] if marker is not None else []) + tail
    if budget - fixed < _turn_size(newest):
        kept[-1] = _trim_turn(newest, max(budget - fixed, 0))
    return [t for t in kept if t]


def build_advisor_contents(events: Sequence[Event], *, config: ModelConsultContextConfig | None = None,
                           skip_function_call_ids: Sequence[str] = ()) -> list[Content]:
    """The session's ``events`` (oldest first) as one user Content for the advisor, or
    [] when nothing is left (or ``include_session`` is off). Events a rewind took back
    and partial events are left out, then all but the newest ``max_events``; calls and
    results of ``skip_function_call_ids`` are left out; then the budget (the module)."""
    config = config or ModelConsultContextConfig()
    if not config.include_session:
        return []
    skipped = frozenset(i for i in skip_function_call_ids if i)
    kept = [e for e in live_events(list(events)) if not e.partial]
    if config.max_events is not None:
        kept = kept[-config.max_events:]
    turns: list[list[Part]] = []
    for event in kept:
        if event.content is None or not event.content.parts:
            continue
        parts = [p for p in (_as_text(part, config, skipped, event.author) for part in event.content.parts)
                 if p is not None]
        if parts:
            turns.append(parts)
    merged = [p for turn in _within_budget(turns, config.max_chars) for p in turn]
    return [Content(role="user", parts=merged)] if merged else []
