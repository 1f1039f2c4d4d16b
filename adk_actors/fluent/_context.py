"""``C``: what an agent sees of the conversation, in adk-fluent's words.

A context spec sets the agent's ``include_contents`` and, for most specs, adds a
``<conversation_context>`` block to its instruction, rendered per request from the
session: events as ``[author]: text`` lines (text parts only, joined by a newline),
state keys as ``[key]: value`` lines. ``a + b`` unions specs: history is left out
if any part leaves it out, and the parts' texts are joined by a newline. ``a | b``
pipes: ``b`` reads ``a``'s text as one event of author ``context``.

The specs that filter or shorten the history (``select`` ... ``fit``) are adk-fluent's,
with its rules (a token is four characters, as its estimate); the ones that ask a
model (``summarize``, ``relevant``, ``extract``, ``distill``, ``validate``, semantic
``dedup``, ``rolling(summarize=True)``, ``fit`` but ``strict``) are not offered: each
is a ValueError saying so.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from .._types import Content, Event, Part
from ..compiler import CompileContext
from ._prompt import holds, render_template, template_keys

__all__ = ["C", "CTransform", "events_as_lines"]

Render = Callable[[CompileContext], str]


def events_as_lines(events: Sequence[Any]) -> str:
    """``[author]: text`` per event that has text (its text parts joined by a newline)."""
    lines = []
    for event in events:
        texts = [p.text for p in (event.content.parts if event.content is not None else ()) if p.text]
        if texts:
            lines.append(f"[{event.author}]: " + "\n".join(texts))
    return "\n".join(lines)


def _window(events: Sequence[Any], n: int) -> list[Any]:
    starts = [i for i, e in enumerate(events) if e.author == "user"]
    if not starts:
        return []
    return list(events[starts[0] if len(starts) <= n else starts[-n]:])


@dataclass(frozen=True)
class CTransform:
    """A context spec: ``include_contents`` and what it adds to the instruction
    (``render``: None adds nothing); ``reads`` are the state keys it needs."""

    include_contents: Literal["default", "none"]
    render: Render | None = None
    reads: frozenset[str] = frozenset()

    def __add__(self, other: CTransform) -> CTransform:
        if not isinstance(other, CTransform):
            return NotImplemented
        renders = [r for r in (self.render, other.render) if r is not None]

        def both(ctx: CompileContext) -> str:
            return "\n".join(text for text in (r(ctx) for r in renders) if text)

        none = "none" in (self.include_contents, other.include_contents)
        return CTransform("none" if none else "default", both if renders else None, self.reads | other.reads)

    def __or__(self, other: CTransform) -> CTransform:
        """``other`` applied to this spec's text (adk-fluent's pipe): nothing when this
        spec renders nothing; this spec's text when ``other`` renders nothing."""
        if not isinstance(other, CTransform):
            return NotImplemented
        source, transform = self.render, other.render

        def piped(ctx: CompileContext) -> str:
            text = source(ctx) if source is not None else ""
            if not text or transform is None:
                return text
            return transform(replace(ctx, events=(Event(author="context", content=Content(
                role="model", parts=(Part(text=text),))),)))

        none = "none" in (self.include_contents, other.include_contents)
        return CTransform("none" if none else "default", piped, self.reads | other.reads)


def _text(event: Any) -> str:
    return "\n".join(p.text for p in (event.content.parts if event.content is not None else ()) if p.text)


def _calls(event: Any) -> bool:
    return event.content is not None and bool(event.content.function_calls)


def _answers(event: Any) -> bool:
    return event.content is not None and bool(event.content.function_responses)


def _synthetic(author: str, text: str) -> Event:
    return Event(author=author, content=Content(role="model", parts=(Part(text=text),)))


def _deduped(events: Sequence[Any], structural: bool = False) -> list[Any]:
    seen: set[str] = set()
    kept = []
    for event in events:
        key = " ".join(_text(event).split()) if structural else _text(event)
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(event)
    return kept


