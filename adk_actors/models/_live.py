"""The live model protocol: one bidirectional conversation with a model (voice, video).

A model that can hold one has ``connect(request)``: an async context manager that
opens the conversation with the request's system instruction, tools, history and
``config["response_modalities"]``, and gives a :class:`LiveConnection`. On it the
caller sends, in any order and as they come: turns (``send_content``; with
``complete=False`` the model waits for more before it answers), chunks of
audio or video frames (``send_realtime``), the user's activity start and end (when the
client detects speech itself) and tools' results; and reads ``receive()``: the model's
answers as :class:`LlmResponse` pieces (text or audio parts, ``input_transcription`` /
``output_transcription``, tool calls, ``interrupted``, and ``turn_complete`` at the end
of each answer). ``receive()`` ends when the model closes the conversation; a failure
is a typed :class:`ModelError`, never a silent end. Leaving the context closes it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

from .._types import Blob, Content, FunctionResponse, LlmRequest, LlmResponse

__all__ = ["LiveConnection", "LiveModel", "is_live_model"]


@runtime_checkable
class LiveConnection(Protocol):
    async def send_content(self, content: Content, *, complete: bool = True) -> None: ...

    async def send_realtime(self, blob: Blob) -> None: ...

    async def send_activity(self, *, start: bool) -> None: ...

    async def send_audio_stream_end(self) -> None: ...

    async def send_tool_results(self, results: Sequence[FunctionResponse]) -> None: ...

    def receive(self) -> AsyncIterator[LlmResponse]: ...


@runtime_checkable
class LiveModel(Protocol):
    name: str

    def connect(self, request: LlmRequest) -> AbstractAsyncContextManager[LiveConnection]: ...


def is_live_model(model: object) -> bool:
    """Can ``model`` hold a live conversation (has ``connect``)?"""
    return callable(getattr(model, "connect", None))
