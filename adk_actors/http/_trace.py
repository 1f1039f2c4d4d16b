"""google-adk's trace routes, with the stored traces behind them (``adk_actors.tracing``).

* ``GET /dev/apps/{app}/debug/trace/session/{session_id}``: the spans of the
  session's last turns, as google-adk serves them (snake case, ``logs`` empty).
* ``GET /dev/apps/{app}/debug/trace/{event_id}``: the attributes of the model call
  that made that event, with its ``trace_id`` and ``span_id``; 404 when none is kept.

Neither route names a user (google-adk's do not). A user's token sees only that
user's sessions' traces; an operator (or loopback without tokens) sees any.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Request

from ..tracing import TraceSpan
from ._guard import OPERATOR

__all__ = ["add_trace_routes"]


def _user_of(request: Request) -> str | None:
    principal = request.state.principal
    return None if principal == OPERATOR else str(principal)


def add_trace_routes(api: FastAPI, runner: Callable[[str], Any]) -> None:
    """Add the trace routes to ``api``; ``runner(app)`` gives an app's Runner (an unknown app: 404)."""

    @api.get("/dev/apps/{app}/debug/trace/session/{session_id}", tags=["debug"])
    def session_trace(app: str, session_id: str, request: Request) -> list[dict[str, Any]]:
        return [span.web_ui() for span in runner(app).session_trace(session_id, _user_of(request))]

    @api.get("/dev/apps/{app}/debug/trace/{event_id}", tags=["debug"])
    def event_trace(app: str, event_id: str, request: Request) -> dict[str, Any]:
        span: TraceSpan | None = runner(app).event_trace(event_id, _user_of(request))
        if span is None:
            raise HTTPException(404, "Trace not found")
        return span.flat()
