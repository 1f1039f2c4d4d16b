"""Policies: input filters, output filters and tool authorization, composable.

* ``filter_input(ctx, message)`` returns the (possibly rewritten) message, or
  :class:`Reject` -- then no agent ever sees it, and the run ends with an error event.
* ``filter_output(ctx, event)`` returns the (possibly redacted) event; applied to
  every event before it is committed or sent. A stream of partial text is filtered
  as a whole, never chunk by chunk (:class:`StreamFilter`): what is sent is a prefix
  of the filtered text so far, holding back the last ``stream_holdback`` characters
  (a filter that rewrites matches of at most N characters declares N); a policy that
  filters output and declares nothing gets no partial text streamed at all (its
  callers see the final event only), so no match ever leaks through a cut.
* ``authorize_tool(ctx, tool_name, args)`` returns :data:`ALLOW` or :class:`Deny`;
  the first deny wins, a denied tool never runs and the model sees the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._types import Content, Event, Part

__all__ = ["ALLOW", "Allow", "ConfirmationPolicy", "Deny", "Policy", "PolicySet", "Reject", "StreamFilter"]


@dataclass(frozen=True)
class Allow:
    pass


ALLOW = Allow()


@dataclass(frozen=True)
class Deny:
    reason: str


@dataclass(frozen=True)
class Reject:
    reason: str


class Policy:
    """Base class: lets everything through. Override what you need."""

    #: For ``filter_output``: the longest text one rewrite may span (see the module);
    #: None: unknown, so no partial text is streamed past this policy.
    stream_holdback: int | None = None

    def filter_input(self, ctx: Any, message: Content) -> Content | Reject:
        return message

    def filter_output(self, ctx: Any, event: Event) -> Event:
        return event

    def authorize_tool(self, ctx: Any, tool_name: str, args: dict[str, Any]) -> Allow | Deny:
        return ALLOW


class PolicySet:
    def __init__(self, policies: Iterable[Policy] = ()) -> None:
        self.policies = list(policies)

    def filter_input(self, ctx: Any, message: Content) -> Content | Reject:
        for policy in self.policies:
            result = policy.filter_input(ctx, message)
            if isinstance(result, Reject):
                return result
            message = result
        return message

    def filter_output(self, ctx: Any, event: Event) -> Event:
        for policy in self.policies:
            event = policy.filter_output(ctx, event)
        return event

    def stream_holdback(self) -> int | None:
        """Characters of a partial stream to hold back: the most any output filter
        declared; 0 when none filters output; None (hold everything) when one that
        does declared nothing."""
        held = 0
        for policy in self.policies:
            if getattr(type(policy), "filter_output", None) is Policy.filter_output:
                continue
            declared = getattr(policy, "stream_holdback", None)
            if declared is None:
                return None
            held = max(held, declared)
        return held


    def authorize_tool(self, ctx: Any, tool_name: str, args: dict[str, Any]) -> Allow | Deny:
        for policy in self.policies:
            decision = policy.authorize_tool(ctx, tool_name, args)
            if isinstance(decision, Deny):
                return decision
        return ALLOW


class StreamFilter:
    """Filters one invocation's partial text streams as wholes (see the module): each
    partial is turned into the next piece of a safe prefix of the filtered text."""

    def __init__(self, policies: PolicySet, ctx: Any) -> None:
        self.policies = policies
        self.ctx = ctx
        self.holdback = policies.stream_holdback()
        self.streams: dict[str, tuple[str, str]] = {}  # event id -> (raw text so far, text sent)

    def partial(self, event: Event) -> Event | None:
        """The partial to send for ``event`` (None: nothing may be sent yet)."""
        if event.content is None or not event.content.text or self.holdback == 0:
            return self.policies.filter_output(self.ctx, event)
        raw, sent = self.streams.get(event.id, ("", ""))
        raw += event.content.text
        safe = ""
        if self.holdback is not None:
            whole = self._filtered(event, raw)
            head = self._filtered(event, raw[:max(0, len(raw) - self.holdback)])
            safe = _common_prefix(whole, head)
        if len(safe) <= len(sent) or not safe.startswith(sent):
            self.streams[event.id] = (raw, sent)
            return None
        self.streams[event.id] = (raw, safe)
        return _with_text(event, safe[len(sent):])

    def _filtered(self, event: Event, text: str) -> str:
        filtered = self.policies.filter_output(self.ctx, _with_text(event, text))
        return filtered.content.text if filtered.content is not None else ""


def _with_text(event: Event, text: str) -> Event:
    role = event.content.role if event.content is not None else "model"
    return event.model_copy(update={"content": Content(role=role, parts=(Part(text=text),))})


def _common_prefix(a: str, b: str) -> str:
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return a[:size]


@dataclass(frozen=True)
class ConfirmationPolicy:
    """Which tool calls need a human's approval before they run (seed 001 row 22).

    ``tools``: tool names, ``"all"``, or a predicate ``(tool_name, args) -> bool``.
    The run waits for the decision (without blocking its actor: cancel still works)
    up to ``timeout`` seconds; a timeout is a deny with a reason. A denied tool never
    runs and the model is told why. Put it on an agent (``confirmation_policy``);
    google-adk's per-tool ``require_confirmation`` maps onto the same machinery.
    """

    tools: Any = "all"
    timeout: float = 60.0
    hint: str = ""

    def needs(self, tool_name: str, args: dict[str, Any]) -> bool:
        if self.tools == "all":
            return True
        if callable(self.tools):
            return bool(self.tools(tool_name, args))
        return tool_name in set(self.tools)
