"""MCP toolsets on a host: real MCP servers written with the ``mcp`` SDK
(``tests/mcp_servers.py``) over stdio, streamable HTTP and SSE; one connection per
toolset and host in a supervised actor; a server that crashes, hangs, is killed, or
never starts; and no server process outliving its actor.

The tests share one host (``SharedHost``: a new one if a test broke its tree), each
on a user of its own: a server or toolset actor a test kills comes back before the
test ends (it waits for that), so the next test finds the host as it was, its
toolsets started already."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import SharedHost, last_text, serving

from supervision import SupervisorClient
from supervision.lowlevel import free_port
from supervision.testing import pid_alive, wait_until

PORT = free_port()
# Before mcp_agents is imported anywhere (the host's processes are forked from this one).
os.environ["ADK_TEST_MCP_URL"] = f"http://127.0.0.1:{PORT}/"

import mcp_agents  # noqa: E402

from adk_actors.runtime import Host, HostConfig  # noqa: E402

SERVERS = Path(__file__).with_name("mcp_servers.py")


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, str(SERVERS), "http", str(PORT)])
    try:
        wait_until(lambda: _listening(PORT), timeout=20)
        yield os.environ["ADK_TEST_MCP_URL"]
    finally:
        # Killed, not asked to stop: a test's call to ``hang`` keeps uvicorn's graceful
        # shutdown waiting on that request, and a stand-in server has nothing to save.
        process.kill()
        process.wait(10)


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def mcp_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedHost]:
    hosts = SharedHost(tmp_path_factory.mktemp("mcp"), lambda data: HostConfig(apps=mcp_agents.APPS, data_dir=str(data)))
    yield hosts
    hosts.close()


#: The user of the test that runs (``mcp_host``): each test's sessions are its own.
USER = ["ann"]


@pytest.fixture
def mcp_host(mcp_hosts: SharedHost, request: pytest.FixtureRequest) -> Host:
    USER[0] = f"ann-{request.node.name}"
    return mcp_hosts.get()


def ask(host: Host, app: str, text: str, session: str = "s1") -> tuple[str, list[Any]]:
    """One turn, as the test's user; (the final answer, every event)."""
    runner = host.runner(app, timeout=60.0)
    try:
        runner.create_session(USER[0], session)
    except Exception:
        pass
    events = list(runner.run(USER[0], session, text))
    answers = [e.content.text for e in events if e.author != "user" and e.content is not None and e.content.text]
    return (answers[-1] if answers else ""), events


def said(answer: str) -> dict[str, Any]:
    """The tool's response the scripted model quoted (``NAME said: {...}``)."""
    response: dict[str, Any] = json.loads(answer.split(" said: ", 1)[1])
    return response


def toolset_actors(host: Host) -> list[Any]:
    mcp = next(c for c in host.services().which_children() if c.id == "mcp")
    return SupervisorClient(host.system, mcp.address).which_children()


def server_pid(host: Host, app: str = "mcp_stdio", session: str = "s1") -> int:
    answer, _ = ask(host, app, "call whoami", session)
    return int(said(answer)["structuredContent"]["result"])


def _asked(host: Host, session: str, tool: str) -> bool:
    """Whether the session's run has called ``tool`` (its call event is stored)."""
    try:
        events = host.runner("mcp_stdio", timeout=10.0).get_session(USER[0], session).events
    except Exception:  # (not created yet)
        return False
    return any(e.content is not None and any(c.name == tool for c in e.content.function_calls) for e in events)


def new_server(host: Host, session: str) -> int:
    """The server's pid once a call reaches one again; meanwhile each call's answer is
    a typed tool error (McpUnavailable), never a failed run."""
    pids: list[int] = []

    def restarted() -> bool:
        answer = said(ask(host, "mcp_stdio", "call whoami", session)[0])
        if "error" in answer:
            assert answer["error"].startswith("McpUnavailable: "), answer
            return False
        pids.append(int(answer["structuredContent"]["result"]))
        return True

    wait_until(restarted, timeout=20)
    return pids[0]


