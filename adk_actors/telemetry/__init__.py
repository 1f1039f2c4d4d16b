"""Telemetry events, BEAM ``:telemetry`` style (seed 001 row 23).

Events are tuples such as ``("adk", "llm", "stop")``; each carries measurements
(``system_time`` at start; ``duration`` in seconds at stop and exception) and
metadata (agent, invocation and branch ids, the model, token usage, the tool, the
error). The engine emits ``[adk, agent|llm|tool, start|stop|exception]``, the host's
jobs actor ``[adk, job, start|stop|exception]`` per attempt of a background job
(``queue_time`` at start; the job, its queue, kind and attempt; at exception the
error and the state the job is left in), and a graph workflow's run
``[adk, workflow, start|stop|exception]`` (around its agent span: see
:meth:`adk_actors.workflow.Workflow.run`), and each attempt of its function nodes
``[adk, node, start|stop|exception]`` (the node, its path; at stop the ``event_ids``
of the events it made); a model
call's stop also carries the ``event_id`` of the event it made, its ``request``
(``LlmRequest``) and ``response`` (``LlmResponse``), and a tool call's stop its
``args`` and ``response``.

Inside :func:`in_session` (an ``AgentTool``'s child run, which google-adk runs in a new
session of its own), the spans started say that session in their ``session``.

``attach(handler_id, events, handler)`` subscribes; a handler that raises is logged
and detached, so telemetry can never break a run. Handlers are per process:
attach them in the host process before it starts, and every actor forked from it
has them.
google-adk's ``google.adk.telemetry`` names are here too, at its paths: its tracing
helpers (:mod:`.tracing`: ``tracer``, ``trace_tool_call``, ``trace_call_llm``,
``trace_send_data``, ``trace_merged_tool_calls``, ...) and its per-run settings
(:mod:`.context`: ``TelemetryConfig``, ``ContentCapturingMode``). They need
OpenTelemetry (``pip install 'adk-actors[otel]'``) and are imported when first asked
for, so this module stays free of it.
"""

from __future__ import annotations

import contextvars
import importlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ContentCapturingMode", "Handler", "TelemetryConfig", "attach", "detach", "execute", "handlers",
           "in_session", "span", "trace_call_llm", "trace_merged_tool_calls", "trace_send_data", "trace_tool_call",
           "tracer"]

#: google-adk's names, and the submodule each is read from when first asked for
_LAZY = {"ContentCapturingMode": ".context", "TelemetryConfig": ".context", "trace_call_llm": ".tracing",
         "trace_merged_tool_calls": ".tracing", "trace_send_data": ".tracing", "trace_tool_call": ".tracing",
         "tracer": ".tracing"}

Event = tuple[str, ...]
Handler = Callable[[Event, dict[str, Any], dict[str, Any]], None]

_lock = threading.Lock()
_handlers: dict[str, tuple[frozenset[Event], Handler]] = {}
_log = logging.getLogger("adk_actors.telemetry")


def attach(handler_id: str, events: Iterable[Event] | Event, handler: Handler) -> None:
    """Call ``handler(event, measurements, metadata)`` for each of ``events``."""
    if isinstance(events, tuple) and all(isinstance(item, str) for item in events):
        event_set: frozenset[Event] = frozenset([events])
    else:
        event_set = frozenset(tuple(event) for event in events)
    with _lock:
        if handler_id in _handlers:
            raise ValueError(f"a telemetry handler {handler_id!r} is already attached")
        _handlers[handler_id] = (event_set, handler)


def detach(handler_id: str) -> bool:
    with _lock:
        return _handlers.pop(handler_id, None) is not None


def handlers() -> list[str]:
    with _lock:
        return sorted(_handlers)


def execute(event: Event, measurements: dict[str, Any], metadata: dict[str, Any]) -> None:
    with _lock:
        targets = [(hid, handler) for hid, (events, handler) in _handlers.items() if event in events]
    for handler_id, handler in targets:
        try:
            handler(event, measurements, metadata)
        except Exception:
            _log.exception("telemetry handler %s raised; detaching it", handler_id)
            detach(handler_id)


_enclosing: contextvars.ContextVar[str | None] = contextvars.ContextVar("adk_telemetry_span", default=None)
_session: contextvars.ContextVar[str | None] = contextvars.ContextVar("adk_telemetry_session", default=None)


@contextmanager
def in_session(session_id: str) -> Iterator[None]:
    """Inside the block (this task, and the tasks started in it), every span whose
    metadata names a ``session`` names ``session_id`` instead; on the way out, also when
    the block raises, the session before it is put back. (An ``AgentTool``'s child run,
    which google-adk runs in an in-memory session of its own: its spans carry that
    session's id as their ``gen_ai.conversation.id``.)"""
    token = _session.set(session_id)
    try:
        yield
    finally:
        _session.reset(token)


@contextmanager
def span(prefix: Event, metadata: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Emit ``prefix + ("start",)``, then ``("stop",)`` or ``("exception",)`` with the duration.

    The yielded dict is the stop metadata: fill it in (token usage, results) inside
    the block. Start, stop and exception carry the same ``span_id``, and the
    ``parent_span_id`` of the span this one runs inside (None for an invocation's
    outermost): a model or tool call's parent is its agent's span, a transferred-to
    agent's the span of the agent that ran the transfer. Tasks started inside the
    block (concurrent tool calls) inherit it. Inside :func:`in_session`, a ``session``
    in ``metadata`` is that block's.
    """
    if not _handlers:
        yield metadata
        return
    session = _session.get()
    if session is not None and "session" in metadata:
        metadata["session"] = session
    began = time.monotonic()
    span_id = metadata.setdefault("span_id", uuid.uuid4().hex)  # correlates start with stop / exception
    parent = _enclosing.get()
    metadata.setdefault("parent_span_id", parent)
    execute((*prefix, "start"), {"system_time": time.time()}, dict(metadata))
    _enclosing.set(span_id)
    try:
        yield metadata
    except BaseException as error:
        execute((*prefix, "exception"), {"duration": time.monotonic() - began},
                {**metadata, "kind": type(error).__name__, "reason": str(error)})
        raise
    finally:
        _enclosing.set(parent)  # (not a token reset: an async generator may end in another context)
    execute((*prefix, "stop"), {"duration": time.monotonic() - began}, dict(metadata))


def __getattr__(name: str) -> Any:
    """One of google-adk's names (``_LAZY``): its submodule is imported (OpenTelemetry
    with it, for the tracing names) and the name read from there. Any other unknown
    name is an AttributeError."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
