"""mcp_notes: an agent whose tools come from an MCP server (``server.py``).

The toolset starts the server as a child process over stdio; on a host, one
supervised actor holds that connection for every run (restarted with backoff if the
server dies). It runs offline on a ScriptedModel: ``note <text>`` adds a note,
``notes?`` lists them, ``find <word>`` searches them; it then says what the tool
returned. The notes file is ``$NOTES_FILE`` (default ``data/notes.json``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.mcp import McpToolset, StdioConnectionParams, StdioServerParameters
from adk_actors.models import ScriptedModel, call

notes = McpToolset(
    connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(
            command=sys.executable,
            args=["-m", "examples.mcp_notes.server", os.environ.get("NOTES_FILE", "data/notes.json")],
            cwd=os.getcwd()),
        timeout=20.0),
    tool_filter=["add_note", "list_notes", "find_notes"],
    call_timeout=10.0)


def _notes_model(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0]
        if "error" in response.response:
            return f"The notebook is not available: {response.response['error']}"
        value = response.response.get("structuredContent", {}).get("result")
        if response.name == "add_note":
            return f"Noted. You have {value} notes."
        return "Your notes: " + ("; ".join(value) if value else "none.")
    text = (last.text or "").strip()
    if text.startswith("note "):
        return call("add_note", text=text[5:])
    if text == "notes?":
        return call("list_notes")
    if text.startswith("find "):
        return call("find_notes", word=text[5:])
    return "Say `note <text>`, `notes?` or `find <word>`."


root_agent = LlmAgent(name="mcp_notes", description="Keeps notes in an MCP server's notebook.",
                      model=ScriptedModel(fallback=_notes_model), tools=[notes])
