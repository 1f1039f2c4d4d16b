"""google-adk's run routes: ``POST /run`` (the run's events, as a list) and
``POST /run_sse`` (one ``data:`` line per event as it comes).

A run's ``stateDelta`` is committed on the user's event, as in google-adk; a key set
to null is deleted there. A run that fails (a model's error, a deadline, kill -9 of
its actor...) ends ``/run`` with 500 ``{"detail": "<reason>: ..."}`` and ``/run_sse``
with google-adk's error line, after every event sent before it was committed. A
client that leaves an SSE stream does not stop the run: it runs to its end and is
committed (cancel it with the Runner or ``adk-actors``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from .._decisions import CallDecision
from .._exceptions import AdkError, RunFailedError
from .._types import Content, Event, RunConfig, StreamingMode
from ..store import RESUMABLE
from ._deps import Api, HostApi
from ._errors import detail_of
from ._wire import compact_json, is_user_echo, sse_events

__all__ = ["ResumeRunRequest", "RunAgentRequest", "router"]

router = APIRouter(tags=["runs"])


class RunAgentRequest(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    app_name: str
    user_id: str
    session_id: str
    new_message: dict[str, Any] | None = None
    streaming: bool = False
    state_delta: dict[str, Any] | None = None
    function_call_event_id: str | None = None
    invocation_id: str | None = None
    custom_metadata: dict[str, Any] | None = None


def _prepare(body: RunAgentRequest, request: Request, api: HostApi) -> tuple[Any, Content, RunConfig]:
    """The app's Runner, the message and the run's config (403, 404 or 422 first)."""
    api.allowed(request, body.user_id, body.app_name)
    run = api.runner(body.app_name)
    if body.new_message is None:
        raise HTTPException(422, "newMessage is required")
    try:
        message = Content.model_validate(body.new_message)
    except ValidationError as exc:
        raise HTTPException(422, f"newMessage is not a Content: {exc.errors()[0]['msg']}") from None
    mode = StreamingMode.SSE if body.streaming else StreamingMode.NONE
    return run, message, RunConfig(streaming_mode=mode, custom_metadata=body.custom_metadata)


@router.post("/run")
async def run_agent(body: RunAgentRequest, request: Request, api: Api) -> Response:
    """The run's events (not the user's own, no partial one), as a JSON list; each is
    encoded once, by its model (no intermediate dicts: a third of the route's time).
    The route waits on the event loop (``Runner.run_async``), not on a thread."""
    run, message, config = _prepare(body, request, api)
    events = [event async for event in run.run_async(body.user_id, body.session_id, message, run_config=config,
                                                     state_delta=body.state_delta)]
    listed = b",".join(e.to_json().encode() for e in _answers(events) if not e.partial)
    return Response(b"[" + listed + b"]", media_type="application/json")


@router.post("/run_sse")
async def run_sse(body: RunAgentRequest, request: Request, api: Api) -> Any:
    run, message, config = _prepare(body, request, api)
    events = run.run_async(body.user_id, body.session_id, message, run_config=config, state_delta=body.state_delta)
    first = await anext(events)  # the run was accepted (or this raises, before any stream)
    # an answer to a function call (adk-web names the asking event) is streamed unsplit, as google-adk's
    return StreamingResponse(_sse(events, first, split=body.function_call_event_id is None),
                             media_type="text/event-stream")


@router.get("/apps/{app_name}/users/{user_id}/sessions/{session_id}/runs/last")
async def last_run(app_name: str, user_id: str, session_id: str, request: Request,
                   api: Api) -> dict[str, Any] | None:
    """Durable runs: the session's latest run (``runId``, ``status``, ``attempt``,
    ``resumes``) and whether it can be resumed (``resumable``). A session that has had
    no run yet answers 200 ``null`` (the console asks for every session it shows); one
    that does not exist, 404 (the session is looked up only when no run was found)."""
    api.allowed(request, user_id, app_name)
    run = api.runner(app_name)
    found = await asyncio.to_thread(run.last_run, user_id, session_id)
    if found is None:
        await asyncio.to_thread(run.get_session, user_id, session_id)  # SessionNotFoundError: 404
        return None
    return {"runId": found.run_id, "status": found.status, "attempt": found.attempt, "resumes": found.resumes,
            "resumable": found.status in RESUMABLE}


class ResumeRunRequest(BaseModel):
    """``decisions``: call id -> ``{"action": "rerun" | "result" | "end", "result": {...}}``,
    for the calls a resumed run stopped before (``needs_decision``)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    decisions: dict[str, dict[str, Any]] | None = None
    streaming: bool = False


