"""The memory store: what users said before, searchable, strictly per (app, user).

``add_session`` indexes a session's text events (re-indexing a session replaces its
entries, so it can be called after every turn). ``search`` ranks entries: a
whole-phrase match (case-insensitive) scores 5, plus the fraction of the query's
words found; entries scoring 0 are left out; ties go to the newest; at most
``limit`` come back, with author and timestamp. Its table is in a SQLite file of its
own on one host, or in the sessions' PostgreSQL database (``store._database``), so
every host of a cluster searches the same memories.
"""

from __future__ import annotations

from pathlib import Path

from .._types import Event, MemoryEntry
from ..engine._services import rank_memories
from ._database import Database

__all__ = ["MemoryStore"]

_MIGRATIONS = [
    (1, """
        CREATE TABLE IF NOT EXISTS memories (app TEXT NOT NULL, "user" TEXT NOT NULL, session TEXT NOT NULL,
            event_id TEXT NOT NULL, author TEXT, timestamp REAL, text TEXT,
            PRIMARY KEY (app, "user", session, event_id));
        CREATE INDEX IF NOT EXISTS memories_by_owner ON memories (app, "user")
    """),
]


class MemoryStore:
    def __init__(self, location: str | Path, *, application_name: str = "") -> None:
        """Open the memories at ``location`` (a SQLite file, or a ``postgresql://``
        URL whose connections are called ``application_name``); StoreError when it
        cannot be opened."""
        self._db = Database(str(location), application_name=application_name)
        self.path = self._db.name
        self._db.migrate("memory", _MIGRATIONS)

    def add_session(self, app: str, user: str, session: str, events: list[Event]) -> int:
        rows = [(app, user, session, e.id, e.author, e.timestamp, e.content.text) for e in events
                if e.content is not None and e.content.text and not e.partial]
        with self._db.transaction() as db:
            db.run('DELETE FROM memories WHERE app=? AND "user"=? AND session=?', (app, user, session))
            db.run_many("INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
        return len(rows)

    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        if not query.strip():
            return []
        rows = self._db.run('SELECT event_id, author, timestamp, text FROM memories WHERE app=? AND "user"=?',
                            (app, user)).rows
        entries = [MemoryEntry(text=text, author=author, timestamp=timestamp, id=event_id)
                   for event_id, author, timestamp, text in rows]
        return rank_memories(entries, query, limit)

    def close(self) -> None:
        self._db.close()

