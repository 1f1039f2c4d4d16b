"""google-adk's ``LiveRequestQueue`` and ``LiveRequest``: how a live run's caller hands
it its inputs, one :class:`LiveRequest` at a time, in order.

``LiveRequest`` is ours (``adk_actors.types``'s fields are google-adk's; it refuses a
request that says nothing, which google-adk's takes and ignores). The queue's send
methods each put one request on it at once (they never wait, and may be called from
the run's event loop's code only, as google-adk's): ``send_content`` a turn (with
``partial`` the model waits for more), ``send_realtime`` a chunk of audio or a video
frame, ``send_activity_start`` / ``send_activity_end`` the user starting / stopping
to speak, ``send_audio_stream_end`` the microphone off, ``close`` the end of the run
(after which :attr:`closed` stays True), ``send`` a request made by hand (one with
``close`` closes the queue too). A live run reads it with ``await queue.get()``: the
engine's live invocation (``adk_actors.engine.run_live_invocation``) takes the queue
as its inputs. Content and blobs may be ours or google.genai's (turned into ours).
A live run also gives one of these queues to a streaming tool that takes an
``input_stream: LiveRequestQueue``, with a copy of the run's input on it
(``engine._live_tools``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from .._types import Blob, Content, LiveRequest
from ..types import ours

__all__ = ["LiveRequest", "LiveRequestQueue"]


class LiveRequestQueue:
    """The inputs of one live run, first in first out (see the module)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[LiveRequest] = asyncio.Queue()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether the caller closed the queue (stays True once the close is read)."""
        return self._closed

    def close(self) -> None:
        """Mark the queue closed, then put the request ``close`` on it."""
        self._closed = True
        self._queue.put_nowait(LiveRequest(close=True))

    def send_content(self, content: Any, partial: bool = False) -> None:
        """Put a turn on the queue (``partial``: more of the turn follows)."""
        self._queue.put_nowait(LiveRequest(content=ours(content, Content), partial=partial))

    def send_realtime(self, blob: Any) -> None:
        """Put a chunk of audio or a video frame on the queue."""
        self._queue.put_nowait(LiveRequest(blob=ours(blob, Blob)))

    def send_activity_start(self) -> None:
        """Put "the user starts speaking" on the queue (for a client that detects it)."""
        self._queue.put_nowait(LiveRequest(activity_start={}))

    def send_activity_end(self) -> None:
        """Put "the user stopped speaking" on the queue (for a client that detects it)."""
        self._queue.put_nowait(LiveRequest(activity_end={}))

    def send_audio_stream_end(self) -> None:
        """Put "the audio stream ended" on the queue (the model then answers what it heard)."""
        self._queue.put_nowait(LiveRequest(audio_stream_end=True))

    def send(self, req: LiveRequest) -> None:
        """Put ``req`` on the queue as it is; one with ``close`` marks the queue closed first."""
        if req.close:
            self._closed = True
        self._queue.put_nowait(req)

    async def get(self) -> LiveRequest:
        """The next request, waiting for one when the queue is empty."""
        return await self._queue.get()
