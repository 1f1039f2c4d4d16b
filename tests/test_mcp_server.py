"""A host's apps as MCP tools, used by the official ``mcp`` client: over streamable
HTTP at the host's ``/mcp`` (behind the same guard as the API) and over stdio from
``adk-actors mcp`` (the way Claude Desktop or an IDE starts a server)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from conftest import ROOT, last_text, serving
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

APPS = 'echo = "runtime_agents:echo_agent"\nsleepy = "runtime_agents:sleepy_agent"\n'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One ``serve`` of ``APPS`` with the default settings, for the tests that neither stop
    nor reconfigure it (each talks on sessions of its own: new ones, or ids of its own)."""
    with serving(tmp_path_factory.mktemp("mcp-server"), apps=APPS) as info:
        yield info


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


async def talk(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], list[Any]]:
    """List the tools, then make ``calls`` in order; a session_id of ``"<last>"`` is the
    one the call before returned. Returns (tools by name, each call's result)."""
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        results: list[Any] = []
        for name, args in calls:
            if args.get("session_id") == "<last>":
                args = {**args, "session_id": results[-1].structured_content["session_id"]}
            results.append(await client.call_tool(name, args))
        return tools, results


def test_every_app_is_a_tool_over_http_and_a_session_goes_on(served: dict[str, Any]) -> None:
    url = served["url"]
    tools, results = run(talk(f"{url}/mcp", [
        ("echo", {"message": "hello"}),
        ("echo", {"message": "again", "session_id": "<last>"}),
        ("echo", {"message": "mine", "session_id": "chosen-1"}),
    ]))
    assert set(tools) == {"echo", "sleepy"}
    assert tools["echo"].input_schema["required"] == ["message"]
    assert set(tools["echo"].input_schema["properties"]) == {"message", "session_id"}
    first, second, chosen = (r.structured_content for r in results)
    assert first["answer"] == "echo: hello (turn 1)" and not results[0].is_error
    assert second == {"answer": "echo: again (turn 2)", "session_id": first["session_id"], "artifacts": []}
    assert chosen["answer"] == "echo: mine (turn 1)" and chosen["session_id"] == "chosen-1"
    # The sessions are the host's own (an operator's calls: user "mcp").
    session = httpx.get(f"{url}/apps/echo/users/mcp/sessions/{first['session_id']}", timeout=10).json()
    assert [e["content"]["parts"][0]["text"] for e in session["events"]] == [
        "hello", "echo: hello (turn 1)", "again", "echo: again (turn 2)"]


def test_bad_input_and_failed_runs_are_tool_errors_and_the_server_serves_on(tmp_path: Path) -> None:
    with serving(tmp_path, apps=APPS, host_settings="run_timeout = 1\n") as served:
        _, results = run(talk(f"{served['url']}/mcp", [
            ("echo", {"message": "odd id", "session_id": "../../etc"}),
            ("sleepy", {"message": "sleep 5"}),
            ("echo", {"message": "still here"}),
        ]))
        odd, slow, fine = results
        assert odd.is_error and "InvalidRequestError" in odd.content[0].text
        assert slow.is_error and "the run failed: timeout" in slow.content[0].text
        assert not fine.is_error and fine.structured_content["answer"] == "echo: still here (turn 1)"


def test_with_tokens_a_call_needs_one_and_its_sessions_are_its_users(tmp_path: Path) -> None:
    tokens = '[http.tokens]\n"tok-ann-0123456789abcdef" = "ann"\n'
    with serving(tmp_path, apps=APPS, more_toml=tokens) as served:
        url = served["url"]
        assert httpx.post(f"{url}/mcp", json={}, timeout=10).status_code == 401

        async def as_ann() -> Any:
            async with httpx2.AsyncClient(headers={"Authorization": "Bearer tok-ann-0123456789abcdef"}, timeout=30) as http:
                _, results = await talk(streamable_http_client(f"{url}/mcp", http_client=http),
                                        [("echo", {"message": "from ann"})])
                return results[0].structured_content

        answer = run(as_ann())
        assert answer["answer"] == "echo: from ann (turn 1)"
        listed = httpx.get(f"{url}/apps/echo/users/ann/sessions", timeout=10,
                           headers={"Authorization": "Bearer tok-ann-0123456789abcdef"}).json()
        assert [s["id"] for s in listed] == [answer["session_id"]]


def test_adk_actors_mcp_serves_the_apps_on_stdio(served: dict[str, Any]) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "adk_actors.cli", "--config", str(served["config"]), "mcp",
                                      "--user", "desk"],
        cwd=str(ROOT), env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"})
    tools, results = run(talk(params, [("echo", {"message": "over stdio"}),
                                       ("echo", {"message": "and on", "session_id": "<last>"})]))
    assert set(tools) == {"echo", "sleepy"}
    assert [r.structured_content["answer"] for r in results] == ["echo: over stdio (turn 1)",
                                                                  "echo: and on (turn 2)"]
    session = results[0].structured_content["session_id"]
    got = httpx.get(f"{served['url']}/apps/echo/users/desk/sessions/{session}", timeout=10)
    assert got.status_code == 200 and len(got.json()["events"]) == 4


@pytest.mark.parametrize("absent", ["mcp"])
def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path: Path, absent: str) -> None:
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass B:\n    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {absent!r} or name.startswith({absent!r} + '.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, B())\n")
    import subprocess

    done = subprocess.run([sys.executable, "-m", "adk_actors.cli", "mcp", "--port", "9"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(blocker)})
    assert done.returncode == 2 and "pip install 'adk-actors[mcp]'" in done.stderr


def test_an_agent_on_another_host_uses_these_apps_through_its_mcp_toolset(served: dict[str, Any],
                                                                          tmp_path: Path) -> None:
    with serving(tmp_path, apps='mcp_http = "mcp_agents:http_agent"\n',
                 env={"ADK_TEST_MCP_URL": served["url"] + "/"}) as second:
        url = second["url"]
        httpx.post(f"{url}/apps/mcp_http/users/ann/sessions/s1", json={}, timeout=10).raise_for_status()
        assert last_text(url, "mcp_http", "tools?") == "echo, sleepy"
        answer = json.loads(last_text(url, "mcp_http", 'call echo {"message": "from afar"}').split(" said: ", 1)[1])
        assert answer["structuredContent"]["answer"] == "echo: from afar (turn 1)"


def test_poisoned_json_rpc_is_refused_before_the_mcp_server_and_it_serves_on(served: dict[str, Any]) -> None:
    url = f"{served['url']}/mcp"
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    surrogate = ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", '
                 '"arguments": {"message": "\\ud800"}}}')
    deep = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ' + "[" * 5000 + "]" * 5000 + "}"
    for body in (surrogate, deep):
        refused = httpx.post(url, content=body, headers=headers, timeout=10)
        assert refused.status_code == 422 and "detail" in refused.json()
    _, results = run(talk(url, [("echo", {"message": "fine"})]))
    assert results[0].structured_content["answer"] == "echo: fine (turn 1)"
