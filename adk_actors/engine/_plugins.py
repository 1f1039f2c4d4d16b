"""Plugins: runner-level hooks with explicit per-invocation state (seed 001 row 24).

Each hook receives the plugin's state for *this* invocation first and returns
``(new_state, result)``; the manager keeps one state per plugin per invocation in the
invocation's context, so concurrent runs can never see each other's state.
``after_run`` always fires, also after an error. Duplicate plugin names are rejected.
For before/after hooks the first non-None result short-circuits the remaining
plugins; agent callbacks have already run by then.

google-adk-shaped plugins (``adk_actors.plugins.BasePlugin`` and any object with its
``*_callback`` hooks) join the same pipeline through :class:`GoogleAdkPlugin`, an
adapter the manager puts around each: one set of rules for both kinds.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .._exceptions import AdkError, AgentDefinitionError, InvalidRequestError
from .._types import Content, Event, LlmResponse, is_genai_content
from ..types import ours
from ._callbacks import Fallback, Reraise, call_maybe_async

__all__ = ["ChainEnded", "GoogleAdkPlugin", "HookResult", "LoggingPlugin", "Plugin", "PluginError", "PluginManager",
           "RateLimitPlugin", "RateLimited", "ReflectAndRetryToolPlugin", "as_plugin"]


#: what a hook gives back, (new state, result), or an awaitable of it (a hook may be async)
HookResult = tuple[Any, Any] | Awaitable[tuple[Any, Any]]


class Plugin:
    """Base class: every hook passes the state through and returns no result."""

    name = "plugin"

    def initial_state(self) -> Any:
        return None

    def on_user_message(self, state: Any, ctx: Any, message: Any) -> HookResult:
        return state, None

    def before_run(self, state: Any, ctx: Any) -> HookResult:
        return state, None

    def on_event(self, state: Any, ctx: Any, event: Any) -> HookResult:
        return state, None

    def after_run(self, state: Any, ctx: Any, error: BaseException | None) -> Any:
        return state

    def on_replayed_event(self, state: Any, ctx: Any, event: Any) -> Any:
        """A resumed invocation (durable runs) met ``event``, committed before it was
        interrupted: return the state as it would be had this invocation seen it. The
        hooks that saw it then do not run again."""
        return state

    def before_agent(self, state: Any, cb: Any) -> HookResult:
        return state, None

    def on_agent_error(self, state: Any, cb: Any, error: Exception) -> Any:
        """``error`` is leaving the agent of ``cb`` (a notification: the error goes on
        up whatever this returns); return the new state."""
        return state

    def after_agent(self, state: Any, cb: Any) -> HookResult:
        return state, None

    def before_model(self, state: Any, cb: Any, request: Any) -> HookResult:
        return state, None

    def after_model(self, state: Any, cb: Any, response: Any) -> HookResult:
        return state, None

    def on_model_error(self, state: Any, cb: Any, request: Any, error: BaseException) -> HookResult:
        return state, None

    def before_tool(self, state: Any, tool: Any, args: dict[str, Any], tool_context: Any) -> HookResult:
        return state, None

    def after_tool(self, state: Any, tool: Any, args: dict[str, Any], tool_context: Any, result: Any) -> HookResult:
        return state, None

    def on_tool_error(self, state: Any, tool: Any, args: dict[str, Any], tool_context: Any,
                      error: BaseException) -> HookResult:
        return state, None

    # -- the agent tree's shape as it runs (told by the workflow agents) --------------
    def on_loop_iteration(self, state: Any, ctx: Any, loop_name: str, iteration: int) -> HookResult:
        """A loop starts iteration ``iteration`` (from 0); a result with a true
        ``break_loop`` ends the loop instead."""
        return state, None

    def on_fanout_start(self, state: Any, ctx: Any, fanout_name: str, branch_names: list[str]) -> HookResult:
        return state, None

    def on_fanout_complete(self, state: Any, ctx: Any, fanout_name: str, branch_names: list[str]) -> HookResult:
        """Every branch of a parallel agent has ended (not told when the run stopped it)."""
        return state, None

    def on_route_selected(self, state: Any, ctx: Any, route_name: str, selected_agent: str) -> HookResult:
        return state, None

    def on_fallback_attempt(self, state: Any, ctx: Any, fallback_name: str, agent_name: str, attempt: int,
                            error: BaseException | None) -> HookResult:
        """A fallback tries its ``attempt``-th agent (from 0); ``error``: why the one before failed."""
        return state, None

    def on_timeout(self, state: Any, ctx: Any, timeout_name: str, seconds: float, timed_out: bool) -> HookResult:
        """A step with a time limit ended: in time, or ``timed_out``."""
        return state, None

    # -- work dispatched beside the run (adk_actors.fluent's dispatch and join) --------
    def on_dispatch(self, state: Any, ctx: Any, task_name: str, agent_name: str) -> HookResult:
        """``agent_name`` is about to start as task ``task_name``; a result with a true
        ``cancel`` skips it, one with ``inject_state`` sets those keys for it first."""
        return state, None

    def on_task_complete(self, state: Any, ctx: Any, task_name: str, result: str) -> HookResult:
        return state, None

    def on_task_error(self, state: Any, ctx: Any, task_name: str, error: BaseException) -> HookResult:
        return state, None

    def on_join(self, state: Any, ctx: Any, joined: list[str], timed_out: list[str]) -> HookResult:
        return state, None


class PluginManager:
    """The plugins of one invocation and their states.

    ``plugins``: the objects as they were given (google-adk's ``plugins``), in order;
    ``pipeline``: each as this pipeline runs it (:func:`as_plugin`), in the same order.
    ``adk_actors.plugins.PluginManager`` (google-adk's public class) is this class with
    google-adk's methods on it: a runner gives one to each invocation through
    :meth:`for_invocation`."""

    def __init__(self, plugins: Iterable[Any] = ()) -> None:
        self.plugins: list[Any] = []
        self.pipeline: list[Any] = []
        self.states: dict[str, Any] = {}
        self._add(list(plugins))

    def _add(self, plugins: list[Any]) -> None:
        """Append ``plugins`` (each with its initial state); when a name is taken twice,
        among them or by one already here, an :class:`AgentDefinitionError` (a
        ``ValueError``) naming the names, and none is added."""
        adapted = [as_plugin(p) for p in plugins]
        names = [p.name for p in (*self.pipeline, *adapted)]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise AgentDefinitionError(f"duplicate plugin names: {duplicates}")
        self.plugins.extend(plugins)
        self.pipeline.extend(adapted)
        self.states.update((p.name, p.initial_state()) for p in adapted)

    def get_plugin(self, plugin_name: str) -> Any:
        """The plugin (as it was given) named ``plugin_name``, or None."""
        return next((original for original, p in zip(self.plugins, self.pipeline, strict=True)
                     if p.name == plugin_name), None)

    def for_invocation(self) -> PluginManager:
        """A copy of this manager (its class and settings) for one invocation: the
        same plugins, in lists of its own, each with a fresh initial state."""
        fresh = copy.copy(self)
        fresh.plugins, fresh.pipeline = list(self.plugins), list(self.pipeline)
        fresh.states = {p.name: p.initial_state() for p in self.pipeline}
        return fresh

    def see_requests(self) -> bool:
        """Whether a plugin has a hook that is given the model request (``before_model``,
        ``on_model_error``) of its own: not the base class's no-op, ours or google-adk's
        (any other object is taken to have one)."""
        return any(_sees_requests(plugin) for plugin in self.pipeline)

    async def first(self, hook: str, *args: Any) -> Any:
        """Run ``hook`` on each plugin in order until one returns a result."""
        for plugin in self.pipeline:
            state, result = await call_maybe_async(getattr(plugin, hook), self.states[plugin.name], *args)
            self.states[plugin.name] = state
            if result is not None:
                return result
        return None

    async def agent_error(self, cb: Any, error: Exception) -> None:
        """Each plugin's ``on_agent_error`` (see :meth:`_tell_each`)."""
        await self._tell_each("on_agent_error", cb, error)

    async def _tell_each(self, hook: str, *args: Any) -> None:
        """Each plugin's ``hook`` in order, its new state kept (a plugin without one is
        skipped); one that raises is logged and the next one is told."""
        for plugin in self.pipeline:
            method = getattr(plugin, hook, None)
            if method is None:
                continue
            try:
                self.states[plugin.name] = await call_maybe_async(method, self.states[plugin.name], *args)
            except Exception:
                logging.getLogger("adk_actors.plugins").exception("%s of plugin %s raised", hook, plugin.name)

    async def replayed(self, ctx: Any, event: Any) -> None:
        """Each plugin's ``on_replayed_event`` (see :meth:`Plugin.on_replayed_event`)."""
        for plugin in self.pipeline:
            self.states[plugin.name] = await call_maybe_async(plugin.on_replayed_event, self.states[plugin.name],
                                                              ctx, event)

    async def after_run(self, ctx: Any, error: BaseException | None) -> None:
        """Each plugin's ``after_run`` (see :meth:`_tell_each`)."""
        await self._tell_each("after_run", ctx, error)


# -- google-adk-shaped plugins on this pipeline --------------------------------------------


class PluginError(AdkError, RuntimeError):
    """A google-adk-shaped plugin's hook raised. It is a ``RuntimeError``, as google-adk
    raises in that case, with the same words; the hook's own exception is its
    ``__cause__``. It ends the invocation as any error of a step does (a host's run
    fails with error type ``PluginError``; the run worker lives on)."""


class ChainEnded:
    """A hook's answer that ends the chain of plugins (the next ones are not asked) but
    is no reply the engine acts on: a google-adk ``before_run_callback`` that answered
    with something other than Content. ``value``: that answer."""

    def __init__(self, value: Any) -> None:
        self.value = value


#: what google-adk keeps of the original event when an ``on_event_callback`` replaces it
_KEPT_ON_REPLACE = frozenset({"id", "invocation_id", "timestamp"})


def _sees_requests(plugin: Any) -> bool:
    if isinstance(plugin, GoogleAdkPlugin):
        hooks = [getattr(plugin.plugin, name, None) for name in ("before_model_callback", "on_model_error_callback")]
        return any(hook is not None and getattr(hook, "__qualname__", "").split(".")[0] != "BasePlugin"
                   for hook in hooks)
    if isinstance(plugin, Plugin):
        return type(plugin).before_model is not Plugin.before_model or (
            type(plugin).on_model_error is not Plugin.on_model_error)
    return True


def as_plugin(plugin: Any) -> Any:
    """``plugin`` as this pipeline runs it: a :class:`Plugin` as it is; a google-adk-shaped
    one (not a Plugin, with google-adk's ``before_run_callback``) in a
    :class:`GoogleAdkPlugin`; anything else as it is (it is called by our hook names)."""
    if isinstance(plugin, Plugin) or not callable(getattr(plugin, "before_run_callback", None)):
        return plugin
    return GoogleAdkPlugin(plugin)


class GoogleAdkPlugin(Plugin):
    """A google-adk-shaped plugin on this pipeline: each hook of :class:`Plugin` calls the
    plugin's google-adk hook of the same name with ``_callback`` after it (``before_model``:
    ``before_model_callback``...) with google-adk's keywords, and
    gives back its answer as our pipeline takes it. The rules themselves (order, first
    answer wins, tagged error decisions) stay the manager's and the engine's.

    In order, per hook: the google-adk hook is called (awaited when async); if it raises,
    a :class:`PluginError` naming the plugin and the hook is raised from it; its answer is
    converted: a user message or early reply to our ``Content`` (``before_run``: only
    Content ends the run, as in google-adk; anything else not None, a :class:`ChainEnded`,
    ends the chain but not the run), an event
    returned by ``on_event_callback`` merged onto the original as google-adk does (its
    fields that were set replace the original's, except ``id``, ``invocation_id`` and
    ``timestamp``). ``after_run`` calls ``after_run_callback`` when the invocation ended
    without an exception (also when its caller stopped reading), else
    ``on_run_error_callback`` (google-adk's notification; after_run does not run then).
    The plugin keeps its own state in its attributes, as google-adk's do; the per-
    invocation state of this pipeline is passed through untouched."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.name = str(getattr(plugin, "name", type(plugin).__name__))

    async def _call(self, hook: str, **kwargs: Any) -> Any:
        method = getattr(self.plugin, hook, None)
        if method is None:  # a plugin shaped after an older google-adk: no such hook
            return None
        try:
            return await call_maybe_async(method, **kwargs)
        except Exception as exc:
            raise PluginError(f"Error in plugin '{self.name}' during '{hook}' callback: {exc}") from exc

    def _answer(self, hook: str, value: Any, cls: type[Any]) -> Any:
        """``value`` (a hook's answer, not None) as our ``cls``; a :class:`PluginError`
        naming the plugin, the hook and the class when it is not one."""
        try:
            return ours(value, cls)
        except InvalidRequestError as exc:
            raise PluginError(f"plugin '{self.name}' answered '{hook}' with {value!r}, not a {cls.__name__}: "
                              f"{exc}") from exc

    async def on_user_message(self, state: Any, ctx: Any, message: Any) -> tuple[Any, Any]:
        result = await self._call("on_user_message_callback", invocation_context=ctx, user_message=message)
        return state, None if result is None else self._answer("on_user_message_callback", result, Content)

    async def before_run(self, state: Any, ctx: Any) -> tuple[Any, Any]:
        result = await self._call("before_run_callback", invocation_context=ctx)
        if result is None:
            return state, None
        if isinstance(result, Content) or is_genai_content(result):
            return state, self._answer("before_run_callback", result, Content)
        return state, ChainEnded(result)

    async def on_event(self, state: Any, ctx: Any, event: Any) -> tuple[Any, Any]:
        result = await self._call("on_event_callback", invocation_context=ctx, event=event)
        if result is None:
            return state, None
        replacement = self._answer("on_event_callback", result, Event)
        update = {name: getattr(replacement, name) for name in replacement.model_fields_set - _KEPT_ON_REPLACE}
        if not update.get("author", True):
            del update["author"]
        return state, event.model_copy(update=update)

    async def after_run(self, state: Any, ctx: Any, error: BaseException | None) -> Any:
        if isinstance(error, Exception):
            await self._call("on_run_error_callback", invocation_context=ctx, error=error)
        else:
            await self._call("after_run_callback", invocation_context=ctx)
        return state

    async def before_agent(self, state: Any, cb: Any) -> tuple[Any, Any]:
        return state, await self._call("before_agent_callback", agent=cb.invocation.agent, callback_context=cb)

    async def after_agent(self, state: Any, cb: Any) -> tuple[Any, Any]:
        return state, await self._call("after_agent_callback", agent=cb.invocation.agent, callback_context=cb)

    async def on_agent_error(self, state: Any, cb: Any, error: Exception) -> Any:
        await self._call("on_agent_error_callback", agent=cb.invocation.agent, callback_context=cb, error=error)
        return state

    async def before_model(self, state: Any, cb: Any, request: Any) -> tuple[Any, Any]:
        result = await self._call("before_model_callback", callback_context=cb, llm_request=request)
        return state, None if result is None else self._answer("before_model_callback", result, LlmResponse)

    async def after_model(self, state: Any, cb: Any, response: Any) -> tuple[Any, Any]:
        result = await self._call("after_model_callback", callback_context=cb, llm_response=response)
        return state, None if result is None else self._answer("after_model_callback", result, LlmResponse)

    async def on_model_error(self, state: Any, cb: Any, request: Any, error: BaseException) -> tuple[Any, Any]:
        return state, await self._call("on_model_error_callback", callback_context=cb, llm_request=request,
                                       error=error)

    async def before_tool(self, state: Any, tool: Any, args: dict[str, Any], tool_context: Any) -> tuple[Any, Any]:
        return state, await self._call("before_tool_callback", tool=tool, tool_args=args, tool_context=tool_context)

    async def after_tool(self, state: Any, tool: Any, args: dict[str, Any], tool_context: Any,
                         result: Any) -> tuple[Any, Any]:
        return state, await self._call("after_tool_callback", tool=tool, tool_args=args, tool_context=tool_context,
                                       result=result)

    async def on_tool_error(self, state: Any, tool: Any, args: dict[str, Any], tool_context: Any,
                            error: BaseException) -> tuple[Any, Any]:
        return state, await self._call("on_tool_error_callback", tool=tool, tool_args=args,
                                       tool_context=tool_context, error=error)


# -- plugins shipped -------------------------------------------------------------------------


class LoggingPlugin(Plugin):
    """Logs every event and counts them (state: events seen, model and tool calls)."""

    name = "logging"

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.log = logger or logging.getLogger("adk_actors.events")

    def initial_state(self) -> dict[str, int]:
        return {"events": 0, "model_calls": 0, "tool_calls": 0}

    def on_event(self, state: dict[str, int], ctx: Any, event: Any) -> tuple[Any, Any]:
        self.log.info("event %s from %s%s", event.id, event.author, " (partial)" if event.partial else "")
        return {**state, "events": state["events"] + 1}, None

    def before_model(self, state: dict[str, int], cb: Any, request: Any) -> tuple[Any, Any]:
        return {**state, "model_calls": state["model_calls"] + 1}, None

    def before_tool(self, state: dict[str, int], tool: Any, args: Any, tool_context: Any) -> tuple[Any, Any]:
        self.log.info("tool %s called", getattr(tool, "name", tool))
        return {**state, "tool_calls": state["tool_calls"] + 1}, None

    def after_run(self, state: dict[str, int], ctx: Any, error: BaseException | None) -> Any:
        self.log.info("run %s ended%s: %s", ctx.invocation_id, f" with {error!r}" if error else "", state)
        return state

    def on_replayed_event(self, state: dict[str, int], ctx: Any, event: Any) -> Any:
        """Counted as when it was made: an event, a model call for a model's, a tool call per result."""
        content = event.content
        model = int(content is not None and content.role == "model")
        tools = sum(1 for p in content.parts if p.function_response is not None) if content is not None else 0
        return {"events": state["events"] + 1, "model_calls": state["model_calls"] + model,
                "tool_calls": state["tool_calls"] + tools}


class RateLimited(Exception):
    """Raised into the model step when the plugin's limit is reached."""


class RateLimitPlugin(Plugin):
    """At most ``max_calls`` model calls per ``period`` seconds within one invocation.

    It really counts: call times live in the invocation's plugin state. (Each run is
    its own process in the actor runtime, so a limit across runs belongs in a shared
    service, such as the per-model circuit breaker.) Over the limit the model call
    is answered with an error response instead of being made.
    """

    name = "rate_limit"

    def __init__(self, max_calls: int, period: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_calls = max_calls
        self.period = period
        self.clock = clock

    def initial_state(self) -> tuple[float, ...]:
        return ()

    def before_model(self, state: tuple[float, ...], cb: Any, request: Any) -> tuple[Any, Any]:
        now = self.clock()
        recent = tuple(t for t in state if now - t < self.period)
        if len(recent) >= self.max_calls:
            return recent, LlmResponse(error_code="rate_limited",
                                       error_message=f"more than {self.max_calls} model calls in {self.period} s")
        return (*recent, now), None


class ReflectAndRetryToolPlugin(Plugin):
    """When a tool fails, give the model a structured reflection so it can retry with
    corrected arguments, up to ``max_retries`` times per tool per invocation."""

    name = "reflect_and_retry_tool"

    def __init__(self, max_retries: int = 3) -> None:
        self.max_retries = max_retries

    def initial_state(self) -> dict[str, int]:
        return {}

    def on_tool_error(self, state: dict[str, int], tool: Any, args: dict[str, Any], tool_context: Any,
                      error: BaseException) -> tuple[Any, Any]:
        name = getattr(tool, "name", str(tool))
        count = state.get(name, 0) + 1
        state = {**state, name: count}
        if count > self.max_retries:
            return state, Reraise()
        return state, Fallback({
            "error": f"{type(error).__name__}: {error}",
            "reflection": (f"The call to {name} with {args} failed (attempt {count} of {self.max_retries}). "
                           "Check the arguments against the tool's schema and call it again, corrected."),
        })
