"""Gemini's Live API: ``BidiGenerateContent`` over a WebSocket (API key in ``x-goog-api-key``).

``GeminiModel.connect(request)`` opens
``wss://<host>/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent``
(``ws://`` for an ``http://`` base URL) and, in order:

1. sends ``setup``: the model, ``generationConfig`` (with ``responseModalities``,
   ``AUDIO`` unless the request's ``config["response_modalities"]`` says otherwise),
   ``systemInstruction``, ``tools``, and for audio answers ``inputAudioTranscription``
   and ``outputAudioTranscription``, so that both sides of the conversation come back
   as text too;
2. waits (``setup_timeout``) for ``setupComplete``;
3. sends the request's history as one ``clientContent`` with ``turnComplete: false``
   (context, not a question).

Then ``send_content`` is a ``clientContent`` turn (a tool's result: ``toolResponse``, each
result with its ``scheduling`` when it has one),
``send_realtime`` a ``realtimeInput`` ``audio`` or ``video`` chunk, ``send_activity``
``activityStart`` / ``activityEnd``. ``receive`` maps each server message:
``serverContent`` (``modelTurn`` parts, ``inputTranscription``,
``outputTranscription``, ``interrupted``, ``turnComplete``) and ``toolCall`` to
responses (each with the model's name as its ``model_version``), keeps
``usageMetadata`` for the next ``turnComplete``, and ignores
``setupComplete``, ``goAway`` and ``sessionResumptionUpdate``. A refused handshake is
an error of its HTTP status (401/403: :class:`AuthenticationError`); a close other
than 1000 is :class:`ServerError` (1011), :class:`RateLimited` (1013) or
:class:`BadRequestError` (others), with the server's reason, the key redacted.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from .._secrets import redact
from .._types import (
    Blob,
    Content,
    FunctionResponse,
    LlmRequest,
    LlmResponse,
    Transcription,
    UsageMetadata,
)
from ._errors import (
    BadRequestError,
    ConnectionFailed,
    MalformedResponse,
    ModelTimeout,
    RateLimited,
    ServerError,
)
from ._gemini_wire import (
    function_response_name,
    function_response_scheduling,
    gemini_parts,
    to_parts,
)
from ._http import classify_status, shared_ssl_context

__all__ = ["GeminiLiveConnection", "live_url", "open_gemini_live", "setup_message"]

_PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"


def live_url(base_url: str) -> str:
    """The Live API's WebSocket address for a Gemini base URL."""
    if base_url.startswith("https://"):
        return "wss://" + base_url.removeprefix("https://") + _PATH
    if base_url.startswith("http://"):
        return "ws://" + base_url.removeprefix("http://") + _PATH
    return base_url + _PATH


def _modalities(request: LlmRequest) -> list[str]:
    asked = request.config.get("response_modalities")
    return [str(m).upper() for m in asked] if asked else ["AUDIO"]


def setup_message(model: str, request: LlmRequest, payload: dict[str, Any]) -> dict[str, Any]:
    """The ``setup`` message for ``request``, from its generateContent ``payload``."""
    name = model if model.startswith("models/") else f"models/{model}"
    modalities = _modalities(request)
    setup: dict[str, Any] = {"model": name,
                             "generationConfig": {**payload.get("generationConfig", {}),
                                                  "responseModalities": modalities}}
    for key in ("systemInstruction", "tools", "toolConfig"):
        if key in payload:
            setup[key] = payload[key]
    if "AUDIO" in modalities:
        setup["inputAudioTranscription"] = {}
        setup["outputAudioTranscription"] = {}
    return {"setup": setup}


