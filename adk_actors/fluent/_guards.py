"""``G``: adk-fluent's guards, checks on what a model is asked and what it answers,
joined with ``|`` and put on an agent with ``.guard(...)``.

``Agent.guard(G.json() | G.length(max=500) | G.pii("redact"))`` compiles the chain
into one ``before_model`` callback (the guards on the request) and one
``after_model`` callback (the guards on the answer), so every guard of the chain
runs, in order, each on the answer as the guards before it left it (a redaction
first, then the length of the redacted text). A guard that blocks raises
:class:`GuardViolation` (``[kind] detail``): the run fails with it, and nothing of
the blocked answer is stored. A redacting guard replaces the matched text.

Streaming: guards judge the final answer (our engine runs ``after_model`` on it, not
on each partial chunk as google-adk does), so with SSE streaming a client may see a
chunk a guard would have redacted or blocked. For streamed text, give the app an
output policy (``App(policies=[...])``: it filters a stream as a whole, holding back
what a match could still cover) or leave streaming off.

Guards (adk-fluent's names and arguments): ``json()``, ``length(min=, max=)``,
``regex(pattern, action="block"|"redact", replacement="[REDACTED]")``,
``output(Model)`` (the answer is JSON of that schema), ``input(Model)`` and
``rate_limit(rpm)`` (advisory: they check nothing, as adk-fluent's), ``budget
(max_tokens)`` (the tokens of one invocation's model calls), ``max_turns(n)`` (at
most ``n`` user turns in the session), ``pii(action="redact"|"block", detector=None,
threshold=0.5, replacement="[PII]")`` (e-mail addresses, card, social security and
phone numbers by pattern, or a detector of yours with ``async detect(text)``),
``topic(deny=[...])`` (a denied word in the answer), ``when(pred, guard)`` (the guard
only while ``pred(state)`` holds; adk-fluent 0.18 applies it always).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from .._types import Content, Part

__all__ = ["G", "GuardChain", "GuardViolation", "PIIFinding"]


class GuardViolation(Exception):
    """A guard refused a request or an answer."""

    def __init__(self, guard_kind: str, phase: str, detail: str, value: Any = None) -> None:
        self.guard_kind = guard_kind
        self.phase = phase
        self.detail = detail
        self.value = value
        super().__init__(f"[{guard_kind}] {detail}")


@dataclass(frozen=True)
class PIIFinding:
    kind: str
    start: int
    end: int
    confidence: float
    text: str


@dataclass(frozen=True)
class _Guard:
    """One guard: on the answer (``post``: text in, the text to keep out, or a
    GuardViolation) or on the request (``pre``: the callback context in)."""

    kind: str
    post: Callable[[str, Any], Awaitable[str]] | None = None
    pre: Callable[[Any], None] | None = None
    when: Callable[[Mapping[str, Any]], Any] | None = None


class GuardChain:
    """Guards joined with ``|``; ``Agent.guard(chain)`` puts them on the agent."""

    def __init__(self, guards: tuple[_Guard, ...]) -> None:
        self.guards = guards

    def __or__(self, other: GuardChain) -> GuardChain:
        if not isinstance(other, GuardChain):
            return NotImplemented
        return GuardChain(self.guards + other.guards)

    def callbacks(self) -> tuple[Callable[..., Any] | None, Callable[..., Any] | None]:
        """(before_model, after_model): the chain's guards on the request and on the answer."""
        pre = [guard for guard in self.guards if guard.pre is not None]
        post = [guard for guard in self.guards if guard.post is not None]

        def before_model(callback_context: Any, llm_request: Any) -> None:
            for guard in pre:
                if _applies(guard, callback_context) and guard.pre is not None:
                    guard.pre(callback_context)

        async def after_model(callback_context: Any, llm_response: Any) -> Any:
            text = _text_of(llm_response)
            if text is None:
                return None
            kept = text
            for guard in post:
                if _applies(guard, callback_context) and guard.post is not None:
                    kept = await guard.post(kept, (callback_context, llm_response))
            if kept == text:
                return None
            return llm_response.model_copy(update={"content": Content(role="model", parts=(Part(text=kept),))})

        return (before_model if pre else None), (after_model if post else None)


def _applies(guard: _Guard, callback_context: Any) -> bool:
    try:
        return guard.when is None or bool(guard.when(callback_context.state))
    except (KeyError, TypeError, ValueError):
        return False


def _text_of(llm_response: Any) -> str | None:
    """The answer's text (its text parts joined by newlines), or None when it has none."""
    content = llm_response.content
    texts = [part.text for part in (content.parts if content is not None else ()) if part.text]
    return "\n".join(texts) if texts else None


_PII_PATTERNS = {
    "SSN": re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),
    "EMAIL": re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),
    "CREDIT_CARD": re.compile(r"\b\d{4}[- ]?\d{4}[- ]?\d{4}[- ]?\d{4}\b"),
    "PHONE": re.compile(r"\b\(?\d{3}\)?[-.\s]?\d{3}[-.\s]?\d{4}\b"),
}


