"""google-adk's trace routes, with the stored traces behind them (``adk_actors.tracing``).

* ``GET /dev/apps/{app}/debug/trace/session/{session_id}``: the spans of the
  session's last turns, as google-adk serves them (snake case, ``logs`` empty).
* ``GET /dev/apps/{app}/debug/trace/{event_id}``: the attributes of the model call
  that made that event, with its ``trace_id`` and ``span_id``; 404 when none is kept.

Neither route names a user (google-adk's do not). A user's token sees only that
user's sessions' traces; an operator (or loopback without tokens) sees any.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request

from ..tracing import TraceSpan
from ._deps import Api
from ._guard import acts_for_anyone

__all__ = ["router"]

router = APIRouter(prefix="/dev/apps/{app}/debug/trace", tags=["debug"])


def _user_of(request: Request) -> str | None:
    principal = request.state.principal
    return None if acts_for_anyone(principal) else str(principal)


@router.get("/session/{session_id}")
def session_trace(app: str, session_id: str, request: Request, api: Api) -> list[dict[str, Any]]:
    return [span.web_ui() for span in api.runner(app).session_trace(session_id, _user_of(request))]


@router.get("/{event_id}")
def event_trace(app: str, event_id: str, request: Request, api: Api) -> dict[str, Any]:
    span: TraceSpan | None = api.runner(app).event_trace(event_id, _user_of(request))
    if span is None:
        raise HTTPException(404, "Trace not found")
    return span.flat()
