"""Policies: input filters, output filters and tool authorization, composable.

* ``filter_input(ctx, message)`` returns the (possibly rewritten) message, or
  :class:`Reject` -- then no agent ever sees it, and the run ends with an error event.
* ``filter_output(ctx, event)`` returns the (possibly redacted) event; applied to
  every event, streamed partials included, before it is committed or sent.
* ``authorize_tool(ctx, tool_name, args)`` returns :data:`ALLOW` or :class:`Deny`;
  the first deny wins, a denied tool never runs and the model sees the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._types import Content, Event

__all__ = ["ALLOW", "Allow", "ConfirmationPolicy", "Deny", "Policy", "PolicySet", "Reject"]


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

    def authorize_tool(self, ctx: Any, tool_name: str, args: dict[str, Any]) -> Allow | Deny:
        for policy in self.policies:
            decision = policy.authorize_tool(ctx, tool_name, args)
            if isinstance(decision, Deny):
                return decision
        return ALLOW


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