class _PatternDetector:
    """PII by pattern: e-mail addresses, card, social security and phone numbers."""

    async def detect(self, text: str) -> list[PIIFinding]:
        return [PIIFinding(kind, m.start(), m.end(), 0.9, m.group())
                for kind, pattern in _PII_PATTERNS.items() for m in pattern.finditer(text)]


def _single(guard: _Guard) -> GuardChain:
    return GuardChain((guard,))


class G:
    """The guards (see the module)."""

    @staticmethod
    def json() -> GuardChain:
        async def check(text: str, _at: Any) -> str:
            try:
                json.loads(text)
            except json.JSONDecodeError as error:
                raise GuardViolation("json", "post_model", f"model output is not valid JSON: {error}") from None
            return text

        return _single(_Guard("json", post=check))

    @staticmethod
    def length(*, min: int = 0, max: int = 100_000) -> GuardChain:
        async def check(text: str, _at: Any) -> str:
            if len(text) < min:
                raise GuardViolation("length", "post_model", f"output too short ({len(text)} < {min})")
            if len(text) > max:
                raise GuardViolation("length", "post_model", f"output too long ({len(text)} > {max})")
            return text

        return _single(_Guard("length", post=check))

    @staticmethod
    def regex(pattern: str, *, action: Literal["block", "redact"] = "block",
              replacement: str = "[REDACTED]") -> GuardChain:
        compiled = re.compile(pattern)

        async def check(text: str, _at: Any) -> str:
            if action == "redact":
                return compiled.sub(replacement, text)
            if compiled.search(text):
                raise GuardViolation("regex", "post_model", f"output matches the blocked pattern {pattern!r}")
            return text

        return _single(_Guard("regex", post=check))

    @staticmethod
    def output(schema: type[BaseModel]) -> GuardChain:
        async def check(text: str, _at: Any) -> str:
            try:
                schema.model_validate(json.loads(text))
            except (json.JSONDecodeError, ValidationError) as error:
                raise GuardViolation("output", "post_model", f"schema validation failed: {error}") from None
            return text

        return _single(_Guard("output", post=check))

    @staticmethod
    def input(schema: type[BaseModel]) -> GuardChain:
        """Advisory, as adk-fluent's: checks nothing."""
        return GuardChain(())

    @staticmethod
    def rate_limit(rpm: int) -> GuardChain:
        """Advisory, as adk-fluent's: checks nothing."""
        return GuardChain(())

    @staticmethod
    def budget(max_tokens: int) -> GuardChain:
        used: dict[str, int] = {}

        async def check(text: str, at: Any) -> str:
            callback_context, response = at
            usage = response.usage_metadata
            spent = used.get(callback_context.invocation_id, 0) + (
                (usage.prompt_token_count or 0) + (usage.candidates_token_count or 0) if usage is not None else 0)
            used.clear()  # one invocation's count is kept: the current one's
            used[callback_context.invocation_id] = spent
            if spent > max_tokens:
                raise GuardViolation("budget", "post_model", f"token budget exceeded ({spent} > {max_tokens})")
            return text

        return _single(_Guard("budget", post=check))

    @staticmethod
    def max_turns(n: int) -> GuardChain:
        def check(callback_context: Any) -> None:
            turns = sum(1 for event in callback_context.session.events if event.author == "user")
            if turns > n:
                raise GuardViolation("max_turns", "pre_model", f"exceeded {n} turns (current: {turns})")

        return _single(_Guard("max_turns", pre=check))

    @staticmethod
    def pii(action: Literal["redact", "block"] = "redact", *, detector: Any = None, threshold: float = 0.5,
            replacement: str = "[PII]") -> GuardChain:
        finder = detector if detector is not None else _PatternDetector()

        async def check(text: str, _at: Any) -> str:
            found = [f for f in await finder.detect(text) if f.confidence >= threshold]
            if not found:
                return text
            kinds = ", ".join(sorted({f.kind for f in found}))
            if action == "block":
                raise GuardViolation("pii", "post_model", f"detected PII ({kinds})")
            for finding in sorted(found, key=lambda f: f.start, reverse=True):
                text = text[:finding.start] + replacement + text[finding.end:]
            return text

        return _single(_Guard("pii", post=check))

    @staticmethod
    def topic(deny: list[str]) -> GuardChain:
        denied = list(deny)

        async def check(text: str, _at: Any) -> str:
            lowered = text.lower()
            for topic in denied:
                if topic.lower() in lowered:
                    raise GuardViolation("topic", "post_model", f"denied topic '{topic}' found in output")
            return text

        return _single(_Guard("topic", post=check))

    @staticmethod
    def when(predicate: Callable[[Mapping[str, Any]], Any], guard: GuardChain) -> GuardChain:
        return GuardChain(tuple(_Guard(g.kind, g.post, g.pre, predicate) for g in guard.guards))
