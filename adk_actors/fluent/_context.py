"""``C``: what an agent sees of the conversation, in adk-fluent's words.

A context spec sets the agent's ``include_contents`` and, for most specs, adds a
``<conversation_context>`` block to its instruction, rendered per request from the
session: events as ``[author]: text`` lines (text parts only, joined by a newline),
state keys as ``[key]: value`` lines. ``a + b`` unions specs: history is left out
if any part leaves it out, and the parts' texts are joined by a newline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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

    last_n_turns = window

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
    def when(predicate: Callable[[Mapping[str, Any]], Any] | str, block: CTransform) -> CTransform:
        """``block``'s text only while ``predicate`` holds on the state."""
        inner = block.render

        def render(ctx: CompileContext) -> str:
            return inner(ctx) if inner is not None and holds(predicate, ctx.state) else ""

        return CTransform(block.include_contents, render if inner is not None else None, block.reads)
