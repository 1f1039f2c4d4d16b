"""Progress reports of an MCP tool call, as google-adk 2.13 names them.

* :class:`ProgressFnT`: what a progress callback is, an ``async`` callable taking
  ``progress``, ``total`` and ``message`` positionally (the ``mcp`` SDK's shape,
  declared here so a callback written against either fits both);
* :class:`ProgressCallbackFactory`: a plain callable that makes the callback of one
  call from the tool's name and ``callback_context`` (the call's tool context, which
  reaches the session's state), or gives None for no reports;
* :func:`resolve_progress_callback`: the callback of one call, from what a toolset or a
  tool was given (either of the two, or None).
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, runtime_checkable

__all__ = ["ProgressCallbackFactory", "ProgressFnT", "resolve_progress_callback"]


class ProgressFnT(Protocol):
    """An ``async`` callable awaited with each progress report of a pending call."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


@runtime_checkable
class ProgressCallbackFactory(Protocol):
    """A plain callable giving the :class:`ProgressFnT` of one call (or None): called
    with the tool's name and, by keyword, ``callback_context`` (None when the call has
    no context); it should take ``**kwargs`` too, as more keywords may come."""

    def __call__(self, tool_name: str, *, callback_context: Any = None, **kwargs: Any) -> ProgressFnT | None: ...


def _is_async_callable(target: Any) -> bool:
    """Whether calling ``target`` gives a coroutine (an ``async def``, or an object
    whose ``__call__`` is one)."""
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(type(target).__call__)


def resolve_progress_callback(given: Any, tool_name: str, tool_context: Any) -> ProgressFnT | None:
    """The progress callback of one call of the tool ``tool_name``, in order: None when
    ``given`` is None; ``given`` itself when calling it gives a coroutine (a
    :class:`ProgressFnT`); otherwise ``given`` is taken for a
    :class:`ProgressCallbackFactory` and what it returns for ``tool_name`` and
    ``callback_context=tool_context`` is the callback (None: no reports); an error the
    factory raises is the call's. google-adk 2.13 decides the same way."""
    if given is None:
        return None
    if _is_async_callable(given):
        callback: ProgressFnT = given
        return callback
    made: ProgressFnT | None = given(tool_name, callback_context=tool_context)
    return made
