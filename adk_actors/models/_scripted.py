"""ScriptedModel: an offline model for tests and demos (like pydantic-ai's TestModel).

Responses are given in order; each is one of:

* a string -> a text answer;
* a :class:`FunctionCall`, or a list of them -> tool calls (ids are added if missing);
* :class:`Chunks` -> a text answer streamed in these pieces (with an optional delay);
  the only answer that sends partials: a streamed run gets exactly the partials its
  script names, as a provider sends only the chunks it has;
* an :class:`LlmResponse` or :class:`Content` -> used as is;
* an exception instance -> raised (to test error handling);
* a callable ``(request) -> any of the above`` -> called with the compiled request.

After the script runs out, every call answers ``fallback`` (default "OK"; it may be
a callable of the request too). Every request received is recorded in ``requests``,
so tests can assert on what the compiler produced. Importable by path
(``adk_actors.models:ScriptedModel``) so actor processes can build it.

It also holds live conversations (``connect``, the protocol of ``_live``), as a
stand-in for a voice model: a turn of the user is a ``send_content``, or the audio
received since the last answer once it reaches ``live_turn_bytes`` (1 s of 16 kHz
16-bit PCM by default: the stand-in for the server's voice activity detection), or an
``activity_end`` / ``audio_stream_end``. A spoken turn is first reported as an
``input_transcription``: ``hear(audio)`` when given, else "(N.N s of audio)". The
answer is the script's next item: text comes as text parts, or, when the request's
``config["response_modalities"]`` is ``AUDIO`` (the default, as for Gemini), as
``output_transcription`` pieces each followed by a chunk of 24 kHz PCM (a quiet tone,
10 ms per character); tool calls come as calls, and the tools' results make the next
answer. Every answer ends with ``turn_complete``.

In the actor runtime a model object lives in each run worker for the host's life
and serves the turns of every session that worker runs: a script of items is used
up across them, so for behaviour over many turns or sessions answer with a callable
of the request (it sees the whole history). ``requests`` keeps the last
``MAX_RECORDED`` requests only (a worker's model would otherwise grow for ever).
"""

from __future__ import annotations

import asyncio
import math
import struct
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from .._types import (
    Blob,
    Content,
    FunctionCall,
    FunctionResponse,
    LlmRequest,
    LlmResponse,
    Part,
    Transcription,
    UsageMetadata,
)

__all__ = ["MAX_RECORDED", "Chunks", "ScriptedLiveConnection", "ScriptedModel"]

#: How many of the latest requests a ScriptedModel keeps in ``requests``.
MAX_RECORDED = 1000


@dataclass(frozen=True)
class Chunks:
    """A streamed text answer: these pieces, ``delay`` seconds apart."""

    pieces: tuple[str, ...]
    delay: float = 0.0

    def __init__(self, pieces: Iterable[str], delay: float = 0.0) -> None:
        object.__setattr__(self, "pieces", tuple(pieces))
        object.__setattr__(self, "delay", delay)


class ScriptedModel:
    def __init__(self, responses: Iterable[Any] = (), *, fallback: Any = "OK", name: str = "scripted",
                 live_turn_bytes: int = 32_000, hear: Callable[[bytes], str] | None = None) -> None:
        self.name = name
        self.fallback = fallback
        self.live_turn_bytes = live_turn_bytes
        self.hear = hear
        self._script = list(responses)
        self._lock = threading.Lock()
        self.requests: list[LlmRequest] = []

    def add(self, *responses: Any) -> None:
        with self._lock:
            self._script.extend(responses)

    def _next(self, request: LlmRequest) -> Any:
        with self._lock:
            self.requests.append(request)
            if len(self.requests) > MAX_RECORDED:
                del self.requests[: len(self.requests) - MAX_RECORDED]
            item = self._script.pop(0) if self._script else self.fallback
        while callable(item) and not isinstance(item, type):
            item = item(request)
        return item

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        item = self._next(request)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Chunks):
            if stream:
                for piece in item.pieces:
                    if item.delay:
                        await asyncio.sleep(item.delay)
                    yield LlmResponse(content=Content(role="model", parts=(Part(text=piece),)), partial=True)
            yield _final(Content(role="model", parts=(Part(text="".join(item.pieces)),)))
            return
        yield _to_response(item)  # streamed or not: partials only where the script says (Chunks)

    @asynccontextmanager
    async def connect(self, request: LlmRequest) -> AsyncIterator[ScriptedLiveConnection]:
        """A live conversation (see the module); closed when the block is left."""
        connection = ScriptedLiveConnection(self, request)
        try:
            yield connection
        finally:
            connection.close()

    def answer(self, request: LlmRequest) -> Any:
        """The script's next item for ``request`` (recorded in ``requests``)."""
        return self._next(request)


