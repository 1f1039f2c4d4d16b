"""google-adk's ``SqliteMemoryService``: memories kept in a SQLite file, searched with
SQLite's full-text index.

``SqliteMemoryService(db_path, *, fts="auto", max_event_bytes=262144,
max_results=50)``: ``db_path`` is a file path, ``:memory:``, or a ``sqlite:///``
URL (``sqlite:///relative.db``, ``sqlite:////absolute.db``); its folder is created.
Each event with text (thoughts left out, newlines as spaces) is kept once per
(app, user, session, event id): adding it again replaces it; an event without an id
gets one from a hash of its author, time and content. Its search text is the text in
NFC, a word mixing Latin and other scripts split into single-script runs, lowercased,
cut to ``max_event_bytes``. A search splits the query the same way into distinct
words and returns at most ``max_results`` memories of the user: with FTS5
(``fts="auto"`` when SQLite has it, ``"on"`` requires it) those matching any word,
best BM25 rank first, then the newest; without it those containing any word, the
most words first, then the newest. A memory's ``id`` is its row number, its
``custom_metadata`` names its session and event, its ``timestamp`` is local ISO 8601.
Calls are quick local writes made on the caller's event loop, under one lock.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from .._types import Content, Event
from .base_memory_service import BaseMemoryService, SearchMemoryResponse
from .memory_entry import MemoryEntry

if TYPE_CHECKING:
    from ..sessions import Session

__all__ = ["SqliteMemoryService"]

_UNKNOWN_SESSION = "__unknown_session_id__"
_WORDS = re.compile(r"[\w%]+")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT, app_name TEXT NOT NULL, user_id TEXT NOT NULL,
  session_id TEXT NOT NULL, event_id TEXT NOT NULL, author TEXT NOT NULL, timestamp REAL NOT NULL,
  content_json TEXT NOT NULL, search_text TEXT NOT NULL,
  UNIQUE(app_name, user_id, session_id, event_id));
CREATE INDEX IF NOT EXISTS memory_events_by_owner ON memory_events(app_name, user_id, timestamp DESC);
"""

_FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS memory_events_fts USING fts5(
  search_text, content='memory_events', content_rowid='id', tokenize='unicode61');
CREATE TRIGGER IF NOT EXISTS memory_events_ai AFTER INSERT ON memory_events BEGIN
  INSERT INTO memory_events_fts(rowid, search_text) VALUES (new.id, new.search_text); END;
CREATE TRIGGER IF NOT EXISTS memory_events_ad AFTER DELETE ON memory_events BEGIN
  INSERT INTO memory_events_fts(memory_events_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text); END;
