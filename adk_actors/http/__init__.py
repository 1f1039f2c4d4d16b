"""The host's front door: google-adk's HTTP API (REST and SSE), with a guard for
origins, hosts and bearer tokens, served by a supervised child of the host's root.

* :func:`create_app`: the ASGI app for a host (run it with any ASGI server).
* :func:`http_child`: the root's ``http`` child (``HostConfig.clients``), which runs
  the app with uvicorn in a process of its own and is restarted with it.
"""

from ._actor import HttpArgs, HttpServerActor, http_child
from ._app import create_app

__all__ = ["HttpArgs", "HttpServerActor", "create_app", "http_child"]
