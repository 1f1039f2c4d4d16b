"""google-adk's ``SqliteSessionService`` (``google.adk.sessions.sqlite_session_service``),
on our SQLite session store."""

from __future__ import annotations

from ..store import SQLiteSessionStore
from ._store_service import StoreSessionService

__all__ = ["SqliteSessionService"]


class SqliteSessionService(StoreSessionService):
    """Sessions in the SQLite file ``db_path`` (created when missing; ``:memory:`` or
    a ``sqlite:///`` URL's path too), by the store's rules (see
    :mod:`adk_actors.sessions._store_service`)."""

    #: what :class:`StaleSessionError` says here (google-adk's SqliteSessionService's words)
    _stale_message = ("The last_update_time provided in the session object is earlier than the update_time "
                      "in storage. Please check if it is a stale session.")

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        path = db_path.removeprefix("sqlite:///") if db_path.startswith("sqlite:///") else db_path
        super().__init__(SQLiteSessionStore(path))
