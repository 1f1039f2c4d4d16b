"""Callbacks: agent callbacks run FIRST, then plugins (seed 001 row 2).

A callback slot holds one callable or a list; sync or async. For before/after
hooks the first non-None result short-circuits (skips the model or tool, or replaces
the output). Error hooks return an explicit tagged result instead:
``Retry()`` (bounded), ``Fallback(value)`` or ``Reraise()``; any other return value
is a :class:`CallbackError` (no None-means-something conventions).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._exceptions import AdkError

__all__ = ["CallbackError", "ErrorDecision", "Fallback", "Reraise", "Retry", "call_chain", "call_maybe_async"]


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


async def call_maybe_async(func: Any, *args: Any) -> Any:
    result = func(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def as_list(slot: Any) -> Sequence[Any]:
    if slot is None:
        return ()
    if isinstance(slot, (list, tuple)):
        return slot
    return (slot,)


async def call_chain(slot: Any, *args: Any) -> Any:
    """Call each callback of a slot in order; the first non-None result wins."""
    for callback in as_list(slot):
        result = await call_maybe_async(callback, *args)
        if result is not None:
            return result
    return None


def check_decision(result: Any, where: str) -> ErrorDecision:
    if isinstance(result, (Retry, Fallback, Reraise)):
        return result
    raise CallbackError(f"{where} must return Retry(), Fallback(value) or Reraise(), got {result!r}")
