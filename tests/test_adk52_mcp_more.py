"""google-adk 2.13's remaining MCP names (issue 52), side by side with google-adk's on a
real MCP server (the ``mcp`` SDK's MCPServer over stdio, written below to a file):

* ``McpInstructionProvider`` (``google.adk.agents.mcp_instruction_provider``): the same
  instruction text for the same prompt and state, in a run's model request and when
  called; its errors (an unknown prompt, a prompt without messages, a server that
  cannot be reached) of google-adk's kinds, and ours typed;
* a toolset's ``progress_callback`` (``ProgressFnT``, and ``ProgressCallbackFactory``
  with the tool's name and the call's context, whose state it writes): the same
  progress values reach it during a run;
* ``MCPSessionManager`` (``google.adk.tools.mcp_tool.mcp_session_manager``): a working
  SDK session, the same one again, a new one after ``close()``, one per header set
  (stdio, streamable HTTP and SSE: ``tests/mcp_servers.py``); ``SessionContext``,
  ``create_mcp_http_client`` and ``CheckableMcpHttpClientFactory`` at their paths.

Each program is written for google-adk and run as written, then with its imports
rewritten to ``adk_actors``.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google_adk_harness import calls, gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors.testing import StubServer, gemini_response
from supervision.lowlevel import free_port
from supervision.testing import wait_until

pytest.importorskip("google.adk")
pytest.importorskip("mcp")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

SERVER_SOURCE = '''
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage

server = MCPServer("test-prompts")


@server.prompt()
def greeting(name: str, mood: str = "calm") -> list:
    """Greet someone."""
    return [UserMessage(f"You talk to {name}, who is {mood}. "), AssistantMessage("Answer briefly, as {style}.")]


@server.prompt()
def plain() -> str:
    """No arguments."""
    return "You are a plain helper."


@server.prompt()
def silent() -> list:
    """No messages at all."""
    return []


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to steps, reporting progress at each."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


if __name__ == "__main__":
    server.run("stdio")
'''


@pytest.fixture(scope="module")
def server_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("mcp_more") / "prompt_server.py"
    path.write_text(SERVER_SOURCE)
    return str(path)


def _program(source: str, server: str) -> str:
    return source.replace("PYTHON", repr(sys.executable)).replace("SERVER", repr(server))


def _execute(source: str, *args: Any) -> Any:
    """``source``'s ``main(*args)``, run to its end (within 60 s) on a loop of its own."""
    module = types.ModuleType("mcp_more_case")
    sys.modules["mcp_more_case"] = module
    try:
        exec(compile(source, "<mcp case>", "exec"), module.__dict__)
        return asyncio.run(asyncio.wait_for(module.__dict__["main"](*args), timeout=60))
    finally:
        sys.modules.pop("mcp_more_case", None)


PROVIDER = '''
from types import SimpleNamespace

from google.adk.agents.mcp_instruction_provider import McpInstructionProvider
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from mcp import StdioServerParameters

PARAMS = StdioConnectionParams(server_params=StdioServerParameters(command=PYTHON, args=[SERVER]), timeout=30)


async def main(prompt, state):
    provider = McpInstructionProvider(PARAMS, prompt)
    try:
        return "text", await provider(SimpleNamespace(state=state))
    except Exception as exc:
        return "error", exc
    finally:
        await provider._mcp_session_manager.close()
'''


@pytest.mark.parametrize(("prompt", "state", "expected"), [
    ("greeting", {"name": "Ada", "mood": "glad", "other": "not sent"}, "You talk to Ada, who is glad. Answer briefly, as {style}."),
    ("greeting", {"name": "Bob"}, "You talk to Bob, who is calm. Answer briefly, as {style}."),
    ("plain", {"name": "Ada"}, "You are a plain helper."),
])
def test_the_provider_gives_google_adks_text(server_file: str, prompt: str, state: dict[str, Any],
                                             expected: str) -> None:
    source = _program(PROVIDER, server_file)
    theirs = _execute(source, prompt, state)
    ours = _execute(rewritten(source), prompt, state)
    assert theirs == ("text", expected)
    assert ours == theirs


