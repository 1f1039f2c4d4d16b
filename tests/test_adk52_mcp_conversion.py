"""Issue 52: google-adk's MCP conversions, agent server and toolset config, side by side.

* ``adk_to_mcp_tool_type``: the same functions as google-adk's ``FunctionTool`` and as
  ours give equal ``mcp.types.Tool`` objects (a tool declaring a Gemini ``Schema`` and a
  tool declaring nothing too);
* ``gemini_to_json_schema``: the same ``google.genai`` schemas give equal JSON schemas
  (nested objects, arrays, enums, nullable, required, anyOf, constraints), and a dict
  of the same fields gives it too;
* ``to_mcp_server``: one custom agent (the same code, imports swapped) served over
  stdio by each, asked by the official ``mcp`` client: the server's instructions,
  ``list_tools`` and ``call_tool`` (two calls on a connection, one on a second
  connection; text, an image, a blob; progress) are equal;
* ``McpToolsetConfig`` accepts and refuses the same ``args``; ``McpToolset.from_config``
  refuses stdio servers unless ``ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS`` is set, as
  google-adk's does, and otherwise makes a toolset of those parameters.
"""

from __future__ import annotations

import asyncio
import enum
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

pytest.importorskip("mcp")
pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

from google.adk.tools import BaseTool as GBaseTool  # noqa: E402
from google.adk.tools import FunctionTool as GFunctionTool  # noqa: E402
from google.adk.tools.mcp_tool import adk_to_mcp_tool_type as g_to_mcp  # noqa: E402
from google.adk.tools.mcp_tool import gemini_to_json_schema as g_to_json  # noqa: E402
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset as GMcpToolset  # noqa: E402
from google.adk.tools.mcp_tool.mcp_toolset import McpToolsetConfig as GConfig  # noqa: E402
from google.adk.tools.tool_configs import ToolArgsConfig as GArgs  # noqa: E402
from google.genai import types as gtypes  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from adk_actors.agents._tool_configs import ToolArgsConfig  # noqa: E402
from adk_actors.tools import BaseTool, FunctionTool  # noqa: E402
from adk_actors.tools.mcp_tool import adk_to_mcp_tool_type, gemini_to_json_schema  # noqa: E402
from adk_actors.tools.mcp_tool.mcp_toolset import McpToolset, McpToolsetConfig  # noqa: E402

T = gtypes.Type
S = gtypes.Schema


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: float = 0.0


def plain(city: str, days: int, metric: bool = True) -> dict[str, Any]:
    """Forecast for a city.

    Args:
      city: the city.
      days: how many days.
    """
    return {}


def rich(tags: list[str], color: Color = Color.RED, at: Point | None = None, limit: int | None = None) -> str:
    """Tags, a color, a point."""
    return ""


async def no_args() -> str:
    return "ok"


WEATHER = S(type=T.OBJECT, description="Weather query.", required=["city"], properties={
    "city": S(type=T.STRING, description="The city.", min_length="1", max_length="40", pattern="^[A-Z]"),
    "unit": S(type=T.STRING, enum=["C", "F"], default="C", nullable=True),
    "days": S(type=T.INTEGER, minimum=1, maximum=14, format="int32", example=3),
    "where": S(type=T.OBJECT, required=["lat", "lon"], min_properties="2", max_properties="3", properties={
        "lat": S(type=T.NUMBER, minimum=-90, maximum=90), "lon": S(type=T.NUMBER, title="Longitude")}),
    "hours": S(type=T.ARRAY, min_items="1", max_items="24", items=S(type=T.ARRAY, items=S(type=T.INTEGER))),
    "either": S(any_of=[S(type=T.STRING), S(type=T.INTEGER, nullable=True)]),
    "free": S(type=T.OBJECT, properties={}),
    "ordered": S(type=T.OBJECT, property_ordering=["b", "a"], properties={"a": S(type=T.BOOLEAN),
                                                                           "b": S(type=T.STRING)}),
})
SCHEMAS = {
    "weather": WEATHER,
    "empty": S(),
    "unspecified": S(type=T.TYPE_UNSPECIFIED, description="anything"),
    "array of enums": S(type=T.ARRAY, items=S(type=T.STRING, enum=["a", "b"]), nullable=True),
    "null": S(type=T.NULL),
    "string constraints ignored on a number": S(type=T.NUMBER, min_length="2", pattern="x", minimum=0.5),
}


class _GemSchemaTool(GBaseTool):
    def _get_declaration(self) -> gtypes.FunctionDeclaration:
        return gtypes.FunctionDeclaration(name=self.name, description=self.description, parameters=WEATHER)