class GeminiLiveConnection:
    """One open Live API conversation (see the module)."""

    def __init__(self, socket: ClientConnection, model_version: str | None = None) -> None:
        self._socket = socket
        self._model_version = model_version  # on every response, as google-adk's connection sets it
        self._usage: UsageMetadata | None = None

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            await self._socket.send(json.dumps(message))
        except ConnectionClosed as closed:
            raise _closed_error(closed) from None

    async def send_content(self, content: Content, *, complete: bool = True) -> None:
        results = content.function_responses
        if results:
            await self.send_tool_results(results)
            return
        await self._send({"clientContent": {"turns": [{"role": content.role or "user", "parts": gemini_parts(content)}],
                                            "turnComplete": complete}})

    async def send_history(self, contents: Sequence[Content]) -> None:
        turns = [{"role": "model" if c.role == "model" else "user", "parts": gemini_parts(c)}
                 for c in contents if c.parts]
        if turns:
            await self._send({"clientContent": {"turns": turns, "turnComplete": False}})

    async def send_realtime(self, blob: Blob) -> None:
        kind = "video" if blob.mime_type.startswith("image/") else "audio"
        await self._send({"realtimeInput": {kind: {"mimeType": blob.mime_type,
                                                   "data": base64.b64encode(blob.data).decode()}}})

    async def send_activity(self, *, start: bool) -> None:
        await self._send({"realtimeInput": {"activityStart" if start else "activityEnd": {}}})

    async def send_audio_stream_end(self) -> None:
        await self._send({"realtimeInput": {"audioStreamEnd": True}})

    async def send_tool_results(self, results: Sequence[FunctionResponse]) -> None:
        await self._send({"toolResponse": {"functionResponses": [
            {**function_response_name(r), "response": r.response, **({"id": r.id} if r.id else {}),
             **function_response_scheduling(r)} for r in results]}})

    async def receive(self) -> AsyncIterator[LlmResponse]:
        while True:
            try:
                raw = await self._socket.recv()
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code == 1000:
                    return
                raise _closed_error(closed) from None
            for response in self.parse(_loads(raw)):
                yield response.model_copy(update={"model_version": self._model_version})

    def parse(self, message: dict[str, Any]) -> list[LlmResponse]:
        """The responses one server message makes (see the module)."""
        if isinstance(message.get("usageMetadata"), dict):
            usage = message["usageMetadata"]
            self._usage = UsageMetadata.counted(usage.get("promptTokenCount"), usage.get("responseTokenCount"),
                                                usage.get("totalTokenCount"))
        out: list[LlmResponse] = []
        call = message.get("toolCall")
        if isinstance(call, dict):
            raw_calls = [{"functionCall": c} for c in call.get("functionCalls") or [] if isinstance(c, dict)]
            parts = to_parts(raw_calls)
            if parts:
                out.append(LlmResponse(content=Content(role="model", parts=tuple(parts))))
        content = message.get("serverContent")
        if not isinstance(content, dict):
            return out
        heard, said = (_transcription(content.get(key)) for key in ("inputTranscription", "outputTranscription"))
        if heard is not None:
            out.append(LlmResponse(input_transcription=heard, partial=True))
        if said is not None:
            out.append(LlmResponse(output_transcription=said, partial=True))
        turn = content.get("modelTurn")
        if isinstance(turn, dict):
            parts = to_parts([p for p in turn.get("parts") or [] if isinstance(p, dict)])
            if parts:
                out.append(LlmResponse(content=Content(role="model", parts=tuple(parts)), partial=True))
        if content.get("interrupted"):
            out.append(LlmResponse(interrupted=True, partial=True))
        if content.get("turnComplete"):
            out.append(LlmResponse(turn_complete=True, usage_metadata=self._usage))
            self._usage = None
        return out


def _transcription(raw: Any) -> Transcription | None:
    if isinstance(raw, dict) and (raw.get("text") or raw.get("finished")):
        return Transcription(text=raw.get("text"), finished=raw.get("finished"))
    return None


def _loads(raw: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        raise MalformedResponse(f"the Live API sent what is not JSON: {redact(str(raw[:120]))}") from None
    if not isinstance(data, dict):
        raise MalformedResponse("the Live API sent a JSON value that is not an object")
    return data


def _closed_error(closed: ConnectionClosed) -> Exception:
    code = closed.rcvd.code if closed.rcvd is not None else 1006
    reason = redact(closed.rcvd.reason if closed.rcvd is not None else "the connection was lost")
    message = f"the Live API closed the conversation ({code}): {reason}"
    if code == 1011:
        return ServerError(message)
    if code == 1013:
        return RateLimited(message)
    if code == 1006:
        return ConnectionFailed(message)
    return BadRequestError(message)


@asynccontextmanager
async def open_gemini_live(url: str, headers: dict[str, str], setup: dict[str, Any], history: Sequence[Content],
                           *, setup_timeout: float) -> AsyncIterator[GeminiLiveConnection]:
    """Open the conversation (see the module, 1-3); close it when the block is left."""
    ssl = shared_ssl_context() if url.startswith("wss://") else None
    try:
        socket = await asyncio.wait_for(ws_connect(url, additional_headers=headers, ssl=ssl, max_size=2 ** 24),
                                        setup_timeout)
    except InvalidStatus as refused:
        response = refused.response
        raise classify_status(response.status_code, bytes(response.body or b""),
                              httpx.Headers(dict(response.headers.raw_items()))) from None
    except TimeoutError:
        raise ModelTimeout(f"the Live API did not answer the handshake within {setup_timeout} s") from None
    except (OSError, InvalidHandshake) as exc:
        raise ConnectionFailed(f"cannot reach the Live API: {redact(str(exc))}") from None
    try:
        connection = GeminiLiveConnection(socket, str(setup["setup"]["model"]).removeprefix("models/"))
        await connection._send(setup)
        try:
            first = _loads(await asyncio.wait_for(socket.recv(), setup_timeout))
        except TimeoutError:
            raise ModelTimeout(f"the Live API did not complete the setup within {setup_timeout} s") from None
        except ConnectionClosed as closed:
            raise _closed_error(closed) from None
        if "setupComplete" not in first:
            raise MalformedResponse(f"the Live API answered the setup with {redact(str(first)[:200])}")
        await connection.send_history(history)
        yield connection
    finally:
        await socket.close()