def _compacted(events: Sequence[Any]) -> list[Any]:
    """Each run of tool calls and answers as one ``[tool calls: n interactions]`` event."""
    kept: list[Any] = []
    i = 0
    while i < len(events):
        if not _calls(events[i]):
            kept.append(events[i])
            i += 1
            continue
        count = 0
        while i < len(events) and (_calls(events[i]) or _answers(events[i])):
            count, i = count + 1, i + 1
        kept.append(_synthetic("tool", f"[tool calls: {count} interactions]"))
    return kept


def _merged(events: Sequence[Any]) -> list[Any]:
    """Consecutive events of one author as one (their texts joined by a newline)."""
    kept: list[Any] = []
    i = 0
    while i < len(events):
        author, texts = events[i].author, []
        while i < len(events) and events[i].author == author:
            if _text(events[i]):
                texts.append(_text(events[i]))
            i += 1
        if texts:
            kept.append(_synthetic(author or "unknown", "\n".join(texts)))
    return kept


def _newest_fitting(events: Sequence[Any], chars: int) -> list[Any]:
    """The newest events whose ``[author]: text`` lines fit in ``chars``."""
    kept: list[Any] = []
    total = 0
    for event in reversed(events):
        size = len(f"[{event.author}]: {_text(event)}\n")
        if total + size > chars:
            break
        kept.append(event)
        total += size
    return kept[::-1]


def _names(value: str | tuple[str, ...] | None) -> set[str] | None:
    return None if value is None else ({value} if isinstance(value, str) else set(value))


def _asks_a_model(what: str) -> ValueError:
    return ValueError(f"C.{what} asks a model to read the conversation, which this builder does not offer")


