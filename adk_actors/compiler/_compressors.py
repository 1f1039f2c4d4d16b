"""Context compressors: which history messages a request keeps.

Every compressor keeps the history well-formed: the kept part starts at a *turn
boundary* (a user message that is not a tool result), so a tool call is never
separated from its result and providers that want a user message first are served.
The boundary is moved forward from the cut; if no boundary follows (the cut falls
inside the current turn), it is moved back to the turn's start instead, so the
current turn is never broken.

* ``SlidingWindow(max_messages)``: the last ``max_messages`` messages, then aligned
  to a boundary.
* ``Truncate(max_messages)``: the same cut, preceded by one marker message saying how
  many messages were left out (the marker counts toward ``max_messages``).
* ``TokenBudget(token_budget, keep_recent)``: estimates tokens as ceil(chars / 4) of
  each message (text, and the JSON of tool calls and results); always keeps the
  last ``keep_recent`` messages, then adds older ones newest first while the total
  stays within the budget, stopping at the first that does not fit; then aligns.
* ``Summarize(max_messages, keep_recent)``: the compiler never calls a model. When
  history grows past ``max_messages``, :meth:`Summarize.plan` names the messages to
  summarize; the run summarizes them (an LLM call) and stores a compaction event
  (message count + summary), which the compiler reads back on every later request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._callables import Compressor
from .._exceptions import AgentDefinitionError
from .._types import Content, Part

__all__ = ["Compressor", "SlidingWindow", "Summarize", "SummaryPlan", "TokenBudget", "Truncate", "estimate_tokens"]


def estimate_tokens(message: Content) -> int:
    return (message.chars + 3) // 4


def _is_boundary(message: Content) -> bool:
    if message.role != "user":
        return False
    return not any(part.function_response is not None for part in message.parts)


def _aligned_start(messages: Sequence[Content], start: int) -> int:
    """Move ``start`` to the next turn boundary, or back to the current turn's start."""
    for index in range(start, len(messages)):
        if _is_boundary(messages[index]):
            return index
    for index in range(min(start, len(messages) - 1), -1, -1):
        if _is_boundary(messages[index]):
            return index
    return 0


def _positive(value: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentDefinitionError(f"{what} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class SlidingWindow:
    max_messages: int

    def __post_init__(self) -> None:
        _positive(self.max_messages, "SlidingWindow.max_messages")

    def compress(self, messages: Sequence[Content]) -> list[Content]:
        if len(messages) <= self.max_messages:
            return list(messages)
        return list(messages[_aligned_start(messages, len(messages) - self.max_messages):])


@dataclass(frozen=True)
class Truncate:
    max_messages: int

    def __post_init__(self) -> None:
        _positive(self.max_messages, "Truncate.max_messages")
        if self.max_messages < 2:
            raise AgentDefinitionError("Truncate.max_messages must leave room for the marker (>= 2)")

    def compress(self, messages: Sequence[Content]) -> list[Content]:
        if len(messages) <= self.max_messages:
            return list(messages)
        start = _aligned_start(messages, len(messages) - (self.max_messages - 1))
        if start == 0:
            return list(messages)
        marker = Content(role="user", parts=(Part(text=f"[{start} earlier messages were truncated]"),))
        return [marker, *messages[start:]]


@dataclass(frozen=True)
class TokenBudget:
    token_budget: int
    keep_recent: int = 2

    def __post_init__(self) -> None:
        _positive(self.token_budget, "TokenBudget.token_budget")
        if isinstance(self.keep_recent, bool) or not isinstance(self.keep_recent, int) or self.keep_recent < 0:
            raise AgentDefinitionError("TokenBudget.keep_recent must be an integer >= 0")

    def compress(self, messages: Sequence[Content]) -> list[Content]:
        count = len(messages)
        start = max(0, count - self.keep_recent)
        total = 0
        for index in range(start, count):
            total += (messages[index].chars + 3) // 4
        budget = self.token_budget
        while start > 0:
            cost = (messages[start - 1].chars + 3) // 4
            if total + cost > budget:
                break
            total += cost
            start -= 1
        if start == 0:
            return list(messages)
        return list(messages[_aligned_start(messages, start):])


@dataclass(frozen=True)
class SummaryPlan:
    """Summarize ``messages`` (the first ``message_count`` of the history)."""

    messages: tuple[Content, ...]
    message_count: int


@dataclass(frozen=True)
class Summarize:
    max_messages: int = 50
    keep_recent: int = 10

    def __post_init__(self) -> None:
        _positive(self.max_messages, "Summarize.max_messages")
        if self.keep_recent < 0 or self.keep_recent >= self.max_messages:
            raise AgentDefinitionError("Summarize.keep_recent must be >= 0 and below max_messages")

    def compress(self, messages: Sequence[Content]) -> list[Content]:
        return list(messages)  # summaries arrive as compaction events

    def plan(self, messages: Sequence[Content]) -> SummaryPlan | None:
        """What to summarize now, or None while the history is short enough."""
        if len(messages) <= self.max_messages:
            return None
        cut = _aligned_start(messages, len(messages) - self.keep_recent)
        if cut <= 1:
            return None
        return SummaryPlan(messages=tuple(messages[:cut]), message_count=cut)
