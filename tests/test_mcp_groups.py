"""A stdio MCP server started through a launcher that forks (``sh -c "python server;
true"``, the shape of ``npx`` and ``uv run``) dies with its toolset actor and with the
host: the launcher's child is not the process the host started, so a parent-death
signal on that process alone is not enough (``adk_actors.mcp._guard`` kills the
server's whole process group). The server is asked to linger after its stdin closes,
so only a kill ends it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp_group_agents
import pytest
from conftest import last_text, serving

from adk_actors.runtime import Host, HostConfig
from supervision import SupervisorClient
from supervision.testing import pid_alive, wait_until

APP = "mcp_launched"


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b") ", 1)[1].split()[1])


def _command(pid: int) -> list[str]:
    return [part.decode() for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if part]


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def _launch_chain(server: int) -> tuple[int, int]:
    """(the launcher's pid, the guardian's pid) above the server, checked from /proc:
    the server's parent is ``sh`` (so the server is a grandchild of what the host
    started) and sh's parent is the guardian."""
    launcher = _parent(server)
    assert _command(launcher)[:2] == ["sh", "-c"], _command(launcher)
    guardian = _parent(launcher)
    assert "adk_actors.mcp._guard" in _command(guardian), _command(guardian)
    return launcher, guardian


@contextlib.contextmanager
def _reaped(pids: list[int]) -> Iterator[list[int]]:
    """Whatever the test finds of the server's processes is SIGKILLed afterwards if it
    is still there (a failing test leaves nothing behind)."""
    try:
        yield pids
    finally:
        for pid in pids:
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def _said(answer: str) -> dict[str, Any]:
    response: dict[str, Any] = json.loads(answer.split(" said: ", 1)[1])
    return response


@pytest.fixture
def launched_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    with Host(HostConfig(apps=mcp_group_agents.APPS, data_dir=str(tmp_path / "data")), system=actor_system) as running:
        yield running


def _ask(host: Host, text: str, session: str = "s1") -> dict[str, Any]:
    runner = host.runner(APP, timeout=60.0)
    with contextlib.suppress(Exception):
        runner.create_session("ann", session)
    answers = [e.content.text for e in runner.run("ann", session, text)
               if e.author != "user" and e.content is not None and e.content.text]
    return _said(answers[-1])


def _said_linger(host: Host) -> bool:
    """The server keeps itself alive after its stdin closes (only a kill ends it)."""
    return bool(_ask(host, "call linger")["structuredContent"] == {"result": "lingering"})


def _toolset_actor_pid(host: Host) -> int:
    mcp = next(c for c in host.services().which_children() if c.id == "mcp")
    actors = [c for c in SupervisorClient(host.system, mcp.address).which_children() if c.pid is not None]
    assert len(actors) == 1, actors
    pid: int = actors[0].pid
    return pid


def test_kill_9_of_the_toolset_actor_kills_a_launched_server_and_the_next_turn_starts_a_new_one(
        launched_host: Host) -> None:
    server = int(_ask(launched_host, "call whoami")["structuredContent"]["result"])
    with _reaped([server]) as found:
        launcher, guardian = _launch_chain(server)
        found += [launcher, guardian]
        assert _said_linger(launched_host)
        actor = _toolset_actor_pid(launched_host)
        assert _parent(guardian) == actor
        os.kill(actor, signal.SIGKILL)
        wait_until(lambda: not any(pid_alive(pid) for pid in (server, launcher, guardian)), timeout=15,
                   message="the launched server, its launcher and its guardian ended with their actor")

        new: list[int] = []

        def served_again() -> bool:
            answer = _ask(launched_host, "call whoami", "s2")
            if "error" in answer:  # the actor is restarting: a typed tool error meanwhile
                assert answer["error"].startswith("McpUnavailable: "), answer
                return False
            new.append(int(answer["structuredContent"]["result"]))
            return True

        wait_until(served_again, timeout=30, interval=0.2)
        found += new
        assert new[0] != server
        found += list(_launch_chain(new[0]))
        assert _ask(launched_host, 'call add {"a": 20, "b": 22}', "s3")["structuredContent"] == {"result": 42}


