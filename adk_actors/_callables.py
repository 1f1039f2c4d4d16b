"""The callables an agent definition holds, checked when the definition is built.

* Instruction providers: a string, a 1-arity callable, ``(module, func)`` or
  ``(module, func, extra_args)``; a module is a module object or an import path.
  :func:`check_provider` refuses a wrong form or arity; :func:`provider_target`
  gives the function and the extra arguments to call it with.
* Function tools: :func:`describe_function` derives what a model is told about a
  Python function (its name, its description from the docstring, a JSON schema of
  its parameters from the type hints; the context parameter, the first annotated
  with a context type (google-adk's ``Context``, ``ToolContext``, ``CallbackContext``,
  registered by :func:`register_context_type`), else one named ``tool_context``, is
  injected, never declared)
  and the pydantic model its arguments are validated with. A function given as
  ``"module:func"`` or ``(module, func, extra_args)`` is resolved first. Results
  are cached per function, so the engine can wrap a plain function every turn at
  no cost.
* Context compressors: anything with ``compress(messages)``.

This module sits at the bottom of the layers: agent definitions validate with it,
the compiler declares tools with it, and the engine runs what it describes.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType, UnionType
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field, create_model

from supervision.lowlevel import import_object

from ._exceptions import AgentDefinitionError
from ._types import Content, FunctionDeclaration

__all__ = [
    "Compressor",
    "FunctionDescription",
    "check_provider",
    "describe_function",
    "is_plain_function",
    "provider_target",
    "register_context_type",
    "resolve_function",
]

_ARG_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


@runtime_checkable
class Compressor(Protocol):
    """Chooses which history messages a request keeps (see :mod:`adk_actors.compiler`)."""

    def compress(self, messages: Sequence[Content]) -> list[Content]: ...


# -- instruction providers -------------------------------------------------------------

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


def provider_target(provider: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The function a ``(module, func[, extra_args])`` provider names, and its extra args."""
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
            func, extra = provider_target(provider)
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


# -- function tools --------------------------------------------------------------------

def is_plain_function(tool: Any) -> bool:
    """A function given as a tool as it is (the engine wraps it in a FunctionTool)."""
    return (callable(tool) and not hasattr(tool, "declaration") and not hasattr(tool, "get_tools")
            and not isinstance(tool, FunctionDeclaration))