class ScriptedLiveConnection:
    """A ScriptedModel's live conversation (see the module)."""

    def __init__(self, model: ScriptedModel, request: LlmRequest) -> None:
        self._model = model
        self._request = request
        self._contents = list(request.contents)
        self._audio = bytearray()
        self._out: asyncio.Queue[LlmResponse | None] = asyncio.Queue()
        modalities = request.config.get("response_modalities") or ["AUDIO"]
        self._speaks = "AUDIO" in [str(m).upper() for m in modalities]

    def close(self) -> None:
        self._out.put_nowait(None)

    async def send_content(self, content: Content, *, complete: bool = True) -> None:
        if content.function_responses:
            await self.send_tool_results(content.function_responses)
            return
        self._contents.append(content)
        if complete:
            self._answer()

    async def send_realtime(self, blob: Blob) -> None:
        if not blob.mime_type.startswith("audio/"):
            return  # video frames are seen, not answered
        self._audio.extend(blob.data)
        if len(self._audio) >= self._model.live_turn_bytes:
            self._end_of_speech()

    async def send_activity(self, *, start: bool) -> None:
        if not start and self._audio:
            self._end_of_speech()

    async def send_audio_stream_end(self) -> None:
        if self._audio:
            self._end_of_speech()

    async def send_tool_results(self, results: Sequence[FunctionResponse]) -> None:
        self._contents.append(Content(role="user", parts=tuple(Part(function_response=r) for r in results)))
        self._answer()

    async def receive(self) -> AsyncIterator[LlmResponse]:
        while (response := await self._out.get()) is not None:
            yield response

    def _end_of_speech(self) -> None:
        audio, self._audio = bytes(self._audio), bytearray()
        heard = self._model.hear(audio) if self._model.hear else f"({len(audio) / 32_000:.1f} s of audio)"
        self._out.put_nowait(LlmResponse(input_transcription=Transcription(text=heard, finished=True), partial=True))
        self._contents.append(Content.user(heard))
        self._answer()

    def _answer(self) -> None:
        item = self._model.answer(self._request.model_copy(update={"contents": tuple(self._contents)}))
        if isinstance(item, BaseException):
            raise item
        pieces = list(item.pieces) if isinstance(item, Chunks) else None
        response = _final(Content.model("".join(pieces))) if pieces is not None else _to_response(item)
        content = response.content or Content(role="model")
        self._contents.append(content)
        if content.function_calls:
            self._out.put_nowait(LlmResponse(content=content))
            return  # the tools' results make the next answer
        for piece in pieces if pieces is not None else [content.text]:
            if self._speaks:
                self._out.put_nowait(LlmResponse(output_transcription=Transcription(text=piece), partial=True))
                self._out.put_nowait(LlmResponse(content=Content(role="model", parts=(
                    Part(inline_data=Blob(mime_type="audio/pcm;rate=24000", data=_tone(len(piece)))),)), partial=True))
            else:
                self._out.put_nowait(LlmResponse(content=Content.model(piece), partial=True))
        self._out.put_nowait(LlmResponse(turn_complete=True, usage_metadata=response.usage_metadata))


def _tone(characters: int) -> bytes:
    """A quiet 440 Hz tone of 10 ms per character, as 16-bit 24 kHz mono PCM."""
    samples = 240 * max(characters, 1)
    return struct.pack(f"<{samples}h", *(int(800 * math.sin(2 * math.pi * 440 * i / 24_000)) for i in range(samples)))


def _final(content: Content) -> LlmResponse:
    return LlmResponse(content=content, turn_complete=True, finish_reason="STOP",
                       usage_metadata=UsageMetadata.counted(0, len(content.text) // 4))


def _with_id(call: FunctionCall) -> FunctionCall:
    return call if call.id else call.model_copy(update={"id": f"call-{uuid.uuid4().hex[:12]}"})


def _to_response(item: Any) -> LlmResponse:
    if isinstance(item, LlmResponse):
        return item
    if isinstance(item, Content):
        return _final(item)
    if isinstance(item, str):
        return _final(Content(role="model", parts=(Part(text=item),)))
    if isinstance(item, FunctionCall):
        item = [item]
    if isinstance(item, list) and all(isinstance(c, FunctionCall) for c in item):
        parts = tuple(Part(function_call=_with_id(c)) for c in item)
        return _final(Content(role="model", parts=parts))
    raise TypeError(f"ScriptedModel cannot answer with {item!r}")


def call(tool_name: str, /, **args: Any) -> FunctionCall:
    """Shorthand for a scripted tool call: ``call("get_weather", city="Paris")``."""
    return FunctionCall(name=tool_name, args=args)