class C:
    """Context specs (adk-fluent's ``C``)."""

    @staticmethod
    def none() -> CTransform:
        """No history: the model sees the current turn only."""
        return CTransform("none")

    @staticmethod
    def default() -> CTransform:
        return CTransform("default")

    @staticmethod
    def user_only() -> CTransform:
        """Every user message, and no other history."""
        return CTransform("none", lambda ctx: events_as_lines([e for e in ctx.events if e.author == "user"]))

    @staticmethod
    def window(n: int = 5) -> CTransform:
        """The events from the n-th last user message on (the current one included)."""
        if n < 1:
            raise ValueError("C.window(n) needs n >= 1")
        return CTransform("none", lambda ctx: events_as_lines(_window(ctx.events, n)))

    @staticmethod
    def last_n_turns(n: int) -> CTransform:
        return C.window(n=n)

    @staticmethod
    def from_agents(*names: str) -> CTransform:
        """The user's messages and those of the named agents."""
        authors = {*names, "user"}
        return CTransform("none", lambda ctx: events_as_lines([e for e in ctx.events if e.author in authors]))

    @staticmethod
    def exclude_agents(*names: str) -> CTransform:
        authors = set(names)
        return CTransform("none", lambda ctx: events_as_lines([e for e in ctx.events if e.author not in authors]))

    @staticmethod
    def from_state(*keys: str) -> CTransform:
        """``[key]: value`` per key set (None values left out); history kept."""
        def render(ctx: CompileContext) -> str:
            return "\n".join(f"[{key}]: {ctx.state[key]}" for key in keys if ctx.state.get(key) is not None)

        return CTransform("default", render, frozenset(keys))

    @staticmethod
    def template(text: str) -> CTransform:
        """``text`` with ``{key}`` from state (a missing required key is an error
        raised when the request is compiled)."""
        return CTransform("default", lambda ctx: render_template(text, ctx.state, strict=True),
                          frozenset(template_keys(text)[0]))

    @staticmethod
    def pipeline_aware(*keys: str) -> CTransform:
        """The user's messages, a blank line, and the state ``keys`` (as ``from_state``)."""
        users, state = C.user_only().render, C.from_state(*keys).render

        def render(ctx: CompileContext) -> str:
            return "\n\n".join(text for text in (users(ctx) if users else "", state(ctx) if keys and state else "")
                                 if text)

        return CTransform("none", render, frozenset(keys))

    @staticmethod
    def user(*, strategy: str = "all") -> CTransform:
        """The user's messages: ``all``, the ``first``, the ``last``, or ``bookend`` (first and last)."""
        def render(ctx: CompileContext) -> str:
            mine = [e for e in ctx.events if e.author == "user"]
            chosen = {"first": mine[:1], "last": mine[-1:],
                      "bookend": mine if len(mine) <= 2 else [mine[0], mine[-1]]}.get(strategy, mine)
            return events_as_lines(chosen)

        return CTransform("none", render)

    @staticmethod
    def from_agents_windowed(**agent_windows: int) -> CTransform:
        """The user's messages, then each named agent's last n events (0: all)."""
        def render(ctx: CompileContext) -> str:
            parts = [events_as_lines([e for e in ctx.events if e.author == "user"])]
            for agent, n in agent_windows.items():
                theirs = [e for e in ctx.events if e.author == agent]
                parts.append(events_as_lines(theirs[-n:] if n > 0 else theirs))
            return "\n".join(part for part in parts if part)

        return CTransform("none", render)

    @staticmethod
    def select(*, author: str | tuple[str, ...] | None = None, type: str | tuple[str, ...] | None = None,
               tag: str | tuple[str, ...] | None = None) -> CTransform:
        """The events of these authors, of these kinds (``message``, ``tool_call``,
        ``tool_response``), with one of these tags (an event's ``tags``)."""
        authors, kinds, tags = _names(author), _names(type), _names(tag)

        def wanted(event: Any) -> bool:
            if authors is not None and event.author not in authors:
                return False
            if kinds is not None and not (("message" in kinds and _text(event)) or ("tool_call" in kinds and _calls(event))
                                          or ("tool_response" in kinds and _answers(event))):
                return False
            return tags is None or bool(tags & set(getattr(event, "tags", None) or ()))

        return CTransform("none", lambda ctx: events_as_lines([e for e in ctx.events if wanted(e)]))

    @staticmethod
    def recent(*, decay: str = "exponential", half_life: int = 10, min_weight: float = 0.1) -> CTransform:
        """The events whose weight by age (the newest 1.0, halving every ``half_life``
        events, or falling linearly to 0 at twice that) is at least ``min_weight``."""
        def weight(age: int) -> float:
            if decay == "linear":
                return max(1.0 - age / max(half_life * 2, 1), 0.0)
            return math.exp(-0.693 * age / max(half_life, 1))

        def render(ctx: CompileContext) -> str:
            n = len(ctx.events)
            return events_as_lines([e for i, e in enumerate(ctx.events) if weight(n - 1 - i) >= min_weight])

        return CTransform("none", render)

    @staticmethod
    def compact(*, strategy: str = "tool_calls") -> CTransform:
        """``tool_calls``: each run of tool calls and answers as one line; else
        consecutive events of one author as one."""
        shorten = _compacted if strategy == "tool_calls" else _merged
        return CTransform("none", lambda ctx: events_as_lines(shorten(ctx.events)))

    @staticmethod
    def dedup(*, strategy: str = "exact", model: str = "") -> CTransform:
        """An event whose text came before (``structural``: the same words) left out."""
        if strategy == "semantic":
            raise _asks_a_model("dedup(strategy='semantic')")
        return CTransform("none", lambda ctx: events_as_lines(_deduped(ctx.events, strategy == "structural")))

    @staticmethod
    def truncate(*, max_turns: int | None = None, max_tokens: int | None = None, strategy: str = "tail") -> CTransform:
        """The last (``tail``) or first (``head``) ``max_turns`` turns, then at most
        ``max_tokens`` tokens of their text, cut from the same end."""
        def render(ctx: CompileContext) -> str:
            events = list(ctx.events)
            if max_turns is not None:
                starts = [i for i, e in enumerate(events) if e.author == "user"]
                if strategy == "tail":
                    kept = starts[-max_turns:] if len(starts) > max_turns else starts
                    events = events[kept[0] if kept else 0:]
                elif starts[:max_turns] and len(starts) > max_turns:
                    events = events[:starts[max_turns]]
            text = events_as_lines(events)
            if max_tokens is not None and len(text) // 4 > max_tokens:
                return text[-max_tokens * 4:] if strategy == "tail" else text[:max_tokens * 4]
            return text

        return CTransform("none", render)

    @staticmethod
    def project(*fields: str) -> CTransform:
        """Per event, only these of its fields: ``text``, ``author``, ``function_call``,
        ``function_response`` (their names) or another attribute, joined by `` | ``."""
        def shown(event: Any) -> list[str]:
            out: list[str] = []
            for field in fields:
                if field == "text":
                    out += [_text(event)] if _text(event) else []
                elif field == "author":
                    out.append(f"author={event.author}")
                elif field in ("function_call", "function_response") and event.content is not None:
                    for part in event.content.parts:
                        value = getattr(part, field)
                        if value is not None:
                            out.append(f"{'call' if field == 'function_call' else 'response'}={value.name}")
                elif field not in ("function_call", "function_response") and getattr(event, field, None) is not None:
                    out.append(f"{field}={getattr(event, field)}")
            return out

        return CTransform("none", lambda ctx: "\n".join(
            f"[{e.author}]: {' | '.join(items)}" for e in ctx.events if (items := shown(e))))

    @staticmethod
    def budget(*, max_tokens: int = 8000, overflow: str = "truncate_oldest") -> CTransform:
        """The history's text, cut to ``max_tokens`` tokens from its oldest end (or its
        newest: ``truncate_newest``)."""
        def render(ctx: CompileContext) -> str:
            text = events_as_lines(ctx.events)
            if len(text) // 4 <= max_tokens:
                return text
            return text[:max_tokens * 4] if overflow == "truncate_newest" else text[-max_tokens * 4:]

        return CTransform("none", render)

    @staticmethod
    def fit(*, max_tokens: int = 4000, strategy: str = "strict", model: str = "") -> CTransform:
        """``strict``: the newest events that fit in ``max_tokens`` tokens, whole."""
        if strategy != "strict":
            raise _asks_a_model(f"fit(strategy={strategy!r})")
        return CTransform("none", lambda ctx: events_as_lines(_newest_fitting(ctx.events, max_tokens * 4)))

    @staticmethod
    def fresh(*, max_age: float = 3600.0, stale_action: str = "drop",
              clock: Callable[[], float] = time.time) -> CTransform:
        """The events at most ``max_age`` seconds old (``stale_action="drop"``; any
        other action keeps them)."""
        def render(ctx: CompileContext) -> str:
            now = clock()
            return events_as_lines([e for e in ctx.events if not (now - e.timestamp > max_age and stale_action == "drop")])

        return CTransform("none", render)

    @staticmethod
    def redact(*patterns: str, replacement: str = "[REDACTED]") -> CTransform:
        """The history's text with every match of these regular expressions replaced."""
        compiled = [re.compile(p) for p in patterns]

        def render(ctx: CompileContext) -> str:
            text = events_as_lines(ctx.events)
            for pattern in compiled:
                text = pattern.sub(replacement, text)
            return text

        return CTransform("none", render)

    @staticmethod
    def rolling(n: int = 5, *, summarize: bool = False, model: str = "") -> CTransform:
        """The last ``n`` turns (``summarize``, which asks a model, is not offered)."""
        if summarize:
            raise _asks_a_model("rolling(summarize=True)")
        return C.window(n=n)

    @staticmethod
    def priority(*, tier: int = 2) -> CTransform:
        """A priority tier for adk-fluent's context ordering: it changes nothing here either."""
        return CTransform("default")

    @staticmethod
    def when(predicate: Callable[[Mapping[str, Any]], Any] | str, block: CTransform) -> CTransform:
        """``block``'s text only while ``predicate`` holds on the state."""
        inner = block.render

        def render(ctx: CompileContext) -> str:
            return inner(ctx) if inner is not None and holds(predicate, ctx.state) else ""

        return CTransform(block.include_contents, render if inner is not None else None, block.reads)
