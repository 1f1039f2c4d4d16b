"""google-adk's ``LoadMcpResourceTool`` (``google.adk.tools.load_mcp_resource_tool``):
an MCP server's resources, read into the model's request on demand.

Declared as ``load_mcp_resource`` with one parameter, ``resource_names`` (an array of
strings), under ``parameters_json_schema``. Before each model call of its agent:

1. the server's resource names are listed and, when there are any, a sentence naming
   them (as a JSON list) and asking the model to load one before answering about it is
   added to the system instruction (a failure to list is logged, nothing added);
2. when the request's last content holds this tool's response, each resource it names
   is read and added to the request's contents as a user message: a line naming the
   resource (``Contents of resource <name>:``), then the resource (text as text; a base64 blob as inline data of its MIME
   type, ``application/octet-stream`` without one, or a line saying it could not be
   decoded; anything else, a line saying its kind is unknown), one message per part the
   server returned; a resource that cannot be read is logged and skipped.

A call returns ``{"resource_names": [...], "status": ...}``: the contents are in the
next request only (not in the session), so reading one again takes another call.

The toolset's own ``list_resources()`` and ``read_resource(name)`` are used: on
google-adk's ``McpToolset`` as google-adk calls them (no context); on ours
(:class:`adk_actors.mcp.McpToolset`) with the tool's context, so that on a host the
host's toolset actor is asked (``InvocationContext.mcp``) and elsewhere the toolset's
own connection in this process.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from typing import Any

from .._types import Blob, Content, FunctionDeclaration, Part
from ._base import ToolContext
from ._classes import BaseTool

__all__ = ["LoadMcpResourceTool"]

_log = logging.getLogger("adk_actors.tools.mcp")

_NAME = "load_mcp_resource"
_DESCRIPTION = "Read resources of the MCP server into the conversation.\n\nCall it when you need a resource's content."
_STATUS = ("the resources' contents were shown to the model for one request, then removed: call load_mcp_resource "
           "again to see them again.")
_LISTED = ("The MCP server offers these resources:\n{names}\n\nWhen a question concerns one of them, call the "
           "`load_mcp_resource` function to load it first, and answer only after it is loaded.\n")


class LoadMcpResourceTool(BaseTool):
    """Loads ``mcp_toolset``'s resources into the request (see the module)."""

    def __init__(self, mcp_toolset: Any) -> None:
        super().__init__(name=_NAME, description=_DESCRIPTION)
        self._mcp_toolset = mcp_toolset

    def _get_declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema={
            "type": "object", "properties": {"resource_names": {"type": "array", "items": {"type": "string"}}}})

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """The names asked for, and a status saying the contents come with the next request."""
        return {"resource_names": args.get("resource_names", []), "status": _STATUS}

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """Steps 1 and 2 of the module."""
        try:
            names = await self._list(tool_context)
            if names:
                llm_request.append_instructions([_LISTED.format(names=json.dumps(names))])
        except Exception as exc:
            _log.warning("the MCP resources could not be listed: %s", exc)
        contents = llm_request.contents
        if not contents or not contents[-1].parts:
            return
        for part in list(contents[-1].parts):
            answer = part.function_response
            if answer is None or answer.name != self.name:
                continue
            for name in (answer.response or {}).get("resource_names", []):
                try:
                    read = await self._read(name, tool_context)
                except Exception as exc:
                    _log.warning("the MCP resource %r could not be read: %s", name, exc)
                    continue
                for item in read:
                    contents.append(Content(role="user", parts=[Part(text=f"Contents of resource {name}:"),
                                                                 self._mcp_content_to_part(item, name)]))

    def _mcp_content_to_part(self, content: Any, resource_name: str) -> Part:
        """One of the server's resource contents as a Part (see the module)."""
        text = getattr(content, "text", None)
        if text is not None:
            return Part(text=text)
        blob = getattr(content, "blob", None)
        if blob is not None:
            try:
                data = base64.b64decode(blob)
            except (binascii.Error, ValueError, TypeError):
                return Part(text=f"[{resource_name}: binary content that could not be decoded]")
            mime = getattr(content, "mimeType", None) or getattr(content, "mime_type", None) \
                or "application/octet-stream"
            return Part(inline_data=Blob(mime_type=mime, data=data))
        return Part(text=f"[{resource_name}: content of an unknown kind]")

    def _context(self, tool_context: ToolContext) -> tuple[Any, ...]:
        """The arguments that come before a resource's name: the tool's context for a
        toolset of ours (which reaches the host's MCP service through it), none for
        google-adk's (whose ``readonly_context`` is a google-adk context)."""
        return (tool_context,) if type(self._mcp_toolset).__module__.startswith("adk_actors.") else ()

    async def _list(self, tool_context: ToolContext) -> list[str]:
        return list(await self._mcp_toolset.list_resources(*self._context(tool_context)))

    async def _read(self, name: str, tool_context: ToolContext) -> list[Any]:
        return list(await self._mcp_toolset.read_resource(name, *self._context(tool_context)))