def test_a_stdio_servers_tools_are_the_agents_and_one_server_serves_every_run(mcp_host: Host) -> None:
    stdio = f"mcp-{mcp_agents.stdio_agent.tools[0].spec.key}"
    others = [c.id for c in toolset_actors(mcp_host) if c.id != stdio]  # (other tests' toolsets, shared host)
    answer, events = ask(mcp_host, "mcp_stdio", "tools?")
    assert answer == "add, crash, hang, linger, shout, whoami"
    answer, events = ask(mcp_host, "mcp_stdio", 'call add {"a": 2, "b": 40}')
    assert said(answer) == {"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42},
                            "isError": False}
    call = next(e for e in events if e.content is not None and e.content.function_calls)
    assert call.content.function_calls[0].args == {"a": 2, "b": 40}
    first = server_pid(mcp_host, session="s1")
    assert server_pid(mcp_host, session="s2") == first  # another session, another run: the same server
    assert sorted(c.id for c in toolset_actors(mcp_host)) == sorted([*others, stdio])  # one actor for it, no other


def test_a_filter_and_a_prefix_choose_and_name_the_tools(mcp_host: Host) -> None:
    answer, _ = ask(mcp_host, "mcp_filtered", "tools?")
    assert answer == "calc_add, calc_shout"
    answer, _ = ask(mcp_host, "mcp_filtered", 'call calc_shout {"text": "quiet"}')
    assert said(answer)["structuredContent"] == {"result": "QUIET"}


def test_a_server_that_crashes_mid_call_is_a_tool_error_and_comes_back_as_a_new_process(mcp_host: Host) -> None:
    before = server_pid(mcp_host)
    answer, _ = ask(mcp_host, "mcp_stdio", "call crash")
    # (whichever the actor saw first: the call's connection closing, or the process exiting)
    assert re.fullmatch(r"McpUnavailable: the MCP server('s process exited| failed) during the call.*",
                        said(answer)["error"]), answer
    wait_until(lambda: not pid_alive(before), timeout=5)
    assert new_server(mcp_host, "s2") != before


def test_a_crash_while_another_call_hangs_fails_both_typed_and_the_server_comes_back(mcp_host: Host) -> None:
    before = server_pid(mcp_host)
    with ThreadPoolExecutor(2) as pool:
        hanging = pool.submit(ask, mcp_host, "mcp_stdio", "call hang", "s2")
        wait_until(lambda: _asked(mcp_host, "s2", "hang"), timeout=30)  # the hang is on its way when the server dies
        crashed = pool.submit(ask, mcp_host, "mcp_stdio", "call crash", "s3")
        errors = [said(call.result(timeout=30)[0])["error"] for call in (hanging, crashed)]
    assert all(error.startswith(("McpUnavailable: ", "McpCallTimeout: ")) for error in errors), errors
    assert new_server(mcp_host, "s1") != before


def test_a_hung_call_meets_its_deadline_and_the_connection_serves_on(mcp_host: Host) -> None:
    server_pid(mcp_host)  # the server is up
    started = time.monotonic()
    answer, _ = ask(mcp_host, "mcp_stdio", "call hang")
    assert said(answer) == {"error": "McpCallTimeout: the MCP tool 'hang' did not answer within 2 s"}
    assert time.monotonic() - started < 10
    answer, _ = ask(mcp_host, "mcp_stdio", 'call add {"a": 1, "b": 1}')
    assert said(answer)["structuredContent"] == {"result": 2}


def test_a_server_killed_while_idle_is_started_again_with_backoff(mcp_host: Host) -> None:
    before = server_pid(mcp_host)
    os.kill(before, signal.SIGKILL)
    assert new_server(mcp_host, "s1") != before