def test_the_providers_errors_are_google_adks_kinds_and_typed(server_file: str) -> None:
    from mcp.shared.exceptions import MCPError

    from adk_actors.mcp import EmptyMcpPrompt, McpError, McpSessionError, McpUnavailable

    source = _program(PROVIDER, server_file)
    # an unknown prompt: the server refuses (theirs the SDK's error, ours McpError)
    kind, theirs = _execute(source, "nowhere", {})
    assert kind == "error" and isinstance(theirs, MCPError)
    kind, ours = _execute(rewritten(source), "nowhere", {})
    assert kind == "error" and type(ours) is McpError and "nowhere" in str(ours)
    # a prompt without messages: a ValueError on both
    kind, theirs = _execute(source, "silent", {})
    assert kind == "error" and isinstance(theirs, ValueError)
    kind, ours = _execute(rewritten(source), "silent", {})
    assert kind == "error" and isinstance(ours, EmptyMcpPrompt) and isinstance(ours, ValueError)
    # a server that exits at once: a ConnectionError on both
    gone = _program(PROVIDER, "-c").replace("args=['-c']", "args=['-c', 'pass']").replace("timeout=30", "timeout=5")
    kind, theirs = _execute(gone, "plain", {})
    assert kind == "error" and isinstance(theirs, ConnectionError)
    kind, ours = _execute(rewritten(gone), "plain", {})
    assert kind == "error" and isinstance(ours, McpSessionError)
    assert isinstance(ours, ConnectionError) and isinstance(ours, McpUnavailable)


RUN = '''
from google.adk.agents import Agent
from google.adk.agents.mcp_instruction_provider import McpInstructionProvider
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.genai import types
from mcp import StdioServerParameters

PARAMS = StdioConnectionParams(server_params=StdioServerParameters(command=PYTHON, args=[SERVER]), timeout=30)
seen = []


def factory(tool_name, *, callback_context=None, **kwargs):
    async def report(progress, total, message):
        seen.append((tool_name, progress, total, message))
        callback_context.state["last_progress"] = progress
    return report


async def plain_callback(progress, total, message):
    seen.append(("plain", progress, total, message))


async def main(form):
    toolset = McpToolset(connection_params=PARAMS, tool_filter=["count"],
                         progress_callback=factory if form == "factory" else plain_callback)
    provider = McpInstructionProvider(PARAMS, "greeting")
    agent = Agent(name="counter", model="gemini-2.5-flash", instruction=provider, tools=[toolset])
    runner = InMemoryRunner(agent=agent, app_name="count")
    session = await runner.session_service.create_session(app_name="count", user_id="u",
                                                          state={"name": "Ada", "mood": "busy", "style": "verse"})
    texts = []
    try:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text="Go")])):
            for response in event.get_function_responses():
                texts.append(response.response)
    finally:
        await toolset.close()
        await provider._mcp_session_manager.close()
    done = await runner.session_service.get_session(app_name="count", user_id="u", session_id=session.id)
    return seen, done.state.get("last_progress"), texts
'''

SCRIPT = [calls(("count", {"steps": 3})), gemini_response("Counted.")]


def _run(server: StubServer, source: str, form: str) -> dict[str, Any]:
    _, (seen, last, responses) = run_program(source, SCRIPT, server, form)
    assert not server.responses and len(server.requests) == 2, "the script is used"
    instructions = ["".join(part["text"] for part in request.body["systemInstruction"]["parts"])
                    for request in server.requests]
    return {"seen": seen, "last": last, "instructions": instructions, "responses": responses}


@pytest.mark.parametrize("form", ["factory", "plain"])
def test_progress_reaches_the_callback_as_on_google_adk(gemini: StubServer, server_file: str,  # noqa: F811
                                                        form: str) -> None:
    source = _program(RUN, server_file)
    theirs = _run(gemini, source, form)
    ours = _run(gemini, rewritten(source), form)
    name = "count" if form == "factory" else "plain"
    assert theirs["seen"] == [(name, step, 3.0, f"step {step}") for step in (1, 2, 3)]
    assert ours["seen"] == theirs["seen"]
    # the factory's callback wrote the session's state through the call's context
    assert theirs["last"] == (3 if form == "factory" else None)
    assert ours["last"] == theirs["last"]
    # the instruction is the server's prompt, its arguments filled from the state by
    # the server, in both requests; the text's own braces are not placeholders
    prompt = "You talk to Ada, who is busy. Answer briefly, as {style}."
    for their_text, our_text in zip(theirs["instructions"], ours["instructions"], strict=True):
        assert their_text.startswith(prompt)
        assert our_text.startswith(prompt)
    assert [r["structuredContent"] for r in ours["responses"]] == [
        r["structuredContent"] for r in theirs["responses"]] == [{"result": "counted to 3"}]


