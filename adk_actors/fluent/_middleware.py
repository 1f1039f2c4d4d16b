"""Middleware: adk-fluent's ``Middleware`` protocol, run as one of our plugins.

A middleware is any object with some of these hooks (sync or async; each takes a
:class:`TraceContext` first):

* run: ``on_user_message(ctx, message)``, ``before_run(ctx)``, ``after_run(ctx)``,
  ``on_event(ctx, event)``;
* agent: ``before_agent(ctx, agent_name)``, ``after_agent(ctx, agent_name)``;
* model: ``before_model(ctx, request)``, ``after_model(ctx, response)``,
  ``on_model_error(ctx, request, error)``;
* tool: ``before_tool(ctx, tool_name, args)``, ``after_tool(ctx, tool_name, args,
  result)``, ``on_tool_error(ctx, tool_name, args, error)``;
* the tree's shape as it runs: ``on_loop_iteration(ctx, loop_name, iteration)`` (a
  :class:`LoopDirective` with ``break_loop`` ends the loop), ``on_fanout_start`` /
  ``on_fanout_complete(ctx, fanout_name, branch_names)``, ``on_route_selected(ctx,
  route_name, selected_agent)``, ``on_fallback_attempt(ctx, fallback_name,
  agent_name, attempt, error)``, ``on_timeout(ctx, timeout_name, seconds, timed_out)``;
* ``on_middleware_error(ctx, hook_name, error, middleware)``.

:class:`MiddlewarePlugin` runs a stack of them (``builder.middleware(...)`` then
``to_app()``, ``ask()``, ``session()``), in order, as adk-fluent's does:

1. each invocation gets one :class:`TraceContext` (its plugin state), shared by the
   hooks of that invocation only;
2. for a hook, each middleware that has it is called in stack order; the first that
   returns something other than None decides (as a google-adk plugin's answer: a
   response instead of the model call, a tool result, an error decision such as
   ``Retry``), and the rest are not called; ``after_run`` and the notifications of
   the tree's shape are given to every middleware;
3. the agent, model and tool hooks of a middleware with an ``agents`` scope (a name,
   a tuple of names, a compiled pattern or a predicate; ``M.scope``) run only for
   those agents;
4. a hook that raises is logged and reported to the other middlewares'
   ``on_middleware_error``; the run goes on as if it had returned None.

Middleware objects live in the process that runs the agent: an embedded run's is
yours; a host's run workers each hold their own copy of the app's.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ..engine import Plugin

__all__ = ["AGENT_HOOKS", "HOOKS", "DispatchDirective", "LoopDirective", "Middleware", "MiddlewarePlugin",
           "TraceContext", "in_dispatched_task", "mark_dispatched"]

_log = logging.getLogger("adk_actors.fluent.middleware")

#: the hooks that are about one agent: a scoped middleware's run only for its agents
AGENT_HOOKS = frozenset({"before_agent", "after_agent", "before_model", "after_model", "on_model_error",
                         "before_tool", "after_tool", "on_tool_error"})
#: every hook a middleware may have
HOOKS = (*sorted(AGENT_HOOKS), "on_user_message", "before_run", "after_run", "on_event", "on_loop_iteration",
         "on_fanout_start", "on_fanout_complete", "on_route_selected", "on_fallback_attempt", "on_timeout",
         "on_dispatch", "on_task_complete", "on_task_error", "on_join")
_DISPATCHED: contextvars.ContextVar[bool] = contextvars.ContextVar("adk_actors_fluent_dispatched", default=False)


class Middleware(Protocol):
    """Any object: every hook is optional (see the module for their signatures)."""


@dataclass(frozen=True)
class LoopDirective:
    """``on_loop_iteration``'s answer: ``break_loop`` ends the loop before this iteration."""

    break_loop: bool = False


@dataclass(frozen=True)
class DispatchDirective:
    """``on_dispatch``'s answer: ``cancel`` skips the task; ``inject_state`` keys are set for it."""

    cancel: bool = False
    inject_state: dict[str, Any] | None = None


def mark_dispatched() -> None:
    """Mark the running asyncio task (a dispatched one) for :func:`in_dispatched_task`."""
    _DISPATCHED.set(True)


def in_dispatched_task() -> bool:
    """Whether the caller runs inside a dispatched task (``M.when("dispatched")``)."""
    return _DISPATCHED.get()


