"""FunctionTool: a Python function as a tool, its declaration derived from its signature.

When built: :func:`adk_actors._callables.describe_function` resolves the function
(a callable, ``"module:func"``, or ``(module, func, extra_args)`` whose extra args
are passed first, the Elixir MFA) and derives its declaration and argument model
from the type hints and the docstring (``tool_context`` is injected, never
declared). A parameter named ``input_stream`` is left out of the declaration and
of the arguments too, whatever its annotation (google-adk's: a streaming tool's feed
of the live run's input, see ``engine._live_tools``). A plain function in an agent's
``tools`` is wrapped by the engine when a turn runs, as google-adk does. When run:
validate the model's arguments (a ValidationError goes back to the model as the
tool's error), add the context and, when the call has one (a live run gives it to a
streaming tool whose ``input_stream`` is a ``LiveRequestQueue``), the input stream
(else the function's default applies), call the function (a sync function on a
daemon thread of its own, so concurrent calls really overlap; when the run's
``RunConfig.tool_thread_pool_config`` is set, on that bounded pool of daemon workers
instead, see ``_tool_pool``), and return a dict (a non-dict result is wrapped as
``{"result": value}``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from .._callables import describe_function, resolve_function
from .._exceptions import AdkError
from .._types import FunctionDeclaration
from ._base import ToolContext
from ._classes import BaseTool
from ._tool_pool import pool_size, run_sync_call

__all__ = ["INPUT_STREAM", "FunctionTool", "LongRunningFunctionTool", "ToolArgumentError", "idempotent"]

#: the parameter a streaming tool reads the live run's input from (google-adk's name)
INPUT_STREAM = "input_stream"


class ToolArgumentError(AdkError):
    """The model called a tool with arguments that do not fit its signature."""


async def in_daemon_thread(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``func`` on a daemon thread and await its result.

    Unlike ``asyncio.to_thread`` (whose executor threads are joined when the process
    exits), a tool that hangs can never keep a run worker's process alive: when the
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

    threading.Thread(target=work, name=f"tool-{getattr(func, '__name__', 'call')}", daemon=True).start()
    return await future


def idempotent(func: Any) -> Any:
    """Mark a tool function as safe to run again: a resumed run that cannot know whether
    a call of it ran reruns it instead of asking a human (see ``engine._resume``).
    Returns ``func`` itself."""
    func.idempotent = True
    return func


@functools.lru_cache(maxsize=1024)
def _declared_view(func: Callable[..., Any], skipped: int) -> Callable[..., Any]:
    """``func`` as the model is told of it: a stand-in with its name, docstring and
    module, its signature without its first ``skipped`` parameters (the extra
    arguments given first) nor ``input_stream``. The stand-in is only described."""
    signature = inspect.signature(func)

    def view(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{func!r} is only described here")

    functools.update_wrapper(view, func)  # its __wrapped__ resolves the function's type hints
    kept = [p for p in list(signature.parameters.values())[skipped:] if p.name != INPUT_STREAM]
    view.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
    view.__annotations__ = {k: v for k, v in getattr(func, "__annotations__", {}).items() if k != INPUT_STREAM}
    return view


def _takes_input_stream(func: Callable[..., Any]) -> bool:
    try:
        return INPUT_STREAM in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


class FunctionTool(BaseTool):
    is_long_running = False

    def __init__(self, func: Any, *, name: str | None = None, description: str | None = None,
                 require_confirmation: bool | Callable[[dict[str, Any]], bool] = False,
                 idempotent: bool | None = None) -> None:
        """``idempotent``: running a call again is harmless (a resumed run may then rerun
        a call whose result was not committed instead of asking a human; see
        ``engine._resume``); None takes the function's mark (``@idempotent``), else False."""
        self.require_confirmation = require_confirmation
        target, extra = resolve_function(func)
        if _takes_input_stream(target):  # google-adk declares no input_stream (see the module)
            described = describe_function(_declared_view(target, len(extra)), name=name, description=description)
        else:
            described = describe_function(func, name=name, description=description)
        self.func, self.extra_args = target, extra
        self._takes_input_stream = _takes_input_stream(target)  # the live run's input, when it has it
        self.idempotent = bool(getattr(described.func, "idempotent", False)) if idempotent is None else idempotent
        # google-adk's: the whole docstring (or the description given), as declared
        self.name, self.description = described.name, described.declaration.description or ""
        self.arguments: type[BaseModel] = described.arguments
        self.context_param = described.context_param
        self._declaration = described.declaration
        self._is_async = inspect.iscoroutinefunction(target)

    def _get_declaration(self) -> FunctionDeclaration | None:
        return self._declaration

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            validated = self.arguments.model_validate(args or {})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
            raise ToolArgumentError(f"invalid arguments for {self.name}: {problems}") from None
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        if self.context_param is not None:
            kwargs[self.context_param] = tool_context
        stream = getattr(tool_context, "_input_stream", None) if self._takes_input_stream else None
        if stream is not None:
            kwargs[INPUT_STREAM] = stream
        if self._is_async:
            return await self.func(*self.extra_args, **kwargs)
        workers = pool_size(tool_context)
        if workers is not None:
            return await run_sync_call(workers, self.func, *self.extra_args, **kwargs)
        return await in_daemon_thread(self.func, *self.extra_args, **kwargs)


#: what a long-running tool's declaration adds to its description (google-adk's words: the model reads them)
LONG_RUNNING_NOTE = ("NOTE: This is a long-running operation. Do not call this tool again if it has already "
                     "returned some intermediate or pending status.")


class LongRunningFunctionTool(FunctionTool):
    """A tool whose real result arrives later: its call ends the turn (google-adk's rule).
    Its declaration's description ends with :data:`LONG_RUNNING_NOTE` (after a blank
    line; alone when the function has no docstring), as google-adk's."""

    is_long_running = True

    def _get_declaration(self) -> FunctionDeclaration | None:
        declaration = super()._get_declaration()
        if declaration is None:
            return None
        described = f"{declaration.description}\n\n{LONG_RUNNING_NOTE}" if declaration.description \
            else LONG_RUNNING_NOTE
        return declaration.model_copy(update={"description": described})
