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

In the actor runtime a model object lives in each run worker for the host's life
and serves the turns of every session that worker runs: a script of items is used
up across them, so for behaviour over many turns or sessions answer with a callable
of the request (it sees the whole history). ``requests`` keeps the last
``MAX_RECORDED`` requests only (a worker's model would otherwise grow for ever).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

from .._types import Content, FunctionCall, LlmRequest, LlmResponse, Part

__all__ = ["MAX_RECORDED", "Chunks", "ScriptedModel"]

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
    def __init__(self, responses: Iterable[Any] = (), *, fallback: Any = "OK", name: str = "scripted") -> None:
        self.name = name
        self.fallback = fallback
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


def _final(content: Content) -> LlmResponse:
    return LlmResponse(content=content, turn_complete=True, finish_reason="STOP",
                       usage_metadata={"prompt_token_count": 0, "candidates_token_count": len(content.text) // 4})


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
