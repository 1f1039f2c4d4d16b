"""Opening a SQLite file the stores' way: WAL, ``synchronous`` as asked, a 30 s busy
timeout, usable from any thread (each store guards it with its own lock).

A commit survives kill -9 of any process with ``synchronous=NORMAL`` in WAL mode;
``FULL`` also survives a power cut, at an fsync per commit.

Switching a new file to WAL takes its lock for a moment, and SQLite answers another
process or thread that opens the file at that moment "database is locked" at once,
without waiting its busy timeout: the switch is tried again, every 10 ms, for up to
``BUSY_SECONDS``; then the ``sqlite3.OperationalError`` is raised.
"""

from __future__ import annotations

import sqlite3
import time

__all__ = ["BUSY_SECONDS", "connect_wal"]

BUSY_SECONDS = 30.0


def connect_wal(path: str, synchronous: str = "NORMAL") -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    try:
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        connection.execute(f"PRAGMA synchronous={synchronous}")
        connection.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")
    except BaseException:
        connection.close()
        raise
    return connection
