"""The ``mcp`` supervisor of the host's services: the parent of the MCP toolset actors
(:mod:`adk_actors.runtime._mcp`), started on first use.

A supervisor imports a child's module, and unpickles the child's start arguments, on
its message loop, when it starts that child. Before issue 53, the toolset actor's
module imported the mcp SDK (~0.5 s of CPU on an idle machine, many seconds under
load), long enough for the supervisor's own health check to take it for dead, kill
it, and have the next one import again. Now neither the toolset actor's module nor
its start arguments (:class:`~adk_actors.runtime._service_calls.McpToolsetStart`,
plain strings) import the SDK: each toolset actor imports it in its own process,
during its ``init``, while this supervisor waits for that start without blocking and
goes on answering its health checks and its callers (``which_children``); another
toolset's start waits its turn, as every job of a supervisor does. Neither the services process nor this supervisor ever holds the SDK:
only the toolset actors do.

If the mcp SDK is not installed (it is the ``mcp`` extra), the supervisor starts all
the same, and a toolset's start fails with the import's error (its ``init`` fails),
which the run's tool call is told.
"""

from __future__ import annotations

from supervision import Supervisor

__all__ = ["MCP_SUPERVISOR", "McpSupervisor"]

#: The supervisor's import path (``SupervisorSpec.actor_class``).
MCP_SUPERVISOR = "adk_actors.runtime._mcp_supervisor:McpSupervisor"


class McpSupervisor(Supervisor):
    """A :class:`~supervision.Supervisor` of MCP toolset actors, each started by import
    path with arguments that hold no SDK object (see the module): the slow import is
    the child's, never this actor's."""