class _OurSchemaTool(BaseTool):
    def _get_declaration(self) -> gtypes.FunctionDeclaration:
        return gtypes.FunctionDeclaration(name=self.name, description=self.description, parameters=WEATHER)


@pytest.mark.parametrize("func", [rich, no_args], ids=lambda f: f.__name__)
def test_a_function_tool_converts_as_google_adks(func: Any) -> None:
    ours = adk_to_mcp_tool_type(FunctionTool(func))
    assert ours == g_to_mcp(GFunctionTool(func))
    assert ours.name == func.__name__ and (ours.input_schema["properties"] if func is rich else True)


def test_a_function_tool_with_an_args_section_converts_as_google_adks() -> None:
    assert adk_to_mcp_tool_type(FunctionTool(plain)) == g_to_mcp(GFunctionTool(plain))


def test_a_tool_declaring_a_gemini_schema_or_nothing_converts_as_google_adks() -> None:
    ours = adk_to_mcp_tool_type(_OurSchemaTool(name="weather", description="Look it up."))
    theirs = g_to_mcp(_GemSchemaTool(name="weather", description="Look it up."))
    assert ours == theirs and ours.input_schema["properties"]["where"]["required"] == ["lat", "lon"]
    bare_ours = adk_to_mcp_tool_type(BaseTool(name="bare", description="Nothing declared."))
    assert bare_ours == g_to_mcp(GBaseTool(name="bare", description="Nothing declared."))
    assert bare_ours.input_schema == {}


@pytest.mark.parametrize("key", list(SCHEMAS))
def test_a_schema_converts_as_google_adks(key: str) -> None:
    schema = SCHEMAS[key]
    expected = g_to_json(schema)
    assert gemini_to_json_schema(schema) == expected
    # the same schema as a dict of its fields, snake_case or camelCase
    assert gemini_to_json_schema(schema.model_dump(exclude_none=True)) == expected
    assert gemini_to_json_schema(schema.model_dump(exclude_none=True, by_alias=True, mode="json")) == expected


def test_the_weather_schema_keeps_what_google_adk_keeps() -> None:
    converted = gemini_to_json_schema(WEATHER)
    assert converted["properties"]["unit"] == {"type": "string", "nullable": True, "default": "C", "enum": ["C", "F"]}
    assert converted["properties"]["hours"]["items"] == {"type": "array", "items": {"type": "integer"}}
    assert converted["properties"]["either"] == {"type": "null", "anyOf": [
        {"type": "string"}, {"type": "integer", "nullable": True}]}
    assert "property_ordering" not in str(converted) and converted["required"] == ["city"]


def test_what_is_not_a_schema_is_a_type_error_on_both() -> None:
    for value in ("OBJECT", 3):
        with pytest.raises(TypeError):
            g_to_json(value)
        with pytest.raises(TypeError):
            gemini_to_json_schema(value)


SERVER = '''
import sys
if sys.argv[1] == "google":
    from google.adk.agents import BaseAgent
    from google.adk.events import Event
    from google.adk.tools.mcp_tool import to_mcp_server
    from google.genai import types
else:
    from adk_actors import types
    from adk_actors.agents import BaseAgent
    from adk_actors.events import Event
    from adk_actors.tools.mcp_tool import to_mcp_server


class Echo(BaseAgent):
    async def _run_async_impl(self, ctx):
        said = ctx.user_content.parts[0].text
        turn = len([e for e in ctx.session.events if e.author == "user"])
        yield Event(author=self.name, invocation_id=ctx.invocation_id, partial=True,
                    content=types.Content(role="model", parts=[types.Part(text=f"thinking about {said}")]))
        yield Event(author=self.name, invocation_id=ctx.invocation_id, content=types.Content(role="model", parts=[
            types.Part(text=f"turn {turn}: {said}"),
            types.Part(inline_data=types.Blob(mime_type="image/png", data=b"not really a png")),
            types.Part(inline_data=types.Blob(mime_type="application/pdf", data=b"%PDF-1.4")),
        ]))


description = sys.argv[2]
server = to_mcp_server(Echo(name="echo_agent", description=description), instructions="Ask the echo agent.",
                       **({"name": sys.argv[3]} if len(sys.argv) > 3 else {}))
server.run(transport="stdio")
'''


