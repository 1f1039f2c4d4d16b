"""Callbacks: agent callbacks run FIRST, then plugins (seed 001 row 2).

A callback slot holds one callable or a list; sync or async. For before/after
hooks the first non-None result short-circuits (skips the model or tool, or replaces
the output). Error hooks return an explicit tagged result instead:
``Retry()`` (bounded), ``Fallback(value)`` or ``Reraise()``; any other return value
is a :class:`CallbackError` (no None-means-something conventions).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._exceptions import AdkError
from .._types import LlmResponse

__all__ = ["KEYWORDS", "CallbackError", "ErrorDecision", "Fallback", "Reraise", "Retry", "call_callback", "call_chain",
           "call_maybe_async"]


class CallbackError(AdkError):
    """A callback returned something its slot does not accept."""


@dataclass(frozen=True)
class Retry:
    """Try the failed model call or tool again (at most ``max_attempts`` in all)."""

    max_attempts: int = 3


@dataclass(frozen=True)
class Fallback:
    """Use ``value`` (an LlmResponse for models, a dict for tools) instead."""

    value: Any


@dataclass(frozen=True)
class Reraise:
    """Let the error stand."""


ErrorDecision = Retry | Fallback | Reraise


async def call_maybe_async(func: Any, *args: Any, **kwargs: Any) -> Any:
    result = func(*args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


@functools.lru_cache(maxsize=1024)
def _by_keyword(func: Any, names: tuple[str, ...]) -> bool:
    """Whether ``func`` is to be called with google-adk's keywords ``names``: when it
    takes ``**kwargs``, or when each of its parameters is one of ``names`` and at least
    one of them can only be given by keyword. Any other callback (``def cb(ctx, request)``)
    is called by position."""
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return True
    named = [p for p in parameters if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    return (all(p.name in names for p in named)
            and any(p.kind is inspect.Parameter.KEYWORD_ONLY for p in named))


async def call_callback(func: Any, names: tuple[str, ...], *args: Any) -> Any:
    """Call one callback with ``args`` (google-adk's keywords ``names``, in order), by
    keyword or by position (:func:`_by_keyword`); await it if it is async."""
    try:
        keyword = _by_keyword(func, names)
    except TypeError:  # an unhashable callable
        keyword = False
    if keyword:
        return await call_maybe_async(func, **dict(zip(names, args, strict=True)))
    return await call_maybe_async(func, *args)


def as_list(slot: Any) -> Sequence[Any]:
    if slot is None:
        return ()
    if isinstance(slot, (list, tuple)):
        return slot
    return (slot,)


#: google-adk's keywords for each callback slot's arguments, in order.
KEYWORDS = {
    "agent": ("callback_context",),
    "before_model": ("callback_context", "llm_request"),
    "after_model": ("callback_context", "llm_response"),
    "on_model_error": ("callback_context", "llm_request", "error"),
    "before_tool": ("tool", "args", "tool_context"),
    "after_tool": ("tool", "args", "tool_context", "tool_response"),
    "on_tool_error": ("tool", "args", "tool_context", "error"),
}


async def call_chain(slot: Any, kind: str, *args: Any) -> Any:
    """Call each callback of a slot (of ``kind``, a key of :data:`KEYWORDS`) in
    order; the first non-None result wins."""
    for callback in as_list(slot):
        result = await call_callback(callback, KEYWORDS[kind], *args)
        if result is not None:
            return result
    return None


def check_decision(result: Any, where: str) -> ErrorDecision:
    """An error hook's answer as a decision. google-adk's hooks answer with the value
    to use instead (an LlmResponse for a model, a dict for a tool): that is a
    :class:`Fallback` here."""
    if isinstance(result, (Retry, Fallback, Reraise)):
        return result
    if isinstance(result, (dict, LlmResponse)):
        return Fallback(result)
    raise CallbackError(f"{where} must return Retry(), Fallback(value), Reraise() or the value to use, got {result!r}")