def test_killing_the_toolset_actor_takes_its_server_process_with_it(mcp_host: Host) -> None:
    server = server_pid(mcp_host)
    assert said(ask(mcp_host, "mcp_stdio", "call linger")[0])["structuredContent"] == {"result": "lingering"}
    actor = next(c for c in toolset_actors(mcp_host) if c.pid is not None)
    os.kill(actor.pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(server), timeout=5)  # PR_SET_PDEATHSIG through the _guard launcher
    assert server_pid(mcp_host) != server  # a new actor, a new server


def test_a_server_that_never_starts_is_an_error_event_and_the_host_serves_on(mcp_host: Host) -> None:
    answer, events = ask(mcp_host, "mcp_broken", "tools?")
    errors = [e for e in events if e.error_code == "toolset_error"]
    assert errors and "the MCP server could not be started" in (errors[0].error_message or "")
    assert answer == ""  # the model was given no tools
    answer, _ = ask(mcp_host, "mcp_stdio", 'call add {"a": 3, "b": 4}')
    assert said(answer)["structuredContent"] == {"result": 7}


@pytest.mark.parametrize("app", ["mcp_http", "mcp_sse"])
def test_http_servers_streamable_and_sse(http_server: str, mcp_host: Host, app: str) -> None:
    answer, _ = ask(mcp_host, app, "tools?")
    assert answer == "add, crash, hang, linger, shout, whoami"
    answer, _ = ask(mcp_host, app, 'call shout {"text": "over http"}')
    assert said(answer)["structuredContent"] == {"result": "OVER HTTP"}
    answer, _ = ask(mcp_host, app, "call hang")
    assert said(answer) == {"error": "McpCallTimeout: the MCP tool 'hang' did not answer within 2 s"}


@pytest.fixture(scope="module")
def served_mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], dict[str, Any]]]:
    """``adk-actors serve`` with the stdio and the notes apps, shared by the tests below
    (the last one kills it): one that finds it killed gets a new one (its own notes)."""
    with ExitStack() as stack:
        current: dict[str, Any] = {}

        def get() -> dict[str, Any]:
            if not current or current["process"].poll() is not None:
                folder = tmp_path_factory.mktemp("served")
                notes = folder / "notes.json"
                current.clear()
                current.update(stack.enter_context(serving(
                    folder, apps='mcp_stdio = "mcp_agents:stdio_agent"\nmcp_notes = "examples.mcp_notes.agent:root_agent"\n',
                    env={"NOTES_FILE": str(notes)})), notes=notes)
            return current
        yield get


def test_the_mcp_notes_example_keeps_notes_in_its_server(served_mcp: Callable[[], dict[str, Any]]) -> None:
    served = served_mcp()
    url, notes_file = served["url"], served["notes"]
    httpx.post(f"{url}/apps/mcp_notes/users/ann/sessions/s1", json={}, timeout=10).raise_for_status()

    def say(text: str) -> str:
        return last_text(url, "mcp_notes", text)

    assert say("note buy milk") == "Noted. You have 1 notes."
    assert say("note call Oslo office") == "Noted. You have 2 notes."
    assert say("notes?") == "Your notes: buy milk; call Oslo office"
    assert say("find oslo") == "Your notes: call Oslo office"
    assert json.loads(notes_file.read_text()) == ["buy milk", "call Oslo office"]


def test_no_stdio_server_outlives_serve_killed_with_sigkill(served_mcp: Callable[[], dict[str, Any]]) -> None:
    served = served_mcp()  # (killed here: the module's last test)
    url = served["url"]
    httpx.post(f"{url}/apps/mcp_stdio/users/ann/sessions/s1", json={}, timeout=10).raise_for_status()
    server = int(said(last_text(url, "mcp_stdio", "call whoami"))["structuredContent"]["result"])
    assert pid_alive(server)
    assert said(last_text(url, "mcp_stdio", "call linger"))["structuredContent"] == {"result": "lingering"}
    os.kill(served["process"].pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(server), timeout=10)
