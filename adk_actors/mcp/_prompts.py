"""McpInstructionProvider: an agent's instruction taken from an MCP server's prompt, as
google-adk 2.13 has it (``google.adk.agents.mcp_instruction_provider``).

``LlmAgent(instruction=McpInstructionProvider(connection_params, "prompt_name"))``: for
each model request the provider is awaited with the request's context, and gives the
text of the server's prompt of that name, its arguments filled from the session state
(see :meth:`McpInstructionProvider.__call__`). It runs where the agent's instruction is
made (in process, or in a host's run worker), on an SDK session of its own
(:class:`MCPSessionManager`), kept open between requests until :meth:`close`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from .._exceptions import McpCallTimeout, McpError
from ..compiler import Verbatim
from ._connection import _reason
from ._params import ConnectionParams, StdioConnectionParams, StdioServerParameters
from ._sessions import McpSessionError, MCPSessionManager

__all__ = ["EmptyMcpPrompt", "McpInstructionProvider"]


class EmptyMcpPrompt(McpError, ValueError):
    """The server's prompt has no messages (google-adk raises a ``ValueError``; this is
    one, and our :class:`McpError` too)."""


class McpInstructionProvider:
    """An instruction provider reading the MCP prompt ``prompt_name`` from the server
    ``connection_params`` reach (ours, or the SDK's ``StdioServerParameters``); ``errlog``
    gets a stdio server's stderr."""

    def __init__(self, connection_params: ConnectionParams | StdioServerParameters, prompt_name: str,
                 errlog: TextIO = sys.stderr) -> None:
        self._connection_params = connection_params
        self._errlog = errlog
        self._mcp_session_manager = MCPSessionManager(connection_params=connection_params, errlog=errlog)
        self.prompt_name = prompt_name

    async def __call__(self, context: Any) -> str:
        """The prompt's text, in order:

        1. the session to the server (:meth:`MCPSessionManager.create_session`: opened
           on first use; McpSessionError, a ``ConnectionError``, when it cannot be);
        2. the server's prompts are listed (their first page) and, when the one named
           ``prompt_name`` declares arguments, those of them that ``context.state`` has
           are taken from it, as they are (other state keys are not sent);
        3. the prompt is asked for with them;
        4. the text of its messages whose content is text, joined with nothing between
           (an image or resource message adds nothing), as :class:`Verbatim`: its
           braces are not state placeholders (google-adk does not fill a provider's
           text either).

        Each request has the parameters' deadline (``timeout`` for stdio,
        ``sse_read_timeout`` for HTTP), McpCallTimeout past it. The server's refusal (an
        unknown prompt, a missing required argument) is McpError with its message;
        a prompt without messages is EmptyMcpPrompt (a ``ValueError``)."""
        session = await self._mcp_session_manager.create_session()
        limit = self._deadline()
        listed = await self._ask(session.list_prompts(), "list the prompts", limit)
        wanted = next((prompt for prompt in listed.prompts if prompt.name == self.prompt_name), None)
        arguments: dict[str, Any] = {}
        if wanted is not None and wanted.arguments:
            names = {argument.name for argument in wanted.arguments}
            arguments = {key: value for key, value in (getattr(context, "state", None) or {}).items() if key in names}
        result = await self._ask(session.get_prompt(self.prompt_name, arguments=arguments),
                                 f"give the prompt {self.prompt_name!r}", limit)
        if not result.messages:
            raise EmptyMcpPrompt(f"the MCP prompt {self.prompt_name!r} has no messages")
        return Verbatim("".join(message.content.text for message in result.messages
                                if message.content.type == "text"))

    async def close(self) -> None:
        """End the provider's session (a stdio server is stopped); the next call opens
        another (ours: google-adk's provider has no ``close``)."""
        await self._mcp_session_manager.close()

    def _deadline(self) -> float:
        params = self._mcp_session_manager.connection_params
        return float(params.timeout if isinstance(params, StdioConnectionParams) else params.sse_read_timeout)

    async def _ask(self, request: Any, what: str, limit: float) -> Any:
        """``request`` awaited within ``limit`` s, in order: past it (or the SDK's own
        read deadline) McpCallTimeout; a connection that closed McpSessionError; the
        server's refusal McpError with its message; any other failure of the
        transport McpSessionError."""
        try:
            async with asyncio.timeout(limit):
                return await request
        except TimeoutError:
            raise McpCallTimeout(f"the MCP server did not {what} within {limit:g} s") from None
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise McpCallTimeout(f"the MCP server did not {what} within {limit:g} s") from None
            if exc.code == CONNECTION_CLOSED:
                raise McpSessionError(f"the MCP session ended before the server could {what}") from None
            raise McpError(f"the MCP server could not {what}: {exc.error.message}") from None
        except (asyncio.CancelledError, McpError):
            raise
        except Exception as exc:
            raise McpSessionError(f"the MCP server failed to {what}: {_reason(exc)}") from None
