"""Toolsets start at the same time (issue 53): the ``mcp`` supervisor begins each
toolset's start while the others' servers still start, a failed start is that
toolset's typed error alone, and a toolset whose reopening fails during a restart is
restarted again (with backoff), as before.

A real actor system; the servers are stand-ins (``tests/mcp_gated_server.py``) that
each say when the client's ``initialize`` reached them, then wait for one gate the
test opens: the starts overlap if every stand-in has its ``initialize`` before the
gate opens (a start that waited for another's would never reach its stand-in).
"""

from __future__ import annotations

import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from adk_actors.mcp import McpToolsetSpec, StdioConnectionParams, StdioServerParameters, toolset_key
from adk_actors.runtime._mcp_supervisor import MCP_SUPERVISOR
from adk_actors.runtime._service_calls import CallMcpTool, ListMcpTools
from adk_actors.runtime._services_client import mcp_toolset_child
from supervision import Strategy, SupervisorClient, SupervisorSpec, call, start_supervisor
from supervision.protocol import HEALTH_PING, StartFailed
from supervision.testing import wait_until

STAND_IN = str(Path(__file__).with_name("mcp_gated_server.py"))


def toolset(name: str, folder: Path) -> McpToolsetSpec:
    params = StdioConnectionParams(server_params=StdioServerParameters(command=sys.executable,
                                                                       args=[STAND_IN, name, str(folder)]),
                                   timeout=60.0)
    return McpToolsetSpec(toolset_key(params), params)


def arrived(folder: Path, name: str) -> int | None:
    """The pid of ``name``'s stand-in that the client's ``initialize`` reached, if one did."""
    marker = folder / f"{name}.arrived"
    text = marker.read_text() if marker.exists() else ""
    return int(text) if text else None


def start(system: Any, address: Any, child: Any) -> Any:
    with system.private() as endpoint:  # (a Thespian handle serves one thread)
        return SupervisorClient(endpoint, address, timeout=300).start_child(child)


def rows(sup: SupervisorClient) -> dict[str, Any]:
    return {row.id: row for row in sup.which_children()}


@pytest.mark.timeout(480)
def test_toolsets_start_at_once_a_failed_one_fails_alone_and_restarts_are_retried(actor_system: Any,
                                                                                   tmp_path: Path) -> None:
    sup = start_supervisor(actor_system, SupervisorSpec(children=(), strategy=Strategy.ONE_FOR_ONE, intensity=30,
                                                        period=60.0, actor_class=MCP_SUPERVISOR))
    names = ["a", "b", "c", "broken"]
    children = {name: mcp_toolset_child(toolset(name, tmp_path)) for name in names}
    (tmp_path / "broken.fail").touch()  # its stand-in exits at the gate instead of answering
    try:
        with ThreadPoolExecutor(len(names)) as pool:
            starts = {name: pool.submit(start, actor_system, sup.address, children[name]) for name in names}
            try:
                # Every start reaches its server while none may answer: they run at the same time.
                wait_until(lambda: all(arrived(tmp_path, name) for name in names), timeout=120)
                assert not any(started.done() for started in starts.values())
                assert call(actor_system, sup.address, HEALTH_PING, timeout=60) == "ok"
                assert {row.id: (row.status, row.address) for row in rows(sup).values()} == {
                    children[name].id: ("starting", None) for name in names}
            finally:
                (tmp_path / "open").touch()
            started = {name: starts[name].result(timeout=240) for name in ("a", "b", "c")}
            with pytest.raises(StartFailed, match=rf"child '{children['broken'].id}' failed to start: McpUnavailable"):
                starts["broken"].result(timeout=240)
        # The broken one is forgotten; the others serve, each from its own server.
        assert {i: r.status for i, r in rows(sup).items()} == {children[n].id: "running" for n in ("a", "b", "c")}
        for name, answer in started.items():
            assert [t["name"] for t in call(actor_system, answer.address, ListMcpTools(), timeout=60)] == ["whoami"]
            result = call(actor_system, answer.address, CallMcpTool("whoami", {}, 30.0), timeout=60)
            assert result["content"][0]["text"] == str(arrived(tmp_path, name))
        # A restart whose reopening fails is tried again (not forgotten) until it opens.
        (tmp_path / "a.fail").touch()
        first = arrived(tmp_path, "a")
        assert first is not None
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: rows(sup)[children["a"].id].restarts >= 3, timeout=120)
        assert rows(sup)[children["a"].id].status in ("restarting", "dead")  # not opened since
        (tmp_path / "a.fail").unlink()
        wait_until(lambda: rows(sup)[children["a"].id].status == "running", timeout=120)
        again = rows(sup)[children["a"].id]
        result = call(actor_system, again.address, CallMcpTool("whoami", {}, 30.0), timeout=60)
        assert result["content"][0]["text"] == str(arrived(tmp_path, "a")) != str(first)
        # ...and the others were left alone.
        assert {i: (r.status, r.restarts) for i, r in rows(sup).items() if i != children["a"].id} == {
            children[n].id: ("running", 0) for n in ("b", "c")}
    finally:
        (tmp_path / "open").touch()
        sup.stop(timeout=60)


def test_a_toolset_actor_killed_while_it_opens_fails_its_start_and_is_not_restarted(actor_system: Any,
                                                                                     tmp_path: Path) -> None:
    sup = start_supervisor(actor_system, SupervisorSpec(children=(), strategy=Strategy.ONE_FOR_ONE,
                                                        actor_class=MCP_SUPERVISOR))
    child = mcp_toolset_child(toolset("k", tmp_path))
    try:
        with ThreadPoolExecutor(1) as pool:
            starting = pool.submit(start, actor_system, sup.address, child)
            wait_until(lambda: arrived(tmp_path, "k"), timeout=120)  # opening, held at the gate
            [row] = sup.which_children()
            assert row.status == "starting" and row.pid is not None
            os.kill(row.pid, signal.SIGKILL)
            with pytest.raises(StartFailed, match=rf"child '{child.id}' failed to start: exited during start"):
                starting.result(timeout=120)
        wait_until(lambda: sup.which_children() == [], timeout=30)  # forgotten, as a failed start is
        # Asked again, it starts anew (the gate open now).
        (tmp_path / "open").touch()
        answer = start(actor_system, sup.address, child)
        assert [t["name"] for t in call(actor_system, answer.address, ListMcpTools(), timeout=60)] == ["whoami"]
    finally:
        (tmp_path / "open").touch()
        sup.stop(timeout=60)
