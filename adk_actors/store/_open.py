"""Which session store a location names: a ``postgresql://`` URL or a SQLite file."""

from __future__ import annotations

from ._postgres import PostgresSessionStore, is_postgres_url, redacted_url
from ._sqlite import SQLiteSessionStore

__all__ = ["SessionStores", "open_session_store", "store_name"]

SessionStores = SQLiteSessionStore | PostgresSessionStore


def open_session_store(location: str, *, application_name: str = "") -> SessionStores:
    """Open the session store at ``location``: a PostgreSQL database for a
    ``postgresql://`` (or ``postgres://``) URL (its connections called
    ``application_name``, when given: ``connection_name``), else a SQLite file
    (``:memory:`` too). StoreError when it cannot be opened or migrated."""
    if is_postgres_url(location):
        return PostgresSessionStore(location, application_name=application_name)
    return SQLiteSessionStore(location)


def store_name(location: str) -> str:
    """How a store location is shown in messages and logs: a URL without its password."""
    return redacted_url(location) if is_postgres_url(location) else location
