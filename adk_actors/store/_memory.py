"""The memory store: what users said before, searchable, strictly per (app, user).

``add_session`` indexes a session's text events (re-indexing a session replaces its
entries, so it can be called after every turn). ``search`` ranks entries: a
whole-phrase match (case-insensitive) scores 5, plus the fraction of the query's
words found; entries scoring 0 are left out; ties go to the newest; at most
``limit`` come back, with author and timestamp. SQLite, one file in the data dir.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from .._files import private_file
from .._types import Event, MemoryEntry
from ..engine._services import rank_memories

__all__ = ["SQLiteMemoryStore"]


class SQLiteMemoryStore:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            private_file(self.path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS memories (app TEXT NOT NULL, user TEXT NOT NULL, "
                         "session TEXT NOT NULL, event_id TEXT NOT NULL, author TEXT, timestamp REAL, text TEXT, "
                         "PRIMARY KEY (app, user, session, event_id))")
        self._db.execute("CREATE INDEX IF NOT EXISTS memories_by_owner ON memories (app, user)")

    def add_session(self, app: str, user: str, session: str, events: list[Event]) -> int:
        rows = [(app, user, session, e.id, e.author, e.timestamp, e.content.text) for e in events
                if e.content is not None and e.content.text and not e.partial]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM memories WHERE app=? AND user=? AND session=?", (app, user, session))
                self._db.executemany("INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return len(rows)

    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        if not query.strip():
            return []
        with self._lock:
            rows = self._db.execute("SELECT event_id, author, timestamp, text FROM memories WHERE app=? AND user=?",
                                    (app, user)).fetchall()
        entries = [MemoryEntry(text=text, author=author, timestamp=timestamp, id=event_id)
                   for event_id, author, timestamp, text in rows]
        return rank_memories(entries, query, limit)

    def close(self) -> None:
        with self._lock:
            self._db.close()
