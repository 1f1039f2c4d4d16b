"""``/run_live``: google-adk's WebSocket route: a live run (voice, video, text).

The client opens ``ws://host/run_live?app_name=&user_id=&session_id=`` (and
``modalities``, repeatable, ``AUDIO`` by default as in google-adk, or ``TEXT``). In
order:

1. the guard (origin, host, token) runs before the handshake; a token may act only
   for its own user, and only the operator in the agent builder's assistant (1008);
2. after the handshake, an unknown session closes the socket with 1002 "Session not
   found", as google-adk does; a bad ``modalities`` with 1007;
3. a live run starts on the session (``Runner.run_live``: it waits for a run in
   progress on the session to end), and two loops run until either ends:

   * each text frame is a google-adk ``LiveRequest`` (snake_case JSON; nulls are unset):
     passed to the run in order; ``{"close": true}`` ends the run and the socket
     (1000); a frame that is not a LiveRequest closes with 1007, one over the host's
     ``max_message_bytes`` with 1009 (the run ends either way);
   * each event of the run goes back as one text frame of Event JSON (camelCase, as in
     SSE): partial text, audio chunks (``inlineData``), ``inputTranscription`` /
     ``outputTranscription``, ``turnComplete``; the user's own text content is not
     echoed. A run whose model takes no audio or video ends with an error event
     ``live_unsupported``: the socket closes with 1003; a run that fails sends
     google-adk's error payload and closes with 1011.

A client that goes away closes its run: the session keeps every event committed so
far (what was said, as text) and is free for the next run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from fastapi import APIRouter, HTTPException, Query, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from .._exceptions import AdkError, InvalidRequestError, LimitExceededError, SessionNotFoundError
from .._types import LiveRequest, RunConfig
from ..engine import LIVE_UNSUPPORTED
from ._deps import Api
from ._wire import live_frame

__all__ = ["router"]

router = APIRouter(tags=["runs"])

_MODALITIES = ("TEXT", "AUDIO")


def _without_nulls(value: Any) -> Any:
    """google-adk's clients may send every field, null when unset."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _read(frame: str) -> LiveRequest | None:
    try:
        data = json.loads(frame)
        if not isinstance(data, dict):
            return None
        return LiveRequest.model_validate_json(json.dumps(_without_nulls(data)))
    except (ValueError, ValidationError):
        return None


@router.websocket("/run_live")
async def run_live(socket: WebSocket, app_name: str, user_id: str, session_id: str, api: Api,
                   modalities: list[str] = Query(default=["AUDIO"])) -> None:  # noqa: B008 (FastAPI's way)
    try:
        api.allowed(socket, user_id, app_name)  # the same rule as every route's, answered as a WebSocket must
    except HTTPException as refused:
        await socket.close(code=1008, reason=str(refused.detail)[:120])
        return
    try:
        run = api.runner(app_name)
    except AdkError as error:
        await socket.close(code=1008, reason=str(error)[:120])
        return
    await socket.accept()
    asked = tuple(m.upper() for m in modalities)
    if not asked or any(m not in _MODALITIES for m in asked):
        await socket.close(code=1007, reason="modalities are TEXT or AUDIO")
        return
    try:
        live = await asyncio.to_thread(run.run_live, user_id, session_id,
                                       run_config=RunConfig.model_validate({"response_modalities": asked}))
    except SessionNotFoundError:
        await socket.close(code=1002, reason="Session not found")
        return
    except AdkError as error:
        await socket.close(code=1011, reason=str(error)[:120])
        return
    inputs = asyncio.create_task(_pass_inputs(socket, live))
    try:
        await _send_events(socket, live)
    finally:
        inputs.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await inputs
        with contextlib.suppress(AdkError):
            await asyncio.to_thread(live.close)  # the client went first: free the session


async def _pass_inputs(socket: WebSocket, live: Any) -> None:
    """The client's frames to the run, in order, until ``close`` or a bad frame (which
    closes the socket: the run then ends, its stream with it)."""
    try:
        while True:
            request = _read(await socket.receive_text())
            if request is None:
                await socket.close(code=1007, reason="not a LiveRequest")
                await asyncio.to_thread(live.close)
                return
            try:
                await asyncio.to_thread(live.send, request)
            except LimitExceededError as error:
                await socket.close(code=1009, reason=str(error)[:120])
                await asyncio.to_thread(live.close)
                return
            except InvalidRequestError as error:  # text that cannot be encoded, nesting too deep ...
                await socket.close(code=1007, reason=str(error)[:120])
                await asyncio.to_thread(live.close)
                return
            if request.close:
                return
    except (WebSocketDisconnect, RuntimeError):  # gone (RuntimeError: closed by us meanwhile)
        with contextlib.suppress(AdkError):
            await asyncio.to_thread(live.close)
    except AdkError:
        return  # the run ended: its stream says how


async def _send_events(socket: WebSocket, live: Any) -> None:
    """The run's events to the client until its end, then the socket's close."""
    try:
        async for event in live.events_async():
            if event.error_code == LIVE_UNSUPPORTED:
                await socket.close(code=1003, reason=(event.error_message or "")[:120])
                return
            if event.author == "user" and event.content is not None and event.input_transcription is None:
                continue  # the client's own text, not echoed
            await socket.send_text(live_frame(event))
    except AdkError as error:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            await socket.send_text(json.dumps({"error": f"{type(error).__name__}: {error}"}))
            await socket.close(code=1011, reason=str(error)[:120])
        return
    except (WebSocketDisconnect, RuntimeError):
        return
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        await socket.close(code=1000)
