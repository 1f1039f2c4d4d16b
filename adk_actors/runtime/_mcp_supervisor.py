"""The ``mcp`` supervisor of the host's services: the parent of the MCP toolset actors
(:mod:`adk_actors.runtime._mcp`), started on first use.

A supervisor imports a child's module when it starts that child, on its message loop;
the toolset actor's module imports the mcp SDK, which takes ~0.5 s of CPU on an idle
machine and many seconds under load: long enough, before issue 53, for the
supervisor's own health check to take it for dead, kill it, and have the next one
import again. So this supervisor imports that module once it has started and is
registered (a timer it sets itself: the import does not hold up the restart of the
services around it), before it is asked for a toolset as a rule; a health check that
comes meanwhile finds it busy (its CPU time advancing), not stuck, and waits. Every
toolset actor is forked from an image that has the SDK. The services process does not
import it: only this supervisor and its children hold the SDK.

If the mcp SDK is not installed (it is the ``mcp`` extra), the supervisor starts all
the same, and a toolset's start fails with the import's error, as any child whose
module cannot be imported.
"""

from __future__ import annotations

import importlib
from typing import Any

from supervision import Supervisor, SupervisorSpec

from ._service_calls import MCP_TOOLSET_ACTOR

__all__ = ["MCP_SUPERVISOR", "McpSupervisor"]

#: The supervisor's import path (``SupervisorSpec.actor_class``).
MCP_SUPERVISOR = "adk_actors.runtime._mcp_supervisor:McpSupervisor"


class McpSupervisor(Supervisor):
    """A :class:`~supervision.Supervisor` that imports the toolset actor's module as it
    starts (see the module)."""

    def configure(self, args: Any) -> SupervisorSpec:
        """The spec, as any supervisor's; and a timer that imports the toolset actor's
        module as soon as the supervisor has started (``handle_timeout``)."""
        self.send_after(0, _IMPORT_TOOLSET_MODULE)
        return super().configure(args)

    def handle_timeout(self, payload: Any) -> None:
        """Import the toolset actor's module (an ImportError, the SDK missing, is logged
        and let be: a toolset's start then fails with it); other timers as any
        supervisor's."""
        if payload != _IMPORT_TOOLSET_MODULE:
            super().handle_timeout(payload)
            return
        try:
            importlib.import_module(MCP_TOOLSET_ACTOR.partition(":")[0])
        except ImportError as exc:
            self.log.warning("MCP toolsets cannot start here: %s", exc)


_IMPORT_TOOLSET_MODULE = "import the MCP toolset actor's module"
