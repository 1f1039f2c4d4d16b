"""The telemetry span of a function node's attempt (google-adk 2.13's ``invoke_node
<name>`` span; see ``_run``'s ``attempts``).

:func:`node_span` wraps one attempt of a node run. For a BaseNode (a function node, a
join, a parallel worker; not an agent nor a nested workflow, which have spans of their
own), in order: a span ``[adk, node]`` starts (see :mod:`adk_actors.telemetry`), its
metadata the node's name and path, the invocation, the branch and the session; its
parent is the span it starts in: its workflow's, or for a node run by ``ctx.run_node``
the span of the node that ran it. Each event the attempt commits
(:func:`note_event`, called as the graph commits it) is remembered; when the attempt
succeeds, the span stops with their ids (``event_ids``: google-adk's
``gcp.vertex.agent.associated_event_ids``); when it fails, the span ends as an
exception (the error event of the attempt, made after it, is not among them). For any
other node nothing starts, and the events committed inside the block (an agent's, a
nested workflow's) are no function node's.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import telemetry
from .._types import Event
from ._nodes import BaseNode

__all__ = ["node_span", "note_event"]

#: the ids of the events committed by the function node attempt running in this task
_MADE: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("adk_workflow_node_events", default=None)


def note_event(event: Event) -> None:
    """Remember ``event`` (as committed) for the function node attempt that made it."""
    made = _MADE.get()
    if made is not None and not event.partial:
        made.append(event.id)


@contextmanager
def node_span(node: Any, ctx: Any, path: str) -> Iterator[None]:
    """One attempt of ``node`` (node path ``path``) in ``ctx``, inside its span (see
    the module)."""
    if not isinstance(node, BaseNode):
        token = _MADE.set(None)
        try:
            yield
        finally:
            _MADE.reset(token)
        return
    made: list[str] = []
    token = _MADE.set(made)
    session = ctx.session
    try:
        with telemetry.span(("adk", "node"), {
                "node": node.name, "path": path, "invocation_id": ctx.invocation_id,
                "branch": getattr(ctx, "branch", None), "app": getattr(session, "app_name", ""),
                "user": getattr(session, "user_id", ""), "session": getattr(session, "session_id", "")}) as stop:
            yield
            if made:
                stop["event_ids"] = list(made)
    finally:
        _MADE.reset(token)
