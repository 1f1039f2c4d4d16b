"""An agent with an ``McpToolset(use_mcp_resources=True)`` of
``tests/mcp_resource_server.py``, for tests/test_mcp_resources_host.py (imported by path
in the host's processes).

Its scripted model: ``load A,B`` calls ``load_mcp_resource`` for those names, then,
seeing the contents read into its request, answers ``read: <JSON>`` (whether the system
instruction named the server's resources, and each content read in: its label and text,
or its MIME type and base64 bytes); ``read NAME`` calls ``read_resource`` (the
toolset's own ``read_resource`` from a tool); ``dead`` calls ``dead_resources`` (the
``list_resources`` of a toolset whose server exits at once); a tool's response is
answered ``NAME said: <JSON>``.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.mcp import McpToolset, StdioConnectionParams, StdioServerParameters
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext

SERVER = str(Path(__file__).with_name("mcp_resource_server.py"))

toolset = McpToolset(connection_params=StdioConnectionParams(
    server_params=StdioServerParameters(command=sys.executable, args=[SERVER]), timeout=15.0), use_mcp_resources=True)
dead = McpToolset(connection_params=StdioConnectionParams(
    server_params=StdioServerParameters(command=sys.executable, args=["-c", "import sys; sys.exit(5)"]), timeout=3.0),
    use_mcp_resources=True)


def _failure(exc: Exception) -> dict[str, Any]:
    return {"error": type(exc).__name__, "message": str(exc)}


async def read_resource(name: str, tool_context: ToolContext) -> dict[str, Any]:
    """The resource's contents as the toolset reads them, or the error's type."""
    try:
        contents = await toolset.read_resource(name, tool_context)
    except Exception as exc:
        return _failure(exc)
    return {"contents": [[type(c).__name__, c.model_dump(mode="json", by_alias=True, exclude_none=True)]
                         for c in contents]}


async def dead_resources(tool_context: ToolContext) -> dict[str, Any]:
    """The resources of a server that cannot start, or the error's type."""
    try:
        return {"names": await dead.list_resources(tool_context)}
    except Exception as exc:
        return _failure(exc)


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    first = last.parts[0].text if last.parts else None
    if first and first.startswith("Contents of resource"):
        read = []
        for content in request.contents:
            if content.parts and (content.parts[0].text or "").startswith("Contents of resource"):
                label, part = content.parts[0].text, content.parts[1]
                read.append([label, part.text] if part.text is not None else
                            [label, part.inline_data.mime_type, base64.b64encode(part.inline_data.data).decode()])
        listed = json.dumps(["notes", "logo"]) in (request.system_instruction or "")
        return f"read: {json.dumps({'listed': listed, 'read': read})}"
    if last.function_responses:
        response = last.function_responses[0]
        return f"{response.name} said: {json.dumps(response.response, sort_keys=True)}"
    text = last.text or ""
    if text == "tools?":
        return ", ".join(t.name for t in request.tools)
    if text.startswith("load "):
        return call("load_mcp_resource", resource_names=text[5:].split(","))
    if text.startswith("read "):
        return call("read_resource", name=text[5:])
    if text == "dead":
        return call("dead_resources")
    return f"unknown: {text}"


root_agent = LlmAgent(name="reader", model=ScriptedModel(fallback=_script),
                      tools=[toolset, read_resource, dead_resources])
