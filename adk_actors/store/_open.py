"""Which session store a location names: a ``postgresql://`` URL or a SQLite file."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, Union

from supervision import Clock

from ._pg_names import is_postgres_url, redacted_url
from ._sqlite import SQLiteSessionStore

if TYPE_CHECKING:
    from ._postgres import PostgresSessionStore

__all__ = ["SessionStores", "open_session_store", "store_name"]

#: Either store. PostgreSQL's is named, not loaded: its module (and driver) is
#: imported by the first ``open_session_store`` of a ``postgresql://`` URL (_pg_names).
SessionStores: TypeAlias = Union[SQLiteSessionStore, "PostgresSessionStore"]


def open_session_store(location: str, *, application_name: str = "", clock: Clock | None = None,
                       lease_seconds: float | None = None) -> SessionStores:
    """Open the session store at ``location``: a PostgreSQL database for a
    ``postgresql://`` (or ``postgres://``) URL (its connections called
    ``application_name``, when given: ``connection_name``), else a SQLite file
    (``:memory:`` too). ``clock``: what the store reads the time from (its leases
    included); by default the wall clock, and the database's for PostgreSQL's leases.
    ``lease_seconds``: how long the leases its holder takes last (PostgreSQL's server
    ends a transaction of the store left idle for a third of it: a holder stalled
    mid-write holds no row past its lease). StoreError when it cannot be opened or
    migrated."""
    if is_postgres_url(location):
        from ._postgres import PostgresSessionStore  # the driver loads here (_pg_names)

        return PostgresSessionStore(location, application_name=application_name, clock=clock,
                                    lease_seconds=lease_seconds)
    return SQLiteSessionStore(location, clock=clock)


def store_name(location: str) -> str:
    """How a store location is shown in messages and logs: a URL without its password."""
    return redacted_url(location) if is_postgres_url(location) else location
