"""Where a turn's seconds went, measured while an eval runs it: how long its model
calls and its tool runs were in flight (google-adk 2.13's ``Invocation.model_duration``
and ``tool_duration``).

``with busy_intervals() as busy:`` around the turn, in order:

1. the first such block in the process attaches one handler to the engine's telemetry
   (the ``adk.llm`` and ``adk.tool`` spans: start, stop, exception); the last block to
   end detaches it;
2. the block's collector is put in a context variable, which every task the turn
   starts inherits (concurrent tool calls, parallel sub-agents, an ``AgentTool``'s
   child run); the handler records a span only into the collector of the context the
   span runs in, so a run of this process outside the block (another eval, a judge, the
   user simulator) is never counted;
3. a span's start is read off :data:`clock`; its stop, or its exception (a model or
   tool that failed), closes its interval. A span still open when the block ends is
   not counted.

Then ``busy.model_seconds()`` is the time at least one model call was in flight
(overlapping calls counted once) and ``busy.tool_seconds()`` the time inside a tool
that was not already model time (an ``AgentTool``'s child model calls run inside its
tool span: they count as model time only). Both are the union of intervals, never a
sum, so the rest of the turn -- the framework's own time -- is never negative.

A model span covers the call from its request to its last response, retries
included; a streamed answer's chunks are handed on inside it (google-adk times each
chunk's wait only). A tool span covers the tool's before- and after-tool hooks with
the tool, as google-adk's does.

:data:`clock` (``time.monotonic``) is the seam a test replaces to make every reading
exact; the turn's own total is read off the collector's clock too.

A turn run elsewhere (a host's run worker) is not seen by this process's telemetry.
:func:`split_of_spans` gives the same two figures from the turn's recorded trace spans
(``adk_actors.tracing``: the worker's ``generate_content`` and ``execute_tool`` spans,
which the worker's own telemetry timed), by the same union rule. :func:`spans_of_turn`
picks a turn's spans out of a session's trace: the spans of the turn's trace, those of
an ``AgentTool``'s child run included (they keep the child's invocation id, and share
the turn's trace, under the tool's span), so its model calls are model time there too.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .. import telemetry
from ..tracing import TraceSpan

__all__ = ["BusyIntervals", "busy_intervals", "clock", "spans_of_turn", "split_of_spans"]

#: the clock every eval timing is read off (a test's seam)
clock: Callable[[], float] = time.monotonic

_HANDLER_ID = "adk_actors.evals.busy_intervals"
_SPANS: dict[tuple[str, ...], str] = {("adk", "llm"): "model", ("adk", "tool"): "tool"}
_EVENTS = [(*prefix, what) for prefix in _SPANS for what in ("start", "stop", "exception")]
_SPAN_KINDS = {"generate_content": "model", "execute_tool": "tool"}  # trace spans' operation names
_current: contextvars.ContextVar[BusyIntervals | None] = contextvars.ContextVar("adk_eval_busy", default=None)
_lock = threading.Lock()
_blocks = 0  # blocks open in the process; the handler is attached while there is one


def _union(intervals: list[tuple[float, float]]) -> float:
    """How long the union of ``intervals`` (start, end) covers: overlaps count once."""
    covered, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            covered += end - max(start, reach)
            reach = end
    return covered


@dataclass
class BusyIntervals:
    """One turn's model and tool intervals, as (start, end) readings of ``clock``."""

    clock: Callable[[], float]
    model: list[tuple[float, float]] = field(default_factory=list)
    tool: list[tuple[float, float]] = field(default_factory=list)
    _open: dict[str, tuple[str, float]] = field(default_factory=dict)

    def opened(self, span_id: str, kind: str) -> None:
        self._open[span_id] = (kind, self.clock())

    def closed(self, span_id: str) -> None:
        """Close the span's interval (a span this collector did not see open: ignored)."""
        begun = self._open.pop(span_id, None)
        if begun is not None:
            kind, start = begun
            (self.model if kind == "model" else self.tool).append((start, self.clock()))

    def model_seconds(self) -> float:
        """Seconds with at least one model call in flight."""
        return _union(self.model)

    def tool_seconds(self) -> float:
        """Seconds inside a tool that were not already model time."""
        return _union(self.model + self.tool) - _union(self.model)


def _handle(event: tuple[str, ...], measurements: dict[str, Any], metadata: dict[str, Any]) -> None:
    busy = _current.get()
    span_id = metadata.get("span_id")
    if busy is None or not isinstance(span_id, str):
        return
    if event[-1] == "start":
        busy.opened(span_id, _SPANS[event[:-1]])
    else:
        busy.closed(span_id)


@contextmanager
def busy_intervals() -> Iterator[BusyIntervals]:
    """Collect the intervals of the model calls and tool runs inside the block (see the
    module); the handler is detached and the context variable reset on the way out,
    also when the block raises."""
    global _blocks
    with _lock:
        if _blocks == 0:
            telemetry.attach(_HANDLER_ID, _EVENTS, _handle)
        _blocks += 1
    busy = BusyIntervals(clock=clock)
    token = _current.set(busy)
    try:
        yield busy
    finally:
        _current.reset(token)
        with _lock:
            _blocks -= 1
            if _blocks == 0:
                telemetry.detach(_HANDLER_ID)


def split_of_spans(spans: Iterable[TraceSpan]) -> tuple[float, float] | None:
    """(model seconds, tool seconds) of one turn from its recorded trace spans, by the
    rule of :class:`BusyIntervals` (unions; a tool's model time is model time only):
    each ``generate_content`` span is a model interval, each ``execute_tool`` span a tool
    interval, from its start to its end (nanoseconds, read as seconds); other spans
    (``invoke_agent``) count for neither. None when there is no span at all (the turn
    was not traced: nothing says where its time went)."""
    busy = BusyIntervals(clock=clock)
    seen = False
    for span in spans:
        seen = True
        kind = _SPAN_KINDS.get(str(span.attributes.get("gen_ai.operation.name", "")))
        if kind is not None:
            (busy.model if kind == "model" else busy.tool).append((span.start_time / 1e9, span.end_time / 1e9))
    return (busy.model_seconds(), busy.tool_seconds()) if seen else None


def spans_of_turn(spans: Iterable[TraceSpan], invocation_id: str) -> list[TraceSpan]:
    """The spans of the turn of ``invocation_id`` among a session's trace ``spans``, in
    order: the traces holding a span of that invocation; of them, the one whose last
    span ended last (the turn just run, when an invocation went on over more than one
    turn: function responses answered in it); every span of that trace, whatever its
    invocation id (an ``AgentTool``'s child run has its own). Empty when no span is of
    that invocation."""
    spans = list(spans)
    ends: dict[int, int] = {}
    for span in spans:
        if span.invocation_id == invocation_id:
            ends[span.trace_id] = max(ends.get(span.trace_id, span.end_time), span.end_time)
    if not ends:
        return []
    last = max(ends, key=lambda trace_id: ends[trace_id])
    return [span for span in spans if span.trace_id == last]
