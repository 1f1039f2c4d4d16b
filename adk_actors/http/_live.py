"""``/run_live``: google-adk's WebSocket route, for text.

The client opens ``ws://host/run_live?app_name=&user_id=&session_id=`` and sends text
frames of google-adk's ``LiveRequest`` JSON (snake_case). In order, per frame:

* ``{"content": Content}``: one turn with this message, streamed: every event (partial
  text first) goes back as one text frame of Event JSON, then the next frame is read;
* ``{"close": true}``: the socket is closed normally (1000);
* ``{"blob": ...}`` (audio, video), ``activity_start`` / ``activity_end``: closed with
  1003, "only text content is supported" (our models speak no live audio);
* anything that is not a LiveRequest: closed with 1007.

An unknown session closes the socket with 1002 "Session not found" right after the
handshake, as google-adk does; a run that fails sends google-adk's error payload and
closes with 1011. The guard (origin, host, token) runs before the handshake.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from .._exceptions import AdkError, SessionNotFoundError
from .._types import Content, RunConfig, StreamingMode
from ._guard import OPERATOR
from ._wire import compact_json, is_user_echo

__all__ = ["add_live"]

_UNSUPPORTED = ("blob", "activity_start", "activity_end", "audio_stream_end")


def add_live(api: FastAPI, runner: Callable[[str], Any]) -> None:
    """Add ``/run_live`` to ``api``; ``runner(app)`` gives an app's Runner."""

    @api.websocket("/run_live")
    async def run_live(socket: WebSocket, app_name: str, user_id: str, session_id: str) -> None:
        principal = socket.scope.get("state", {}).get("principal")
        if principal not in (OPERATOR, user_id):
            await socket.close(code=1008, reason="this token may not act for that user")
            return
        try:
            run = runner(app_name)
        except AdkError as error:
            await socket.close(code=1008, reason=str(error)[:120])
            return
        await socket.accept()
        try:
            run.get_session(user_id, session_id)
        except SessionNotFoundError:
            await socket.close(code=1002, reason="Session not found")
            return
        try:
            while True:
                frame = await socket.receive_text()
                try:
                    request = json.loads(frame)
                    if not isinstance(request, dict):
                        raise ValueError("a LiveRequest is a JSON object")
                except ValueError:
                    await socket.close(code=1007, reason="not a LiveRequest")
                    return
                if request.get("close"):
                    await socket.close(code=1000)
                    return
                if any(key in request for key in _UNSUPPORTED):
                    await socket.close(code=1003, reason="only text content is supported")
                    return
                try:
                    message = Content.model_validate(request.get("content"))
                except ValidationError:
                    await socket.close(code=1007, reason="content is not a Content")
                    return
                config = RunConfig(streaming_mode=StreamingMode.SSE)
                try:
                    position = 0
                    async for event in run.run_async(user_id, session_id, message, run_config=config):
                        if not is_user_echo(position, event):
                            await socket.send_text(compact_json(event))
                        position += 1
                except AdkError as error:
                    await socket.send_text(json.dumps({"error": f"{type(error).__name__}: {error}"}))
                    await socket.close(code=1011, reason=str(error)[:120])
                    return
        except WebSocketDisconnect:
            return
