"""Issue 52: an MCP tool's declaration reaches Gemini as google-adk 2.13 sends it.

google-adk 2.13's ``McpTool`` (its ``JSON_SCHEMA_FOR_FUNC_DECL`` feature, on by
default) declares the server's ``inputSchema`` under ``parameters_json_schema`` and the
server's ``outputSchema`` under ``response_json_schema``, and the Gemini API request
carries both keys as given. The same program (an agent with an ``McpToolset`` of
``tests/mcp_servers.py`` over stdio) runs in process on google-adk and on ours (imports
rewritten) against one Gemini stand-in on 127.0.0.1; the declarations as received are
compared key by key, the description too (fenced as untrusted text on both sides,
``<<<BEGIN_UNTRUSTED_TOOL_DESCRIPTION>>>``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from google_adk_harness import gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytest.importorskip("mcp")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

SERVER = Path(__file__).with_name("mcp_servers.py")

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.genai import types
from mcp import StdioServerParameters

toolset = McpToolset(connection_params=StdioConnectionParams(
    server_params=StdioServerParameters(command=PYTHON, args=[SERVER, "stdio"]), timeout=30),
    tool_filter=["add", "shout"])
root_agent = Agent(name="calc", model="gemini-2.5-flash", instruction="Compute.", tools=[toolset])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="calc")
    session = await runner.session_service.create_session(app_name="calc", user_id="u")
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text="go")])):
            pass
    finally:
        await toolset.close()
'''.replace("PYTHON", repr(sys.executable)).replace("SERVER", repr(str(SERVER)))


def _declared(server: StubServer, source: str) -> dict[str, dict[str, Any]]:
    run_program(source, [gemini_response(text="done")], server)
    assert len(server.requests) == 1 and not server.responses
    tools = server.requests[0].body["tools"]
    return {d["name"]: d for tool in tools for d in tool.get("functionDeclarations", [])}


def test_an_mcp_tool_declares_its_output_schema_as_google_adk_does(gemini: StubServer) -> None:  # noqa: F811
    theirs = _declared(gemini, PROGRAM)
    ours = _declared(gemini, rewritten(PROGRAM))
    assert sorted(theirs) == sorted(ours) == ["add", "shout"]
    # what google-adk sends, as observed: the server's own schemas, both ways
    assert theirs["add"]["response_json_schema"]["properties"]["result"]["type"] == "integer"
    assert theirs["shout"]["parameters_json_schema"]["required"] == ["text"]
    assert "Add two whole numbers." in theirs["add"]["description"]
    for name in theirs:
        their, our = dict(theirs[name]), dict(ours[name])
        assert their["description"].startswith("<<<BEGIN_UNTRUSTED_TOOL_DESCRIPTION>>>\n")
        assert our == their, name