def test_kill_9_of_serves_process_group_kills_a_launched_server(tmp_path: Path) -> None:
    with serving(tmp_path, prefix=("setsid",), apps=f'{APP} = "mcp_group_agents:launched_agent"\n') as served:
        serve = served["process"]
        assert os.getpgid(serve.pid) == serve.pid
        httpx.post(f"{served['url']}/apps/{APP}/users/ann/sessions/s1", json={}, timeout=30).raise_for_status()
        server = int(_said(last_text(served["url"], APP, "call whoami"))["structuredContent"]["result"])
        with _reaped([server]) as found:
            launcher, guardian = _launch_chain(server)
            found += [launcher, guardian]
            assert _said(last_text(served["url"], APP, "call linger"))["structuredContent"] == {"result": "lingering"}
            assert os.getpgid(server) != serve.pid  # the server is out of reach of a kill of serve's group alone
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait(10)
            wait_until(lambda: not any(pid_alive(pid) for pid in (server, launcher, guardian)), timeout=30,
                       message="the launched server, its launcher and its guardian ended with the host")


def test_the_guardian_kills_its_commands_whole_group_when_its_parent_is_killed(tmp_path: Path) -> None:
    """Without a host: a parent starts the guardian as the mcp SDK does (a session of its
    own, pipes for stdin and stdout) on ``sh -c "sleep 300; true"``; kill -9 of that
    parent ends the sleep, sh's child."""
    parent = subprocess.Popen([sys.executable, "-c", (
        "import os, subprocess, sys, time\n"
        "guard = subprocess.Popen([sys.executable, '-m', 'adk_actors.mcp._guard', str(os.getpid()), '--',\n"
        "                          'sh', '-c', 'sleep 300; true'], start_new_session=True,\n"
        "                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
        "print(guard.pid, flush=True)\n"
        "time.sleep(300)\n")], stdout=subprocess.PIPE, text=True)
    found: list[int] = []
    with _reaped(found):
        try:
            assert parent.stdout is not None
            guardian = int(parent.stdout.readline())
            found.append(guardian)
            launcher = wait_until(lambda: next(iter(_children(guardian)), None), timeout=10)
            found.append(launcher)
            sleeper = wait_until(lambda: next((pid for pid in _children(launcher)  # (once it has exec'd)
                                               if _command(pid) == ["sleep", "300"]), None), timeout=10)
            found.append(sleeper)
            parent.kill()
            wait_until(lambda: not any(pid_alive(pid) for pid in found), timeout=10,
                       message="the guardian, sh and its child ended with the guardian's parent")
        finally:
            parent.kill()
            parent.wait(10)


def test_the_guardian_passes_stdin_and_stdout_through_and_exits_with_its_commands_status() -> None:
    guard = [sys.executable, "-m", "adk_actors.mcp._guard", str(os.getpid()), "--"]
    echoed = subprocess.run([*guard, "sh", "-c", "read line; echo \"got $line\"; exit 3"], input=b"hello\n",
                            capture_output=True, timeout=30)
    assert (echoed.returncode, echoed.stdout) == (3, b"got hello\n")
    killed = subprocess.run([*guard, "sh", "-c", "kill -9 $$"], capture_output=True, timeout=30)
    assert killed.returncode == 128 + signal.SIGKILL
    missing = subprocess.run([*guard, "no-such-command-here"], capture_output=True, timeout=30)
    assert missing.returncode == 127 and b"cannot start 'no-such-command-here'" in missing.stderr
    usage = subprocess.run([*guard[:-2], "not-a-pid"], capture_output=True, timeout=30)
    assert usage.returncode == 2 and b"usage:" in usage.stderr