MANAGER = '''
from google.adk.tools.mcp_tool.mcp_session_manager import MCPSessionManager, StdioConnectionParams
from mcp import StdioServerParameters

PARAMS = StdioConnectionParams(server_params=StdioServerParameters(command=PYTHON, args=[SERVER]), timeout=30)


async def main():
    manager = MCPSessionManager(connection_params=PARAMS)
    progress = []

    async def report(progress_value, total, message):
        progress.append(progress_value)

    try:
        session = await manager.create_session()
        again = await manager.create_session()
        listed = sorted(tool.name for tool in (await session.list_tools()).tools)
        prompts = sorted(prompt.name for prompt in (await session.list_prompts()).prompts)
        result = await session.call_tool("count", {"steps": 2}, progress_callback=report)
        await manager.close()
        fresh = await manager.create_session()
        after = (await fresh.call_tool("count", {"steps": 1})).structured_content
        return {"same": session is again, "new": fresh is not session, "tools": listed, "prompts": prompts,
                "result": result.structured_content, "progress": progress, "after": after}
    finally:
        await manager.close()
'''


def test_the_session_manager_gives_a_working_session(server_file: str) -> None:
    source = _program(MANAGER, server_file)
    theirs = _execute(source)
    ours = _execute(rewritten(source))
    assert theirs == {"same": True, "new": True, "tools": ["count"], "prompts": ["greeting", "plain", "silent"],
                      "result": {"result": "counted to 2"}, "progress": [1.0, 2.0],
                      "after": {"result": "counted to 1"}}
    assert ours == theirs


def test_the_session_names_are_at_google_adks_paths(server_file: str) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from adk_actors.tools.mcp_tool import mcp_session_manager, session_context
    from adk_actors.tools.mcp_tool.mcp_tool import ProgressCallbackFactory, ProgressFnT
    from adk_actors.tools.mcp_tool.mcp_toolset import ProgressFnT as ToolsetProgressFnT

    assert ToolsetProgressFnT is ProgressFnT
    assert isinstance(lambda name, *, callback_context=None, **kw: None, ProgressCallbackFactory)
    factory = mcp_session_manager.create_mcp_http_client
    assert isinstance(factory, mcp_session_manager.CheckableMcpHttpClientFactory)

    async def main() -> tuple[list[str], bool]:
        async with factory(headers={"x-test": "1"}) as http:
            header = http.headers.get("x-test") == "1"
        params = StdioServerParameters(command=sys.executable, args=[server_file])
        async with session_context.SessionContext(stdio_client(params), timeout=30, sse_read_timeout=None,
                                                  is_stdio=True) as session:
            assert isinstance(session, ClientSession)
            names = [prompt.name for prompt in (await session.list_prompts()).prompts]
        return names, header

    assert asyncio.run(asyncio.wait_for(main(), timeout=60)) == (["greeting", "plain", "silent"], True)


def test_a_session_that_cannot_open_is_a_typed_connection_error() -> None:
    from mcp import StdioServerParameters

    from adk_actors.mcp import McpSessionError, MCPSessionManager

    async def main() -> BaseException:
        manager = MCPSessionManager(StdioServerParameters(command=sys.executable, args=["-c", "pass"]))
        try:
            await manager.create_session()
        except Exception as exc:
            return exc
        finally:
            await manager.close()
        raise AssertionError("the session opened")

    error = asyncio.run(asyncio.wait_for(main(), timeout=60))
    assert isinstance(error, McpSessionError) and isinstance(error, ConnectionError)


HTTP_MANAGER = '''
from google.adk.tools.mcp_tool.mcp_session_manager import (
    MCPSessionManager, SseConnectionParams, StreamableHTTPConnectionParams)


async def main(url):
    found = {}
    for kind, params in (("http", StreamableHTTPConnectionParams(url=url + "mcp", headers={"x-a": "1"}, timeout=20)),
                         ("sse", SseConnectionParams(url=url + "sse-server/sse", headers={"x-a": "1"}, timeout=20))):
        manager = MCPSessionManager(connection_params=params)
        try:
            plain = await manager.create_session()
            again = await manager.create_session(headers={"x-a": "1"})
            other = await manager.create_session(headers={"x-b": "2"})
            added = (await other.call_tool("add", {"a": 2, "b": 3})).structured_content
            listed = sorted(tool.name for tool in (await plain.list_tools()).tools)
            found[kind] = {"same": plain is again, "other": other is not plain, "added": added, "tools": listed}
        finally:
            await manager.close()
    return found
'''


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("mcp_servers.py")), "http", str(port)])
    try:
        wait_until(lambda: _listening(port), timeout=30)
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.kill()
        process.wait(10)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_the_session_manager_over_http_and_sse(http_server: str) -> None:
    theirs = _execute(HTTP_MANAGER, http_server)
    ours = _execute(rewritten(HTTP_MANAGER), http_server)
    expected = {"same": True, "other": True, "added": {"result": 5},
                "tools": ["add", "crash", "hang", "linger", "shout", "whoami"]}
    assert theirs == {"http": expected, "sse": expected}
    assert ours == theirs