async def _ask(script: Path, side: str, *extra: str) -> list[Any]:
    """What the official client sees of the server: per connection (two), the
    server's instructions, its tools and the results of calls (two on the first
    connection, one on the second), with the progress messages of the first call."""
    params = StdioServerParameters(command=sys.executable, args=[str(script), side, *extra])
    seen: list[Any] = []
    for requests in (("hi", "again"), ("fresh",)):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            tools = (await session.list_tools()).tools
            seen += [init.instructions, [tool.model_dump(mode="json") for tool in tools]]
            for request in requests:
                progress: list[str | None] = []

                async def note(done: float, total: float | None, message: str | None) -> None:
                    progress.append(message)

                result = await session.call_tool(tools[0].name, {"request": request}, progress_callback=note)
                seen += [result.model_dump(mode="json"), progress]
    return seen


@pytest.mark.parametrize("extra", [("Echoes what it is told.",), ("", "renamed")], ids=["described", "named"])
def test_an_agent_served_over_stdio_answers_as_google_adks(tmp_path: Path, extra: tuple[str, ...]) -> None:
    script = tmp_path / "serve_echo.py"
    script.write_text(SERVER)

    async def both() -> tuple[list[Any], list[Any]]:
        async with asyncio.timeout(90):
            return await _ask(script, "google", *extra), await _ask(script, "ours", *extra)

    theirs, ours = asyncio.run(both())
    assert ours == theirs
    tool = ours[1][0]
    assert tool["name"] == (extra[1] if len(extra) > 1 else "echo_agent")
    assert tool["input_schema"]["required"] == ["request"]
    texts = [[block.get("text") for block in call["content"]] for call in (ours[2], ours[4], ours[8])]
    assert texts == [["turn 1: hi", None, None], ["turn 2: again", None, None], ["turn 1: fresh", None, None]]
    assert [block["type"] for block in ours[2]["content"]] == ["text", "image", "resource"]
    assert ours[3] == ["thinking about hi"]  # the partial event, as progress


#: (args, whether google-adk's McpToolsetConfig takes them)
CONFIGS: list[dict[str, Any]] = [
    {"sse_connection_params": {"url": "http://127.0.0.1:9/sse", "headers": {"A": "b"}, "timeout": 3}},
    {"streamable_http_connection_params": {"url": "http://127.0.0.1:9/mcp"}, "tool_filter": ["a", "b"],
     "tool_name_prefix": "fs", "tool_list_cache_ttl_seconds": 30},
    {"stdio_server_params": {"command": "npx", "args": ["-y", "server"]}},
    {"stdio_connection_params": {"server_params": {"command": "npx"}, "timeout": 10}},
    {},
    {"tool_filter": ["a"]},
    {"sse_connection_params": {"url": "http://x/sse"}, "streamable_http_connection_params": {"url": "http://x/mcp"}},
    {"sse_connection_params": {"url": "http://x/sse"}, "unknown": 1},
    {"sse_connection_params": {"headers": {}}},
    {"sse_connection_params": {"url": "http://x/sse"}, "tool_filter": "a"},
    {"stdio_connection_params": {"command": "npx"}},
    {"streamable_http_connection_params": {"url": "http://x/mcp"}, "use_mcp_resources": "maybe"},
]


@pytest.mark.parametrize("args", CONFIGS)
def test_the_config_takes_and_refuses_what_google_adks_does(args: dict[str, Any]) -> None:
    try:
        GConfig.model_validate(args)
        google_takes = True
    except ValidationError:
        google_takes = False
    try:
        McpToolsetConfig.model_validate(args)
        ours_takes = True
    except ValidationError:
        ours_takes = False
    assert ours_takes == google_takes


@pytest.mark.parametrize("allowed", [False, True])
def test_from_config_refuses_a_stdio_server_unless_allowed_as_google_adks(
        monkeypatch: pytest.MonkeyPatch, allowed: bool) -> None:
    if allowed:
        monkeypatch.setenv("ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS", "true")
    else:
        monkeypatch.delenv("ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS", raising=False)
    args = {"stdio_server_params": {"command": sys.executable, "args": ["-c", "pass"]}, "tool_filter": ["x"]}
    if not allowed:
        with pytest.raises(ValueError, match="ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS"):
            GMcpToolset.from_config(GArgs(**args), "/apps/a/root_agent.yaml")
        with pytest.raises(ValueError, match="ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS"):
            McpToolset.from_config(ToolArgsConfig(**args), "/apps/a/root_agent.yaml")
        return
    theirs = GMcpToolset.from_config(GArgs(**args), "/apps/a/root_agent.yaml")
    ours = McpToolset.from_config(ToolArgsConfig(**args), "/apps/a/root_agent.yaml")
    assert ours.tool_filter == theirs.tool_filter == ["x"]
    assert ours.spec.params.server_params.command == sys.executable


