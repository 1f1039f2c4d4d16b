"""google-adk's ``google.adk.utils.context_utils``: which parameter of a function takes
the context (``ToolContext``, ``CallbackContext``, ``Context``)."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from contextlib import aclosing
from types import UnionType
from typing import Any

from ..agents.context import Context

__all__ = ["Aclosing", "find_context_parameter"]

#: google-adk's old name for :func:`contextlib.aclosing`
Aclosing = aclosing


def _is_context(annotation: Any) -> bool:
    """Is ``annotation`` the context class (or a subclass, such as ``ToolContext``),
    or a union (``X | None``, ``Optional[X]``) with one among its members?"""
    if typing.get_origin(annotation) in (typing.Union, UnionType):
        return any(_is_context(member) for member in typing.get_args(annotation))
    return isinstance(annotation, type) and issubclass(annotation, Context)


def _find(func: Callable[..., Any]) -> str | None:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # a forward reference that does not resolve: the raw annotations
        hints = {}
    return next((name for name, parameter in signature.parameters.items()
                 if _is_context(hints.get(name, parameter.annotation))), None)


_cached = functools.lru_cache(maxsize=1024)(_find)


def find_context_parameter(func: Callable[..., Any] | None) -> str | None:
    """The name of ``func``'s first parameter annotated with the context class (see
    :func:`_is_context`; string annotations resolved where they can be), or None: also
    for None and for a callable without a signature. Answers are cached by
    function; an unhashable callable is inspected each time."""
    if func is None:
        return None
    try:
        hash(func)
    except TypeError:
        return _find(func)
    return _cached(func)
