"""Where an MCP server is: google-adk's connection parameter types, by the same names.

* :class:`StdioConnectionParams`: a command started as a child process, spoken to on
  its stdin and stdout (``server_params`` is the ``mcp`` SDK's
  ``StdioServerParameters``: command, args, env, cwd);
* :class:`SseConnectionParams`: an HTTP server with the older SSE transport;
* :class:`StreamableHTTPConnectionParams`: an HTTP server with streamable HTTP.

``timeout`` bounds connecting and listing the tools. Each is a pydantic model, so a
toolset's parameters travel to the host's toolset actor as they are, and
:func:`toolset_key` names the same server the same way in every process.
"""

from __future__ import annotations

import hashlib

from mcp import StdioServerParameters
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ConnectionParams",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StdioServerParameters",
    "StreamableHTTPConnectionParams",
    "connection_params",
    "toolset_key",
]


class StdioConnectionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server_params: StdioServerParameters
    timeout: float = Field(default=5.0, gt=0)


class _HttpConnectionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    headers: dict[str, str] | None = None
    timeout: float = Field(default=5.0, gt=0)
    sse_read_timeout: float = Field(default=300.0, gt=0)


class SseConnectionParams(_HttpConnectionParams):
    pass


class StreamableHTTPConnectionParams(_HttpConnectionParams):
    terminate_on_close: bool = True


ConnectionParams = StdioConnectionParams | SseConnectionParams | StreamableHTTPConnectionParams


def toolset_key(params: ConnectionParams) -> str:
    """A short stable name for the server ``params`` reach: the same parameters give the
    same key in every process (a hash: headers may hold secrets and never show)."""
    body = f"{type(params).__name__}:{params.model_dump_json()}"
    return hashlib.sha256(body.encode()).hexdigest()[:16]


_KINDS: dict[str, type[StdioConnectionParams] | type[SseConnectionParams] | type[StreamableHTTPConnectionParams]] = {
    kind.__name__: kind for kind in (StdioConnectionParams, SseConnectionParams, StreamableHTTPConnectionParams)}


def connection_params(kind: str, text: str) -> ConnectionParams:
    """The parameters of class ``kind`` (``"StdioConnectionParams"``, ...) that the JSON
    ``text`` holds (as ``model_dump_json`` wrote them); ValueError for another class
    name, pydantic's ValidationError (a ValueError) for JSON that does not fit it."""
    model = _KINDS.get(kind)
    if model is None:
        raise ValueError(f"{kind!r} is not an MCP connection parameters class (one of {', '.join(sorted(_KINDS))})")
    return model.model_validate_json(text)
