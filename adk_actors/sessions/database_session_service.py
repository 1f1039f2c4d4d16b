"""google-adk's ``DatabaseSessionService`` (``google.adk.sessions.database_session_service``),
on our own session stores rather than SQLAlchemy.

``DatabaseSessionService(db_url)`` takes google-adk's URLs: ``sqlite:///relative.db``,
``sqlite:////absolute.db``, ``sqlite://`` or ``sqlite:///:memory:`` (in memory), the
``sqlite+aiosqlite`` driver spelling too; ``postgresql://...`` (also
``postgresql+asyncpg://``, ``postgresql+psycopg://``, ``postgres://``) for our
PostgreSQL store. Other keyword arguments (SQLAlchemy's engine options) are accepted
and not used. Any other URL is a ``ValueError`` naming it. Its sessions follow the
store's rules (see :mod:`adk_actors.sessions._store_service`).
"""

from __future__ import annotations

import re
from typing import Any

from ..store import SQLiteSessionStore, open_session_store, redacted_url
from ._store_service import StoreSessionService

__all__ = ["DatabaseSessionService", "store_location"]

_SQLITE = re.compile(r"sqlite(\+\w+)?://(?P<rest>.*)\Z", re.DOTALL)
_POSTGRES = re.compile(r"postgres(ql)?(\+\w+)?://", re.IGNORECASE)


def store_location(db_url: str) -> str:
    """Where our stores open ``db_url``: a SQLite path (``:memory:``) or a PostgreSQL
    URL without a SQLAlchemy driver; ValueError for another URL."""
    if not isinstance(db_url, str) or not db_url:
        raise ValueError(f"a database URL is a non-empty string, not {db_url!r}")
    sqlite = _SQLITE.match(db_url)
    if sqlite is not None:
        rest = sqlite.group("rest").split("?", 1)[0]
        path = rest[1:] if rest.startswith("/") else rest
        return path or ":memory:"
    postgres = _POSTGRES.match(db_url)
    if postgres is not None:
        return "postgresql://" + db_url[postgres.end():]
    raise ValueError(f"Invalid database URL format or argument '{redacted_url(db_url)}': "
                     "sqlite:///PATH and postgresql://... are supported")


class DatabaseSessionService(StoreSessionService):
    """Sessions in a SQLite file or a PostgreSQL database (see the module)."""

    def __init__(self, db_url: str, **kwargs: Any) -> None:
        self.db_url = db_url
        location = store_location(db_url)
        super().__init__(SQLiteSessionStore(":memory:") if location == ":memory:" else open_session_store(location))
