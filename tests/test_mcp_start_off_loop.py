"""The ``mcp`` supervisor answers while a toolset starts: the mcp SDK's import is the
toolset actor's own, in its own process, never the supervisor's on its message loop
(issue 53: "busy is taken for dead").

The actor system runs in a fresh Python that has not imported the SDK (a test process
has: actors forked from it would have it already), with an import gate installed
before the system starts, so that every actor, forked from it, has it too: the first
import of ``mcp`` in any of its processes is recorded (the importing pid, in a file)
and held until the test releases it. A slow import, made deterministic: while it is
held, the toolset cannot be ready, and what answers meanwhile is not importing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from adk_actors.mcp import McpToolsetSpec, StdioConnectionParams, StdioServerParameters, toolset_key
from adk_actors.runtime._mcp_supervisor import MCP_SUPERVISOR
from adk_actors.runtime._service_calls import CallMcpTool, ListMcpTools, McpToolsetStart
from adk_actors.runtime._services_client import mcp_toolset_child
from supervision import (
    ChildSpec,
    Strategy,
    SupervisionError,
    SupervisorClient,
    SupervisorSpec,
    call,
    start_supervisor,
)
from supervision.lowlevel import attach_actor_system, free_port, proc_stat
from supervision.protocol import HEALTH_PING
from supervision.testing import wait_until

SERVER = str(Path(__file__).with_name("mcp_servers.py"))
PARAMS = StdioConnectionParams(server_params=StdioServerParameters(command=sys.executable, args=[SERVER, "stdio"]),
                               timeout=15.0)
TOOLSET = McpToolsetSpec(toolset_key(PARAMS), PARAMS)

#: The actor system's process: the gate, then the system; it stops the system and
#: exits when its stdin closes (and the system stops with it if it dies: OwnerWatch).
GATED_SYSTEM = r"""
import os, sys, time
from importlib.abc import MetaPathFinder

LOG, RELEASE, PORT = sys.argv[1], sys.argv[2], int(sys.argv[3])


class Gate(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "mcp":
            with open(LOG, "a") as log:
                log.write(f"{os.getpid()}\n")
            deadline = time.monotonic() + 300
            while not os.path.exists(RELEASE) and time.monotonic() < deadline:
                time.sleep(0.02)
        return None  # the import goes on, as ever


sys.meta_path.insert(0, Gate())
assert "mcp" not in sys.modules
from supervision import start_actor_system

system = start_actor_system(PORT)
print("ready", flush=True)
sys.stdin.read()
system.shutdown()
"""


def importers(log: Path) -> list[int]:
    """The pids that have begun importing the SDK, in order."""
    return [int(pid) for pid in log.read_text().split()] if log.exists() else []


@pytest.fixture
def gated(tmp_path: Path) -> Any:
    """(system, second handle, import log, release file) of a gated actor system."""
    log, release, out = tmp_path / "imports", tmp_path / "release", tmp_path / "system.out"
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]),
           "THESPIAN_BASE_IPADDR": "127.0.0.1", "THESPLOG_FILE": str(tmp_path / "thespian.log")}
    with open(out, "w") as stdout:
        process = subprocess.Popen([sys.executable, "-c", GATED_SYSTEM, str(log), str(release), str(port)],
                                   stdin=subprocess.PIPE, stdout=stdout, env=env)
    try:
        wait_until(lambda: "ready" in out.read_text() or process.poll() is not None, timeout=90)
        assert process.poll() is None
        yield attach_actor_system(port), attach_actor_system(port), log, release
    finally:
        release.touch()  # whatever still waits at the gate goes on, and can be stopped
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.mark.timeout(480)  # at load 40, each start below takes tens of seconds
def test_the_supervisor_answers_its_health_check_while_a_toolset_imports_the_sdk(gated: Any) -> None:
    system, other, log, release = gated
    sup = start_supervisor(system, SupervisorSpec(children=(), strategy=Strategy.ONE_FOR_ONE, actor_class=MCP_SUPERVISOR))
    child = mcp_toolset_child(TOOLSET)
    assert isinstance(child.args, McpToolsetStart)  # plain strings: nothing of the SDK to unpickle
    try:
        with ThreadPoolExecutor(1) as pool:
            # (a second handle: a Thespian handle serves one thread)
            starting = pool.submit(SupervisorClient(other, sup.address, timeout=300).start_child, child)
            try:
                held = wait_until(lambda: importers(log), timeout=120)  # someone imports the SDK, held there
                # ...meanwhile the supervisor answers its health check and its status calls,
                assert call(system, sup.address, HEALTH_PING, timeout=60) == "ok"
                [row] = sup.which_children()
                assert (row.id, row.status) == (child.id, "starting")
                # ...and the toolset is not ready: its start waits for the import.
                assert not starting.done()
                assert importers(log) == held
            finally:
                release.touch()  # (on a failure too: the start can end, and the pool with it)
            started = starting.result(timeout=240)
        [row] = sup.which_children()
        assert (row.id, row.status) == (child.id, "running") and row.pid is not None
        # The one process that imported the SDK is the toolset actor (the supervisor's child).
        assert importers(log) == [row.pid]
        assert proc_stat(row.pid) is not None
        # The toolset serves as ever.
        tools = call(system, started.address, ListMcpTools(), timeout=60)
        assert sorted(t["name"] for t in tools) == ["add", "crash", "hang", "linger", "shout", "whoami"]
        answer = call(system, started.address, CallMcpTool("add", {"a": 2, "b": 40}, 10.0), timeout=60)
        assert answer["structuredContent"] == {"result": 42}
        assert importers(log) == [row.pid]  # still none other
    finally:
        release.touch()
        sup.stop(timeout=60)


def test_start_arguments_that_name_no_connection_class_fail_the_start_with_the_reason(actor_system: Any) -> None:
    sup = start_supervisor(actor_system, SupervisorSpec(children=(), strategy=Strategy.ONE_FOR_ONE,
                                                        actor_class=MCP_SUPERVISOR))
    try:
        good = mcp_toolset_child(TOOLSET)
        bad = ChildSpec(id="mcp-bad", start=good.start, args=McpToolsetStart("bad", "NoSuchParams", "{}"),
                        start_timeout=60.0)
        with pytest.raises(SupervisionError, match="'NoSuchParams' is not an MCP connection parameters class"):
            sup.start_child(bad, timeout=120)
        wrong = ChildSpec(id="mcp-wrong", start=good.start, start_timeout=60.0,
                          args=McpToolsetStart("wrong", "StdioConnectionParams", '{"server_params": 5}'))
        with pytest.raises(SupervisionError, match="validation error for StdioConnectionParams"):
            sup.start_child(wrong, timeout=120)
        assert call(actor_system, sup.address, HEALTH_PING, timeout=30) == "ok"  # the supervisor serves on
        assert {c.id for c in sup.which_children() if c.status == "running"} == set()
    finally:
        sup.stop(timeout=60)
