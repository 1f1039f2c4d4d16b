"""google-adk's ``InMemoryMemoryService`` (``google.adk.memory.in_memory_memory_service``).

It keeps, per (app, user), each added session's events that have content with
parts (a session added again replaces what was kept of it). A search splits the
query and each event's text (its parts' texts joined by spaces) into lowercase
words (Unicode-aware; a word mixing Latin and other scripts also counts its
single-script runs, so ``Python`` is found in ``私はPythonを使う``); an event matches
with the number of query words it holds (a non-ASCII query word also matches as a
substring of the text). At most ten matches come back, the most words first, equal
ones in the order they were added. Thread-safe; for tests and development.
"""

from __future__ import annotations

import datetime
import itertools
import re
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .._types import Event
from .base_memory_service import BaseMemoryService, SearchMemoryResponse
from .memory_entry import MemoryEntry

if TYPE_CHECKING:
    from ..sessions import Session

__all__ = ["InMemoryMemoryService", "searchable_words"]

_UNKNOWN_SESSION = "__unknown_session_id__"
_MAX_RESULTS = 10
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(unicodedata.normalize("NFC", text))}


def _latin(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char == "_"
    return unicodedata.name(char, "").startswith("LATIN")


def searchable_words(text: str) -> set[str]:
    """The lowercase words of ``text`` plus, for a word that mixes Latin and other
    scripts, each single-script run of it."""
    words = _words(text)
    for word in [w for w in words if not w.isascii()]:
        words.update("".join(run) for _, run in itertools.groupby(word, _latin))
    return words


def _text_of(event: Event) -> str:
    parts = event.content.parts if event.content is not None else ()
    return " ".join(part.text for part in parts if part.text)


class InMemoryMemoryService(BaseMemoryService):
    """See the module."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._session_events: dict[tuple[str, str], dict[str, list[Event]]] = {}
        self._deleted_memory_ids: dict[tuple[str, str], set[str]] = {}

    async def add_session_to_memory(self, session: Session) -> None:
        """Keep ``session``'s events that have content (replacing what was kept of
        it), except those deleted with :meth:`delete_memory`."""
        key = (session.app_name, session.user_id)
        with self._lock:
            deleted = self._deleted_memory_ids.get(key, set())
            self._session_events.setdefault(key, {})[session.id] = [
                event for event in session.events
                if event.content is not None and event.content.parts and event.id not in deleted]

    async def add_events_to_memory(self, *, app_name: str, user_id: str, events: Sequence[Event],
                                   session_id: str | None = None,
                                   custom_metadata: Mapping[str, object] | None = None) -> None:
        """Add ``events`` that have content to those kept for ``session_id`` (an
        unnamed bucket when None); an event id kept or deleted already is skipped."""
        key = (app_name, user_id)
        with self._lock:
            deleted = self._deleted_memory_ids.get(key, set())
            kept = self._session_events.setdefault(key, {}).setdefault(session_id or _UNKNOWN_SESSION, [])
            ids = {event.id for event in kept}
            for event in events:
                if event.content is not None and event.content.parts and event.id not in ids | deleted:
                    kept.append(event)
                    ids.add(event.id)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        """The kept events that share words with ``query`` (see the module) as
        memories: the event's content, id, author and local ISO time."""
        with self._lock:
            kept = [list(events) for events in self._session_events.get((app_name, user_id), {}).values()]
        wanted = _words(query)
        scored: list[tuple[int, MemoryEntry]] = []
        for event in (event for events in kept for event in events):
            text = _text_of(event)
            found = searchable_words(text)
            if not found or event.content is None:
                continue
            lowered = unicodedata.normalize("NFC", text).lower()
            hits = sum(1 for word in wanted if word in found or (not word.isascii() and word in lowered))
            if hits:
                scored.append((hits, MemoryEntry(
                    id=event.id, content=event.content, author=event.author,
                    timestamp=datetime.datetime.fromtimestamp(event.timestamp).isoformat())))
        scored.sort(key=lambda item: -item[0])
        return SearchMemoryResponse(memories=[entry for _, entry in scored[:_MAX_RESULTS]])

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        """Forget the event ``memory_id`` (nothing when None), and never keep it again."""
        if not memory_id:
            return
        key = (app_name, user_id)
        with self._lock:
            for session_id, events in self._session_events.get(key, {}).items():
                left = [event for event in events if event.id != memory_id]
                if len(left) != len(events):
                    self._session_events[key][session_id] = left
                    self._deleted_memory_ids.setdefault(key, set()).add(memory_id)
