"""Stores: sessions (SQLite, the embedded default) and artifacts (files)."""

from .._files import private_dir, private_file, write_private
from ._artifacts import (
    ArtifactError,
    ArtifactTooLarge,
    FileArtifactStore,
    InvalidArtifactName,
    validate_name,
)
from ._base import (
    RunExists,
    RunRecord,
    SessionData,
    SessionExists,
    SessionLimitReached,
    SessionNotFound,
    SessionStore,
    StoreError,
    Unreadable,
    Unstorable,
    split_delta,
)
from ._sqlite import MIGRATIONS, SQLiteSessionStore


def in_memory_store() -> SQLiteSessionStore:
    """A store that lives only in this process (SQLite ``:memory:``), for tests."""
    return SQLiteSessionStore(":memory:")


__all__ = [
    "MIGRATIONS",
    "ArtifactError",
    "ArtifactTooLarge",
    "FileArtifactStore",
    "InvalidArtifactName",
    "RunExists",
    "RunRecord",
    "SQLiteSessionStore",
    "SessionData",
    "SessionExists",
    "SessionLimitReached",
    "SessionNotFound",
    "SessionStore",
    "StoreError",
    "Unreadable",
    "Unstorable",
    "in_memory_store",
    "private_dir",
    "private_file",
    "split_delta",
    "validate_name",
    "write_private",
]
