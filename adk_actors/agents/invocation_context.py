"""google-adk's import path of ``InvocationContext``: what a custom agent's
``_run_async_impl(ctx)`` receives.

The engine makes every context (``adk_actors.engine.run_invocation``); its
``InvocationContext`` is a subclass of this one, so a custom agent's annotation and
``isinstance`` checks name the class it gets. The names a custom agent reads are
google-adk's: ``session`` (``state``, ``events``, ``id``), ``invocation_id``,
``branch``, ``agent``, ``user_content``, ``run_config``, ``end_invocation``,
``app_name`` and ``user_id``. A context is not made by user code. Not here (yet):
google-adk's ``artifact_service`` / ``memory_service`` / ``session_service`` (the
engine's services have other methods; a custom agent reaches artifacts and memory
through a ``CallbackContext(ctx)``), ``plugin_manager`` and the live-only fields.
"""

from __future__ import annotations

from typing import Any

__all__ = ["InvocationContext"]


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