CREATE TRIGGER IF NOT EXISTS memory_events_au AFTER UPDATE OF search_text ON memory_events BEGIN
  INSERT INTO memory_events_fts(memory_events_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
  INSERT INTO memory_events_fts(rowid, search_text) VALUES (new.id, new.search_text); END;
"""


def _path_of(db_path: str | Path) -> str:
    """The file (or ``:memory:``) that ``db_path`` names; ValueError when empty."""
    text = str(db_path).strip()
    if not text:
        raise ValueError("db_path must be set.")
    if not text.startswith(("sqlite:", "sqlite+aiosqlite:")):
        return text
    path = unquote(urlparse(text).path)
    return (path[1:] if path.startswith("/") else path) or text


def _latin(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char == "_"
    return unicodedata.name(char, "").startswith("LATIN")


def _script_runs(text: str) -> str:
    """``text`` with each word that mixes Latin and other scripts split into its runs."""
    if text.isascii():
        return text
    runs: list[str] = []
    for word in text.split():
        runs.extend([word] if word.isascii() else ["".join(group) for _, group in itertools.groupby(word, _latin)])
    return " ".join(runs)


def _tokens(query: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORDS.findall(_script_runs(unicodedata.normalize("NFC", query))):
        seen.setdefault(word.lower(), None)
    return list(seen)


def _text_of(event: Event) -> str:
    parts = event.content.parts if event.content is not None else ()
    texts = [part.text.replace("\n", " ").strip() for part in parts if part.text and not part.thought]
    return " ".join(text for text in texts if text)


class SqliteMemoryService(BaseMemoryService):
    """See the module."""

    def __init__(self, db_path: str | Path, *, fts: Literal["auto", "on", "off"] = "auto",
                 max_event_bytes: int = 262_144, max_results: int = 50) -> None:
        path = _path_of(db_path)
        if path != ":memory:":
            if Path(path).is_dir():
                raise ValueError(f"db_path {path} is a directory.")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        if fts not in ("auto", "on", "off"):
            raise ValueError("fts must be one of: auto, on, off.")
        if max_event_bytes <= 0:
            raise ValueError("max_event_bytes must be positive.")
        if max_results <= 0:
            raise ValueError("max_results must be positive.")
        self._max_event_bytes, self._max_results = max_event_bytes, max_results
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._db.execute("PRAGMA busy_timeout=3000")
            if path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            self._fts = self._set_up_fts(fts)

    def _set_up_fts(self, mode: str) -> bool:
        if mode == "off":
            return False
        existed = self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                   "name='memory_events_fts'").fetchone() is not None
        try:
            self._db.executescript(_FTS)
        except sqlite3.OperationalError as exc:
            if "no such module" not in str(exc).lower():
                raise
            if mode == "on":
                raise RuntimeError("FTS5 is not available in this SQLite build.") from exc
            return False
        if not existed:
            self._db.execute("INSERT INTO memory_events_fts(memory_events_fts) VALUES ('rebuild')")
        return True

    async def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    async def add_session_to_memory(self, session: Session) -> None:
        """Keep the session's events (see the module), under its id."""
        await self.add_events_to_memory(app_name=session.app_name, user_id=session.user_id,
                                        events=session.events, session_id=session.id)

    async def add_events_to_memory(self, *, app_name: str, user_id: str, events: Sequence[Event],
                                   session_id: str | None = None,
                                   custom_metadata: Mapping[str, object] | None = None) -> None:
        """Keep ``events`` that have text (see the module), under ``session_id`` (an
        unnamed bucket when None), all in one transaction."""
        rows: list[tuple[str, str, str, str, str, float, str, str]] = []
        for event in events:
            text = _text_of(event)
            if not text or event.content is None:
                continue
            search = _script_runs(unicodedata.normalize("NFC", text)).lower()
            search = search.encode()[:self._max_event_bytes].decode(errors="ignore")
            content = event.content.model_dump_json(exclude_none=True)
            author = event.author or ""
            event_id = event.id or hashlib.sha256(f"{author}:{float(event.timestamp)}:{content}".encode()
                                                  ).hexdigest()[:32]
            rows.append((app_name, user_id, session_id or _UNKNOWN_SESSION, event_id, author,
                         float(event.timestamp), content, search))
        if not rows:
            return
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT INTO memory_events (app_name, user_id, session_id, event_id, author, timestamp, "
                    "content_json, search_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(app_name, user_id, session_id, event_id) DO UPDATE SET author=excluded.author, "
                    "timestamp=excluded.timestamp, content_json=excluded.content_json, "
                    "search_text=excluded.search_text", rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        """The user's memories that match ``query`` (see the module)."""
        tokens = _tokens(query) if query and query.strip() else []
        if not tokens:
            return SearchMemoryResponse()
        columns = "memory_events.id, session_id, event_id, author, timestamp, content_json"
        with self._lock:
            if self._fts:
                match = " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)
                rows = self._db.execute(
                    f"SELECT {columns} FROM memory_events_fts JOIN memory_events "
                    "ON memory_events.id = memory_events_fts.rowid WHERE app_name = ? AND user_id = ? "
                    "AND memory_events_fts.search_text MATCH ? "
                    "ORDER BY bm25(memory_events_fts), memory_events.timestamp DESC LIMIT ?",
                    (app_name, user_id, match, self._max_results)).fetchall()
            else:
                patterns = ["%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                            for t in tokens]
                like = " OR ".join(["search_text LIKE ? ESCAPE '\\'"] * len(tokens))
                score = " + ".join(["(CASE WHEN search_text LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END)"] * len(tokens))
                rows = self._db.execute(
                    f"SELECT {columns} FROM memory_events WHERE app_name = ? AND user_id = ? AND ({like}) "
                    f"ORDER BY ({score}) DESC, timestamp DESC LIMIT ?",
                    (app_name, user_id, *patterns, *patterns, self._max_results)).fetchall()
        return SearchMemoryResponse(memories=[_entry(row) for row in rows])


def _entry(row: tuple[Any, ...]) -> MemoryEntry:
    row_id, session_id, event_id, author, timestamp, content = row
    return MemoryEntry(id=str(row_id), content=Content.model_validate_json(content), author=author or None,
                       timestamp=datetime.datetime.fromtimestamp(timestamp).isoformat(),
                       custom_metadata={"session_id": session_id, "event_id": event_id})