def resolve_function(func: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A tool's function and the extra arguments passed before the model's: from a
    callable, ``"module:func"`` or ``(module, func[, extra_args])`` (the Elixir MFA)."""
    if isinstance(func, str):
        module_name, _, attr = func.partition(":")
        if not module_name or not attr:
            raise AgentDefinitionError(f"a tool path looks like 'package.module:function', got {func!r}")
        try:
            target = import_object(func)
        except AttributeError:
            target = None
        if not callable(target):
            raise AgentDefinitionError(f"{func} is not a function")
        return target, ()
    if isinstance(func, tuple):
        if len(func) not in (2, 3):
            raise AgentDefinitionError(f"a tool tuple is (module, func) or (module, func, extra_args), got {func!r}")
        module = func[0] if isinstance(func[0], ModuleType) else importlib.import_module(func[0])
        target = getattr(module, func[1], None)
        if not callable(target):
            raise AgentDefinitionError(f"{module.__name__}.{func[1]} is not a function")
        return target, tuple(func[2]) if len(func) == 3 else ()
    if callable(func):
        return func, ()
    raise AgentDefinitionError(f"a FunctionTool needs a function, 'module:func' or a tuple; got {func!r}")


def _docstring(func: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(func) or ""
    description_lines: list[str] = []
    params: dict[str, str] = {}
    section = "description"
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section = "args"
            continue
        if stripped.endswith(":") and stripped[:-1] in ("Returns", "Raises", "Yields", "Examples", "Example"):
            section = "other"
            continue
        if section == "description":
            description_lines.append(line)
        elif section == "args":
            match = _ARG_LINE.match(line)
            if match:
                params[match.group(1)] = match.group(2).strip()
    return "\n".join(description_lines).strip(), params


def _declared_parameters(func: Callable[..., Any], fields: dict[str, Any]) -> dict[str, Any] | None:
    """The parameters' JSON schema as google-adk 2.13 declares it (its default
    ``JSON_SCHEMA_FOR_FUNC_DECL``): pydantic's schema of a model named
    ``<function name>Params`` with each parameter's type and default (titles kept, no
    per-parameter descriptions), or None for a function with no parameter."""
    if not fields:
        return None
    plain: dict[str, Any] = {key: (annotation, spec.default) for key, (annotation, spec) in fields.items()}
    model: type[BaseModel] = create_model(f"{getattr(func, '__name__', 'function')}Params", **plain)
    return model.model_json_schema()


@dataclass(frozen=True)
class FunctionDescription:
    """What a model is told about a function, and how its arguments are checked."""

    func: Callable[..., Any]
    extra_args: tuple[Any, ...]
    name: str
    description: str
    arguments: type[BaseModel]
    declaration: FunctionDeclaration
    context_param: str | None  # the parameter the tool's context is passed as, if any
    is_async: bool


_CONTEXT_TYPES: list[type] = []


def register_context_type(kind: type) -> None:
    """Make a parameter annotated with ``kind`` (or a subclass of it, or an optional
    one) a function tool's context parameter: the agent layer registers its
    ``CallbackContext``, of which google-adk's ``Context`` and ``ToolContext`` are
    names here. Functions described earlier keep their description (cached)."""
    if kind not in _CONTEXT_TYPES:
        _CONTEXT_TYPES.append(kind)


def _is_context_type(annotation: Any) -> bool:
    """Is ``annotation`` a registered context type, or a union with one (``X | None``)?"""
    if typing.get_origin(annotation) in (typing.Union, UnionType):
        return any(_is_context_type(arg) for arg in typing.get_args(annotation) if arg is not type(None))
    return isinstance(annotation, type) and any(issubclass(annotation, kind) for kind in _CONTEXT_TYPES)


@functools.lru_cache(maxsize=4096)
def _describe(func: Callable[..., Any], extra_args: tuple[Any, ...], name: str | None,
              description: str | None) -> FunctionDescription:
    name = name or func.__name__
    doc_description, doc_params = _docstring(func)
    # google-adk declares the whole docstring; a description given by hand replaces it
    declared_description = description if description is not None else (inspect.getdoc(func) or "")
    description = description if description is not None else doc_description
    signature = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        hints = {}
    params = list(signature.parameters.values())[len(extra_args):]
    fields: dict[str, Any] = {}
    context_param = next((p.name for p in params if _is_context_type(hints.get(p.name, p.annotation))),
                         "tool_context" if any(p.name == "tool_context" for p in params) else None)
    for param in params:
        if param.name in (context_param, "input_stream") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=doc_params.get(param.name)))
    try:
        arguments: type[BaseModel] = create_model(f"{name}_arguments", **fields)
        declared = _declared_parameters(func, fields)
    except Exception as exc:
        raise AgentDefinitionError(f"tool {name!r}: cannot derive a schema from its signature: {exc}") from exc
    return FunctionDescription(
        func=func, extra_args=extra_args, name=name, description=description, arguments=arguments,
        declaration=FunctionDeclaration(name=name, description=declared_description, parameters_json_schema=declared),
        context_param=context_param,
        is_async=inspect.iscoroutinefunction(func))


def describe_function(func: Any, *, name: str | None = None, description: str | None = None) -> FunctionDescription:
    """Resolve ``func`` (see :func:`resolve_function`) and describe it; a signature no
    JSON schema fits is an :class:`AgentDefinitionError`."""
    target, extra = resolve_function(func)
    try:
        return _describe(target, extra, name, description)
    except TypeError:  # unhashable extra arguments: describe without the cache
        return _describe.__wrapped__(target, extra, name, description)