class TraceContext:
    """One invocation's state bag, given to every hook first: ``request_id``,
    ``elapsed`` (seconds since the run began), ``invocation_context`` (the run's
    context), ``agent_name`` (the agent the hook is about, for agent hooks) and
    dict-style keys (``ctx["k"] = v``) that later hooks of the same invocation read."""

    __slots__ = ("_clock", "_data", "agent_name", "invocation_context", "request_id", "start_time")

    def __init__(self, invocation_context: Any = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.request_id = uuid.uuid4().hex[:12]
        self._clock = clock
        self.start_time = clock()
        self.invocation_context = invocation_context
        self.agent_name: str | None = None
        self._data: dict[str, Any] = {}

    @property
    def elapsed(self) -> float:
        return self._clock() - self.start_time

    def for_agent(self, agent_name: str | None) -> TraceContext:
        """The same invocation's context (its keys shared) seen from ``agent_name``:
        concurrent branches each get their own view."""
        view = TraceContext.__new__(TraceContext)
        view.request_id, view._clock, view.start_time = self.request_id, self._clock, self.start_time
        view.invocation_context, view._data, view.agent_name = self.invocation_context, self._data, agent_name
        return view

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._data[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def pop(self, key: str, default: Any = None) -> Any:
        return self._data.pop(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return f"TraceContext(request_id={self.request_id!r}, elapsed={self.elapsed:.3f}s)"


async def call_hook(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, awaited when it gives an awaitable (a hook may be sync or async)."""
    result = fn(*args)
    return await result if inspect.isawaitable(result) else result


def agent_matches(middleware: Any, agent_name: str | None) -> bool:
    """Whether ``middleware``'s ``agents`` scope (none: every agent) takes ``agent_name``."""
    scope = getattr(middleware, "agents", None)
    if scope is None or agent_name is None:
        return True
    if isinstance(scope, str):
        return agent_name == scope
    if isinstance(scope, tuple | list | set | frozenset):
        return agent_name in scope
    if isinstance(scope, re.Pattern):
        return scope.search(agent_name) is not None
    if callable(scope):
        return bool(scope(agent_name))
    raise TypeError(f"a middleware's agents scope must be a name, a tuple of names, a pattern or a predicate, "
                    f"got {scope!r}")


class MiddlewarePlugin(Plugin):
    """A middleware stack as one plugin (see the module for how it runs)."""

    name = "fluent_middleware"

    def __init__(self, stack: Iterable[Any], *, clock: Callable[[], float] = time.monotonic) -> None:
        self.stack = list(stack)
        self._clock = clock
        # hook -> the middlewares that have it, with the bound hook: looked up once
        self._hooks: dict[str, list[tuple[Any, Callable[..., Any]]]] = {}
        for hook in HOOKS:
            found = [(mw, fn) for mw in self.stack if callable(fn := getattr(mw, hook, None))]
            if found:
                self._hooks[hook] = found

    def initial_state(self) -> TraceContext:
        return TraceContext(clock=self._clock)

    async def _first(self, hook: str, trace: TraceContext, *args: Any, agent: str | None = None) -> Any:
        hooked = self._hooks.get(hook, ())
        view = trace.for_agent(agent) if hooked else trace
        for mw, fn in hooked:
            if hook in AGENT_HOOKS and not agent_matches(mw, agent):
                continue
            try:
                result = await call_hook(fn, view, *args)
            except Exception as error:
                await self._failed(trace, mw, hook, error)
                continue
            if result is not None:
                return result
        return None

    async def _every(self, hook: str, trace: TraceContext, *args: Any) -> None:
        for mw, fn in self._hooks.get(hook, ()):
            try:
                await call_hook(fn, trace, *args)
            except Exception as error:
                await self._failed(trace, mw, hook, error)

    async def _failed(self, trace: TraceContext, failed: Any, hook: str, error: Exception) -> None:
        _log.warning("middleware %s.%s raised %s: %s", type(failed).__name__, hook, type(error).__name__, error)
        for mw in self.stack:
            report = getattr(mw, "on_middleware_error", None)
            if mw is failed or not callable(report):
                continue
            try:
                await call_hook(report, trace, hook, error, failed)
            except Exception:  # an error handler's own error is only logged
                _log.exception("middleware %s.on_middleware_error raised", type(mw).__name__)

    # -- the run ---------------------------------------------------------------
    async def on_user_message(self, state: TraceContext, ctx: Any, message: Any) -> tuple[Any, Any]:
        state.invocation_context = ctx
        return state, await self._first("on_user_message", state, message)

    async def before_run(self, state: TraceContext, ctx: Any) -> tuple[Any, Any]:
        state.invocation_context = ctx
        return state, await self._first("before_run", state)

    async def on_event(self, state: TraceContext, ctx: Any, event: Any) -> tuple[Any, Any]:
        return state, await self._first("on_event", state, event)

    async def after_run(self, state: TraceContext, ctx: Any, error: BaseException | None) -> Any:
        await self._every("after_run", state)
        return state

    # -- agents, models, tools ------------------------------------------------
    async def before_agent(self, state: TraceContext, cb: Any) -> tuple[Any, Any]:
        return state, await self._first("before_agent", state, cb.agent_name, agent=cb.agent_name)

    async def after_agent(self, state: TraceContext, cb: Any) -> tuple[Any, Any]:
        return state, await self._first("after_agent", state, cb.agent_name, agent=cb.agent_name)

    async def before_model(self, state: TraceContext, cb: Any, request: Any) -> tuple[Any, Any]:
        return state, await self._first("before_model", state, request, agent=cb.agent_name)

    async def after_model(self, state: TraceContext, cb: Any, response: Any) -> tuple[Any, Any]:
        return state, await self._first("after_model", state, response, agent=cb.agent_name)

    async def on_model_error(self, state: TraceContext, cb: Any, request: Any, error: BaseException) -> tuple[Any, Any]:
        return state, await self._first("on_model_error", state, request, error, agent=cb.agent_name)

    async def before_tool(self, state: TraceContext, tool: Any, args: dict[str, Any], tool_context: Any) -> tuple[Any, Any]:
        return state, await self._first("before_tool", state, tool.name, args, agent=tool_context.agent_name)

    async def after_tool(self, state: TraceContext, tool: Any, args: dict[str, Any], tool_context: Any,
                         result: Any) -> tuple[Any, Any]:
        return state, await self._first("after_tool", state, tool.name, args, result, agent=tool_context.agent_name)

    async def on_tool_error(self, state: TraceContext, tool: Any, args: dict[str, Any], tool_context: Any,
                            error: BaseException) -> tuple[Any, Any]:
        return state, await self._first("on_tool_error", state, tool.name, args, error,
                                        agent=tool_context.agent_name)

    # -- the tree's shape ----------------------------------------------------
    async def on_loop_iteration(self, state: TraceContext, ctx: Any, loop_name: str, iteration: int) -> tuple[Any, Any]:
        return state, await self._first("on_loop_iteration", state, loop_name, iteration)

    async def on_fanout_start(self, state: TraceContext, ctx: Any, fanout_name: str,
                              branch_names: list[str]) -> tuple[Any, Any]:
        await self._every("on_fanout_start", state, fanout_name, branch_names)
        return state, None

    async def on_fanout_complete(self, state: TraceContext, ctx: Any, fanout_name: str,
                                 branch_names: list[str]) -> tuple[Any, Any]:
        await self._every("on_fanout_complete", state, fanout_name, branch_names)
        return state, None

    async def on_route_selected(self, state: TraceContext, ctx: Any, route_name: str,
                                selected_agent: str) -> tuple[Any, Any]:
        await self._every("on_route_selected", state, route_name, selected_agent)
        return state, None

    async def on_fallback_attempt(self, state: TraceContext, ctx: Any, fallback_name: str, agent_name: str,
                                  attempt: int, error: BaseException | None) -> tuple[Any, Any]:
        await self._every("on_fallback_attempt", state, fallback_name, agent_name, attempt, error)
        return state, None

    async def on_timeout(self, state: TraceContext, ctx: Any, timeout_name: str, seconds: float,
                         timed_out: bool) -> tuple[Any, Any]:
        await self._every("on_timeout", state, timeout_name, seconds, timed_out)
        return state, None

    # -- dispatched tasks --------------------------------------------------------
    async def on_dispatch(self, state: TraceContext, ctx: Any, task_name: str, agent_name: str) -> tuple[Any, Any]:
        return state, await self._first("on_dispatch", state, task_name, agent_name)

    async def on_task_complete(self, state: TraceContext, ctx: Any, task_name: str, result: str) -> tuple[Any, Any]:
        await self._every("on_task_complete", state, task_name, result)
        return state, None

    async def on_task_error(self, state: TraceContext, ctx: Any, task_name: str,
                            error: BaseException) -> tuple[Any, Any]:
        await self._every("on_task_error", state, task_name, error)
        return state, None

    async def on_join(self, state: TraceContext, ctx: Any, joined: list[str], timed_out: list[str]) -> tuple[Any, Any]:
        await self._every("on_join", state, joined, timed_out)
        return state, None
