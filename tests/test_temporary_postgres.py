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
