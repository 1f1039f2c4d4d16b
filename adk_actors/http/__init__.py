"""The host's front door: google-adk's HTTP API (REST and SSE), with a guard for
origins, hosts and bearer tokens, served by a supervised child of the host's root.

* :func:`create_app`: the ASGI app for a host (run it with any ASGI server).
* :func:`http_child`: the root's ``http`` child (``HostConfig.clients``), which runs
  the app with uvicorn in a process of its own and is restarted with it.
* :func:`fork_standby`: that process, forked by ``serve`` ahead of the tree's start
  (:class:`Standby`), for the child's first start.
* :func:`open_front_door`: the listening socket ``serve`` owns and every server
  process of the child serves on, so that no restart closes the port.

``create_app`` is imported on first use: the host's own process (``adk-actors
serve``) needs only ``http_child``, and every actor it forks would otherwise carry
the web stack it never runs (measured: 0.3-0.5 s of ``serve``'s start).
"""

from typing import Any

from ._actor import HttpArgs, HttpServerActor, http_args, http_child
from ._front_door import open_front_door
from ._standby import Standby, fork_standby

__all__ = ["HttpArgs", "HttpServerActor", "Standby", "create_app", "fork_standby", "http_args", "http_child",
           "open_front_door"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from ._app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
