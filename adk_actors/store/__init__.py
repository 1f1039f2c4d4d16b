"""Stores: sessions (SQLite, the embedded default; PostgreSQL, shared by several hosts)
and artifacts (files).

``PostgresSessionStore`` and ``POSTGRES_MIGRATIONS`` are imported on first use (their
module loads psycopg, about 0.1 s that a SQLite host never needs: ``_pg_names``).
"""

from typing import TYPE_CHECKING, Any

from .._files import private_dir, private_file, write_private
from ._artifacts import (
    ArtifactError,
    ArtifactTooLarge,
    FileArtifactStore,
    InvalidArtifactName,
    validate_name,
)
from ._base import (
    RESUMABLE,
    Lease,
    LeaseLost,
    RunExists,
    RunInfo,
    RunNotResumable,
    RunRecord,
    SessionData,
    SessionExists,
    SessionLeased,
    SessionLimitReached,
    SessionNotFound,
    SessionStore,
    StaleSession,
    StoreError,
    Unreadable,
    Unstorable,
    request_of,
    request_text,
    split_delta,
)
from ._database import Database, Statements
from ._jobs import JobStore
from ._open import SessionStores, open_session_store, store_name
from ._pg_names import connection_name, is_postgres_url, redacted_url
from ._sqlite import MIGRATIONS, SQLiteSessionStore

if TYPE_CHECKING:
    from ._postgres import POSTGRES_MIGRATIONS, PostgresSessionStore


def __getattr__(name: str) -> Any:
    if name in ("PostgresSessionStore", "POSTGRES_MIGRATIONS"):
        from . import _postgres  # PostgreSQL's driver loads here (_pg_names)

        return getattr(_postgres, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def in_memory_store() -> SQLiteSessionStore:
    """A store that lives only in this process (SQLite ``:memory:``), for tests."""
    return SQLiteSessionStore(":memory:")


__all__ = [
    "MIGRATIONS",
    "POSTGRES_MIGRATIONS",
    "RESUMABLE",
    "ArtifactError",
    "ArtifactTooLarge",
    "Database",
    "FileArtifactStore",
    "InvalidArtifactName",
    "JobStore",
    "Lease",
    "LeaseLost",
    "PostgresSessionStore",
    "RunExists",
    "RunInfo",
    "RunNotResumable",
    "RunRecord",
    "SQLiteSessionStore",
    "SessionData",
    "SessionExists",
    "SessionLeased",
    "SessionLimitReached",
    "SessionNotFound",
    "SessionStore",
    "SessionStores",
    "StaleSession",
    "Statements",
    "StoreError",
    "Unreadable",
    "Unstorable",
    "connection_name",
    "in_memory_store",
    "is_postgres_url",
    "open_session_store",
    "private_dir",
    "private_file",
    "redacted_url",
    "request_of",
    "request_text",
    "split_delta",
    "store_name",
    "validate_name",
    "write_private",
]
