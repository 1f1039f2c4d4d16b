"""google-adk 2.13's ``LoadMcpResourceTool`` (``google.adk.tools.load_mcp_resource_tool``,
issue 52) on our ``McpToolset``, side by side with google-adk's on a real MCP server.

One program runs in process on google-adk and on ours (imports rewritten) against one
Gemini stand-in: an agent with an ``McpToolset`` of ``tests/mcp_resource_server.py``
(the ``mcp`` SDK over stdio) and a ``LoadMcpResourceTool`` of it; the model loads
``notes``, ``logo`` and a name the server does not have, then answers. Compared: the
declarations (the tool's own description aside), the resource list put in the system
instruction, the contents read into the next request (a text part for ``notes``,
the PNG bytes as inline data for ``logo``, nothing for the missing one; the label
line's wording aside), the events (the status wording aside) and the final answer.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from google_adk_harness import _contents, calls, gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytest.importorskip("mcp")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

SERVER = Path(__file__).with_name("mcp_resource_server.py")
sys.path.insert(0, str(SERVER.parent))
from mcp_resource_server import LOGO  # noqa: E402

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.load_mcp_resource_tool import LoadMcpResourceTool
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.genai import types
from mcp import StdioServerParameters

toolset = McpToolset(connection_params=StdioConnectionParams(
    server_params=StdioServerParameters(command=PYTHON, args=[SERVER]), timeout=30))
root_agent = Agent(name="reader", model="gemini-2.5-flash", instruction="Answer from the resources.",
                   tools=[toolset, LoadMcpResourceTool(mcp_toolset=toolset)])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="docs")
    session = await runner.session_service.create_session(app_name="docs", user_id="u")
    events = []
    try:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text="Notes?")])):
            events.append(event)
    finally:
        await toolset.close()
    return events
'''.replace("PYTHON", repr(sys.executable)).replace("SERVER", repr(str(SERVER)))

SCRIPT = [calls(("load_mcp_resource", {"resource_names": ["notes", "logo", "missing"]})),
          gemini_response("Meeting at noon.")]


def _camel(blob: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if blob is None else {("mimeType" if k == "mime_type" else k): v for k, v in blob.items()}


def _run(server: StubServer, source: str) -> dict[str, Any]:
    _, result = run_program(source, SCRIPT, server)
    events, api = result if isinstance(result, tuple) else (result, None)
    assert not server.responses and len(server.requests) == 2, "the script is used"
    rows = []
    for event in events:
        responses = [(r.name, dict(r.response or {})) for r in event.get_function_responses()]
        for _, body in responses:
            assert isinstance(body.pop("status"), str)
        rows.append({"author": event.author, "final": event.is_final_response(), "responses": responses,
                     "calls": [(c.name, dict(c.args or {})) for c in event.get_function_calls()],
                     "text": "".join(p.text for p in (event.content.parts if event.content else []) if p.text)})
    bodies = [copy.deepcopy(r.body) for r in server.requests]
    declared = {d["name"]: d for tool in bodies[0]["tools"] for d in tool["functionDeclarations"]}
    instructions = ["".join(p["text"] for p in b["systemInstruction"]["parts"]) for b in bodies]
    contents = [_contents(b["contents"]) for b in bodies]
    for content in contents[1]:
        for part in content.get("parts", []):
            answer = part.get("functionResponse", {}).get("response", {})
            if "status" in answer:  # its wording is each side's own
                answer["status"] = "..."
    return {"events": rows, "declared": declared, "instructions": instructions, "contents": contents, "api": api}


def test_resources_are_listed_and_loaded_as_on_google_adk(gemini: StubServer) -> None:  # noqa: F811
    theirs = _run(gemini, PROGRAM)
    ours = _run(gemini, rewritten(PROGRAM))
    assert ours["events"] == theirs["events"]
    assert theirs["events"][1]["responses"] == [("load_mcp_resource",
                                                 {"resource_names": ["notes", "logo", "missing"]})]
    assert theirs["events"][-1]["text"] == "Meeting at noon."
    # the declarations: the server's tool as google-adk sends it, the loader's schema
    assert sorted(theirs["declared"]) == sorted(ours["declared"]) == ["load_mcp_resource", "ping"]
    assert ours["declared"]["ping"] == theirs["declared"]["ping"]
    their_loader, our_loader = theirs["declared"]["load_mcp_resource"], ours["declared"]["load_mcp_resource"]
    assert their_loader.pop("description") and our_loader.pop("description")
    assert our_loader == their_loader
    # every request names the server's resources in its system instruction, last
    for their_text, our_text in zip(theirs["instructions"], ours["instructions"], strict=True):
        listed = json.dumps(["notes", "logo"])
        assert listed in their_text and listed in our_text
        assert their_text.split("\n\nYou are")[0] == our_text.split("\n\nYou are")[0] == "Answer from the resources."
    # the first request as google-adk's; the second with the resources read in after the response
    assert ours["contents"][0] == theirs["contents"][0]
    their_second, our_second = theirs["contents"][1], ours["contents"][1]
    assert our_second[:3] == their_second[:3]
    # (google.genai spells inline data's MIME type mime_type on the Gemini API, ours
    # mimeType: protobuf JSON, which Gemini reads, takes either)
    read_in = [(c["role"], [_camel(p.get("inlineData")) or p.get("text") for p in c["parts"]])
               for c in their_second[3:]]
    assert [(role, parts[1]) for role, parts in read_in] == [
        ("user", "Meeting at noon. Bring the budget."),
        ("user", {"mimeType": "image/png", "data": base64.b64encode(LOGO).decode()})]
    ours_in = [(c["role"], [_camel(p.get("inlineData")) or p.get("text") for p in c["parts"]])
               for c in our_second[3:]]
    assert [(role, parts[1]) for role, parts in ours_in] == [(role, parts[1]) for role, parts in read_in]
    for _, parts in read_in + ours_in:
        assert len(parts) == 2 and ("notes" in parts[0] or "logo" in parts[0])


def test_content_a_server_returns_becomes_the_same_kind_of_part() -> None:
    """Text, a blob (its MIME type, else application/octet-stream) and content of no
    known kind become the same kinds of parts on both sides."""
    from google.adk.tools.load_mcp_resource_tool import LoadMcpResourceTool as Theirs

    from adk_actors.tools.load_mcp_resource_tool import LoadMcpResourceTool as Ours

    samples = [SimpleNamespace(text="hello"), SimpleNamespace(text=None, blob=base64.b64encode(b"xyz").decode()),
               SimpleNamespace(text=None, blob=base64.b64encode(b"xyz").decode(), mimeType="image/gif"),
               SimpleNamespace(text=None, blob="a"), SimpleNamespace()]

    def kinds(tool: Any) -> list[Any]:
        found = []
        for sample in samples:
            part = tool._mcp_content_to_part(sample, "r")
            found.append(("text", part.text if part.text == "hello" else "r" in part.text) if part.text is not None
                         else ("blob", part.inline_data.mime_type, bytes(part.inline_data.data)))
        return found

    theirs, ours = kinds(Theirs(mcp_toolset=None)), kinds(Ours(mcp_toolset=None))
    assert ours == theirs
    assert theirs[1] == ("blob", "application/octet-stream", b"xyz") and theirs[2][1] == "image/gif"
    assert theirs[3][0] == theirs[4][0] == "text"


# -- McpToolset(use_mcp_resources=True): the toolset's own loader and resource API ----

OWN_PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.genai import types
from mcp import StdioServerParameters

toolset = McpToolset(connection_params=StdioConnectionParams(
    server_params=StdioServerParameters(command=PYTHON, args=[SERVER]), timeout=30), use_mcp_resources=True)
root_agent = Agent(name="reader", model="gemini-2.5-flash", instruction="Answer from the resources.",
                   tools=[toolset])


def _dump(contents):
    return [(type(c).__name__, c.model_dump(mode="json", by_alias=True, exclude_none=True)) for c in contents]


async def _error(call):
    try:
        await call
    except Exception as exc:
        return type(exc).__name__
    return None


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="docs")
    session = await runner.session_service.create_session(app_name="docs", user_id="u")
    events = []
    try:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text="Notes?")])):
            events.append(event)
        api = {"names": await toolset.list_resources(),
               "info": await toolset.get_resource_info("notes"),
               "notes": _dump(await toolset.read_resource("notes")),
               "logo": _dump(await toolset.read_resource("logo")),
               "unknown_info": await _error(toolset.get_resource_info("missing")),
               "unknown_read": await _error(toolset.read_resource("missing")),
               "tools": [tool.name for tool in await toolset.get_tools()]}
    finally:
        await toolset.close()
    return events, api
'''.replace("PYTHON", repr(sys.executable)).replace("SERVER", repr(str(SERVER)))


def test_a_toolset_with_use_mcp_resources_loads_them_as_on_google_adk(gemini: StubServer) -> None:  # noqa: F811
    """``McpToolset(use_mcp_resources=True)`` alone (no loader of one's own): the same
    tools declared (the server's, then ``load_mcp_resource``), the resource names in
    the system instruction, the resources read into the second request, the same
    events; and the toolset's own ``list_resources``, ``get_resource_info`` and
    ``read_resource`` give the same names, metadata and SDK contents, and the same
    error for a name the server does not have."""
    theirs = _run(gemini, OWN_PROGRAM)
    ours = _run(gemini, rewritten(OWN_PROGRAM))
    their_api, our_api = theirs["api"], ours["api"]
    assert ours["events"] == theirs["events"]
    assert theirs["events"][1]["responses"] == [("load_mcp_resource",
                                                 {"resource_names": ["notes", "logo", "missing"]})]
    assert list(theirs["declared"]) == list(ours["declared"]) == ["ping", "load_mcp_resource"]
    assert ours["declared"]["ping"] == theirs["declared"]["ping"]
    their_loader, our_loader = theirs["declared"]["load_mcp_resource"], ours["declared"]["load_mcp_resource"]
    assert their_loader.pop("description") and our_loader.pop("description")
    assert our_loader == their_loader
    listed = json.dumps(["notes", "logo"])
    assert all(listed in text for text in theirs["instructions"] + ours["instructions"])
    assert ours["contents"][0] == theirs["contents"][0]
    assert ours["contents"][1][:3] == theirs["contents"][1][:3]

    def read_in(contents: list[dict[str, Any]]) -> list[Any]:
        return [(c["role"], _camel(c["parts"][1].get("inlineData")) or c["parts"][1].get("text")) for c in contents[3:]]

    assert read_in(ours["contents"][1]) == read_in(theirs["contents"][1]) == [
        ("user", "Meeting at noon. Bring the budget."),
        ("user", {"mimeType": "image/png", "data": base64.b64encode(LOGO).decode()})]
    assert our_api == their_api
    assert their_api["names"] == ["notes", "logo"] and their_api["tools"] == ["ping", "load_mcp_resource"]
    info = their_api["info"]
    assert (info["name"], info["uri"], info["mimeType"]) == ("notes", "notes://today", "text/plain")
    assert their_api["notes"] == [("TextResourceContents", {"uri": "notes://today", "mimeType": "text/plain",
                                                            "text": "Meeting at noon. Bring the budget."})]
    assert their_api["logo"][0][0] == "BlobResourceContents"
    assert their_api["unknown_info"] == their_api["unknown_read"] == "ValueError"


def test_use_mcp_resources_in_an_agent_file_adds_the_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent file's ``McpToolset`` args with ``use_mcp_resources: true`` make a
    toolset that offers the loader, as google-adk's ``from_config`` does; without it,
    none."""
    from google.adk.tools.mcp_tool.mcp_toolset import McpToolset as Theirs

    from adk_actors.mcp import McpToolset as Ours

    monkeypatch.setenv("ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS", "1")
    args = {"stdio_server_params": {"command": sys.executable, "args": [str(SERVER)]}, "use_mcp_resources": True}

    async def tools(toolset: Any) -> list[str]:
        try:
            return [tool.name for tool in await toolset.get_tools()]
        finally:
            await toolset.close()

    from google.adk.tools.tool_configs import ToolArgsConfig

    their = asyncio.run(asyncio.wait_for(tools(Theirs.from_config(ToolArgsConfig(**args), "")), 60))
    ours = Ours.from_config(args, "")
    assert ours.use_mcp_resources is True
    our = asyncio.run(asyncio.wait_for(tools(ours), 60))
    assert our == their == ["ping", "load_mcp_resource"]
    plain = Ours.from_config({**args, "use_mcp_resources": False}, "")
    assert asyncio.run(asyncio.wait_for(tools(plain), 60)) == ["ping"]