@router.post("/apps/{app_name}/users/{user_id}/sessions/{session_id}/runs/{run_id}/resume")
async def resume_run(app_name: str, user_id: str, session_id: str, run_id: str, request: Request, api: Api,
                     body: ResumeRunRequest | None = None) -> Any:
    """Durable runs: continue run ``run_id`` (interrupted, killed, failed, or stopped
    ``needs_decision``) from its committed steps; the new events as ``/run_sse`` sends
    them. A run that stops again ``needs_decision`` ends the stream with the error line,
    whose ``error_details`` give the calls to decide on (``pending_calls``) and the run
    to resume with the decisions (``run_id``). 422 for a
    malformed decision; 400 for a run that cannot be resumed (done, cancelled, resumed
    already, unknown)."""
    api.allowed(request, user_id, app_name)
    run = api.runner(app_name)
    try:
        decisions = {call_id: CallDecision(**decision) for call_id, decision in ((body.decisions if body else None)
                                                                              or {}).items()}
    except (TypeError, ValueError) as exc:
        raise HTTPException(422, f"a decision is {{\"action\": \"rerun\" | \"result\" | \"end\", "
                                 f"\"result\": {{...}}}}: {exc}") from None
    mode = StreamingMode.SSE if body is not None and body.streaming else StreamingMode.NONE
    events = run.resume_async(user_id, session_id, run_id, decisions=decisions or None,
                              run_config=RunConfig(streaming_mode=mode))
    try:
        first = await anext(events)
    except StopAsyncIteration:  # nothing was left to do: the run had committed its last step
        return StreamingResponse(iter(()), media_type="text/event-stream")
    except RunFailedError as error:
        return StreamingResponse(iter([_failure_line(error)]), media_type="text/event-stream")
    return StreamingResponse(_sse(events, first), media_type="text/event-stream")


def _answers(events: list[Event]) -> list[Event]:
    """A run's events as google-adk answers them: without the user's own."""
    return [event for position, event in enumerate(events) if not is_user_echo(position, event)]


async def _sse(events: AsyncIterator[Event], first: Event, *, split: bool = True) -> AsyncIterator[str]:
    """One ``data:`` line per event (``first`` too, unless it is the user's own),
    compact JSON, a blank line after each; an event with content and an
    ``artifactDelta`` is split in two (``sse_events``) unless ``split`` is False (the
    request named a ``functionCallEventId``, as google-adk's); a run that fails ends
    with google-adk's error line (``json.dumps`` spacing, snake_case details, as there)."""

    def line(event: Event) -> str:
        return "".join(f"data: {compact_json(frame)}\n\n" for frame in (sse_events(event) if split else [event]))

    if not is_user_echo(0, first):
        yield line(first)
    try:
        async for event in events:
            yield line(event)
    except AdkError as error:
        yield _failure_line(error)


#: the ends of a run that an exception raised in its agent (a tool, a model, a callback,
#: google-adk's own checks) caused: their error line is google-adk's, that exception's
_RAISED = ("error", "model_error")


def _failure_line(error: AdkError) -> str:
    """google-adk's error line for a run that failed: ``data: {"error": "<type>:
    <message>", "error_details": {"error_type", "error_message", "timestamp"}}`` with
    ``json.dumps`` spacing. A run that an exception of its agent ended gives that
    exception's type and message, as google-adk's (``str(exc)``); a run that ended
    otherwise (a deadline, a kill, a cancel...: google-adk has none of these) says how
    first, ``<reason>: <detail>``. A run that needs decisions adds its
    ``pending_calls`` and ``run_id``."""
    kind = error.error_type if isinstance(error, RunFailedError) and error.error_type else type(error).__name__
    if isinstance(error, RunFailedError) and error.reason in _RAISED:
        text = error.detail
    else:
        text = detail_of(error)
    details: dict[str, Any] = {"error_type": kind, "error_message": text, "timestamp": time.time()}
    if isinstance(error, RunFailedError) and error.pending_calls:
        details["pending_calls"] = error.pending_calls
        details["run_id"] = error.run_id  # the run to resume with the decisions
    return f"data: {json.dumps({'error': f'{kind}: {text}', 'error_details': details})}\n\n"
