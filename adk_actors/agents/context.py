"""google-adk's ``Context`` (``from google.adk.agents.context import Context``), the
object a callback and a tool get.

In google-adk 2.x ``CallbackContext`` and ``ToolContext`` are other names of
``Context``. Here ``Context`` is :class:`CallbackContext` itself, and a tool's
``ToolContext`` is a subclass of it: an agent or model callback's
``callback_context`` and a tool's ``tool_context`` are both instances of
``Context``, ``Context(ctx)`` in a custom agent's ``_run_async_impl`` gives what a
callback gets (state, actions, artifacts, memory), and a ``Context`` annotation names
what the parameter receives. A tool receives it through a parameter named
``tool_context``. A workflow function node's ``ctx`` is
``adk_actors.workflow.Context``, a class of its own with the node's fields (``route``,
``run_node``, ...).
"""

from __future__ import annotations

from .callback_context import CallbackContext

__all__ = ["Context"]

#: google-adk's ``Context``: see the module.
Context = CallbackContext
