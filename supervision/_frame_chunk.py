"""Calls made from the start of a fresh frame chunk, so a forked actor's loop never sits
on a chunk's edge.

CPython 3.11 keeps a thread's frames in chunks of 16 KiB and frees a chunk as soon as
the frame that opened it returns (python/cpython gh-142183; later versions keep one
chunk back). A loop whose own frame sits just below a chunk's end pays an ``mmap`` and
a ``munmap`` of 16 KiB, and a page fault, for every call it makes that crosses the edge.
A Thespian actor's loop runs at whatever depth its parent forked it from, so some
actors thrashed and others did not: a session partition made about 130 such pairs per
turn (``strace -c``), a third of a millisecond of the turn's CPU, while its run workers
made none.

:func:`call_on_fresh_chunk` calls through a frame larger than any chunk's free space
(its ``_SLOTS`` local slots, never assigned), which CPython therefore puts in a chunk of
its own with about 32 KiB free above it. The call, and everything the forked child
runs, lives in that chunk: the child never returns into the padding frame, so the chunk
is held for the child's whole life and its loop has room to call deep without crossing
an edge. The price is one 64 KiB chunk per call in flight, nothing per message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["call_on_fresh_chunk"]

T = TypeVar("T")

#: Local slots of the padding frame: 8 bytes each, about 33 KiB, more than any chunk's
#: free space (a 16 KiB chunk, or what a padding chunk leaves), so it always opens a
#: new chunk (64 KiB: CPython sizes a chunk to the frame plus 1,000 slots, in powers of two).
_SLOTS = 4200

_SOURCE = (
    "def padded(call, args, kwargs, spill=False):\n"
    "    if spill:\n"
    f"        {' = '.join(f'_{index}' for index in range(_SLOTS))} = None\n"
    "    return call(*args, **kwargs)\n"
)
_namespace: dict[str, Any] = {}
exec(compile(_SOURCE, "<supervision._frame_chunk>", "exec"), _namespace)
_padded: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any] = _namespace["padded"]


def call_on_fresh_chunk(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, from a frame at the start of a fresh frame chunk (see
    the module). Exceptions pass through unchanged."""
    result: T = _padded(call, args, kwargs)
    return result
