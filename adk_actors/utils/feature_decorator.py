"""google-adk's ``google.adk.utils.feature_decorator``: the label-only decorators
``experimental`` and ``working_in_progress``.

Either is used bare (``@experimental``), called (``@experimental()``) or with a
message (``@experimental("...")``), on a class (checked when an instance is made)
or on a callable (checked at each call). ``experimental`` warns once per message
(``UserWarning``, ``[EXPERIMENTAL] name: message``) unless
``ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS`` is on; ``working_in_progress``
raises ``RuntimeError`` (``[WIP] name: message``) unless ``ADK_ALLOW_WIP_FEATURES``
is on. An enum given where a message goes is a ``TypeError``; anything else
decorated (neither class nor callable) is a ``TypeError``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar, cast

from .env_utils import is_env_enabled

__all__ = ["experimental", "working_in_progress"]

T = TypeVar("T")

_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)


def _check(message: str, *, blocks: bool, bypass: str) -> None:
    """Nothing when ``bypass`` is on; else raise ``RuntimeError`` (``blocks``) or warn once."""
    if is_env_enabled(bypass):
        return
    if blocks:
        raise RuntimeError(message)
    _warn_once(message)


def _decorator(label: str, message: str, *, blocks: bool, bypass: str) -> Callable[[T], T]:
    def decorate(target: T) -> T:
        text = f"[{label}] {getattr(target, '__name__', type(target).__name__)}: {message}"
        if isinstance(target, type):
            cls = cast(Any, target)
            original = cls.__init__

            @functools.wraps(original)
            def init(self: Any, *args: Any, **kwargs: Any) -> Any:
                _check(text, blocks=blocks, bypass=bypass)
                return original(self, *args, **kwargs)

            cls.__init__ = init
            return target
        if callable(target):
            function = cast(Callable[..., Any], target)

            @functools.wraps(function)
            def call(*args: Any, **kwargs: Any) -> Any:
                _check(text, blocks=blocks, bypass=bypass)
                return function(*args, **kwargs)

            return cast(T, call)
        raise TypeError(f"@{label.lower()} decorates classes and callables only, not {target!r}")

    return decorate


def _feature(label: str, default: str, *, blocks: bool, bypass: str) -> Any:
    def factory(message_or_obj: Any = None) -> Any:
        if message_or_obj is not None and (isinstance(message_or_obj, type) or callable(message_or_obj)):
            return _decorator(label, default, blocks=blocks, bypass=bypass)(message_or_obj)
        if isinstance(message_or_obj, Enum):
            raise TypeError(f"this label-only decorator takes a message, not {message_or_obj!r}")
        message = message_or_obj if isinstance(message_or_obj, str) else default
        return _decorator(label, message, blocks=blocks, bypass=bypass)

    return factory


#: warns once per message when used; ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS silences it
experimental = _feature(
    "EXPERIMENTAL", "This feature is experimental: it may change or go away in a later version without notice.",
    blocks=False, bypass="ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS")

#: raises RuntimeError when used, unless ADK_ALLOW_WIP_FEATURES is on
working_in_progress = _feature(
    "WIP", "This feature is a work in progress and is not meant to be used yet.",
    blocks=True, bypass="ADK_ALLOW_WIP_FEATURES")
