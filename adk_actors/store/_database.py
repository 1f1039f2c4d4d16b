"""A service's own tables in a SQLite file or a PostgreSQL database, with the same SQL.

The services that keep small tables of their own (memory, credentials) write them
through :class:`Database`: on one host, a SQLite file of theirs in the data dir; with
``[store] url`` set, the PostgreSQL database the sessions are in, so every host of a
cluster sees the same rows (a session that moved to another host finds its user's
memory and credentials there).

SQL is written once, in SQLite's spelling of what both understand: ``?`` placeholders
(``%s`` for psycopg), ``INSERT ... ON CONFLICT``, reserved words quoted (``"user"``);
in migrations, ``BLOB`` and ``REAL`` columns (``BYTEA`` and ``DOUBLE PRECISION`` in
PostgreSQL). Each service's migrations are versioned in a table of its own
(``<scope>_migrations``) and applied in order once, under PostgreSQL's advisory lock
or SQLite's write lock. Errors of either driver are :class:`StoreError`, with a URL's
password taken out.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._files import private_file
from ._base import StoreError
from ._pg_names import driver_errors, is_postgres_url, reason_without_password, redacted_url
from ._wal import connect_wal

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["Database", "Result", "Statements"]

_DDL_TYPES = (("BLOB", "BYTEA"), ("REAL", "DOUBLE PRECISION"))


@dataclass(frozen=True)
class Result:
    rows: list[tuple[Any, ...]]
    rowcount: int


class Database:
    def __init__(self, location: str, *, pool_size: int = 2, application_name: str = "") -> None:
        """Open ``location``: a ``postgresql://`` URL (a pool of up to ``pool_size``
        connections, called ``application_name`` in PostgreSQL when given:
        ``connection_name``), else a SQLite file (made 0600). StoreError when it cannot
        be opened."""
        self.postgres = is_postgres_url(location)
        self.name = redacted_url(location) if self.postgres else location
        self._location = location
        self._lock = threading.RLock()
        try:
            if self.postgres:
                # PostgreSQL's driver is loaded here, by the first Database that needs it (_pg_names).
                from ._postgres import open_pool

                self._pool: ConnectionPool | None = open_pool(location, pool_size, 10.0, "adk-actors-services",
                                                                 application_name)
                self._sqlite: sqlite3.Connection | None = None
            else:
                if location != ":memory:":
                    private_file(location)
                self._pool = None
                self._sqlite = connect_wal(location)
        except driver_errors(sqlite3.Error) as exc:
            raise StoreError(f"cannot open {self.name}: {reason_without_password(exc, location)}") from None

    @contextmanager
    def transaction(self) -> Iterator[Statements]:
        """One write transaction: its statements commit together when the block ends,
        or roll back when it raises."""
        try:
            if self._pool is not None:
                with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                    yield Statements(cur, postgres=True)
            else:
                assert self._sqlite is not None
                with self._lock:
                    self._sqlite.execute("BEGIN IMMEDIATE")
                    try:
                        yield Statements(self._sqlite, postgres=False)
                    except BaseException:
                        self._sqlite.execute("ROLLBACK")
                        raise
                    self._sqlite.execute("COMMIT")
        except driver_errors(sqlite3.Error) as exc:
            raise StoreError(f"{self.name}: {reason_without_password(exc, self._location)}") from None

    def run(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> Result:
        """One statement in a transaction of its own (a SQLite read: without the write
        lock, from WAL's snapshot)."""
        if self._sqlite is not None and sql.lstrip()[:6].upper() == "SELECT":
            try:
                with self._lock:
                    cursor = self._sqlite.execute(sql, params)
                    return Result(cursor.fetchall(), cursor.rowcount)
            except sqlite3.Error as exc:
                raise StoreError(f"{self.name}: {exc}") from None
        with self.transaction() as statements:
            return statements.run(sql, params)

    def migrate(self, scope: str, migrations: list[tuple[int, str]]) -> None:
        """Apply ``scope``'s migrations this database lacks, in order, once (several
        processes opening it together: one applies them, the others wait)."""
        if not re.fullmatch(r"[a-z_]+", scope):
            raise ValueError(f"a migration scope is lower-case letters: {scope!r}")
        with self.transaction() as statements:
            if self.postgres:
                statements.lock(f"adk-actors:migrations:{scope}")
            statements.run(f"CREATE TABLE IF NOT EXISTS {scope}_migrations (version INTEGER PRIMARY KEY, applied REAL)"
                           .replace("REAL", "DOUBLE PRECISION" if self.postgres else "REAL"))
            done = {row[0] for row in statements.run(f"SELECT version FROM {scope}_migrations").rows}
            for version, script in migrations:
                if version in done:
                    continue
                for statement in script.split(";"):
                    if statement.strip():
                        statements.run(_ddl(statement, self.postgres))
                statements.run(f"INSERT INTO {scope}_migrations VALUES (?, ?)", (version, time.time()))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        if self._sqlite is not None:
            with self._lock:
                self._sqlite.close()


class Statements:
    """The statements of one transaction (see :meth:`Database.transaction`)."""

    def __init__(self, cursor: Any, *, postgres: bool) -> None:
        self._cursor = cursor
        self._postgres = postgres

    def run(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> Result:
        if self._postgres:
            cur = self._cursor.execute(sql.replace("?", "%s"), params)
            rows = cur.fetchall() if cur.description is not None else []
            return Result(rows, cur.rowcount)
        cur = self._cursor.execute(sql, params)
        return Result(cur.fetchall(), cur.rowcount)

    def lock(self, key: str) -> None:
        """Serialize this transaction with every other that locks ``key`` (PostgreSQL's
        transaction-scoped advisory lock; in SQLite every write transaction is already
        serialized by ``BEGIN IMMEDIATE``)."""
        if self._postgres:
            self._cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))

    def run_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if self._postgres:
            self._cursor.executemany(sql.replace("?", "%s"), rows)
        else:
            self._cursor.executemany(sql, rows)


def _ddl(statement: str, postgres: bool) -> str:
    if not postgres:
        return statement
    for sqlite_type, postgres_type in _DDL_TYPES:
        statement = re.sub(rf"\b{sqlite_type}\b", postgres_type, statement)
    return statement
