"""``adk_actors.testing.TemporaryPostgres``, the PostgreSQL server tests and users' own
suites start: a port taken between its pick and the server's start is replaced by
another (three workers of this suite, each starting one, met that once in CI)."""

from __future__ import annotations

import socket
from typing import Any

import psycopg

import adk_actors._temporary_postgres as temporary_postgres
from adk_actors.testing import TemporaryPostgres


def test_a_port_taken_before_the_server_starts_is_replaced_and_the_server_answers(monkeypatch: Any) -> None:
    picked: list[int] = []
    taken: list[socket.socket] = []
    real = temporary_postgres.free_port

    def free_port() -> int:
        port = real()
        picked.append(port)
        if not taken:  # another process binds the first port picked before the server starts
            holder = socket.socket()
            holder.bind(("127.0.0.1", port))
            holder.listen(1)
            taken.append(holder)
        return port

    monkeypatch.setattr(temporary_postgres, "free_port", free_port)
    try:
        with TemporaryPostgres() as server:
            assert len(picked) == 2 and server.port == picked[1]
            with psycopg.connect(server.new_database()) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        for holder in taken:
            holder.close()


def test_a_server_whose_starter_is_killed_stops_and_its_folder_goes() -> None:
    """A test run killed (kill -9 of a pytest worker, Ctrl-C twice) runs neither
    ``close`` nor ``atexit``: the server it started stops anyway, and its folder goes."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from supervision.testing import pid_alive, wait_until

    starter = subprocess.Popen(
        [sys.executable, "-c", "from adk_actors.testing import TemporaryPostgres\n"
         "import time\nserver = TemporaryPostgres()\n"
         "print(server.folder, server.port, flush=True)\ntime.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert starter.stdout is not None
        folder, port = starter.stdout.readline().split()
        postmaster = int((Path(folder) / "data" / "postmaster.pid").read_text().split()[0])
        assert pid_alive(postmaster)
        os.kill(starter.pid, signal.SIGKILL)
        starter.wait(10)
        wait_until(lambda: not pid_alive(postmaster), timeout=60)
        wait_until(lambda: not Path(folder).exists(), timeout=60)
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", int(port))) != 0  # nothing listens there any more
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait(10)