def test_from_config_makes_an_http_toolset_of_those_params() -> None:
    args = {"streamable_http_connection_params": {"url": "http://127.0.0.1:9/mcp", "headers": {"k": "v"}},
            "tool_name_prefix": "fs", "tool_filter": ["read"]}
    ours = McpToolset.from_config(ToolArgsConfig(**args), "/apps/a/root_agent.yaml")
    theirs = GMcpToolset.from_config(GArgs(**args), "/apps/a/root_agent.yaml")
    assert type(ours.spec.params).__name__ == type(theirs._connection_params).__name__
    assert ours.spec.params.url == theirs._connection_params.url and ours.spec.params.headers == {"k": "v"}
    assert ours.tool_name_prefix == theirs.tool_name_prefix == "fs"
    with pytest.raises(ValueError, match="auth_credential"):
        McpToolset.from_config({**args, "auth_credential": {"auth_type": "apiKey", "api_key": "k"}}, "x")


HTTP_SERVER = SERVER.replace('server.run(transport="stdio")',
                             'server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[4]))')


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_config_made_toolset_reaches_an_agent_served_over_streamable_http(tmp_path: Path) -> None:
    """Our agent served by ``to_mcp_server`` over streamable HTTP (a child process on a
    random loopback port), reached by the ``McpToolset`` an agent file's args make."""
    script, port = tmp_path / "serve_echo_http.py", _free_port()
    script.write_text(HTTP_SERVER)
    child = subprocess.Popen([sys.executable, str(script), "ours", "Echoes.", "echo_agent", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert child.poll() is None, child.stderr.read().decode()[-2000:] if child.stderr else ""
                assert time.monotonic() < deadline, "the server did not listen in 60 s"
                time.sleep(0.1)
        args = {"streamable_http_connection_params": {"url": f"http://127.0.0.1:{port}/mcp"},
                "tool_name_prefix": "remote"}
        toolset = McpToolset.from_config(ToolArgsConfig(**args), str(tmp_path / "root_agent.yaml"))

        async def use() -> tuple[list[Any], dict[str, Any]]:
            async with asyncio.timeout(60):
                try:
                    tools = await toolset.get_tools(None)
                    return tools, await toolset.call(None, tools[0].server_name, {"request": "ping"})
                finally:
                    await toolset.close()

        tools, answer = asyncio.run(use())
        assert [(tool.name, tool.description) for tool in tools] == [("remote_echo_agent", "Echoes.")]
        assert answer["isError"] is False
        assert [block["type"] for block in answer["content"]] == ["text", "image", "resource"]
        assert answer["content"][0]["text"] == "turn 1: ping"
    finally:
        child.kill()
        child.wait(timeout=10)
        if child.stderr:
            child.stderr.close()


MCP_AGENT_FILE = """\
name: fs_agent
model: gemini-2.5-flash
instruction: Read files.
tools:
  - name: {name}
    args:
      streamable_http_connection_params:
        url: http://127.0.0.1:9/mcp
      tool_name_prefix: fs
"""


@pytest.mark.parametrize("name", ["McpToolset", "google.adk.tools.mcp_tool.McpToolset"])
def test_an_agent_file_with_an_mcp_toolset_loads_as_google_adks(tmp_path: Path, name: str) -> None:
    """A root_agent.yaml listing ``McpToolset`` with its args: both loaders make the
    toolset of those params; a stdio server in a file is refused (a clear error naming
    the file) unless allowed, as google-adk refuses it."""
    from google.adk.agents import config_agent_utils as their_utils

    from adk_actors import AgentDefinitionError
    from adk_actors.engine import load_agent_config

    path = tmp_path / "root_agent.yaml"
    path.write_text(MCP_AGENT_FILE.format(name=name))
    ours = load_agent_config(path)
    theirs = their_utils.from_config(str(path))
    (our_toolset,), (their_toolset,) = ours.tools, theirs.tools
    assert isinstance(our_toolset, McpToolset)
    assert our_toolset.spec.params.url == their_toolset._connection_params.url == "http://127.0.0.1:9/mcp"
    assert our_toolset.tool_name_prefix == their_toolset.tool_name_prefix == "fs"
    path.write_text(MCP_AGENT_FILE.format(name=name).replace(
        "streamable_http_connection_params:\n        url: http://127.0.0.1:9/mcp",
        "stdio_server_params:\n        command: sh"))
    with pytest.raises(AgentDefinitionError, match=r"root_agent\.yaml.*ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS"):
        load_agent_config(path)
