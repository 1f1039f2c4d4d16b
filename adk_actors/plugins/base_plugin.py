"""google-adk's ``BasePlugin`` (``from google.adk.plugins import BasePlugin``).

A plugin is an object with a name and any of google-adk's hooks, each an ``async``
method called with keyword arguments. Given to ``App(plugins=[...])``,
``Runner(..., plugins=[...])`` or ``InMemoryRunner(..., plugins=[...])``, it runs on
the engine's one plugin pipeline (``adk_actors.engine.PluginManager``, through its
adapter ``GoogleAdkPlugin``): in registration order, the first hook that answers
(returns something other than None) ends the chain. An answer

* from ``on_user_message_callback`` (a Content) replaces the user's message;
* from ``before_run_callback`` (a Content) ends the run with that reply, no agent runs;
* from ``on_event_callback`` (an Event) replaces the event, before it is stored and
  yielded (its fields that were set replace the original's, but not ``id``,
  ``invocation_id`` or ``timestamp``);
* from ``before_agent_callback`` (a Content) skips the agent, with that reply; from
  ``after_agent_callback``, one more reply of the agent;
* from ``before_model_callback`` (an LlmResponse) skips the model call, from
  ``after_model_callback`` replaces its response, from ``on_model_error_callback``
  stands in for the failed call's response;
* from ``before_tool_callback`` (a dict) skips the tool with that result, from
  ``after_tool_callback`` replaces its result, from ``on_tool_error_callback`` stands
  in for the failed call's result.

``after_run_callback`` runs when the run ends without an exception;
``on_run_error_callback`` when one ended it. A hook that raises ends the run with
``adk_actors.plugins.PluginError`` (a ``RuntimeError``, as google-adk raises), whose
cause is the hook's exception. Where this project's seed rules differ from
google-adk's (an agent's own callbacks run before the plugins'), docs/design.md says so.
"""

from __future__ import annotations

from abc import ABC
from typing import Any

from .._types import Content, Event, LlmRequest, LlmResponse

__all__ = ["BasePlugin"]


class BasePlugin(ABC):  # noqa: B024 - google-adk's BasePlugin is an ABC with no abstract method
    """The base of a google-adk-shaped plugin: every hook answers None (see the module).

    ``name``: unique among an app's plugins (a duplicate is a ``ValueError``, as in
    google-adk, raised when a run starts)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    async def on_user_message_callback(self, *, invocation_context: Any, user_message: Content) -> Content | None:
        """The user's message arrived, before it is stored: a Content replaces it."""
        return None

    async def before_run_callback(self, *, invocation_context: Any) -> Content | None:
        """The run starts (the user's message is stored): a Content ends it with that reply."""
        return None

    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> Event | None:
        """An agent made ``event``, not yet stored nor yielded: an Event replaces it."""
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """The run ended without an exception."""
        return None

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        """An exception ended the run (it is raised on after this; a notification only)."""
        return None

    async def on_agent_error_callback(self, *, agent: Any, callback_context: Any, error: Exception) -> None:
        """google-adk's notification that an exception escaped an agent. Not called by
        this engine (the run's ``on_run_error_callback`` is)."""
        return None

    async def close(self) -> None:
        """The runner is closed: release what the plugin holds."""
        return None

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> Content | None:
        """``agent`` is about to run: a Content skips it, as its reply."""
        return None

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> Content | None:
        """``agent`` has run: a Content is one more reply of it."""
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        """A model call is about to be made (the request may be changed in place): an
        LlmResponse is used instead of calling the model."""
        return None

    async def after_model_callback(self, *, callback_context: Any, llm_response: LlmResponse) -> LlmResponse | None:
        """The model answered: an LlmResponse replaces its answer."""
        return None

    async def on_model_error_callback(self, *, callback_context: Any, llm_request: LlmRequest,
                                      error: Exception) -> LlmResponse | None:
        """The model call failed: an LlmResponse stands in for its answer; None lets the error stand."""
        return None

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                   tool_context: Any) -> dict[str, Any] | None:
        """A tool is about to run (``tool_args`` may be changed in place): a dict is its
        result instead, and the tool does not run."""
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: dict[str, Any]) -> dict[str, Any] | None:
        """A tool ran: a dict replaces its result."""
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                     error: Exception) -> dict[str, Any] | None:
        """A tool raised: a dict stands in for its result; None lets the error stand."""
        return None
