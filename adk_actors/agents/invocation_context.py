"""google-adk's import path of ``InvocationContext``: what a custom agent's
``_run_async_impl(ctx)`` receives.

The engine makes every context (``adk_actors.engine.run_invocation``); its
``InvocationContext`` is a subclass of this one, so a custom agent's annotation and
``isinstance`` checks name the class it gets. The names a custom agent reads are
google-adk's: ``session`` (``state``, ``events``, ``id``), ``invocation_id``,
``branch``, ``agent``, ``user_content``, ``run_config``, ``end_invocation``,
``app_name``, ``user_id`` and ``plugin_manager`` (the engine's context has it: the
invocation's plugins, ``get_plugin(name)``). A context is not made by user code. Not
here (yet): google-adk's ``artifact_service`` / ``memory_service`` /
``session_service`` (the engine's services have other methods; a custom agent
reaches artifacts and memory through a ``CallbackContext(ctx)``) and the live-only
fields.

:class:`LlmCallsLimitExceededError` is google-adk's error for a run that reached
``RunConfig.max_llm_calls`` (raised by the in-process runners, see the class); :func:`new_invocation_context_id` makes an invocation id
as google-adk's does (``e-`` and a random UUID), the form the engine's ids have.
"""

from __future__ import annotations

from typing import Any

from .._exceptions import AdkError
from .._types import new_invocation_id

__all__ = ["InvocationContext", "LlmCallsLimitExceededError", "new_invocation_context_id"]


class LlmCallsLimitExceededError(AdkError):
    """google-adk's error for a run that asks its model for more calls than
    ``RunConfig.max_llm_calls`` allows (an :class:`~adk_actors.AdkError` here, so an
    ``Exception``). The in-process runners (``adk_actors.runners``) raise it, as
    google-adk's do, once the events before the limit are yielded and kept; on a host
    such a run ends with the engine's error event ``max_llm_calls`` (a run's end is
    an event there, for every caller of every transport)."""


def new_invocation_context_id() -> str:
    """A new invocation id: ``e-`` then a random UUID (google-adk's form)."""
    return new_invocation_id()


class InvocationContext:
    """The context of one agent's run in one invocation (see the module).

    ``end_invocation``, set to True by the agent's own code or a callback, ends that
    agent there: its after-agent callbacks do not run (google-adk's rule; its parent,
    which has a context of its own, goes on)."""

    session: Any

    @property
    def app_name(self) -> str:
        """The session's app (google-adk's ``ctx.app_name``)."""
        return str(self.session.app_name)

    @property
    def user_id(self) -> str:
        """The session's user (google-adk's ``ctx.user_id``)."""
        return str(self.session.user_id)
