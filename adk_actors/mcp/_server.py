"""A host's apps as MCP tools, on the ``mcp`` SDK's MCPServer.

``apps_server(runner_for, apps, user_of)`` is an MCP server with one tool per app,
named after the app and described by its root agent. A call
``{"message": "...", "session_id": "..."}`` runs one turn of that app in the session
(a new one when no id is given; one with an unknown id is created) and returns
``{"answer": <the last text an agent said>, "session_id": ..., "artifacts": [names
saved in the turn]}``. A run that fails, or input the host refuses, is the call's
error (``isError``, with the reason), never a crashed server. ``user_of(context)``
says whose sessions they are: the ``--user`` of ``adk-actors mcp`` (stdio), or the
HTTP request's token's user (the host's ``/mcp`` mount).

Served over stdio by ``adk-actors mcp`` and over streamable HTTP at the host's
``/mcp`` (``adk_actors.http._mcp``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from .._exceptions import AdkError, RunFailedError, SessionExistsError, SessionNotFoundError

__all__ = ["AgentAnswer", "apps_server"]


class AgentAnswer(BaseModel):
    answer: str
    session_id: str
    artifacts: list[str]


def apps_server(runner_for: Callable[[str], Any], apps: Mapping[str, str],
                user_of: Callable[[Context], str]) -> MCPServer:
    """The MCP server of ``apps`` (app name -> description); see the module."""
    server = MCPServer("adk-actors", instructions="Each tool asks one agent of an adk-actors host and returns "
                                                  "its answer; pass the session_id it returned to go on talking.")
    for app, description in apps.items():
        server.add_tool(_asker(runner_for, app, user_of), name=app,
                        description=description or f"Ask the {app} agent.", structured_output=True)
    return server


def _asker(runner_for: Callable[[str], Any], app: str, user_of: Callable[[Context], str]) -> Callable[..., Any]:
    async def ask(message: str, ctx: Context, session_id: str | None = None) -> AgentAnswer:
        """Ask the agent; its answer, the session (pass it again to go on) and the
        artifacts it saved."""
        runner, user = runner_for(app), user_of(ctx)
        session = session_id or f"mcp-{uuid.uuid4().hex[:16]}"
        try:
            if session_id is None:
                await asyncio.to_thread(runner.create_session, user, session)
            try:
                events = [event async for event in runner.run_async(user, session, message)]
            except SessionNotFoundError:
                await asyncio.to_thread(_create, runner, user, session)
                events = [event async for event in runner.run_async(user, session, message)]
        except RunFailedError as failure:
            raise ToolError(f"the run failed: {failure.reason}: {failure.detail}") from None
        except AdkError as error:
            raise ToolError(f"{type(error).__name__}: {error}") from None
        texts = [e.content.text for e in events
                 if e.author != "user" and not e.partial and e.content is not None and e.content.text]
        saved = sorted({name for e in events for name in e.actions.artifact_delta})
        return AgentAnswer(answer=texts[-1] if texts else "", session_id=session, artifacts=saved)

    return ask


def _create(runner: Any, user: str, session: str) -> None:
    try:
        runner.create_session(user, session)
    except SessionExistsError:
        pass  # another call made it meanwhile
