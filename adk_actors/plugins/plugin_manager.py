"""google-adk's ``PluginManager`` (``google.adk.plugins.plugin_manager``): the plugins
of a runner, by name, and google-adk's methods that run one hook on all of them.

It is the engine's own plugin pipeline (:class:`adk_actors.engine.PluginManager`)
with google-adk's names on it, not a second one: ``Runner.plugin_manager`` is one, and
the runner hands each invocation a copy of it (its ``for_invocation``), which is what
``ctx.plugin_manager`` (``invocation_context.plugin_manager``,
``callback_context._invocation_context.plugin_manager``) is during that run. So a hook
that looks another plugin up with ``get_plugin(name)`` gets the object that was
registered, and a ``run_*_callback`` method called by user code runs the hooks under
the engine's rules:

* the plugins run in registration order; the first answer that is not None ends the
  chain and is returned (converted to this project's types as the engine takes it:
  an ``LlmResponse``, a ``Content``, an ``Event``); None when none answers;
* a google-adk plugin's hook that raises ends the call with
  :class:`~adk_actors.plugins.PluginError`, a ``RuntimeError`` (google-adk's type), the
  hook's exception as its cause;
* ``run_after_run_callback`` and ``run_on_run_error_callback`` notify every plugin
  (the engine's ``after_run``: a hook that raises is logged and the next one runs);
  ``run_on_agent_error_callback`` notifies every plugin that has the hook, likewise;
* ``run_before_run_callback``: an answer that is not Content ends the chain all the
  same and is returned as it was (the engine then runs the agents, as google-adk does).

A duplicate name, at construction or in :meth:`PluginManager.register_plugin`, is a
``ValueError`` (:class:`~adk_actors.AgentDefinitionError`) and nothing is added.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any, Literal

from .._exceptions import AdkError
from ..engine._callbacks import call_maybe_async
from ..engine._plugins import ChainEnded
from ..engine._plugins import PluginManager as _Pipeline

__all__ = ["PluginCallbackName", "PluginManager"]

logger = logging.getLogger("adk_actors.plugins")

#: the hooks a google-adk plugin may have (google-adk's names)
PluginCallbackName = Literal[
    "on_user_message_callback", "before_run_callback", "after_run_callback", "on_event_callback",
    "before_agent_callback", "after_agent_callback", "before_tool_callback", "after_tool_callback",
    "before_model_callback", "after_model_callback", "on_tool_error_callback", "on_model_error_callback",
    "on_agent_error_callback", "on_run_error_callback",
]


class PluginCloseError(AdkError, RuntimeError):
    """One or more plugins failed to close (a ``RuntimeError``, google-adk's type); the
    message names each with the type of its error."""


class PluginManager(_Pipeline):
    """google-adk's plugin manager on the engine's pipeline (see the module).

    ``plugins``: registered in order (a duplicate name is a ``ValueError``);
    ``close_timeout``: how long, in seconds, :meth:`close` waits for each plugin."""

    def __init__(self, plugins: Iterable[Any] | None = None, close_timeout: float = 5.0) -> None:
        super().__init__(plugins or ())
        self._close_timeout = close_timeout
        self._skip_closing_plugins = False

    def register_plugin(self, plugin: Any) -> None:
        """Add ``plugin`` after the others; a ``ValueError`` when its name is taken."""
        self._add([plugin])
        logger.debug("plugin %r registered", getattr(plugin, "name", plugin))

    def set_skip_closing_plugins(self, value: bool) -> None:
        """With True, :meth:`close` does nothing (the plugins belong to another runner)."""
        self._skip_closing_plugins = value

    # -- one hook on every plugin, the first answer wins (the engine's ``first``) ---------

    async def run_on_user_message_callback(self, *, user_message: Any, invocation_context: Any) -> Any:
        return await self.first("on_user_message", invocation_context, user_message)

    async def run_before_run_callback(self, *, invocation_context: Any) -> Any:
        """(An answer that is not Content ends the chain and is given back as it was.)"""
        answer = await self.first("before_run", invocation_context)
        return answer.value if isinstance(answer, ChainEnded) else answer

    async def run_on_event_callback(self, *, invocation_context: Any, event: Any) -> Any:
        return await self.first("on_event", invocation_context, event)

    async def run_before_agent_callback(self, *, agent: Any, callback_context: Any) -> Any:
        """(The agent a plugin is given is the callback context's, as in a run.)"""
        return await self.first("before_agent", callback_context)

    async def run_after_agent_callback(self, *, agent: Any, callback_context: Any) -> Any:
        """(The agent a plugin is given is the callback context's, as in a run.)"""
        return await self.first("after_agent", callback_context)

    async def run_before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
        return await self.first("before_model", callback_context, llm_request)

    async def run_after_model_callback(self, *, callback_context: Any, llm_response: Any) -> Any:
        return await self.first("after_model", callback_context, llm_response)

    async def run_on_model_error_callback(self, *, callback_context: Any, llm_request: Any, error: Exception) -> Any:
        return await self.first("on_model_error", callback_context, llm_request, error)

    async def run_before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> Any:
        return await self.first("before_tool", tool, tool_args, tool_context)

    async def run_after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                      result: Any) -> Any:
        return await self.first("after_tool", tool, tool_args, tool_context, result)

    async def run_on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                         error: Exception) -> Any:
        return await self.first("on_tool_error", tool, tool_args, tool_context, error)

    # -- notifications: every plugin is told ----------------------------------------------

    async def run_after_run_callback(self, *, invocation_context: Any) -> None:
        """Every plugin's end-of-run hook, for a run that ended without an error."""
        await self.after_run(invocation_context, None)

    async def run_on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        """Every plugin's end-of-run hook, for a run that ``error`` ended
        (``on_run_error_callback`` of a google-adk plugin)."""
        await self.after_run(invocation_context, error)

    async def run_on_agent_error_callback(self, *, agent: Any, callback_context: Any, error: Exception) -> None:
        """``on_agent_error_callback`` of each plugin that has one, in order, given
        ``agent``; one that raises is logged and the next one is called. (In a run the
        engine tells the plugins through its ``agent_error`` when an error leaves an agent.)"""
        for plugin in self.plugins:
            hook = getattr(plugin, "on_agent_error_callback", None)
            if hook is None:
                continue
            try:
                await call_maybe_async(hook, agent=agent, callback_context=callback_context, error=error)
            except Exception:
                logger.exception("on_agent_error_callback of plugin %s raised", getattr(plugin, "name", plugin))

    async def close(self) -> None:
        """Close every plugin that has a ``close`` method, one after the other, each
        given ``close_timeout`` seconds. Nothing happens after
        ``set_skip_closing_plugins(True)``. A plugin that fails or runs out of time is
        logged and the next one is closed; then, in order: a cancellation met on the
        way is raised again, else a :class:`PluginCloseError` (a ``RuntimeError``) names
        every plugin that failed."""
        if self._skip_closing_plugins:
            return
        failed: dict[str, BaseException] = {}
        cancelled: asyncio.CancelledError | None = None
        for plugin in self.plugins:
            closer = getattr(plugin, "close", None)
            if closer is None:
                continue
            name = str(getattr(plugin, "name", plugin))
            try:
                async with asyncio.timeout(self._close_timeout):
                    await call_maybe_async(closer)
            except asyncio.CancelledError as exc:
                cancelled = exc
                logger.warning("closing plugin %s was cancelled", name)
            except Exception as exc:
                failed[name] = exc
                logger.warning("closing plugin %s failed: %r", name, exc)
        if cancelled is not None:
            raise cancelled
        if failed:
            raise PluginCloseError("plugins that failed to close: " + ", ".join(
                f"'{name}': {type(exc).__name__}" for name, exc in failed.items()))
