"""Where an MCP server is: google-adk's connection parameter types, by the same names.

* :class:`StdioConnectionParams`: a command started as a child process, spoken to on
  its stdin and stdout (``server_params`` is the ``mcp`` SDK's
  ``StdioServerParameters``: command, args, env, cwd);
* :class:`SseConnectionParams`: an HTTP server with the older SSE transport;
* :class:`StreamableHTTPConnectionParams`: an HTTP server with streamable HTTP.

``timeout`` bounds connecting and listing the tools. Each is a pydantic model, so a
toolset's parameters travel to the host's toolset actor as they are, and
:func:`toolset_key` names the same server the same way in every process.

:class:`McpToolsetConfig` is google-adk's model of an ``McpToolset`` entry's ``args``
in an agent file; :func:`toolset_arguments` turns such ``args`` into the toolset's
keyword arguments (``McpToolset.from_config``).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from mcp import StdioServerParameters
from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR",
    "ConnectionParams",
    "McpToolsetConfig",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StdioServerParameters",
    "StreamableHTTPConnectionParams",
    "connection_params",
    "toolset_arguments",
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


#: google-adk's switch for stdio servers in agent files (off unless set).
ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR = "ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS"


class McpToolsetConfig(BaseModel):
    """An ``McpToolset`` entry's ``args`` in an agent file, as google-adk names its
    fields: exactly one of ``stdio_server_params``, ``stdio_connection_params``,
    ``sse_connection_params``, ``streamable_http_connection_params`` (validation fails
    otherwise, as an unknown key fails it), then ``tool_filter``,
    ``tool_name_prefix``, ``tool_list_cache_ttl_seconds``, ``auth_scheme``,
    ``auth_credential``, ``credential_key``, ``use_mcp_resources``."""

    model_config = ConfigDict(extra="forbid")

    stdio_server_params: StdioServerParameters | None = None
    stdio_connection_params: StdioConnectionParams | None = None
    sse_connection_params: SseConnectionParams | None = None
    streamable_http_connection_params: StreamableHTTPConnectionParams | None = None
    tool_filter: list[str] | None = None
    tool_name_prefix: str | None = None
    tool_list_cache_ttl_seconds: float | None = None
    auth_scheme: Any = None
    auth_credential: Any = None
    credential_key: str | None = None
    use_mcp_resources: bool = False

    @model_validator(mode="after")
    def _one_server(self) -> McpToolsetConfig:
        given = [params for params in (self.stdio_server_params, self.stdio_connection_params,
                                       self.sse_connection_params, self.streamable_http_connection_params)
                 if params is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of stdio_server_params, stdio_connection_params, "
                             "sse_connection_params, streamable_http_connection_params")
        return self


def _env_enabled(name: str) -> bool:
    return os.environ.get(name, "0").strip().lower() in ("1", "true", "yes", "on")


def toolset_arguments(config: Any) -> dict[str, Any]:
    """The ``McpToolset`` keyword arguments an agent file's ``args`` give (``config``:
    a pydantic model, such as the loader's ``ToolArgsConfig``, or a dict), in order:
    ``config`` is validated as :class:`McpToolsetConfig` (pydantic's ValidationError,
    a ValueError, when it does not fit); a stdio server is refused (ValueError) unless
    ``ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS`` is set (``1``, ``true``, ``yes``, ``on``:
    an agent file would otherwise start any command), as google-adk refuses it; auth
    settings, which this toolset does not have, are refused (ValueError naming them). ``tool_list_cache_ttl_seconds`` is accepted and has no
    effect (the tools are listed by the connection, which lists them once)."""
    data = config.model_dump() if isinstance(config, BaseModel) else dict(config)
    parsed = McpToolsetConfig.model_validate(data)
    stdio = parsed.stdio_server_params or parsed.stdio_connection_params
    if stdio is not None and not _env_enabled(ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR):
        raise ValueError("an agent file may not start a stdio MCP server (its command would run on this "
                         "machine when the agent loads): make the McpToolset in Python, use "
                         "sse_connection_params or streamable_http_connection_params, or set "
                         f"{ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR}=1 when every agent file loaded is trusted")
    unsupported = [key for key in ("auth_scheme", "auth_credential", "credential_key")
                   if getattr(parsed, key) is not None]
    if unsupported:
        raise ValueError(f"McpToolset args {', '.join(unsupported)}: not supported by adk-actors' McpToolset")
    params = (parsed.stdio_server_params or parsed.stdio_connection_params or parsed.sse_connection_params
              or parsed.streamable_http_connection_params)
    return {"connection_params": params, "tool_filter": parsed.tool_filter, "tool_name_prefix": parsed.tool_name_prefix,
            "use_mcp_resources": parsed.use_mcp_resources}
