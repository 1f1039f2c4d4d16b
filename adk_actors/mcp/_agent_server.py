"""One agent as an MCP server, as google-adk's ``to_mcp_server`` serves it.

``to_mcp_server(agent, name=..., instructions=..., runner=...)`` returns the ``mcp``
SDK's server (``MCPServer``, google-adk's ``FastMCP``) with one tool, named after the
agent (or ``name``) and described by it, taking ``{"request": "..."}``. The caller
picks the transport: ``server.run(transport="stdio")``, or ``"streamable-http"``.

A call, in order: the MCP connection's session is looked up (one per connection, so
the calls of one connection are one conversation; the first call of a connection
creates it with the runner's session service, for the user ``mcp_user``); the request
is run as the user's message; each non-final event with text is sent as a progress
notification (a no-op unless the client asked for progress); the parts of each final
response become the call's content: text as text, inline data as an image, audio or
(any other MIME type) an embedded blob resource; parts with neither are left out.
What the run raises fails the call (the client gets ``isError`` with the reason).
"""

from __future__ import annotations

import base64
import weakref
from collections.abc import MutableMapping
from typing import Any

from mcp import types as mcp_types
from mcp.server.mcpserver import Context, MCPServer

import adk_actors

from .._types import Content, Part

__all__ = ["to_mcp_server"]

MCP_USER_ID = "mcp_user"
INLINE_RESOURCE_URI = "resource://adk-agent/inline-data"


def _block(part: Any) -> mcp_types.ContentBlock | None:
    """One part of an answer as MCP content (see the module), or None."""
    if part.text:
        return mcp_types.TextContent(type="text", text=part.text)
    blob = part.inline_data
    if blob is None or blob.data is None:
        return None
    data, mime = base64.b64encode(blob.data).decode("ascii"), blob.mime_type or "application/octet-stream"
    if mime.startswith("image/"):
        return mcp_types.ImageContent(type="image", data=data, mime_type=mime)
    if mime.startswith("audio/"):
        return mcp_types.AudioContent(type="audio", data=data, mime_type=mime)
    return mcp_types.EmbeddedResource(type="resource", resource=mcp_types.BlobResourceContents(
        uri=INLINE_RESOURCE_URI, blob=data, mime_type=mime))


def _connection_of(ctx: Context) -> object:
    """What stands for the MCP connection behind ``ctx``: the SDK builds a session per
    message and keeps the connection on it (``_connection``: it has no public name
    yet); the session itself when it has none (then each call is its own session)."""
    session = ctx.session
    return getattr(session, "_connection", session)


def _in_memory_runner(agent: Any) -> Any:
    """google-adk's default: the agent in an in-memory runner named after it, taken
    from the package's public face (``adk_actors.InMemoryRunner``, which loads the
    runners, a client layer above this one, on first use)."""
    runner_class: Any = adk_actors.InMemoryRunner
    return runner_class(agent, app_name=getattr(agent, "name", None) or "adk_agent")


def to_mcp_server(agent: Any, *, name: str | None = None, instructions: str | None = None,
                  runner: Any = None) -> MCPServer:
    """The MCP server of ``agent`` (see the module): its one tool is named ``name`` (or
    the agent's name, or ``adk_agent``), as is the server; described by the agent's
    description (or ``Run the <name> agent.``); ``instructions`` are the server's.
    ``runner`` runs the agent (any runner with google-adk's ``session_service``,
    ``app_name`` and ``run_async``); without one, an in-memory runner is made."""
    tool_name = name or getattr(agent, "name", None) or "adk_agent"
    the_runner = runner if runner is not None else _in_memory_runner(agent)
    server = MCPServer(name=tool_name, instructions=instructions)
    sessions: MutableMapping[object, str] = weakref.WeakKeyDictionary()

    async def call_agent(request: str, ctx: Context) -> list[mcp_types.ContentBlock]:
        connection = _connection_of(ctx)
        session_id = sessions.get(connection)
        if session_id is None:
            session = await the_runner.session_service.create_session(app_name=the_runner.app_name,
                                                                       user_id=MCP_USER_ID)
            session_id = sessions[connection] = session.id
        message = Content(role="user", parts=[Part(text=request)])
        blocks: list[mcp_types.ContentBlock] = []
        async for event in the_runner.run_async(user_id=MCP_USER_ID, session_id=session_id, new_message=message):
            parts = event.content.parts if event.content is not None else None
            if not parts:
                continue
            if event.is_final_response():
                blocks.extend(block for part in parts if (block := _block(part)) is not None)
            elif text := "".join(part.text or "" for part in parts):
                await ctx.report_progress(progress=0.0, message=text)
        return blocks

    server.add_tool(call_agent, name=tool_name, description=getattr(agent, "description", None)
                    or f"Run the {tool_name} agent.", structured_output=False)
    return server
