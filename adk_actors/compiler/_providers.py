"""Instruction providers: a string, a 1-arity callable, ``(module, func)`` or ``(module, func, extra_args)``.

A module may be given as a module object or an import path. Definition-time checks
(:func:`adk_actors._callables.check_provider`) catch a wrong form or arity when the
agent is built; at compile time (:func:`resolve_provider`) a provider that raises is logged as a
warning naming the agent, and yields "" so the agent can still answer.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Callable
from typing import Any

from .._callables import check_provider, provider_target
from ._targets import root_of

__all__ = ["InstructionProvider", "Verbatim", "await_instruction_providers", "await_providers", "check_provider",
           "resolve_provider"]

InstructionProvider = str | Callable[[Any], Any] | tuple[Any, ...] | None

_log = logging.getLogger("adk_actors.compiler")


class Verbatim(str):
    """A provider's text to be used as it is: its ``{...}`` are not placeholders (for
    a provider that quotes what users or models wrote)."""

    __slots__ = ()


def resolve_provider(provider: Any, ctx: Any, *, agent_name: str = "?") -> str | None:
    """Turn a provider into text: None -> None; str as is; call the others with ``ctx``.

    A non-str result is coerced with ``str()`` (None becomes ""). A provider that
    raises is logged as a warning with the agent's name and yields "".
    """
    if provider is None:
        return None
    if isinstance(provider, str):
        return provider
    provided = getattr(ctx, "provided", None) or {}
    if id(provider) in provided:
        text: str = provided[id(provider)]
        return text
    try:
        if isinstance(provider, tuple):
            func, extra = provider_target(provider)
            result = func(ctx, *extra)
        else:
            result = provider(ctx)
    except Exception as exc:
        _log.warning("instruction provider of agent %r raised %s: %s", agent_name, type(exc).__name__, exc)
        return ""
    if result is None:
        return ""
    return result if isinstance(result, str) else str(result)


def _async_target(provider: Any) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
    """The function and extra args of a provider whose call gives an awaitable (an
    ``async def``, or an object whose ``__call__`` is one), else None."""
    if provider is None or isinstance(provider, str):
        return None
    func, extra = provider_target(provider) if isinstance(provider, tuple) else (provider, ())
    is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)
    return (func, extra) if is_async else None


async def await_providers(ctx: Any, *owners: tuple[Any, str]) -> Any:
    """``ctx`` (a :class:`CompileContext`) with the texts of the async providers among
    ``owners`` ((agent, attribute) pairs) in its ``provided``: each called with ``ctx``
    and awaited, in order; its text coerced as :func:`resolve_provider` does, and one
    that raises logged as a warning naming the agent and given as "". ``ctx`` itself
    when there is none."""
    texts: dict[int, str] = {}
    for agent, attribute in owners:
        provider = getattr(agent, attribute, None)
        target = _async_target(provider)
        if target is None:
            continue
        func, extra = target
        try:
            result = await func(ctx, *extra)
        except Exception as exc:
            _log.warning("instruction provider of agent %r raised %s: %s", getattr(agent, "name", "?"),
                         type(exc).__name__, exc)
            result = ""
        texts[id(provider)] = "" if result is None else result if isinstance(result, str) else str(result)
    return dataclasses.replace(ctx, provided=texts) if texts else ctx


async def await_instruction_providers(ctx: Any, agent: Any) -> Any:
    """:func:`await_providers` for what a request of ``agent`` reads: its own
    ``instruction`` and its root's ``global_instruction`` (``ctx.root_agent``'s root),
    the one rule for every kind of request (a flow's model step, a live run's setup)."""
    return await await_providers(ctx, (agent, "instruction"), (root_of(agent, ctx.root_agent), "global_instruction"))
