"""FunctionTool: a Python function as a tool, its declaration derived from its signature.

In order, when built: resolve the function (a callable, ``"module:func"``, or
``(module, func, extra_args)`` whose extra args are passed first, the Elixir MFA);
build a pydantic model of its parameters from the type hints (``tool_context`` is
injected, never declared); take the description and per-parameter descriptions
from the docstring (Google style ``Args:``). When run: validate the model's
arguments (a ValidationError goes back to the model as the tool's error), call the
function (sync functions on a worker thread, so concurrent calls really overlap),
and return a dict (a non-dict result is wrapped as ``{"result": value}``).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ValidationError, create_model

from supervision import import_object

from .._exceptions import AdkError, AgentDefinitionError
from .._types import FunctionDeclaration
from ._base import ToolContext

__all__ = ["FunctionTool", "LongRunningFunctionTool", "ToolArgumentError"]

_ARG_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


class ToolArgumentError(AdkError):
    """The model called a tool with arguments that do not fit its signature."""


def _resolve(func: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
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


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


async def in_daemon_thread(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``func`` on a daemon thread and await its result.

    Unlike ``asyncio.to_thread`` (whose executor threads are joined when the process
    exits), a tool that hangs can never keep a run actor's process alive: when the
    run is abandoned (timeout, cancel, shutdown) the process still exits at once.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(error: BaseException | None, value: Any) -> None:
        if not future.done():
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

    def work() -> None:
        try:
            outcome: tuple[BaseException | None, Any] = (None, func(*args, **kwargs))
        except BaseException as exc:  # handed to the awaiting coroutine
            outcome = (exc, None)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:
            pass  # the loop is gone: nobody waits for this result any more

    import threading

    threading.Thread(target=work, name=f"tool-{getattr(func, '__name__', 'call')}", daemon=True).start()
    return await future


class FunctionTool:
    is_long_running = False

    def __init__(self, func: Any, *, name: str | None = None, description: str | None = None,
                 require_confirmation: bool | Callable[[dict[str, Any]], bool] = False) -> None:
        self.require_confirmation = require_confirmation
        self.func, self.extra_args = _resolve(func)
        self.name = name or self.func.__name__
        doc_description, doc_params = _docstring(self.func)
        self.description = description if description is not None else doc_description
        signature = inspect.signature(self.func)
        try:
            hints = typing.get_type_hints(self.func)
        except Exception:
            hints = {}
        params = list(signature.parameters.values())[len(self.extra_args):]
        self.wants_context = any(p.name == "tool_context" for p in params)
        fields: dict[str, Any] = {}
        for param in params:
            if param.name == "tool_context" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            annotation = hints.get(param.name, Any)
            default = ... if param.default is inspect.Parameter.empty else param.default
            from pydantic import Field

            fields[param.name] = (annotation, Field(default, description=doc_params.get(param.name)))
        try:
            self.arguments: type[BaseModel] = create_model(f"{self.name}_arguments", **fields)
            schema = _strip_titles(self.arguments.model_json_schema())
        except Exception as exc:
            raise AgentDefinitionError(f"tool {self.name!r}: cannot derive a schema from its signature: {exc}") from exc
        self._declaration = FunctionDeclaration(name=self.name, description=self.description, parameters=schema)
        self._is_async = inspect.iscoroutinefunction(self.func)

    def declaration(self) -> FunctionDeclaration:
        return self._declaration

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any:
        try:
            validated = self.arguments.model_validate(args or {})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
            raise ToolArgumentError(f"invalid arguments for {self.name}: {problems}") from None
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        if self.wants_context:
            kwargs["tool_context"] = tool_context
        if self._is_async:
            return await self.func(*self.extra_args, **kwargs)
        return await in_daemon_thread(self.func, *self.extra_args, **kwargs)


class LongRunningFunctionTool(FunctionTool):
    """A tool whose real result arrives later: its call ends the turn (google-adk's rule)."""

    is_long_running = True
