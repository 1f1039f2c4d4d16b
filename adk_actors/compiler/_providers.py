"""Instruction providers: a string, a 1-arity callable, ``(module, func)`` or ``(module, func, extra_args)``.

A module may be given as a module object or an import path. Definition-time checks
(:func:`check_provider`) catch a wrong form or arity when the agent is built; at
compile time (:func:`resolve_provider`) a provider that raises is logged as a
warning naming the agent, and yields "" so the agent can still answer.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .._exceptions import AgentDefinitionError

__all__ = ["InstructionProvider", "check_provider", "resolve_provider"]

InstructionProvider = str | Callable[[Any], Any] | tuple[Any, ...] | None

_log = logging.getLogger("adk_actors.compiler")


def _accepts_positional(func: Callable[..., Any], count: int) -> bool:
    try:
        inspect.signature(func).bind(*([None] * count))
    except TypeError:
        return False
    except ValueError:  # no signature (some builtins): give it the benefit of the doubt
        return True
    return True


def _module(ref: Any) -> ModuleType:
    if isinstance(ref, ModuleType):
        return ref
    if isinstance(ref, str):
        return importlib.import_module(ref)
    raise AgentDefinitionError(f"a provider's module must be a module or an import path, got {ref!r}")


def _tuple_target(provider: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    if len(provider) not in (2, 3):
        raise AgentDefinitionError(f"a provider tuple is (module, func) or (module, func, extra_args), got {provider!r}")
    module = _module(provider[0])
    name = provider[1]
    if not isinstance(name, str):
        raise AgentDefinitionError(f"a provider tuple names its function by string, got {name!r}")
    func = getattr(module, name, None)
    if not callable(func):
        raise AgentDefinitionError(f"{module.__name__}.{name} is not a function")
    extra = tuple(provider[2]) if len(provider) == 3 else ()
    return func, extra


def check_provider(provider: Any, what: str) -> None:
    """Raise :class:`AgentDefinitionError` unless ``provider`` is a valid instruction provider."""
    if provider is None or isinstance(provider, str):
        return
    if isinstance(provider, tuple):
        try:
            func, extra = _tuple_target(provider)
        except ImportError as exc:
            raise AgentDefinitionError(f"{what}: cannot import provider module: {exc}") from exc
        if not _accepts_positional(func, 1 + len(extra)):
            raise AgentDefinitionError(
                f"{what}: {func.__qualname__} must accept (ctx{', ' + ', '.join('arg' for _ in extra) if extra else ''})"
            )
        return
    if callable(provider):
        if not _accepts_positional(provider, 1):
            raise AgentDefinitionError(f"{what}: a provider callable takes exactly one argument (the context)")
        return
    raise AgentDefinitionError(
        f"{what} must be a string, a callable(ctx), (module, func) or (module, func, extra_args); got {provider!r}"
    )


def resolve_provider(provider: Any, ctx: Any, *, agent_name: str = "?") -> str | None:
    """Turn a provider into text: None -> None; str as is; call the others with ``ctx``.

    A non-str result is coerced with ``str()`` (None becomes ""). A provider that
    raises is logged as a warning with the agent's name and yields "".
    """
    if provider is None:
        return None
    if isinstance(provider, str):
        return provider
    try:
        if isinstance(provider, tuple):
            func, extra = _tuple_target(provider)
            result = func(ctx, *extra)
        else:
            result = provider(ctx)
    except Exception as exc:
        _log.warning("instruction provider of agent %r raised %s: %s", agent_name, type(exc).__name__, exc)
        return ""
    if result is None:
        return ""
    return result if isinstance(result, str) else str(result)
