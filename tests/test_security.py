"""Nothing outside the host's machine reaches its actors; the host dies with its process
(issue 18 part 2 and the kill -9 of ``serve``).

Every check reads the real sockets (``ss -ltnp``) and real processes."""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import serving

from supervision.testing import (
    find_marked_processes,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[1]


def listening_sockets(pids: set[int]) -> list[tuple[str, int]]:
    """(local address, pid) of every TCP socket in LISTEN state owned by one of ``pids``."""
    assert shutil.which("ss"), "the tests need ss (Debian's iproute2)"
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        local = line.split()[3]
        for pid in re.findall(r"pid=(\d+)", line):
            if int(pid) in pids:
                found.append((local, int(pid)))
    return found


def test_every_socket_of_a_running_host_listens_on_loopback_only(host: Any, actor_system: Any) -> None:
    runner = host.runner("echo")
    session = runner.create_session(user_id="u")
    list(runner.run("u", session.id, "hello"))  # session and run actors are up too
    pids = set(find_marked_processes(actor_system.test_marker))
    assert len(pids) > 10
    sockets = listening_sockets(pids)
    assert len(sockets) >= len(pids) - 1  # every actor process listens (the logger too)
    exposed = [(local, pid) for local, pid in sockets if not local.startswith("127.0.0.1:")]
    assert exposed == []


def test_the_actor_ports_refuse_a_connection_to_another_address_of_this_machine(
        host: Any, actor_system: Any) -> None:
    """The admin port answers on 127.0.0.1 but not on the machine's other addresses."""
    others = [a for a in _own_ipv4_addresses() if not a.startswith("127.")]
    if not others:
        pytest.skip("this machine has no non-loopback IPv4 address to try")
    admin_port = actor_system.capabilities["Admin Port"]
    for address in others:
        with socket.socket() as probe:
            probe.settimeout(1.0)
            assert probe.connect_ex((address, admin_port)) != 0, f"admin port reachable on {address}"
    with socket.socket() as probe:
        probe.settimeout(1.0)
        assert probe.connect_ex(("127.0.0.1", admin_port)) == 0


def _own_ipv4_addresses() -> list[str]:
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout if shutil.which("ip") else ""
    return re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out)


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with serving(tmp_path) as running:
        yield running


def test_kill_9_of_serve_takes_every_process_of_the_host_with_it(serve_process: dict[str, Any]) -> None:
    marker, process, port = serve_process["marker"], serve_process["process"], serve_process["port"]
    host_pids = set(find_marked_processes(marker)) - {process.pid}
    assert len(host_pids) > 10  # admin, logger, owner watch and the tree
    assert listening_sockets(host_pids), "the host's actors listen before the kill"
    warnings = serve_process["err"].read_text()
    assert "unauthenticated" not in warnings  # loopback: nothing to warn about
    assert "NOT encrypted at rest" in warnings  # no credential key configured: said loudly
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    wait_until(lambda: not find_marked_processes(marker), timeout=20, interval=0.2,
               message="every process of the host gone after kill -9 of serve")
    with socket.socket() as probe:
        probe.settimeout(1.0)
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "the admin port still answers"
