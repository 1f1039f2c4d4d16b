"""google-adk's import path of the MCP connection parameters (:mod:`adk_actors.mcp`'s),
their older names and google-adk's ``retry_on_errors``.

``SseServerParams`` and ``StreamableHTTPServerParams`` are google-adk's deprecated
spellings of :class:`SseConnectionParams` and :class:`StreamableHTTPConnectionParams`:
the same classes here too, so a toolset made with either reaches the same server the
same way (the same ``toolset_key``).

:func:`retry_on_errors` decorates an ``async`` method; a call of the decorated method,
in order: awaits the method; when that raises an ``Exception`` it is raised again as it
is if the current task is being cancelled (``Task.cancelling()``), or if an
``asyncio.CancelledError`` is the exception or in its chain (``__cause__`` or
``__context__``: a cancellation turned into another error while unwinding); otherwise
an info line names the method and the error and the method is awaited once more, its
result or error the call's. ``CancelledError`` itself and other ``BaseException`` s are
never retried.

google-adk's SDK session helpers, for code that opens an ``mcp`` ``ClientSession``
itself (:mod:`adk_actors.mcp._sessions`, where what differs from google-adk's is said):
:class:`MCPSessionManager` (``await MCPSessionManager(params).create_session()`` gives a
ready session, one per header set and event loop; ``close()`` ends them),
:func:`create_mcp_http_client` (the SDK's HTTP client) and
:class:`CheckableMcpHttpClientFactory` (its shape). Our toolsets do not use them: their
connections are :class:`adk_actors.mcp.McpConnection` s, owned by the toolset (in a
host, by its toolset actor).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from ...mcp import (
    CheckableMcpHttpClientFactory,
    MCPSessionManager,
    SseConnectionParams,
    StdioConnectionParams,
    StdioServerParameters,
    StreamableHTTPConnectionParams,
    create_mcp_http_client,
)

__all__ = ["CheckableMcpHttpClientFactory", "MCPSessionManager", "SseConnectionParams", "SseServerParams",
           "StdioConnectionParams", "StdioServerParameters", "StreamableHTTPConnectionParams",
           "StreamableHTTPServerParams", "create_mcp_http_client", "retry_on_errors"]

_log = logging.getLogger("adk_actors.tools.mcp")

#: google-adk's deprecated name of :class:`SseConnectionParams` (the same class)
SseServerParams = SseConnectionParams
#: google-adk's deprecated name of :class:`StreamableHTTPConnectionParams` (the same class)
StreamableHTTPServerParams = StreamableHTTPConnectionParams

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _from_cancellation(error: BaseException) -> bool:
    """Whether ``error`` is, or was raised while handling or because of, a cancellation."""
    seen: set[int] = set()
    waiting: list[BaseException] = [error]
    while waiting:
        current = waiting.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, asyncio.CancelledError):
            return True
        waiting.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return False


def retry_on_errors(func: Callable[_P, Awaitable[_T]]) -> Callable[_P, Awaitable[_T]]:
    """``func`` (an async method) retried once after an error (see the module)."""

    @functools.wraps(func)
    async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return await func(*args, **kwargs)
        except Exception as error:
            task = asyncio.current_task()
            if (task is not None and task.cancelling() > 0) or _from_cancellation(error):
                raise
            _log.info("Retrying %s after an error: %s", getattr(func, "__name__", "the call"), error)
            return await func(*args, **kwargs)

    return wrapper
